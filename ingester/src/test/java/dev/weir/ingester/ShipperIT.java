package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.bucket.Bucket;
import dev.weir.storage.bucket.FilesystemBucket;
import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real process in classic mode ships its head-compaction blocks to the filesystem bucket:
 * pushes over 4 rounds, each ended by kill -9 at a random moment (during compactions and uploads),
 * then a restart. In the end every acknowledged sample older than the head is in the bucket
 * exactly once, the bucket holds exactly the local blocks, and no block that was in the bucket
 * at a kill was uploaded again (its files are the same files).
 */
class ShipperIT {
  static final int SERIES = 50;
  static final long STEP_MS = 5_000;
  static final int PUSHES_PER_ROUND = 60; // 300 s of samples: five 1-minute block ranges
  static final int ROUNDS = 4;
  static final List<String> TENANTS = List.of("ship-a", "ship-b");
  @TempDir Path dir;

  private static WriteRequest request(long base, long k) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int s = 0; s < SERIES; s++) {
      b.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue("shipped"))
          .addLabels(Label.newBuilder().setName("series").setValue(String.valueOf(s)))
          .addSamples(Sample.newBuilder().setTimestamp(base + k * STEP_MS).setValue(k * 1_000.0 + s)));
    }
    return b.build();
  }

  private static void push(WeirProcess weir, String tenant, long base, long fromK, long toK,
      Set<String> acked) {
    ManagedChannel ch = NettyChannelBuilder.forTarget(weir.grpcTarget()).usePlaintext().build();
    try {
      Metadata md = new Metadata();
      md.put(Metadata.Key.of("x-scope-orgid", Metadata.ASCII_STRING_MARSHALLER), tenant);
      IngesterGrpc.IngesterBlockingStub stub = IngesterGrpc.newBlockingStub(ch)
          .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
      for (long k = fromK; k < toK; k++) {
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).push(request(base, k));
        for (int s = 0; s < SERIES; s++) {
          acked.add(s + " " + (base + k * STEP_MS) + " " + (k * 1_000.0 + s));
        }
      }
    } finally {
      ch.shutdownNow();
    }
  }

  /** "tenant/id" → (file key, modification time) of the block's meta.json: new files on a re-upload. */
  private static Map<String, String> identities(FilesystemBucket fs) throws Exception {
    Map<String, String> out = new TreeMap<>();
    for (Bucket.BlockRef r : fs.list()) {
      BasicFileAttributes a = Files.readAttributes(fs.root().resolve(r.tenant()).resolve(r.id()).resolve("meta.json"),
          BasicFileAttributes.class);
      out.put(r.tenant() + "/" + r.id(), a.fileKey() + "@" + a.lastModifiedTime().toInstant());
    }
    return out;
  }

  private Set<String> localBlocks() throws Exception {
    Set<String> out = new TreeSet<>();
    for (String tenant : TENANTS) {
      Path d = dir.resolve("data/tsdb").resolve(tenant);
      if (!Files.isDirectory(d)) {
        continue;
      }
      try (Stream<Path> s = Files.list(d)) {
        s.filter(p -> Ulid.isUlid(p.getFileName().toString()) && Files.exists(p.resolve("meta.json")))
            .forEach(p -> out.add(tenant + "/" + p.getFileName()));
      }
    }
    return out;
  }

  /** Every sample of the tenant's blocks in the bucket, "series ts value" → times seen. */
  private static Map<String, Integer> census(FilesystemBucket fs, String tenant) throws Exception {
    Map<String, Integer> out = new HashMap<>();
    for (Bucket.BlockRef r : fs.list()) {
      if (!r.tenant().equals(tenant)) {
        continue;
      }
      Block b = Block.open(fs.root().resolve(r.tenant()).resolve(r.id()));
      for (SeriesChunks s : b.select(Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.re("__name__", ".+")))) {
        SeriesChunks.Samples samples = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
        for (int i = 0; i < samples.size(); i++) {
          out.merge(s.labels().get("series") + " " + samples.timestamps()[i] + " " + samples.values()[i], 1,
              Integer::sum);
        }
      }
    }
    return out;
  }

  @Test
  void ackedSamplesAreShippedOnceAndNothingIsUploadedTwiceAfterKillNine() throws Exception {
    Random random = new Random(15);
    long base = (System.currentTimeMillis() - 3 * 3_600_000L) / 60_000 * 60_000; // range-aligned
    Map<String, Set<String>> acked = new HashMap<>();
    TENANTS.forEach(t -> acked.put(t, new TreeSet<>()));
    FilesystemBucket fs = new FilesystemBucket(dir.resolve("bucket"));
    Map<String, String> seenAtKills = new TreeMap<>();
    Map<String, String> atLastKill = Map.of();
    List<String> landed = new ArrayList<>();
    try (WeirProcess weir = WeirProcess.start(dir, "--blocks-storage.tsdb.block-ranges-period=1m",
        "--blocks-storage.tsdb.head-compaction-interval=1s", "--blocks-storage.tsdb.ship-interval=1s")) {
      for (int round = 0; round < ROUNDS; round++) {
        for (String tenant : TENANTS) {
          push(weir, tenant, base, (long) round * PUSHES_PER_ROUND, (long) (round + 1) * PUSHES_PER_ROUND,
              acked.get(tenant));
        }
        Thread.sleep(random.nextInt(2_500)); // the kill lands anywhere in the compactions and uploads
        weir.kill();
        atLastKill = identities(fs);
        landed.add("round " + round + ": local blocks " + localBlocks().size() + ", in the bucket "
            + atLastKill.size() + ", unfinished uploads " + fs.listIncomplete().size());
        for (Map.Entry<String, String> e : atLastKill.entrySet()) {
          String before = seenAtKills.putIfAbsent(e.getKey(), e.getValue());
          assertThat(before == null || before.equals(e.getValue())).as("%s uploaded again before round %d's kill",
              e.getKey(), round).isTrue();
        }
        weir.restart();
      }
      landed.forEach(System.out::println);

      // 1200 s of samples per tenant: the head keeps at least 1.5 ranges, 19 blocks are compacted.
      await().atMost(2, TimeUnit.MINUTES).until(() -> localBlocks().size() == 19 * TENANTS.size()
          && identities(fs).keySet().equals(localBlocks())
          && weir.metric("weir_ingester_shipper_pending_blocks") == 0);
      Map<String, String> now = identities(fs);
      assertThat(now.entrySet()).as("no block in the bucket at a kill was uploaded again")
          .containsAll(seenAtKills.entrySet());
      assertThat(weir.metric("weir_ingester_shipper_uploads_total"))
          .as("after the last restart only blocks not in the bucket at the kill were uploaded")
          .isEqualTo(now.size() - atLastKill.size());
      assertThat(weir.metric("weir_ingester_shipper_upload_failures_total")).isZero();
      assertThat(fs.listIncomplete()).as("unfinished uploads of killed attempts are replaced").isEmpty();
    }

    long shippedEnd = base + 19 * 60_000L;
    for (String tenant : TENANTS) {
      Map<String, Integer> census = census(fs, tenant);
      assertThat(census.values()).as("%s: every sample in the bucket once", tenant).allMatch(c -> c == 1);
      Set<String> expected = new TreeSet<>();
      for (String key : acked.get(tenant)) {
        if (Long.parseLong(key.split(" ")[1]) < shippedEnd) {
          expected.add(key);
        }
      }
      assertThat(expected).hasSize(19 * 12 * SERIES); // 12 pushes per minute
      assertThat(new TreeSet<>(census.keySet())).as("%s: the bucket holds exactly the acknowledged samples"
          + " of the compacted ranges", tenant).isEqualTo(expected);
    }
    for (Bucket.BlockRef r : fs.list()) {
      assertThat(new String(fs.meta(r.tenant(), r.id()), StandardCharsets.UTF_8))
          .contains("\"weir\": {\"source\": \"ingester\"}");
    }
  }
}
