package dev.weir.storage.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.wire.WireSeries;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class RecordFormatTest {
  static TimeSeries series(int i, int samples) {
    TimeSeries.Builder b = TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("metric_with_a_long_name"))
        .addLabels(Label.newBuilder().setName("i").setValue(String.valueOf(i)));
    for (int k = 0; k < samples; k++) {
      b.addSamples(Sample.newBuilder().setTimestamp(k).setValue(k));
    }
    return b.build();
  }

  @Test
  void splitsLargeRequestsBetweenSeriesKeepingOrderAndMetadata() {
    WriteRequest.Builder b = WriteRequest.newBuilder()
        .addMetadata(MetricMetadata.newBuilder().setMetricFamilyName("m").setHelp("help"));
    for (int i = 0; i < 100; i++) {
      b.addTimeseries(series(i, 10));
    }
    WriteRequest req = b.build();
    List<WriteRequest> parts = RecordFormat.split(req, 2_000);
    assertThat(parts.size()).isGreaterThan(5);
    assertThat(parts).allSatisfy(p -> assertThat(p.getSerializedSize()).isLessThanOrEqualTo(2_000));
    assertThat(parts.get(0).getMetadataCount()).isEqualTo(1);
    assertThat(parts.stream().flatMap(p -> p.getTimeseriesList().stream()).toList())
        .containsExactlyElementsOf(req.getTimeseriesList());
    assertThat(RecordFormat.split(req, Integer.MAX_VALUE)).containsExactly(req);
    assertThatThrownBy(() -> RecordFormat.split(req, 100)).isInstanceOf(ClientErrorException.class)
        .hasMessageContaining("producer-max-record-size-bytes");
  }

  @Test
  void decodesTheVersionedRecordAndClassifiesBadOnes() {
    RecordHeaders v1 = new RecordHeaders();
    v1.add(new RecordHeader(RecordFormat.VERSION_HEADER, "1".getBytes(StandardCharsets.UTF_8)));
    WriteRequest req = WriteRequest.newBuilder().addTimeseries(series(1, 1)).build();
    RecordFormat.Decoded d = RecordFormat.decode("t".getBytes(StandardCharsets.UTF_8), req.toByteArray(), v1);
    assertThat(d.tenant()).isEqualTo("t");
    assertThat(d.request()).isEqualTo(req);
    RecordFormat.Decoded unversioned = RecordFormat.decode("t".getBytes(StandardCharsets.UTF_8), req.toByteArray(),
        new RecordHeaders());
    assertThat(unversioned.version()).as("a record from before the header existed is v1").isEqualTo(1);
    assertThat(unversioned.request()).isEqualTo(req);
    RecordHeaders v99 = new RecordHeaders();
    v99.add(new RecordHeader(RecordFormat.VERSION_HEADER, "99".getBytes(StandardCharsets.UTF_8)));
    assertThatThrownBy(() -> RecordFormat.decode("t".getBytes(StandardCharsets.UTF_8), req.toByteArray(), v99))
        .isInstanceOfSatisfying(ClientErrorException.class,
            e -> assertThat(e.reason()).isEqualTo("unknown_record_version"));
    assertThatThrownBy(() -> RecordFormat.decodeWire("t".getBytes(StandardCharsets.UTF_8), req.toByteArray(), v99,
        new WireSeries())).hasMessageContaining("\"99\" is not supported");
    assertThatThrownBy(() -> RecordFormat.decode("t".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xff, 1, 2}, v1))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.reason()).isEqualTo("undecodable_record"));
    assertThatThrownBy(() -> RecordFormat.decode(new byte[0], req.toByteArray(), v1))
        .hasMessageContaining("no tenant");
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"..", "../wal/victim", "/tmp/x", "a/b", "a\0b", "wal/../../x"})
  void refusesKeysThatAreNotTenantIdsAsClientErrors(String key) {
    WriteRequest req = WriteRequest.newBuilder().addTimeseries(series(1, 1)).build();
    RecordHeaders v1 = new RecordHeaders(List.of(new RecordHeader(RecordFormat.VERSION_HEADER,
        RecordFormat.VERSION.getBytes(StandardCharsets.UTF_8))));
    byte[] k = key.getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> RecordFormat.decodeWire(k, req.toByteArray(), v1, new WireSeries()))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.reason()).isEqualTo("invalid_tenant"));
    assertThatThrownBy(() -> RecordFormat.decode(k, req.toByteArray(), v1))
        .isInstanceOfSatisfying(ClientErrorException.class, e -> assertThat(e.reason()).isEqualTo("invalid_tenant"));
    assertThatThrownBy(() -> RecordFormat.decode("a".repeat(151).getBytes(StandardCharsets.UTF_8),
        req.toByteArray(), v1)).isInstanceOf(ClientErrorException.class);
  }

  @Test
  void commitTrackerCommitsOnlyTheContiguousDonePrefixInKafkaConvention() {
    CommitTracker t = new CommitTracker();
    CommitTracker.Entry a = new CommitTracker.Entry(10, 1, 1);
    CommitTracker.Entry b = new CommitTracker.Entry(11, 2, 1);
    CommitTracker.Entry c = new CommitTracker.Entry(12, 3, 1);
    t.add(a);
    t.add(b);
    t.add(c);
    assertThat(t.committable()).isEqualTo(-1);
    b.done();
    c.done();
    assertThat(t.committable()).as("10 still in flight holds back 11 and 12").isEqualTo(-1);
    a.done();
    assertThat(t.committable()).as("the next offset to read").isEqualTo(13);
    assertThat(t.lastDoneTimestamp()).isEqualTo(3);
    assertThat(t.inFlight()).isZero();
  }

  @Test
  void seriesWithLabelsInAnyOrderGoToTheSameShard() {
    TimeSeries sorted = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("a").setValue("1"))
        .addLabels(Label.newBuilder().setName("b").setValue("2")).build();
    TimeSeries reversed = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("b").setValue("2"))
        .addLabels(Label.newBuilder().setName("a").setValue("1")).build();
    byte[] a = sorted.toByteArray();
    byte[] b = reversed.toByteArray();
    int ha = new WireSeries().reset(a, 0, a.length).labelsHash();
    int hb = new WireSeries().reset(b, 0, b.length).labelsHash();
    assertThat(ha).isEqualTo(hb).isEqualTo(Labels.of("a", "1", "b", "2").hashCode());
    assertThat(ReaderPipeline.shardOf(ha, 8)).isEqualTo(ReaderPipeline.shardOf(hb, 8));
  }

  static RecordHeaders headers(String version) {
    return new RecordHeaders(List.of(new RecordHeader(RecordFormat.VERSION_HEADER,
        version.getBytes(StandardCharsets.UTF_8))));
  }

  static WriteRequest withEverything() {
    WriteRequest.Builder b = WriteRequest.newBuilder()
        .addMetadata(MetricMetadata.newBuilder().setMetricFamilyName("metric_with_a_long_name")
            .setType(MetricMetadata.MetricType.COUNTER).setHelp("help").setUnit("u"))
        .addMetadata(MetricMetadata.newBuilder().setMetricFamilyName("no_series_of_this_name")
            .setType(MetricMetadata.MetricType.GAUGE).setHelp("other"));
    for (int i = 0; i < 50; i++) {
      b.addTimeseries(series(i, 3));
    }
    b.addTimeseries(TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue("h"))
        .addHistograms(dev.weir.proto.prompb.Histogram.newBuilder().setCountInt(3).setSum(1).setSchema(1)
            .addPositiveSpans(dev.weir.proto.prompb.BucketSpan.newBuilder().setLength(1)).addPositiveDeltas(3)
            .setTimestamp(5))
        .addExemplars(dev.weir.proto.prompb.Exemplar.newBuilder().setValue(1).setTimestamp(2)
            .addLabels(Label.newBuilder().setName("trace_id").setValue("t1"))));
    return b.build();
  }

  @Test
  void versionTwoRecordsCarryTheSameSeriesSamplesHistogramsExemplarsAndMetadata() {
    WriteRequest req = withEverything();
    List<byte[]> v2 = RecordFormat.encode(req, 2, Integer.MAX_VALUE);
    assertThat(v2).hasSize(1);
    RecordFormat.Decoded d = RecordFormat.decode("t".getBytes(StandardCharsets.UTF_8), v2.get(0), headers("2"));
    assertThat(d.version()).isEqualTo(2);
    // The metadata without a series of its name travels on a series without samples.
    assertThat(d.request().getTimeseriesList().subList(0, req.getTimeseriesCount()))
        .isEqualTo(req.getTimeseriesList());
    assertThat(d.request().getTimeseries(req.getTimeseriesCount()).getSamplesCount()).isZero();
    assertThat(d.request().getMetadataList()).containsExactlyInAnyOrderElementsOf(req.getMetadataList());
    RecordFormat.DecodedWire w = RecordFormat.decodeWire("t".getBytes(StandardCharsets.UTF_8), v2.get(0),
        headers("2"), new WireSeries());
    assertThat(w.batch().samples()).isEqualTo(50 * 3 + 1);
    assertThat(w.batch().hash(0)).isEqualTo(Labels.of("__name__", "metric_with_a_long_name", "i", "0").hashCode());
    byte[] v1 = RecordFormat.encode(req, 1, Integer.MAX_VALUE).get(0);
    assertThat(v1).isEqualTo(req.toByteArray());
    assertThat(v2.get(0).length).as("label strings written once").isLessThan(v1.length);
  }

  @Test
  void versionTwoSplitsBetweenSeriesWithASymbolsTablePerRecord() {
    WriteRequest req = withEverything();
    List<byte[]> parts = RecordFormat.encode(req, 2, 700);
    assertThat(parts.size()).isGreaterThan(3);
    assertThat(parts).allSatisfy(p -> assertThat(p.length).isLessThanOrEqualTo(700));
    List<TimeSeries> all = new java.util.ArrayList<>();
    List<MetricMetadata> meta = new java.util.ArrayList<>();
    for (byte[] p : parts) {
      // Every record decodes on its own.
      WriteRequest r = RecordFormat.decode("t".getBytes(StandardCharsets.UTF_8), p, headers("2")).request();
      all.addAll(r.getTimeseriesList());
      meta.addAll(r.getMetadataList());
    }
    assertThat(all.subList(0, req.getTimeseriesCount())).isEqualTo(req.getTimeseriesList());
    assertThat(meta).containsExactlyInAnyOrderElementsOf(req.getMetadataList());
    assertThatThrownBy(() -> RecordFormat.encode(req, 2, 60)).isInstanceOf(ClientErrorException.class)
        .hasMessageContaining("producer-max-record-size-bytes");
  }

  @Test
  void aBrokenVersionTwoRecordIsUndecodable() {
    dev.weir.storage.testing.Rw2Requests r = new dev.weir.storage.testing.Rw2Requests();
    r.add(r.series("__name__", "x").addLabelsRefs(9).addLabelsRefs(1));
    assertThatThrownBy(() -> RecordFormat.decodeWire("t".getBytes(StandardCharsets.UTF_8), r.build().toByteArray(),
        headers("2"), new WireSeries())).isInstanceOfSatisfying(ClientErrorException.class,
            e -> assertThat(e.reason()).isEqualTo("undecodable_record"));
  }
}
