package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.RemoteClient;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.Query;
import dev.weir.proto.prompb.ReadRequest;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The out-of-order window in a real process: every push carries each series' next in-order sample
 * and one older sample between its previous two (out of order, into the OOO head and the WBL).
 * Kill -9 at random moments, twice: after each restart every acknowledged sample, in order and
 * out of order, is found exactly once, by export and by streamed remote read (whose chunks must not
 * overlap). Block range 1m with compaction every second, so in-order and out-of-order compactions
 * (blocks overlapping the head's range) happen between the kills, and kills may land in them; a
 * last phase without kills waits for an out-of-order compaction to complete and checks again.
 */
class OutOfOrderIT {
  static final int SERIES = 50;
  static final long STEP_MS = 2_000;

  @TempDir Path dir;

  /** Push k: in order at base + k·step, out of order at base + k·step - step/2 (k ≥ 1). */
  private static WriteRequest request(long base, long k) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int s = 0; s < SERIES; s++) {
      TimeSeries.Builder ts = TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue("ooo_test"))
          .addLabels(Label.newBuilder().setName("series").setValue(String.format("%03d", s)))
          .addSamples(Sample.newBuilder().setTimestamp(base + k * STEP_MS).setValue(value(k * STEP_MS, s)));
      if (k > 0) {
        long late = k * STEP_MS - STEP_MS / 2;
        ts.addSamples(Sample.newBuilder().setTimestamp(base + late).setValue(value(late, s)));
      }
      b.addTimeseries(ts);
    }
    return b.build();
  }

  private static double value(long offset, int s) {
    return offset * 10.0 + s;
  }

  /** The samples pushes 0..last wrote for series s, sorted. */
  private static List<String> expected(long base, long last, int s) {
    List<String> out = new ArrayList<>();
    for (long k = 0; k <= last; k++) {
      if (k > 0) {
        long late = k * STEP_MS - STEP_MS / 2;
        out.add(RemoteClient.sample(base + late, value(late, s)));
      }
      out.add(RemoteClient.sample(base + k * STEP_MS, value(k * STEP_MS, s)));
    }
    return out;
  }

  @Test
  void acknowledgedOutOfOrderSamplesSurviveKillNineAndCompactionExactlyOnce() throws Exception {
    Random random = new Random(17);
    long base = System.currentTimeMillis() - 3_600_000L;
    long acked = -1;
    try (WeirProcess weir = WeirProcess.start(dir, "--auth.multitenancy-enabled=false",
        "--ingester.out-of-order-time-window=10m",
        "--blocks-storage.tsdb.block-ranges-period=1m", "--blocks-storage.tsdb.head-compaction-interval=1s",
        "--blocks-storage.tsdb.ship-interval=0")) {
      RemoteClient client = new RemoteClient(weir.httpUrl());
      for (int round = 0; round < 2; round++) {
        AtomicLong lastAck = new AtomicLong(acked);
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService writer = Executors.newSingleThreadExecutor();
        long start = acked + 1;
        Future<?> load = writer.submit(() -> {
          for (long k = start; !stop.get(); k++) {
            try {
              client.write(request(base, k));
              lastAck.set(k);
            } catch (Exception e) {
              return; // the process died mid-push: k is in flight
            }
          }
        });
        // past 1.5 block ranges (45 pushes) in the first round, so compactions run before a kill
        long needed = round == 0 ? 60 : start + 10;
        await().atMost(30, TimeUnit.SECONDS).until(() -> lastAck.get() >= needed || load.isDone());
        Thread.sleep(random.nextInt(1_000));
        weir.kill();
        stop.set(true);
        load.get(30, TimeUnit.SECONDS);
        writer.shutdown();
        acked = lastAck.get();
        weir.restart();

        verify(weir, client, base, acked, round);
        System.out.printf("ooo round %d: acknowledged up to push %d%n", round, acked);
      }
      // A kill may land in the middle of a compaction: write two more block ranges without kills, so
      // an out-of-order compaction surely completes, and check once more.
      int compactions = count(weir.log(), "out-of-order head compacted into block");
      for (long k = acked + 1; k <= acked + 60; k++) {
        client.write(request(base, k));
      }
      acked += 60;
      await().atMost(20, TimeUnit.SECONDS)
          .until(() -> count(weir.log(), "out-of-order head compacted into block") > compactions);
      verify(weir, client, base, acked, 2);
      assertThat(weir.log()).contains("msg=\"WBL replayed\"");
      assertThat(weir.metricSum(n -> n.equals("weir_discarded_samples_total"))).as("nothing refused")
          .isIn(Double.NaN, 0.0);
      assertThat(acked).as("the load made progress").isGreaterThan(65);
    }
    assertThat(Files.isDirectory(dir.resolve("data/tsdb/anonymous/wbl"))).isTrue();
  }

  /** Every acknowledged sample once, in time order, by export and by streamed remote read. */
  private static void verify(WeirProcess weir, RemoteClient client, long base, long acked, int round)
      throws Exception {
    Map<String, ExportClient.Series> got = new ExportClient(weir.httpUrl()).export(null, "ooo_test");
    assertThat(got).as("round %d: all series", round).hasSize(SERIES);
    Map<String, List<String>> streamed = client.readStreamed(readAll(base), base - STEP_MS, Long.MAX_VALUE);
    for (ExportClient.Series s : got.values()) {
      int idx = Integer.parseInt(s.labels().replaceAll(".*series=\"(\\d+)\".*", "$1"));
      List<String> found = new ArrayList<>();
      for (int i = 0; i < s.timestamps().size(); i++) {
        found.add(RemoteClient.sample(s.timestamps().get(i), s.values().get(i)));
      }
      List<String> want = expected(base, acked, idx);
      // the push in flight at the kill is not acknowledged: its samples may be there or not
      assertThat(found).as("round %d %s: every acknowledged sample once, in order", round, s.labels())
          .startsWith(want.toArray(String[]::new));
      assertThat(expected(base, acked + 1, idx)).as("round %d: nothing that was not sent", round)
          .containsAll(found);
      assertThat(streamed.get(s.labels())).as("round %d %s: streamed chunks merged", round, s.labels())
          .isEqualTo(found);
    }
  }

  private static int count(String text, String part) {
    return text.split(java.util.regex.Pattern.quote(part), -1).length - 1;
  }

  private static ReadRequest readAll(long base) {
    return ReadRequest.newBuilder().addQueries(Query.newBuilder().setStartTimestampMs(base - STEP_MS)
        .setEndTimestampMs(Long.MAX_VALUE).addMatchers(LabelMatcher.newBuilder().setType(LabelMatcher.Type.EQ)
            .setName("__name__").setValue("ooo_test"))).build();
  }
}
