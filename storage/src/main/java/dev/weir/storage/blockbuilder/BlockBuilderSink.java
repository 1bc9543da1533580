package dev.weir.storage.blockbuilder;

import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.ingest.batch.BatchSink;
import dev.weir.storage.ingest.batch.SinkException;
import dev.weir.storage.tsdb.block.BlockWriter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The block-builder's sink: a cycle's records become one Prometheus-format block per tenant and
 * block range (written to a local staging directory, then uploaded to the bucket). Block IDs come
 * from the partition, the cycle's start offset and the range ({@link BlockIds}), so a cycle redone
 * after a crash or a failed upload writes the same IDs and replaces, never duplicates, what an
 * earlier attempt uploaded. After the first cycle of each partition, and after any failed attempt,
 * blocks and unfinished uploads that an uncommitted attempt left behind (the partition's blocks
 * starting at or after the cycle's start offset, with a first record no older than the cycle's, that
 * the cycle did not write) are deleted.
 *
 * <p>Failures: I/O errors are retryable, except permission errors, which no retry fixes.
 *
 * <p>Thread-safety: one batch at a time per partition (the consumer's thread).
 */
public final class BlockBuilderSink implements BatchSink {
  private static final Logger log = LoggerFactory.getLogger(BlockBuilderSink.class);

  private final Bucket bucket;
  private final Path staging;
  private final long rangeMillis;
  private final String topic;
  /** Partitions whose uploads may have leftovers from an unfinished attempt. */
  private final Set<Integer> dirty = ConcurrentHashMap.newKeySet();
  private final Set<Integer> seen = ConcurrentHashMap.newKeySet();
  private final Counter blocks;
  private final Counter samples;
  private final Counter dropped;
  private final Counter leftovers;

  public BlockBuilderSink(Bucket bucket, Path staging, long rangeMillis, String topic, MeterRegistry registry) {
    this.bucket = bucket;
    this.staging = staging;
    this.rangeMillis = rangeMillis;
    this.topic = topic;
    blocks = Counter.builder("weir.block.builder.blocks.uploaded").description("Blocks uploaded to the bucket.")
        .register(registry);
    samples = Counter.builder("weir.block.builder.samples").description("Samples written into uploaded blocks"
        + " (counted per attempt: a redone cycle counts again).").register(registry);
    dropped = Counter.builder("weir.block.builder.dropped.series").description("Series dropped for invalid"
        + " label sets, and inconsistent native histogram samples dropped.").register(registry);
    leftovers = Counter.builder("weir.block.builder.leftover.blocks.deleted").description("Blocks and unfinished"
        + " uploads of uncommitted attempts deleted.").register(registry);
  }

  @Override
  public Batch begin(int partition, long startOffset, long firstRecordTimestamp) {
    if (seen.add(partition)) {
      dirty.add(partition);
    }
    return new CycleBatch(partition, startOffset, firstRecordTimestamp);
  }

  private final class CycleBatch implements Batch {
    private final int partition;
    private final long startOffset;
    private final long firstTs;
    private CycleSamples data = new CycleSamples();

    CycleBatch(int partition, long startOffset, long firstTs) {
      this.partition = partition;
      this.startOffset = startOffset;
      this.firstTs = firstTs;
    }

    @Override
    public void add(String tenant, WriteRequest request, long offset, long recordTimestamp) {
      if (!validTenant(tenant)) {
        dropped.increment(request.getTimeseriesCount());
        log.warn("msg=\"tenant ID cannot name a bucket directory; its series are dropped\" tenant=\"{}\" offset={}",
            tenant.replace('"', '\''), offset);
        return;
      }
      data.add(tenant, request);
    }

    @Override
    public void flush(long endOffset) throws SinkException {
      Path dir = staging.resolve("partition-" + partition);
      boolean ok = false;
      try {
        BlockWriter.deleteRecursively(dir);
        String extra = signature(partition) + " \"startOffset\": " + startOffset + ", \"endOffset\": " + endOffset
            + "}";
        List<CycleSamples.Built> built = data.build(dir, rangeMillis, firstTs, partition, startOffset, extra);
        if (data.histograms() > 0 || data.invalidSeries() > 0) {
          dropped.increment(data.histograms() + data.invalidSeries());
        }
        for (CycleSamples.Built b : built) {
          log.info("msg=\"uploading block\" partition={} tenant={} block={} min_time={} max_time={} series={}"
              + " samples={}", partition, b.tenant(), b.id(), b.meta().minTime(), b.meta().maxTime(),
              b.meta().numSeries(), b.meta().numSamples());
          bucket.upload(b.tenant(), b.id(), b.dir());
          blocks.increment();
        }
        if (dirty.contains(partition)) {
          deleteLeftovers(built);
          dirty.remove(partition);
        }
        samples.increment(data.samples());
        ok = true;
      } catch (AccessDeniedException e) {
        throw new SinkException("permission", "permission denied writing blocks: " + e.getMessage(), false, e);
      } catch (IOException e) {
        throw new SinkException("upload", "writing or uploading blocks failed: " + e, true, e);
      } finally {
        if (!ok) {
          dirty.add(partition);
        }
        try {
          BlockWriter.deleteRecursively(dir);
        } catch (IOException e) {
          log.warn("msg=\"cannot clean the staging directory\" dir={} err=\"{}\"", dir, e.getMessage());
        }
      }
    }

    private void deleteLeftovers(List<CycleSamples.Built> built) throws IOException {
      Set<String> mine = new HashSet<>();
      for (CycleSamples.Built b : built) {
        mine.add(b.tenant() + "/" + b.id());
      }
      for (Bucket.BlockRef r : bucket.list()) {
        // A leftover began at or after this cycle's offset, so its first record is no older than
        // this cycle's. A block with an older first record at a higher offset belongs to an
        // earlier incarnation of the topic (deleted and re-created: offsets start again at 0) and
        // is kept.
        if (BlockIds.partition(r.id()) == partition && BlockIds.startOffset(r.id()) >= startOffset
            && BlockIds.firstRecordTimestamp(r.id()) >= firstTs && !mine.contains(r.tenant() + "/" + r.id())
            && new String(bucket.meta(r.tenant(), r.id()), StandardCharsets.UTF_8).contains(signature(partition))) {
          log.info("msg=\"deleting a block left by an uncommitted attempt\" partition={} tenant={} block={}",
              partition, r.tenant(), r.id());
          bucket.delete(r.tenant(), r.id());
          leftovers.increment();
        }
      }
      for (Bucket.BlockRef r : bucket.listIncomplete()) {
        if (BlockIds.partition(r.id()) == partition) {
          bucket.delete(r.tenant(), r.id());
          leftovers.increment();
        }
      }
    }

    @Override
    public void close() {
      data = new CycleSamples();
    }
  }

  /** The start of the meta.json member that marks this builder's blocks of {@code partition}. */
  private String signature(int partition) {
    return "\"weir\": {\"source\": \"block-builder\", \"topic\": \"" + topic + "\", \"partition\": " + partition + ",";
  }

  static boolean validTenant(String tenant) {
    return !tenant.isEmpty() && !tenant.startsWith(".") && !tenant.contains("/") && !tenant.contains("\\");
  }
}
