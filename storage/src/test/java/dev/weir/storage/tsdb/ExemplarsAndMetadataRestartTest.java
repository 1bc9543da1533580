package dev.weir.storage.tsdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.MetricMetadata.MetricType;
import dev.weir.storage.tsdb.block.Block;
import dev.weir.storage.tsdb.head.Appender;
import dev.weir.storage.tsdb.head.Exemplar;
import dev.weir.storage.tsdb.head.HeadConfig;
import dev.weir.storage.tsdb.head.HeadExemplars;
import dev.weir.storage.tsdb.head.MemSeries;
import dev.weir.storage.tsdb.head.SeriesExemplars;
import dev.weir.storage.tsdb.labels.Labels;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Exemplars and metadata through the WAL, checkpoints and block side files, across restarts. */
class ExemplarsAndMetadataRestartTest {
  static final long RANGE = 60_000;
  @TempDir Path dir;
  private final List<Tsdb> open = new ArrayList<>();
  private int exemplarLimit = 5;

  private Tsdb openTsdb() throws Exception {
    TsdbConfig cfg = TsdbConfig.defaults(dir).withHead(new HeadConfig(RANGE, 120)).withWalSegmentBytes(8 * 1024);
    Tsdb t = new Tsdb(cfg, new TsdbMetrics(new SimpleMeterRegistry()), () -> 1_000, tenant -> () -> 0);
    t.exemplarLimits(tenant -> () -> exemplarLimit);
    t.open();
    open.add(t);
    return t;
  }

  @AfterEach
  void closeAll() {
    open.forEach(Tsdb::close);
  }

  private void close(Tsdb t) {
    t.close();
    open.remove(t);
  }

  private static Labels series(int i) {
    return Labels.of("__name__", "req_total", "s", String.valueOf(i));
  }

  /** One sample and one exemplar per series at {@code t}; returns the commit's exemplar result. */
  private static HeadExemplars.Result write(Tsdb t, int series, long ts) {
    Appender app = t.head("a").appender();
    for (int i = 0; i < series; i++) {
      MemSeries s = app.series(series(i));
      app.add(s, ts, ts);
      app.exemplar(s, new Exemplar(Labels.of("trace_id", i + "-" + ts), ts + 0.5, ts));
    }
    app.commit(true);
    HeadExemplars.Result r = app.exemplarResult();
    assertThat(r).isNotNull();
    return r;
  }

  /** "series@timestamp" of every exemplar held, in label then time order. */
  private static List<String> exemplars(Tsdb t) {
    List<String> out = new ArrayList<>();
    for (SeriesExemplars s : t.head("a").exemplars().select(Long.MIN_VALUE, Long.MAX_VALUE, List.of())) {
      for (Exemplar e : s.exemplars()) {
        assertThat(e.value()).isEqualTo(e.timestamp() + 0.5);
        assertThat(e.labels().get("trace_id")).isEqualTo(s.seriesLabels().get("s") + "-" + e.timestamp());
        out.add(s.seriesLabels().get("s") + "@" + e.timestamp());
      }
    }
    return out;
  }

  private static MetricMetadata meta(String family, String help) {
    return MetricMetadata.newBuilder().setMetricFamilyName(family).setType(MetricType.COUNTER).setHelp(help)
        .setUnit("requests").build();
  }

  @Test
  void exemplarsWithinTheLimitAndMetadataSurviveARestart() throws Exception {
    Tsdb t = openTsdb();
    write(t, 2, 1_000);
    write(t, 2, 2_000);
    HeadExemplars.Result r = write(t, 2, 3_000); // 6 written, the limit is 5: s0@1000 is evicted
    assertThat(r.added()).isEqualTo(2);
    t.head("a").metadata().commit(List.of(meta("req", "old help")), true);
    t.head("a").metadata().commit(List.of(meta("req", "new help"), meta("gone", "no series")), true);
    List<String> before = exemplars(t);
    assertThat(before).containsExactly("0@2000", "0@3000", "1@1000", "1@2000", "1@3000");
    close(t);

    Tsdb again = openTsdb();
    assertThat(exemplars(again)).isEqualTo(before);
    assertThat(again.head("a").metadata().all()).containsEntry("req", meta("req", "new help"))
        .containsEntry("gone", meta("gone", "no series"));
    // A resend of a stored exemplar is a duplicate; an older one is out of order.
    Appender app = again.head("a").appender();
    MemSeries s1 = app.series(series(1));
    app.exemplar(s1, new Exemplar(Labels.of("trace_id", "1-3000"), 3_000.5, 3_000));
    app.exemplar(s1, new Exemplar(Labels.of("trace_id", "1-2500"), 2_500.5, 2_500));
    app.commit(true);
    assertThat(app.exemplarResult()).extracting(HeadExemplars.Result::duplicates, HeadExemplars.Result::outOfOrder)
        .containsExactly(1, 1);
  }

  @Test
  void aLowerLimitAfterARestartKeepsTheNewest() throws Exception {
    Tsdb t = openTsdb();
    write(t, 1, 1_000);
    write(t, 1, 2_000);
    write(t, 1, 3_000);
    close(t);
    exemplarLimit = 2;
    Tsdb again = openTsdb();
    assertThat(exemplars(again)).containsExactly("0@2000", "0@3000");
  }

  @Test
  void checkpointsKeepLiveExemplarsAndMetadataAndBlocksCarryTheMetadataSideFile() throws Exception {
    exemplarLimit = 100;
    Tsdb t = openTsdb();
    t.head("a").metadata().commit(List.of(meta("req", "help"), meta("other", "not in any block")), true);
    for (long ts = 0; ts < 300_000; ts += 10_000) {
      write(t, 2, ts);
    }
    t.compactAll(); // blocks up to 240 s, head truncated, WAL checkpointed
    TenantDb db = t.tenant("a");
    assertThat(db.blocks()).isNotEmpty();
    for (Block b : db.blocks()) {
      assertThat(MetadataFile.read(b.dir())).containsOnlyKeys("req");
    }
    List<String> before = exemplars(t);
    assertThat(before).hasSize(60);
    close(t);

    Tsdb again = openTsdb();
    assertThat(exemplars(again)).isEqualTo(before);
    // The checkpoint kept the family with series in the head; one that never had a series is gone.
    assertThat(again.head("a").metadata().all()).containsOnlyKeys("req");

    // Once every series left the head, the blocks' side files still know the family.
    close(again);
    Path wal = dir.resolve("tsdb/a/wal");
    try (var files = Files.walk(wal)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
    Tsdb fromBlocks = openTsdb();
    assertThat(fromBlocks.head("a").metadata().all()).containsOnlyKeys("req");
    assertThat(fromBlocks.head("a").metadata().all().get("req")).isEqualTo(meta("req", "help"));
  }

  @Test
  void anExemplarOfASeriesThatTruncationRemovedMeanwhileGoesToTheRecreatedSeries() throws Exception {
    Tsdb t = openTsdb();
    write(t, 1, 1_000);
    Appender app = t.head("a").appender();
    MemSeries stale = app.series(series(0)); // looked up before the series leaves the head
    t.head("a").truncate(2_000); // as a compaction does: the series holds nothing newer
    assertThat(t.head("a").numSeries()).isZero();
    app.add(stale, 3_000, 3_000); // the sample commit recreates the series
    app.exemplar(stale, new Exemplar(Labels.of("trace_id", "0-3000"), 3_000.5, 3_000));
    assertThat(app.commit(true).rejections()).isEmpty();
    assertThat(app.exemplarResult()).extracting(HeadExemplars.Result::added, HeadExemplars.Result::outOfOrder)
        .containsExactly(1, 0);
    assertThat(exemplars(t)).contains("0@3000");
    close(t);
    assertThat(exemplars(openTsdb())).as("logged under the recreated series' ref").contains("0@3000");
  }
}
