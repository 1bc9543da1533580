package dev.weir.ingester.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.prompb.BucketSpan;
import dev.weir.proto.prompb.Histogram;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireSeries;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Native histograms through the ingester's push path: limits, reduction, refusals, restart. */
public class IngesterHistogramTest {
  static final long NOW = 1_700_000_000_000L;

  @TempDir
  Path dir;

  private final AtomicReference<Limits> limits = new AtomicReference<>(Limits.DEFAULT);
  private PrometheusMeterRegistry registry;
  private Ingester ingester;

  @BeforeEach
  void start() throws Exception {
    ingester = open();
  }

  private Ingester open() throws Exception {
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir), new TsdbMetrics(registry), () -> NOW, t -> () -> 500);
    Ingester ing = new Ingester(new IngesterConfig("ingester-0", dir, Duration.ofMinutes(20)), tsdb,
        t -> limits.get(), new IngesterMetrics(registry, () -> NOW, 1_200_000), () -> NOW);
    ing.start();
    return ing;
  }

  @AfterEach
  void stop() {
    ingester.stop();
  }

  /** {@code n} schema-3 buckets at indexes 1..n, each with count 1, as an integer histogram. */
  static Histogram wide(int n, long t) {
    Histogram.Builder h = Histogram.newBuilder().setSchema(3).setSum(n).setCountInt(n).setTimestamp(t)
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(1).setLength(n));
    for (int i = 0; i < n; i++) {
      h.addPositiveDeltas(i == 0 ? 1 : 0);
    }
    return h.build();
  }

  static WriteRequest request(String name, Histogram... hs) {
    TimeSeries.Builder ts = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue(name));
    for (Histogram h : hs) {
      ts.addHistograms(h);
    }
    return WriteRequest.newBuilder().addTimeseries(ts).build();
  }

  private SeriesChunks.Histograms stored(String name) {
    List<SeriesChunks> s = ingester.select("t", Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.eq("__name__", name)));
    return s.isEmpty() ? new SeriesChunks.Histograms(new long[0], new NativeHistogram[0])
        : s.get(0).histograms(Long.MIN_VALUE, Long.MAX_VALUE);
  }

  private double discarded(String reason) {
    return registry.scrape().lines().filter(l -> l.startsWith("weir_discarded_samples_total{")
        && l.contains("reason=\"" + reason + "\"")).mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ')
            + 1))).sum();
  }

  @Test
  void storesHistogramsFromTheWireAndFromObjects() {
    ingester.push("t", request("objects", wide(4, NOW - 2_000), wide(4, NOW - 1_000)));
    ingester.push("t", WireBatch.scan(request("bytes", wide(5, NOW - 1_000)).toByteArray()));
    assertThat(stored("objects").size()).isEqualTo(2);
    SeriesChunks.Histograms b = stored("bytes");
    assertThat(b.size()).isEqualTo(1);
    assertThat(b.timestamps()[0]).isEqualTo(NOW - 1_000);
    assertThat(b.histograms()[0].positiveBuckets()).containsExactly(1, 1, 1, 1, 1);
    assertThat(b.histograms()[0].count()).isEqualTo(5);
  }

  /**
   * Schema 12 at positive indexes 1, 2, 3, 17, 18, 40 (counts 1..6) and negative -16, -15, 1
   * (counts 2, 3, 4): at schema 8 index i becomes ((i - 1) >> 4) + 1.
   */
  public static Histogram schema12(long t) {
    return Histogram.newBuilder().setSchema(12).setCountInt(31).setSum(100).setZeroThreshold(1e-9).setZeroCountInt(1)
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(1).setLength(3))
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(13).setLength(2))
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(21).setLength(1))
        .addAllPositiveDeltas(List.of(1L, 1L, 1L, 1L, 1L, 1L))
        .addNegativeSpans(BucketSpan.newBuilder().setOffset(-16).setLength(2))
        .addNegativeSpans(BucketSpan.newBuilder().setOffset(15).setLength(1))
        .addAllNegativeDeltas(List.of(2L, 1L, 1L)).setTimestamp(t).build();
  }

  static void assertSchema8(NativeHistogram h) {
    assertThat(h.schema()).isEqualTo(8);
    assertThat(h.positiveSpans()).containsExactly(1, 3);
    assertThat(h.positiveBuckets()).containsExactly(6, 9, 6); // 1+2+3, 4+5, 6
    assertThat(h.negativeSpans()).containsExactly(-1, 3);
    assertThat(h.negativeBuckets()).containsExactly(2, 3, 4);
    assertThat(h.count()).isEqualTo(31);
    assertThat(h.zeroCount()).isEqualTo(1);
    assertThat(h.sum()).isEqualTo(100);
  }

  private static org.apache.kafka.common.header.Headers version(int v) {
    return new org.apache.kafka.common.header.internals.RecordHeaders(List.of(
        new org.apache.kafka.common.header.internals.RecordHeader(dev.weir.storage.ingest.RecordFormat.VERSION_HEADER,
            String.valueOf(v).getBytes(java.nio.charset.StandardCharsets.UTF_8))));
  }

  @Test
  void storesASchemaAboveEightAtEightOnEveryPath() {
    ingester.push("t", request("objects", schema12(NOW - 1_000)));
    ingester.push("t", WireBatch.scan(request("rw1_bytes", schema12(NOW - 1_000)).toByteArray()));
    byte[] key = "t".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    for (int v = 1; v <= 2; v++) {
      // A Kafka record as the reader decodes it (the distributor reduced it already; a record
      // written by another producer is reduced here).
      byte[] record = dev.weir.storage.ingest.RecordFormat.encode(request("kafka_v" + v, schema12(NOW - 1_000)), v,
          Integer.MAX_VALUE).get(0);
      ingester.push("t", dev.weir.storage.ingest.RecordFormat.decodeWire(key, record, version(v), new WireSeries())
          .batch());
    }
    for (String name : List.of("objects", "rw1_bytes", "kafka_v1", "kafka_v2")) {
      SeriesChunks.Histograms h = stored(name);
      assertThat(h.size()).as(name).isEqualTo(1);
      assertSchema8(h.histograms()[0]);
    }
    assertThat(discarded("invalid_native_histogram_schema")).isZero();
  }

  @Test
  void refusesAnIntegerCountThatDisagreesWithItsBucketsAndStoresTheRest() {
    Histogram wrong = schema12(NOW - 2_000).toBuilder().setCountInt(30).build();
    assertThatThrownBy(() -> ingester.push("t", request("counted", wrong, schema12(NOW - 1_000))))
        .isInstanceOfSatisfying(PartialWriteException.class, e -> {
          assertThat(e.reason()).isEqualTo("native_histogram_count_mismatch");
          assertThat(e.getMessage()).contains("31 observations in its buckets but a count of 30", "counted{}");
          assertThat(e.refusedHistograms()).isEqualTo(1);
        });
    assertThat(stored("counted").timestamps()).containsExactly(NOW - 1_000);
    assertThat(discarded("native_histogram_count_mismatch")).isEqualTo(1);
  }

  @Test
  void reducesResolutionOverTheBucketLimit() {
    limits.set(Limits.DEFAULT.withNativeHistograms(10, true, true));
    ingester.push("t", WireBatch.parse(request("wide", wide(40, NOW - 1_000)).toByteArray(), new WireSeries()));
    NativeHistogram h = stored("wide").histograms()[0];
    assertThat(h.schema()).isEqualTo(1); // 40 buckets at 3 -> 20 at 2 -> 10 at 1
    assertThat(h.bucketCount()).isEqualTo(10);
    assertThat(h.count()).isEqualTo(40);
    assertThat(discarded("max_native_histogram_buckets")).isZero();
  }

  @Test
  void refusesOverTheBucketLimitWhenReductionIsOffAndStoresTheRest() {
    limits.set(Limits.DEFAULT.withNativeHistograms(10, false, true));
    WriteRequest r = request("wide", wide(11, NOW - 2_000), wide(10, NOW - 1_000));
    assertThatThrownBy(() -> ingester.push("t", r)).isInstanceOfSatisfying(PartialWriteException.class, e -> {
      assertThat(e.reason()).isEqualTo("max_native_histogram_buckets");
      assertThat(e.getMessage()).contains("actual: 11, limit: 10").contains("wide{}");
      assertThat(e.refused()).isEqualTo(1);
      assertThat(e.refusedHistograms()).isEqualTo(1);
    });
    assertThat(stored("wide").timestamps()).containsExactly(NOW - 1_000);
    assertThat(discarded("max_native_histogram_buckets")).isEqualTo(1);
  }

  @Test
  void refusesWhatCannotBeReducedEnough() {
    limits.set(Limits.DEFAULT.withNativeHistograms(1, true, true));
    Histogram twoFarApart = Histogram.newBuilder().setSchema(-4).setCountInt(2).setSum(1).setTimestamp(NOW)
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(0).setLength(1))
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(5).setLength(1)).addPositiveDeltas(1).addPositiveDeltas(0)
        .build();
    assertThatThrownBy(() -> ingester.push("t", request("low", twoFarApart)))
        .hasMessageContaining("cannot be lowered enough");
    assertThat(stored("low").size()).isZero();
  }

  @Test
  void refusesHistogramsWhenIngestionIsDisabledButKeepsFloats() {
    limits.set(Limits.DEFAULT.withNativeHistograms(0, true, false));
    WriteRequest r = WriteRequest.newBuilder().addTimeseries(request("mixed", wide(3, NOW)).getTimeseries(0)
        .toBuilder().addSamples(Sample.newBuilder().setTimestamp(NOW - 5).setValue(2))).build();
    assertThatThrownBy(() -> ingester.push("t", WireBatch.scan(r.toByteArray())))
        .isInstanceOfSatisfying(PartialWriteException.class, e -> {
          assertThat(e.reason()).isEqualTo("native_histograms_disabled");
          assertThat(e.refusedHistograms()).isEqualTo(1);
        });
    assertThat(stored("mixed").size()).isZero();
    List<SeriesChunks> s = ingester.select("t", 0, Long.MAX_VALUE, List.of(Matcher.eq("__name__", "mixed")));
    assertThat(s.get(0).samples(0, Long.MAX_VALUE).size()).isEqualTo(1);
  }

  @Test
  void headRefusalsCountAsHistograms() {
    ingester.push("t", request("h", wide(3, NOW - 1_000)));
    assertThatThrownBy(() -> ingester.push("t", request("h", wide(3, NOW - 2_000), wide(4, NOW - 1_000))))
        .isInstanceOfSatisfying(PartialWriteException.class, e -> {
          assertThat(e.reason()).isEqualTo("sample_out_of_order");
          assertThat(e.refused()).isEqualTo(2);
          assertThat(e.refusedHistograms()).isEqualTo(2);
        });
  }

  @Test
  void histogramsSurviveARestartThroughTheWal() throws Exception {
    for (int i = 0; i < 300; i++) {
      ingester.push("t", request("h", wide(1 + i % 7, NOW - 600_000 + i * 1_000L)));
    }
    SeriesChunks.Histograms before = stored("h");
    ingester.stop();
    ingester = open();
    SeriesChunks.Histograms after = stored("h");
    assertThat(after.size()).isEqualTo(300);
    assertThat(after.timestamps()).containsExactly(before.timestamps());
    assertThat(after.histograms()).containsExactly(before.histograms());
  }
}
