package dev.weir.ingester.distributor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.ingester.logging.RateLimitedLog;
import dev.weir.ingester.push.IngesterHistogramTest;
import dev.weir.ingester.push.IngesterMetrics;
import dev.weir.ingester.push.Limits;
import dev.weir.ingester.push.PartialWriteException;
import dev.weir.ingester.push.PushErrors;
import dev.weir.proto.prompb.Exemplar;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.ingest.RecordV1Builder;
import dev.weir.storage.wire.WireBatch;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The byte-level route ({@link SeriesRouter#routeWire}) against the object route ({@link
 * SeriesRouter#route}) on the same requests: the same destinations, the same series in each
 * (after decoding the record values), the same refusals and counts.
 */
class SeriesRouterWireTest {
  static final long NOW = SeriesRouterTest.NOW;
  /** Small limits so that random series cross them. */
  static final Limits LIMITS = new Limits(6, 12, 16, Duration.ofMinutes(10), 150_000, 0, 200_000);

  /** One side's router, with its own metrics. */
  private static final class Side {
    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    final IngesterMetrics metrics = new IngesterMetrics(registry, () -> NOW, 1_200_000);
    final RateLimitedLog log = new RateLimitedLog(LoggerFactory.getLogger(SeriesRouterWireTest.class),
        TimeUnit.SECONDS.toNanos(1), System::nanoTime);
    final SeriesRouter router = new SeriesRouter(metrics, log, () -> NOW);

    PushErrors errors() {
      return new PushErrors("t", metrics, log);
    }

    String discarded() {
      StringBuilder sb = new StringBuilder();
      for (String line : registry.scrape().split("\n")) {
        if (line.startsWith("weir_discarded") || line.startsWith("weir_distributor_received")) {
          sb.append(line).append('\n');
        }
      }
      return sb.toString();
    }
  }

  private static @Nullable String thrown(PushErrors errors) {
    try {
      errors.throwIfAny();
      return null;
    } catch (PartialWriteException e) {
      return e.reason() + "|" + e.refused() + "|" + e.refusedHistograms() + "|" + e.getMessage();
    }
  }

  private static WriteRequest decode(RecordV1Builder b, int maxBytes) throws Exception {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (byte[] v : b.values(maxBytes)) {
      assertThat(v.length).as("values stay within the limit unless one series alone needs more")
          .isLessThanOrEqualTo(maxBytes);
      all.write(v);
    }
    return WriteRequest.parseFrom(all.toByteArray());
  }

  private static final String[] NAMES = {"up", "http_requests_total", "node:cpu:rate5m", "bad-name", "9lives", "",
      ":x"};
  private static final String[] LABELS = {"job", "instance", "le", "zone", "a_too_long_label_name", "bad-label",
      "_ok", "x", "a:b", "9x"};
  private static final String[] VALUES = {"api", "host-1", "0.5", "zürich", "", "a-value-longer-than-16", "日本",
      "v"};

  private static TimeSeries randomSeries(Random rnd) {
    List<Label> labels = new ArrayList<>();
    if (rnd.nextInt(20) != 0) {
      labels.add(Label.newBuilder().setName("__name__").setValue(NAMES[rnd.nextInt(NAMES.length)]).build());
    }
    for (int i = rnd.nextInt(7); i > 0; i--) {
      labels.add(Label.newBuilder().setName(LABELS[rnd.nextInt(LABELS.length)])
          .setValue(rnd.nextInt(3) == 0 ? VALUES[rnd.nextInt(VALUES.length)] : "v" + rnd.nextInt(1000)).build());
    }
    if (rnd.nextInt(5) != 0) {
      labels.sort((a, b) -> a.getName().compareTo(b.getName())); // Prometheus sends them sorted
    } else {
      Collections.shuffle(labels, rnd);
    }
    TimeSeries.Builder ts = TimeSeries.newBuilder().addAllLabels(labels);
    for (int i = rnd.nextInt(4); i > 0; i--) {
      long t = rnd.nextInt(10) == 0 ? NOW + 3_600_000 : NOW - rnd.nextInt(100_000);
      ts.addSamples(Sample.newBuilder().setTimestamp(t).setValue(rnd.nextDouble()));
    }
    if (rnd.nextInt(10) == 0) {
      ts.addHistograms(IngesterHistogramTest.schema12(NOW - 1_000));
    }
    if (rnd.nextInt(10) == 0) {
      ts.addExemplars(Exemplar.newBuilder().addLabels(Label.newBuilder().setName("trace_id").setValue("abc"))
          .setValue(1).setTimestamp(rnd.nextInt(5) == 0 ? NOW + 3_600_000 : NOW - 10));
    }
    return ts.build();
  }

  private static PartitionRing twoPartitions() {
    return new PartitionRing(SeriesRouterTest.twoActivePartitions());
  }

  @Test
  void theByteRouteGivesWhatTheObjectRouteGives() throws Exception {
    Random rnd = new Random(42);
    PartitionRing ring = twoPartitions();
    Function<Integer, Integer> dest = ring::partitionFor;
    for (int round = 0; round < 300; round++) {
      WriteRequest.Builder req = WriteRequest.newBuilder();
      for (int i = rnd.nextInt(40); i > 0; i--) {
        req.addTimeseries(randomSeries(rnd));
      }
      if (rnd.nextInt(4) == 0) {
        req.addMetadata(MetricMetadata.newBuilder().setMetricFamilyName("up").setHelp("help")
            .setType(MetricMetadata.MetricType.GAUGE));
      }
      byte[] body = req.build().toByteArray();

      Side objects = new Side();
      PushErrors objectErrors = objects.errors();
      Map<Integer, WriteRequest.Builder> expected = objects.router.route("t", WriteRequest.parseFrom(body), LIMITS,
          dest, objectErrors);
      Side bytes = new Side();
      PushErrors byteErrors = bytes.errors();
      Map<Integer, RecordV1Builder> actual = bytes.router.routeWire("t", WireBatch.scan(body), LIMITS, dest,
          byteErrors);

      assertThat(actual.keySet()).as("round %d", round).isEqualTo(expected.keySet());
      for (Integer p : expected.keySet()) {
        WriteRequest want = expected.get(p).build();
        // A small limit splits the parts too; decoded together they are the same request.
        int max = rnd.nextBoolean() ? Integer.MAX_VALUE : 4_096;
        assertThat(decode(actual.get(p), max)).as("round %d partition %d", round, p).isEqualTo(want);
        long exemplars = want.getTimeseriesList().stream().mapToLong(TimeSeries::getExemplarsCount).sum();
        assertThat(actual.get(p).exemplars()).isEqualTo(exemplars);
      }
      assertThat(thrown(byteErrors)).as("round %d", round).isEqualTo(thrown(objectErrors));
      assertThat(bytes.discarded()).as("round %d", round).isEqualTo(objects.discarded());
    }
  }

  @Test
  void validSeriesAreProducedAsTheBytesTheClientSent() throws Exception {
    WriteRequest.Builder req = WriteRequest.newBuilder();
    for (int s = 0; s < 100; s++) {
      req.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue("up"))
          .addLabels(Label.newBuilder().setName("instance").setValue("host-" + s))
          .addSamples(Sample.newBuilder().setTimestamp(NOW).setValue(s)));
    }
    byte[] body = req.build().toByteArray();
    Side side = new Side();
    // One partition: the record is the request itself, byte for byte.
    Map<Integer, RecordV1Builder> out = side.router.routeWire("t", WireBatch.scan(body), LIMITS, t -> 0,
        side.errors());
    assertThat(out).containsOnlyKeys(0);
    List<byte[]> values = out.get(0).values(Integer.MAX_VALUE);
    assertThat(values).hasSize(1);
    assertThat(values.get(0)).isEqualTo(body);
  }

  @Test
  void aMalformedSeriesRefusesTheWholeRequest() {
    byte[] good = WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("up"))
        .addSamples(Sample.newBuilder().setTimestamp(NOW).setValue(1))).build().toByteArray();
    // A second series whose label's name claims more bytes than the label holds: the series'
    // top level is sound (the scan passes), its label is not (found when the series is read).
    byte[] broken = {0x0a, 0x06, 0x0a, 0x04, 0x0a, 0x10, 0x0a, 0x01};
    byte[] body = new byte[good.length + broken.length];
    System.arraycopy(good, 0, body, 0, good.length);
    System.arraycopy(broken, 0, body, good.length, broken.length);
    Side side = new Side();
    assertThatThrownBy(() -> side.router.routeWire("t", WireBatch.scan(body), LIMITS, t -> 0, side.errors()))
        .isInstanceOf(ClientErrorException.class).hasMessageContaining("series 1");
  }

  @Test
  void aSeriesLargerThanTheRecordLimitIsAClientError() {
    RecordV1Builder b = new RecordV1Builder();
    b.addSeries(new byte[100], 0, 100);
    b.addSeries(new byte[5_000], 0, 5_000);
    assertThatThrownBy(() -> b.values(4_096)).isInstanceOfSatisfying(ClientErrorException.class,
        e -> assertThat(e.reason()).isEqualTo("series_too_large")).hasMessageContaining("5003 bytes");
  }

  @Test
  void metadataGoesWithTheFirstValueOnly() throws Exception {
    RecordV1Builder b = new RecordV1Builder();
    TimeSeries ts = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("up"))
        .addSamples(Sample.newBuilder().setTimestamp(NOW).setValue(1)).build();
    for (int i = 0; i < 50; i++) {
      b.addSeries(ts);
    }
    MetricMetadata md = MetricMetadata.newBuilder().setMetricFamilyName("up").setHelp("h").build();
    b.addMetadata(List.of(md));
    List<byte[]> values = b.values(300);
    assertThat(values.size()).isGreaterThan(1);
    int series = 0;
    Map<Integer, Integer> metadataPerValue = new TreeMap<>();
    for (int i = 0; i < values.size(); i++) {
      WriteRequest r = WriteRequest.parseFrom(values.get(i));
      series += r.getTimeseriesCount();
      metadataPerValue.put(i, r.getMetadataCount());
      assertThat(values.get(i).length).isLessThanOrEqualTo(300);
    }
    assertThat(series).isEqualTo(50);
    assertThat(metadataPerValue.get(0)).isEqualTo(1);
    assertThat(metadataPerValue.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(1);
  }
}
