package dev.weir.storage.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.proto.writev2.BucketSpan;
import dev.weir.proto.writev2.Exemplar;
import dev.weir.proto.writev2.Histogram;
import dev.weir.proto.writev2.Metadata;
import dev.weir.proto.writev2.Request;
import dev.weir.proto.writev2.Sample;
import dev.weir.storage.testing.Rw2Requests;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Remote write 2.0 requests read byte-level against the official .proto's own classes. */
class WireBatchV2Test {
  record Refusal(int index, String reason, String message, int samples, int histograms, int exemplars) {}

  static WireBatch parse(Request req, List<Refusal> refused) {
    return WireBatch.parseV2(req.toByteArray(), new WireSeries(), (i, p, s, h, e) ->
        refused.add(new Refusal(i, p.reason(), p.getMessage(), s, h, e)));
  }

  @Test
  void readsEveryFieldOfAFullRequest() throws Exception {
    Request req = Rw2Requests.fullRequest().build();
    List<Refusal> refused = new ArrayList<>();
    WireBatch b = parse(req, refused);
    assertThat(refused).isEmpty();
    assertThat(b.size()).isEqualTo(4);
    assertThat(b.floatSamples()).isEqualTo(3);
    assertThat(b.histogramSamples()).isEqualTo(2);
    assertThat(b.samples()).isEqualTo(5);
    assertThat(b.exemplars()).isEqualTo(2);

    WireSeries ws = b.read(0, new WireSeries());
    assertThat(ws.isV2()).isTrue();
    assertThat(ws.pairs()).containsExactly("__name__", "http_requests_total", "code", "200", "job", "api");
    assertThat(ws.samples()).isEqualTo(2);
    assertThat(ws.timestamp(1)).isEqualTo(2_000);
    assertThat(ws.value(1)).isEqualTo(2.5);
    assertThat(ws.exemplars()).isEqualTo(2);
    assertThat(ws.createdTimestamp()).isEqualTo(500);

    assertThat(b.metadata()).containsExactly(
        MetricMetadata.newBuilder().setType(MetricMetadata.MetricType.COUNTER)
            .setMetricFamilyName("http_requests_total").setHelp("Requests served.").setUnit("requests").build(),
        MetricMetadata.newBuilder().setType(MetricMetadata.MetricType.HISTOGRAM)
            .setMetricFamilyName("rpc_duration_seconds").setUnit("seconds").build(),
        MetricMetadata.newBuilder().setType(MetricMetadata.MetricType.GAUGEHISTOGRAM)
            .setMetricFamilyName("queue_depth").build(),
        MetricMetadata.newBuilder().setType(MetricMetadata.MetricType.GAUGE)
            .setMetricFamilyName("temperature_celsius").setHelp("Temperature.").build());

    // As 1.0 objects (the distributors' path): labels and exemplar labels resolved, histograms
    // carried field for field (custom_values included).
    WriteRequest v1 = b.toWriteRequest();
    TimeSeries first = v1.getTimeseries(0);
    assertThat(first.getSamplesList()).extracting(s -> s.getTimestamp() + "=" + s.getValue())
        .containsExactly("1000=1.0", "2000=2.5");
    assertThat(first.getExemplars(0).getLabelsList())
        .containsExactly(Label.newBuilder().setName("trace_id").setValue("abc123").build());
    assertThat(first.getExemplars(0).getTimestamp()).isEqualTo(1_999);
    assertThat(first.getExemplars(1).getValue()).isEqualTo(1);
    assertThat(first.getExemplars(1).getLabelsCount()).isZero();
    for (int i = 1; i <= 2; i++) {
      assertThat(Histogram.parseFrom(v1.getTimeseries(i).getHistograms(0).toByteString()))
          .isEqualTo(req.getTimeseries(i).getHistograms(0));
    }
    assertThat(v1.getMetadataList()).isEqualTo(b.metadata());
  }

  private static byte[] compact(Labels l) {
    return dev.weir.storage.tsdb.labels.CompactLabels.fromCanonical(l.encoded().wireEncoding(), null);
  }

  @Test
  void knownSeriesIsFoundByItsSymbolBytesAndHashesLikeOnePointZero() {
    Rw2Requests r = new Rw2Requests();
    r.floats(new String[] {"__name__", "up", "instance", "a:9090", "job", "node"}, 1, 1);
    WireBatch b = parse(r.build(), new ArrayList<>());
    Labels labels = Labels.of("__name__", "up", "instance", "a:9090", "job", "node");
    WireSeries ws = b.read(0, new WireSeries());
    assertThat(ws.hasKey()).isTrue();
    assertThat(b.hash(0)).isEqualTo(labels.hashCode());
    // 2.0 labels are symbol references, not contiguous 1.0 bytes: matched label by label.
    assertThat(ws.key().matches(compact(labels))).isTrue();
    assertThat(ws.key().matches(compact(Labels.of("__name__", "up", "instance", "a:9091", "job", "node"))))
        .isFalse();
    assertThat(ws.key().matches(compact(Labels.of("__name__", "up", "instance", "a:9090"))))
        .as("a prefix of the labels").isFalse();
    assertThat(ws.key().matches(compact(Labels.of("__name__", "up", "instance", "a:9090", "job", "node", "z", "1"))))
        .as("more labels").isFalse();
    WireBatch v1 = WireBatch.parse(WriteRequest.newBuilder().addTimeseries(b.toWriteRequest().getTimeseries(0))
        .build().toByteArray(), new WireSeries());
    assertThat(v1.hash(0)).as("same shard whatever the record version").isEqualTo(b.hash(0));
  }

  @Test
  void mixedBatchesKeepEachSeriesFormat() {
    Rw2Requests r = new Rw2Requests();
    r.floats(new String[] {"__name__", "a", "job", "x"}, 1, 1);
    WireBatch v2 = parse(r.build(), new ArrayList<>());
    WireBatch v1 = WireBatch.parse(WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("b"))
        .addSamples(dev.weir.proto.prompb.Sample.newBuilder().setTimestamp(2).setValue(2))).build().toByteArray(),
        new WireSeries());
    WireBatch mixed = new WireBatch();
    mixed.add(v1, 0);
    mixed.add(v2, 0);
    WireSeries ws = new WireSeries();
    assertThat(mixed.read(0, ws).pairs()).containsExactly("__name__", "b");
    assertThat(mixed.read(1, ws).pairs()).containsExactly("__name__", "a", "job", "x");
    assertThat(mixed.toWriteRequest().getTimeseriesCount()).isEqualTo(2);
  }

  @Test
  void refusesASeriesWithASymbolReferenceOutOfRangeAndKeepsTheRest() {
    Rw2Requests r = new Rw2Requests();
    r.floats(new String[] {"__name__", "good", "job", "a"}, 1, 1);
    r.add(r.series("__name__", "bad").addLabelsRefs(r.ref("job")).addLabelsRefs(999)
        .addSamples(Sample.newBuilder().setTimestamp(1).setValue(1)));
    r.add(r.series("__name__", "bad_exemplar").addSamples(Sample.newBuilder().setTimestamp(1).setValue(1))
        .addExemplars(Exemplar.newBuilder().addLabelsRefs(0).addLabelsRefs(77)));
    r.add(r.series("__name__", "bad_help").addSamples(Sample.newBuilder().setTimestamp(1).setValue(1))
        .setMetadata(Metadata.newBuilder().setHelpRef(55)));
    List<Refusal> refused = new ArrayList<>();
    WireBatch b = parse(r.build(), refused);
    assertThat(b.size()).isEqualTo(1);
    assertThat(b.read(0, new WireSeries()).pairs()).containsExactly("__name__", "good", "job", "a");
    assertThat(refused).extracting(Refusal::index, Refusal::reason, Refusal::samples).containsExactly(
        org.assertj.core.groups.Tuple.tuple(1, "invalid_symbol_reference", 1),
        org.assertj.core.groups.Tuple.tuple(2, "invalid_symbol_reference", 1),
        org.assertj.core.groups.Tuple.tuple(3, "invalid_symbol_reference", 1));
    assertThat(refused.get(0).message()).contains("symbol reference 999 is out of range")
        .contains("{__name__=\"bad\", job=<ref 999 out of range>}");
    assertThat(refused.get(1).message()).contains("77").contains("__name__=\"bad_exemplar\"");
    assertThat(refused.get(2).message()).contains("55").contains("__name__=\"bad_help\"");
  }

  @Test
  void refusesAnOddLabelsRefsLength() {
    Rw2Requests r = new Rw2Requests();
    r.add(r.series("__name__", "odd", "job").addSamples(Sample.newBuilder().setTimestamp(1).setValue(1)));
    r.floats(new String[] {"__name__", "fine"}, 1, 1);
    List<Refusal> refused = new ArrayList<>();
    WireBatch b = parse(r.build(), refused);
    assertThat(b.size()).isEqualTo(1);
    assertThat(refused).singleElement().satisfies(f -> {
      assertThat(f.reason()).isEqualTo("invalid_labels_refs");
      assertThat(f.message()).contains("odd length (3)").contains("__name__=\"odd\"");
    });
  }

  @Test
  void refusesInconsistentHistograms() {
    Histogram good = Rw2Requests.intHistogram(1);
    Map<String, Histogram> bad = new java.util.LinkedHashMap<>();
    bad.put("native_histogram_span_bucket_mismatch", good.toBuilder().addPositiveDeltas(1).build());
    bad.put("native_histogram_span_bucket_mismatch ", good.toBuilder()
        .addPositiveSpans(BucketSpan.newBuilder().setOffset(-1).setLength(1)).addPositiveDeltas(0).build());
    bad.put("native_histogram_span_bucket_mismatch  ", Rw2Requests.floatHistogram(1).toBuilder()
        .addPositiveDeltas(1).addPositiveSpans(BucketSpan.newBuilder().setLength(1)).build());
    bad.put("native_histogram_negative_count", good.toBuilder().clearPositiveDeltas().addPositiveDeltas(3)
        .addPositiveDeltas(-4).addPositiveDeltas(2).build());
    bad.put("native_histogram_negative_count ", Rw2Requests.floatHistogram(1).toBuilder().setPositiveCounts(0, -1)
        .build());
    bad.put("native_histogram_negative_count  ", Rw2Requests.floatHistogram(1).toBuilder().setCountFloat(-2).build());
    for (Map.Entry<String, Histogram> e : bad.entrySet()) {
      Rw2Requests r = new Rw2Requests();
      r.add(r.series("__name__", "h", "job", "a").addHistograms(good).addHistograms(e.getValue()));
      r.add(r.series("__name__", "ok", "job", "a").addHistograms(good));
      List<Refusal> refused = new ArrayList<>();
      WireBatch b = parse(r.build(), refused);
      assertThat(b.size()).as(e.getKey()).isEqualTo(1);
      assertThat(refused).as(e.getKey()).singleElement().satisfies(f -> {
        assertThat(f.reason()).isEqualTo(e.getKey().trim());
        assertThat(f.histograms()).isEqualTo(2);
        assertThat(f.message()).contains("{__name__=\"h\", job=\"a\"}");
      });
    }
  }

  @Test
  void aRecordReaderWithoutRefusalsThrowsTheFirstInvalidSeries() {
    Rw2Requests r = new Rw2Requests();
    r.add(r.series("__name__", "x").addLabelsRefs(5));
    byte[] bytes = r.build().toByteArray();
    assertThatThrownBy(() -> WireBatch.parseV2(bytes, new WireSeries(), null))
        .isInstanceOf(InvalidSeriesException.class).hasMessageContaining("odd length");
  }

  @Test
  void refusesBrokenBytesWhole() {
    byte[] bytes = Rw2Requests.fullRequest().build().toByteArray();
    byte[] cut = java.util.Arrays.copyOf(bytes, bytes.length - 3);
    assertThatThrownBy(() -> WireBatch.parseV2(cut, new WireSeries(), (i, p, s, h, e) -> { }))
        .isInstanceOf(WireFormatException.class);
  }

  @Test
  void acceptsUnpackedLabelRefsAsProtobufParsersMust() throws Exception {
    // labels_refs as separate varint fields (proto2 style): field 1, wire type 0.
    Rw2Requests r = new Rw2Requests();
    int name = r.ref("__name__");
    int value = r.ref("up");
    com.google.protobuf.ByteString series = com.google.protobuf.ByteString.copyFrom(new byte[] {
        8, (byte) name, 8, (byte) value, 0x12, 0x0b, 0x09, 0, 0, 0, 0, 0, 0, (byte) 0xf0, 0x3f, 0x10, 0x07});
    byte[] body = r.build().toBuilder().build().toByteString().concat(com.google.protobuf.ByteString.copyFrom(
        new byte[] {0x2a, (byte) series.size()})).concat(series).toByteArray();
    WireBatch b = parse(parseChecked(body), new ArrayList<>());
    WireSeries ws = b.read(0, new WireSeries());
    assertThat(ws.pairs()).containsExactly("__name__", "up");
    assertThat(ws.timestamp(0)).isEqualTo(7);
    assertThat(ws.value(0)).isEqualTo(1.0);
  }

  private static Request parseChecked(byte[] body) throws Exception {
    return Request.parseFrom(body);
  }

  /**
   * A request written byte by byte from the specification's field numbers and wire types (not by
   * protobuf-java): the .proto's generated classes and the byte-level reader both read it as the
   * spec says.
   */
  static final String SPEC_FIXTURE = String.join(" ",
      "22 00", "22 08 5f 5f 6e 61 6d 65 5f 5f", "22 02 75 70", "22 03 6a 6f 62", "22 04 6e 6f 64 65", // symbols = 4
      "2a 2d", // timeseries = 5, 45 bytes
      "0a 04 01 02 03 04", // labels_refs = 1, packed: __name__=up, job=node
      "12 0c 09 00 00 00 00 00 00 f8 3f 10 e8 07", // samples = 2: value 1.5 (fixed64), timestamp 1000
      "22 0c 11 00 00 00 00 00 00 00 40 18 e8 07", // exemplars = 4: value 2.0, timestamp 1000
      "2a 06 08 01 18 00 20 00", // metadata = 5: COUNTER, help_ref 0, unit_ref 0
      "30 f4 03"); // created_timestamp = 6: 500

  static byte[] hex(String h) {
    String[] parts = h.trim().split("\\s+");
    byte[] out = new byte[parts.length];
    for (int i = 0; i < parts.length; i++) {
      out[i] = (byte) Integer.parseInt(parts[i], 16);
    }
    return out;
  }

  @Test
  void aRequestEncodedByHandFromTheSpecificationDecodesBothWays() throws Exception {
    byte[] body = hex(SPEC_FIXTURE);
    Request official = Request.parseFrom(body);
    assertThat(official.getSymbolsList()).containsExactly("", "__name__", "up", "job", "node");
    dev.weir.proto.writev2.TimeSeries ts = official.getTimeseries(0);
    assertThat(ts.getLabelsRefsList()).containsExactly(1, 2, 3, 4);
    assertThat(ts.getSamples(0).getValue()).isEqualTo(1.5);
    assertThat(ts.getSamples(0).getTimestamp()).isEqualTo(1_000);
    assertThat(ts.getExemplars(0).getValue()).isEqualTo(2.0);
    assertThat(ts.getMetadata().getType()).isEqualTo(Metadata.MetricType.METRIC_TYPE_COUNTER);
    assertThat(ts.getCreatedTimestamp()).isEqualTo(500);
    assertThat(official.getUnknownFields().asMap()).isEmpty();
    assertThat(ts.getUnknownFields().asMap()).isEmpty();

    WireBatch b = parse(official, new ArrayList<>());
    WireSeries ws = b.read(0, new WireSeries());
    assertThat(ws.pairs()).containsExactly("__name__", "up", "job", "node");
    assertThat(ws.samples()).isEqualTo(1);
    assertThat(ws.value(0)).isEqualTo(1.5);
    assertThat(ws.timestamp(0)).isEqualTo(1_000);
    assertThat(ws.exemplars()).isEqualTo(1);
    assertThat(ws.createdTimestamp()).isEqualTo(500);
    assertThat(b.metadata()).containsExactly(MetricMetadata.newBuilder().setType(MetricMetadata.MetricType.COUNTER)
        .setMetricFamilyName("up").build());
    assertThat(WireBatch.parseV2(body, new WireSeries(), null).hash(0))
        .isEqualTo(Labels.of("__name__", "up", "job", "node").hashCode());
  }
}
