package dev.weir.ingester.push;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.prompb.BucketSpan;
import dev.weir.proto.prompb.Histogram;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.Tsdb;
import dev.weir.storage.tsdb.TsdbConfig;
import dev.weir.storage.tsdb.TsdbMetrics;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireSeries;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The byte-level push path ({@link Ingester#push(String, WireBatch, boolean)}) against the
 * protobuf-object path on the same random traffic: the same errors (reason and message), the same
 * discarded-sample counts, the same stored data — including series refused by limits lowered
 * after they were created, non-ASCII, unsorted and duplicate labels.
 */
class IngesterWirePathTest {
  static final long NOW = 1_700_000_000_000L;

  @TempDir
  Path dir;

  record Side(Ingester ingester, PrometheusMeterRegistry registry) {}

  Side side(String name, AtomicReference<Limits> limits) throws Exception {
    return side(name, limits, 500);
  }

  /** An ingester whose tenants may hold {@code maxSeries} series each. */
  Side side(String name, AtomicReference<Limits> limits, int maxSeries) throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Tsdb tsdb = new Tsdb(TsdbConfig.defaults(dir.resolve(name)), new TsdbMetrics(registry), () -> NOW,
        t -> () -> maxSeries);
    Ingester ing = new Ingester(new IngesterConfig("ingester-0", dir.resolve(name), Duration.ofMinutes(20)), tsdb,
        t -> limits.get(), new IngesterMetrics(registry, () -> NOW, 1_200_000), () -> NOW);
    ing.start();
    return new Side(ing, registry);
  }

  static final String[][] POOL = {
    {"__name__", "up", "job", "api"},
    {"__name__", "up", "job", "db"},
    {"job", "api", "__name__", "up_unsorted"},
    {"__name__", "http_requests_total", "code", "200", "method", "GET"},
    {"__name__", "ünïcode", "job", "x"},
    {"__name__", "caf", "city", "zürich"},
    {"__name__", "9bad"},
    {"job", "no_name"},
    {"__name__", "empty", "job", ""},
    {"__name__", "dup", "a", "1", "a", "2"},
    {"__name__", "bad_label", "1x", "y"},
    {"__name__", "long_value", "v", "x".repeat(40)},
    {"__name__", "longer_value", "v", "y".repeat(200)}, // lengths as two-byte varints
    {"__name__", "long_name", "n".repeat(130), "1"},
    {"A_before_name", "1", "__name__", "upper_first"}, // sorts before __name__
    {"__name__", "many", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5"},
  };

  static TimeSeries series(Random rnd, long base) {
    String[] p = POOL[rnd.nextInt(POOL.length)];
    TimeSeries.Builder ts = TimeSeries.newBuilder();
    for (int i = 0; i < p.length; i += 2) {
      ts.addLabels(Label.newBuilder().setName(p[i]).setValue(p[i + 1]));
    }
    int n = rnd.nextInt(4);
    for (int i = 0; i < n; i++) {
      long t = switch (rnd.nextInt(8)) {
        case 0 -> NOW + Duration.ofHours(1).toMillis(); // too far in the future
        case 1 -> base - 60_000; // out of order once newer samples exist
        default -> base + i * 1000L;
      };
      ts.addSamples(Sample.newBuilder().setTimestamp(t).setValue(rnd.nextInt(3)));
    }
    if (rnd.nextInt(4) == 0) {
      ts.addHistograms(histogram(rnd).setTimestamp(rnd.nextInt(6) == 0 ? base - 60_000 : base + 500));
    }
    return ts.build();
  }

  /** A random native histogram: empty, integer or float, sometimes over 8 buckets, sometimes inconsistent. */
  static Histogram.Builder histogram(Random rnd) {
    int buckets = rnd.nextInt(20);
    Histogram.Builder h = Histogram.newBuilder().setSchema(rnd.nextInt(4)).setSum(rnd.nextInt(100))
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(rnd.nextInt(5) - 2).setLength(buckets));
    long count = 0;
    int prev = 0;
    boolean isFloat = rnd.nextBoolean();
    for (int i = 0; i < buckets; i++) {
      int c = rnd.nextInt(4);
      count += c;
      if (isFloat) {
        h.addPositiveCounts(c);
      } else {
        h.addPositiveDeltas(c - prev); // integer buckets travel as the difference to the previous one
      }
      prev = c;
    }
    if (isFloat) {
      h.setCountFloat(count);
    } else {
      h.setCountInt(count);
    }
    if (rnd.nextInt(8) == 0) {
      h.addPositiveDeltas(1); // one bucket more than the spans describe
    }
    return h;
  }

  static String outcome(Runnable push) {
    try {
      push.run();
      return "ok";
    } catch (ClientErrorException e) {
      return e.reason() + ": " + e.getMessage();
    }
  }

  static String dump(Ingester ing) {
    List<SeriesChunks> all = ing.select("t", Long.MIN_VALUE, Long.MAX_VALUE, List.of(Matcher.re("__name__", ".+")));
    return all.stream().map(s -> {
      SeriesChunks.Samples smp = s.samples(Long.MIN_VALUE, Long.MAX_VALUE);
      StringBuilder b = new StringBuilder(s.labels().toString());
      for (int i = 0; i < smp.size(); i++) {
        b.append(' ').append(smp.timestamps()[i]).append('=').append(smp.values()[i]);
      }
      SeriesChunks.Histograms hs = s.histograms(Long.MIN_VALUE, Long.MAX_VALUE);
      for (int i = 0; i < hs.size(); i++) {
        b.append(' ').append(hs.timestamps()[i]).append('=').append(hs.histograms()[i]);
      }
      return b.toString();
    }).collect(Collectors.joining("\n"));
  }

  static String discarded(PrometheusMeterRegistry r) {
    return r.scrape().lines().filter(l -> l.startsWith("cortex_discarded_samples_total")
        || l.startsWith("weir_discarded")).sorted().collect(Collectors.joining("\n"));
  }

  @Test
  void sameErrorsAndDataAsTheProtobufPath() throws Exception {
    Side[] sides = differential("", new Limits(6, 1024, 2048, Duration.ofMinutes(10), 0)
        .withNativeHistograms(8, true, true), new Limits(3, 1024, 20, Duration.ofMinutes(10), 0)
        .withNativeHistograms(8, false, true), 500, 11);
    assertThat(discarded(sides[0].registry())).contains("max_native_histogram_buckets")
        .contains("native_histogram_span_bucket_mismatch");
    assertThat(dump(sides[0].ingester())).contains("zürich").contains("up_unsorted").contains("long_value").contains("Histogram{")
        .contains("FloatHistogram{").contains("y".repeat(200)).contains("n".repeat(130)).contains("upper_first");
    stop(sides);
  }

  /**
   * New series are created from their request bytes when those pass every check on the bytes: the
   * tenant's series limit refuses them with the same message as on the protobuf path.
   */
  @Test
  void sameErrorsAndDataUnderASeriesLimit() throws Exception {
    Limits l = new Limits(6, 1024, 2048, Duration.ofMinutes(10), 0).withNativeHistograms(8, true, true);
    Side[] sides = differential("limited-", l, l, 5, 5);
    assertThat(dump(sides[0].ingester()).lines().count()).isEqualTo(5);
    assertThat(discarded(sides[0].registry())).contains("per_user_series_limit");
    stop(sides);
  }

  static void stop(Side[] sides) {
    for (Side s : sides) {
      s.ingester().stop();
    }
  }

  /**
   * Random traffic through both paths, {@code later} the limits from round 200 on; checks that
   * both stored the same and refused the same, and returns them (protobuf path first).
   */
  Side[] differential(String prefix, Limits first, Limits later, int maxSeries, long seed) throws Exception {
    AtomicReference<Limits> limits = new AtomicReference<>(first);
    Side objects = side(prefix + "objects", limits, maxSeries);
    Side wire = side(prefix + "wire", limits, maxSeries);
    Random rnd = new Random(seed);
    WireSeries cursor = new WireSeries();
    int errors = 0;
    for (int round = 0; round < 400; round++) {
      if (round == 200) {
        // Lowered at runtime: existing series over the new limits are refused on both paths.
        limits.set(later);
      }
      long base = NOW - 3_600_000 + round * 5_000L;
      WriteRequest.Builder req = WriteRequest.newBuilder();
      int n = 1 + rnd.nextInt(6);
      for (int i = 0; i < n; i++) {
        req.addTimeseries(series(rnd, base));
      }
      WriteRequest r = req.build();
      String a = outcome(() -> objects.ingester().push("t", r));
      // Both readers: parsed (checked up front, the Kafka reader's) and scanned (checked while read, remote write's).
      WireBatch batch = round % 2 == 0 ? WireBatch.parse(r.toByteArray(), cursor) : WireBatch.scan(r.toByteArray());
      String b = outcome(() -> wire.ingester().push("t", batch));
      assertThat(b).as("round %d: %s", round, r).isEqualTo(a);
      if (!a.equals("ok")) {
        errors++;
      }
    }
    assertThat(errors).as("the traffic exercises refusals").isGreaterThan(100);
    assertThat(dump(wire.ingester())).isNotEmpty().isEqualTo(dump(objects.ingester()));
    assertThat(discarded(wire.registry())).isNotEmpty().isEqualTo(discarded(objects.registry()));
    return new Side[] {objects, wire};
  }

  @Test
  void aBrokenSeriesRefusesTheWholeScannedRequest() throws Exception {
    AtomicReference<Limits> limits = new AtomicReference<>(Limits.DEFAULT);
    Side wire = side("broken", limits);
    long t = NOW - 60_000;
    TimeSeries good = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("good"))
        .addSamples(Sample.newBuilder().setTimestamp(t).setValue(1)).build();
    byte[] ok = WriteRequest.newBuilder().addTimeseries(good).build().toByteArray();
    // A second series whose label claims 5 bytes but holds 1: the request's top level is fine.
    byte[] broken = {0x0a, 3, 0x0a, 1, 0x0a};
    byte[] body = java.util.Arrays.copyOf(ok, ok.length + broken.length);
    System.arraycopy(broken, 0, body, ok.length, broken.length);
    WireBatch scanned = WireBatch.scan(body);
    assertThat(scanned.size()).isEqualTo(2);
    String out = outcome(() -> wire.ingester().push("t", scanned));
    assertThat(out).startsWith("bad_data: the request is not a valid remote write request");
    assertThat(dump(wire.ingester())).as("nothing of the request is stored").isEmpty();
    wire.ingester().stop();
  }

  @Test
  void aMalformedHistogramRefusesTheWholeRequestAsAClientError() throws Exception {
    AtomicReference<Limits> limits = new AtomicReference<>(Limits.DEFAULT);
    Side wire = side("broken-histogram", limits);
    long t = NOW - 60_000;
    TimeSeries good = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("good"))
        .addSamples(Sample.newBuilder().setTimestamp(t).setValue(1)).build();
    byte[] labels = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("h")).build()
        .toByteArray();
    // Field 4 (a Histogram) holding field 1 (count) as a varint cut short: the series' own
    // structure is fine, so parse accepts the request; the histogram's bytes are not.
    byte[] histogram = {0x22, 2, 0x08, (byte) 0xff};
    byte[] series = java.util.Arrays.copyOf(labels, labels.length + histogram.length);
    System.arraycopy(histogram, 0, series, labels.length, histogram.length);
    byte[] ok = WriteRequest.newBuilder().addTimeseries(good).build().toByteArray();
    byte[] body = java.util.Arrays.copyOf(ok, ok.length + 2 + series.length);
    body[ok.length] = 0x0a; // WriteRequest.timeseries
    body[ok.length + 1] = (byte) series.length;
    System.arraycopy(series, 0, body, ok.length + 2, series.length);
    for (WireBatch batch : List.of(WireBatch.parse(body, new WireSeries()), WireBatch.scan(body))) {
      assertThat(batch.size()).isEqualTo(2);
      String out = outcome(() -> wire.ingester().push("t", batch));
      assertThat(out).startsWith("bad_data: the request is not a valid remote write request")
          .contains("series 1: a histogram is malformed");
      assertThat(dump(wire.ingester())).as("nothing of the request is stored").isEmpty();
    }
    wire.ingester().stop();
  }
}
