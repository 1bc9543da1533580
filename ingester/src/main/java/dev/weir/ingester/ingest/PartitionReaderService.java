package dev.weir.ingester.ingest;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.ingester.push.Ingester;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.ingest.PartitionFreshness;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.ingest.PartitionReader;
import dev.weir.storage.ingest.Pusher;
import dev.weir.storage.ingest.ReaderMetrics;
import dev.weir.storage.ingest.Writer;
import dev.weir.storage.progress.ProgressBoard;
import dev.weir.storage.wire.WireBatch;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes the ingester's partition into its storage (Kafka mode). Started last: the storage is
 * open and replayed, the servers run. Not ready until the start-up catch-up is done; then
 * {@code onCaughtUp} (the ring turns ACTIVE). Stopped first: stop fetching, drain, fsync, final
 * commit.
 */
public final class PartitionReaderService implements Service, ReadConsistency {
  private static final Logger log = LoggerFactory.getLogger(PartitionReaderService.class);

  private final PartitionReader reader;
  private final Ingester ingester;
  private final KafkaConfig kafka;
  private final Duration strongTimeout;
  private final Duration stopTimeout;

  public PartitionReaderService(KafkaConfig kafka, int partition, Ingester ingester, ReaderMetrics metrics,
      LongSupplier clock, Duration strongTimeout, Duration stopTimeout, Runnable onCaughtUp) {
    this(kafka, partition, ingester, metrics, clock, strongTimeout, stopTimeout, onCaughtUp, ProgressBoard.standard());
  }

  /** As above, reporting the start-up catch-up's progress to {@code progress} (shown on the ring pages). */
  public PartitionReaderService(KafkaConfig kafka, int partition, Ingester ingester, ReaderMetrics metrics,
      LongSupplier clock, Duration strongTimeout, Duration stopTimeout, Runnable onCaughtUp, ProgressBoard progress) {
    this.kafka = kafka;
    this.ingester = ingester;
    this.strongTimeout = strongTimeout;
    this.stopTimeout = stopTimeout;
    this.reader = new PartitionReader(kafka, partition, ingester.dataDir(),
        new Pusher() {
          @Override
          public void push(String tenant, WriteRequest request) {
            ingester.push(tenant, request, false);
          }

          @Override
          public void push(String tenant, WireBatch batch) {
            ingester.push(tenant, batch, false);
          }

          @Override
          public void push(String tenant, WireBatch batch, long sourceOffset) {
            ingester.push(tenant, batch, false, sourceOffset);
          }

          @Override
          public void push(String tenant, WireBatch batch, long sourceOffset, long recordTimestampMillis) {
            // "now" for the validation is the records' produce time, not the time they are replayed
            ingester.push(tenant, batch, false, sourceOffset, recordTimestampMillis);
          }
        }, ingester.tsdb()::sync, metrics, clock, progress);
    reader.onCaughtUp(onCaughtUp);
  }

  @Override
  public String name() {
    return "partition-reader";
  }

  @Override
  public void start() {
    if (kafka.autoCreateTopic()) {
      try {
        Writer.ensureTopic(kafka);
      } catch (ServerErrorException e) {
        log.warn("msg=\"cannot ensure the ingest topic yet; the reader waits for it\" err=\"{}\"", e.getMessage());
      }
    }
    // A WAL repair at start-up dropped data that came from Kafka: consume it again from there.
    ingester.tsdb().replayReport().firstDroppedSourceOffset().ifPresent(reader::rewindAtStart);
    reader.start();
  }

  @Override
  public @Nullable String notReadyReason() {
    return reader.notReadyReason();
  }

  /**
   * A named offset of this partition: waits until the record at it is consumed (an offset not
   * produced yet is a 400, not a wait); else a strong read waits for the end offset now. Both
   * wait at most {@code ingester.read-consistency-strong-timeout}, then 503.
   */
  @Override
  public void await(ReadLevel level) {
    Long offset = level.offsets().get(reader.partition());
    if (offset != null) {
      if (reader.appliedOffset() > offset) {
        return;
      }
      long end = reader.currentEndOffset();
      if (offset >= end) {
        throw new ClientErrorException("bad_data", ReadLevel.OFFSETS_HEADER + ": offset " + offset + " of partition "
            + reader.partition() + " was not produced (the partition ends at " + end + ")");
      }
      reader.awaitApplied(offset + 1, strongTimeout);
    } else if (level.strong()) {
      reader.awaitApplied(reader.currentEndOffset(), strongTimeout);
    }
  }

  @Override
  public List<PartitionFreshness> freshness() {
    return List.of(reader.freshness());
  }

  public PartitionReader reader() {
    return reader;
  }

  @Override
  public void stop() {
    reader.stop(stopTimeout);
  }
}
