package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.RemoteClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.testing.FormerWal;
import dev.weir.storage.testing.Promtool;
import dev.weir.storage.tsdb.block.Ulid;
import dev.weir.storage.tsdb.labels.Labels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * Prometheus' {@code promtool tsdb dump} and {@code analyze} read a running ingester's tenant
 * directory ({@code <data-dir>/tsdb/<tenant>}) as it stands, blocks and head (the WAL is in
 * Prometheus' format); a kill -9 and restart replays it whole; and a data directory of the old
 * layout with a WAL in Weir's former format ({@code <data-dir>/wal/<tenant>}) is moved and
 * converted at start-up with every sample kept.
 */
class PromtoolLiveIT {
  static final String TENANT = "team-a";
  static final int SERIES = 5;
  static final long STEP_MS = 10_000;
  static final long RANGE_MS = 60_000;
  /** Samples over 5 ranges: the head compacts the 4 oldest (it keeps 1.5 ranges). */
  static final int POINTS = 30;

  @TempDir Path dir;

  private static double value(int s, int k) {
    return s * 1000 + k * 0.25;
  }

  private static Labels labels(int s) {
    return Labels.of("__name__", "live_metric", "series", String.format("%02d", s));
  }

  @Test
  void promtoolDumpsBlocksAndHeadOfALiveTenantDirectoryAndAnOldLayoutIsMovedAndConverted() throws Exception {
    long base = (System.currentTimeMillis() - 3_600_000L) / RANGE_MS * RANGE_MS; // aligned to a block range
    long blocksEnd = base + 4 * RANGE_MS;
    Path tenantDir = dir.resolve("data/tsdb").resolve(TENANT);
    Map<String, List<String>> all = new TreeMap<>();
    try (WeirProcess weir = WeirProcess.start(dir, "--blocks-storage.tsdb.block-ranges-period=1m",
        "--blocks-storage.tsdb.head-compaction-interval=1s")) {
      RemoteClient client = new RemoteClient(weir.httpUrl());
      Map<String, List<String>> inBlocks = new TreeMap<>();
      for (int k = 0; k < POINTS; k++) {
        WriteRequest.Builder req = WriteRequest.newBuilder();
        long t = base + k * STEP_MS;
        for (int s = 0; s < SERIES; s++) {
          TimeSeries.Builder ts = TimeSeries.newBuilder();
          labels(s).forEach((n, v) -> ts.addLabels(Label.newBuilder().setName(n).setValue(v)));
          req.addTimeseries(ts.addSamples(Sample.newBuilder().setTimestamp(t).setValue(value(s, k))));
          String line = Promtool.format(value(s, k)) + " " + t;
          if (t < blocksEnd) {
            inBlocks.computeIfAbsent(Promtool.key(labels(s)), x -> new ArrayList<>()).add(line);
          }
          all.computeIfAbsent(Promtool.key(labels(s)), x -> new ArrayList<>()).add(line);
        }
        RemoteClient.Response r = client.post("/api/v1/push", Snappy.compress(req.build().toByteArray()),
            "Content-Encoding", "snappy", "Content-Type", "application/x-protobuf",
            "X-Prometheus-Remote-Write-Version", "0.1.0", "X-Scope-OrgID", TENANT);
        assertThat(r.status()).as(r.text()).isBetween(200, 299);
      }
      await().atMost(60, TimeUnit.SECONDS).untilAsserted(() -> assertThat(blocks(tenantDir)).hasSize(4));
      assertThat(dev.weir.storage.tsdb.wal.Wal.segments(tenantDir.resolve("wal"))).isNotEmpty();
      assertThat(tenantDir.resolve("weir-wal")).doesNotExist();

      // The ingester keeps running (and writing its WAL) while promtool reads: the blocks and the
      // head (replayed by promtool from the WAL) hold every acked sample exactly once.
      Map<String, List<String>> dumped = Promtool.dumpInPlace(tenantDir);
      assertThat(dumped.keySet()).isEqualTo(all.keySet());
      for (String k : all.keySet()) {
        assertThat(dumped.get(k)).as("samples of %s: those in blocks and those in the head", k)
            .isEqualTo(all.get(k));
        assertThat(dumped.get(k).size()).isGreaterThan(inBlocks.get(k).size());
      }
      String analyze = Promtool.run(dir, Promtool.PROMTOOL, "tsdb", "analyze", tenantDir.toString());
      List<String> ulids = blocks(tenantDir);
      assertThat(analyze).contains("Block ID: " + ulids.get(ulids.size() - 1), "Duration: 1m0s",
          "Series: " + SERIES, "Label names: 2");

      assertThat(weir.isAlive()).isTrue();
      assertExported(weir, base, POINTS);

      weir.kill(); // SIGKILL: the restart replays the WAL promtool just read
      weir.restart();
      assertExported(weir, base, POINTS);
      assertThat(Promtool.dumpInPlace(tenantDir)).isEqualTo(all);
      assertThat(weir.terminate(Duration.ofSeconds(30))).isIn(0, 143);
    }

    // The same data directory as an older Weir left it: the WAL in Weir's former format at
    // <data-dir>/wal/<tenant>.
    Files.createDirectories(dir.resolve("data/wal"));
    FormerWal.downgrade(tenantDir.resolve("wal"), dir.resolve("data/wal").resolve(TENANT));
    try (WeirProcess weir = WeirProcess.start(dir, "--blocks-storage.tsdb.block-ranges-period=1m",
        "--blocks-storage.tsdb.head-compaction-interval=1s")) {
      assertThat(weir.log()).contains("msg=\"WAL moved to the tenant's TSDB directory\" user=" + TENANT,
          "msg=\"WAL converted to Prometheus' format\" user=" + TENANT);
      assertThat(dir.resolve("data/wal")).doesNotExist();
      assertThat(tenantDir.resolve("weir-wal")).doesNotExist();
      assertThat(tenantDir.resolve("wal/checkpoint.00000000")).isDirectory();
      assertExported(weir, base, POINTS);
      assertThat(Promtool.dumpInPlace(tenantDir)).isEqualTo(all);
    }
  }

  /** The ULIDs of the complete blocks in a tenant directory, ascending. */
  private static List<String> blocks(Path tenantDir) throws Exception {
    try (Stream<Path> s = Files.list(tenantDir)) {
      return s.filter(p -> Ulid.isUlid(p.getFileName().toString()) && Files.exists(p.resolve("meta.json")))
          .map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /** Every written sample, read back through the query path (blocks and head). */
  private static void assertExported(WeirProcess weir, long base, int points) throws Exception {
    Map<String, ExportClient.Series> got = new ExportClient(weir.httpUrl()).export(TENANT, "live_metric");
    assertThat(got).hasSize(SERIES);
    for (ExportClient.Series series : got.values()) {
      int s = Integer.parseInt(series.labels().replaceAll(".*series=\"(\\d+)\".*", "$1"));
      List<Long> ts = new ArrayList<>();
      List<Double> vs = new ArrayList<>();
      for (int k = 0; k < points; k++) {
        ts.add(base + k * STEP_MS);
        vs.add(value(s, k));
      }
      assertThat(series.timestamps()).as(series.labels()).isEqualTo(ts);
      assertThat(series.values()).as(series.labels()).isEqualTo(vs);
    }
  }
}
