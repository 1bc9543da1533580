package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.testing.Promtool;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.wal.Checkpoint;
import dev.weir.storage.tsdb.wal.Wal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prometheus 2.42's {@code promtool tsdb dump} replays Weir's WAL like its own: segments over
 * several pages and segments, a checkpoint, and SOURCE records (Kafka offsets, which Prometheus
 * must skip, not call corruption), on an open Tsdb.
 */
class PromtoolWalIT {
  static final long RANGE = 60_000;
  @TempDir Path dir;

  @Test
  void promtoolDumpsTheHeadFromAWalWithCheckpointAndSourceRecords() throws Exception {
    Tsdb t = new Tsdb(TsdbConfig.defaults(dir.resolve("data")).withHead(new HeadConfig(RANGE, 120))
        .withWalSegmentBytes(64 * 1024), TsdbMetrics.noop(), () -> 1_000, tenant -> () -> 0);
    t.open();
    Map<String, List<String>> wrote = new TreeMap<>();
    try {
      Appender app = t.head("a").appender();
      long offset = 1L << 40; // above 2^32: kept exactly in the record's timestamp field
      for (long ts = 0; ts < 200_000; ts += 1000) {
        app.source(offset++);
        for (int s = 0; s < 50; s++) {
          Labels l = Labels.of("__name__", "m", "s", String.format("%02d", s), "pad", "x".repeat(200));
          double v = ts / 1000.0 + s + 0.5;
          app.add(app.series(l), ts, v);
          wrote.computeIfAbsent(Promtool.key(l), k -> new ArrayList<>()).add(Promtool.format(v) + " " + ts);
        }
        assertThat(app.commit(true).rejections()).isEmpty();
      }
      t.compactAll(); // blocks, and a checkpoint of what the head keeps
      Path walDir = dir.resolve("data/tsdb/a/wal");
      assertThat(Checkpoint.latest(walDir)).isNotNull();
      assertThat(Wal.segments(walDir)).isNotEmpty();
      assertThat(t.tenant("a").blocks()).isNotEmpty();

      Map<String, List<String>> dumped = Promtool.dumpInPlace(dir.resolve("data/tsdb/a"));
      assertThat(dumped).isEqualTo(wrote);
    } finally {
      t.close();
    }
    Tsdb again = new Tsdb(TsdbConfig.defaults(dir.resolve("data")).withHead(new HeadConfig(RANGE, 120)),
        TsdbMetrics.noop(), () -> 1_000, tenant -> () -> 0);
    again.open();
    try {
      assertThat(again.replayReport().maxSourceOffset()).isEqualTo((1L << 40) + 199);
      assertThat(again.replayReport().droppedBytes()).isZero();
      assertThat(again.replayReport().repairedCorruption()).isFalse();
    } finally {
      again.close();
    }
  }
}
