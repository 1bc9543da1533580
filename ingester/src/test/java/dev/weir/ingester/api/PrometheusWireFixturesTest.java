package dev.weir.ingester.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weir.proto.prompb.LabelMatcher;
import dev.weir.proto.prompb.ReadRequest;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireSeries;
import java.io.InputStream;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/**
 * Bodies captured from a real Prometheus 2.42 decode with our generated messages exactly as an
 * independent decoder did (expected.json): proof that the protos are wire-compatible.
 */
class PrometheusWireFixturesTest {
  static final String DIR = "/fixtures/prometheus-2.42/";

  static byte[] resource(String name) throws Exception {
    try (InputStream in = PrometheusWireFixturesTest.class.getResourceAsStream(DIR + name)) {
      assertThat(in).as("fixture %s", name).isNotNull();
      return in.readAllBytes();
    }
  }

  static JsonNode expected(String name) throws Exception {
    return new ObjectMapper().readTree(resource("expected.json")).get(name);
  }

  @ParameterizedTest
  @ValueSource(strings = {"remote-write-0.bin", "remote-write-1.bin", "remote-write-2.bin",
      "remote-write-3.bin", "remote-write-4.bin", "remote-write-5.bin"})
  void remoteWriteBodiesDecodeAsPrometheusSentThem(String file) throws Exception {
    WriteRequest req = WriteRequest.parseFrom(Snappy.uncompress(resource(file)));
    JsonNode exp = expected(file);
    assertThat(req.getTimeseriesCount()).isEqualTo(exp.get("series").asInt());
    assertThat(req.getTimeseriesList().stream().mapToInt(TimeSeries::getSamplesCount).sum())
        .isEqualTo(exp.get("samples").asInt());
    assertThat(req.getTimeseriesList().stream().mapToInt(TimeSeries::getExemplarsCount).sum())
        .isEqualTo(exp.get("exemplars").asInt());
    assertThat(req.getMetadataCount()).isEqualTo(exp.get("metadata").asInt());
    TimeSeries first = req.getTimeseries(0);
    Map<String, String> labels = new LinkedHashMap<>();
    first.getLabelsList().forEach(l -> labels.put(l.getName(), l.getValue()));
    Map<String, String> expLabels = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = exp.get("first_series_labels").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      expLabels.put(e.getKey(), e.getValue().asText());
    }
    assertThat(labels).containsExactlyEntriesOf(expLabels);
    JsonNode samples = exp.get("first_series_samples");
    assertThat(first.getSamplesCount()).isEqualTo(samples.size());
    for (int i = 0; i < samples.size(); i++) {
      assertThat(first.getSamples(i).getTimestamp()).isEqualTo(samples.get(i).get(0).asLong());
      assertThat(first.getSamples(i).getValue()).isEqualTo(samples.get(i).get(1).asDouble());
    }
    assertThat(req.getUnknownFields().asMap()).as("no field left unparsed").isEmpty();
  }

  /**
   * The byte-level reader on what Prometheus really sends: the same series as protobuf, and the
   * label bytes equal the head's own encoding, so existing series are found by one comparison.
   */
  @ParameterizedTest
  @ValueSource(strings = {"remote-write-0.bin", "remote-write-1.bin", "remote-write-2.bin",
      "remote-write-3.bin", "remote-write-4.bin", "remote-write-5.bin"})
  void remoteWriteBodiesReadByteLevel(String file) throws Exception {
    byte[] raw = Snappy.uncompress(resource(file));
    WriteRequest req = WriteRequest.parseFrom(raw);
    WireSeries cursor = new WireSeries();
    WireBatch parsed = WireBatch.parse(raw, cursor);
    WireBatch scanned = WireBatch.scan(raw);
    assertThat(parsed.size()).isEqualTo(scanned.size()).isEqualTo(req.getTimeseriesCount());
    assertThat(scanned.samples()).isEqualTo(expected(file).get("samples").asLong());
    assertThat(scanned.metadata()).isEqualTo(req.getMetadataList());
    int matchedByBytes = 0;
    for (int i = 0; i < scanned.size(); i++) {
      WireSeries ws = scanned.read(i, cursor);
      TimeSeries ts = req.getTimeseries(i);
      assertThat(ws.samples()).isEqualTo(ts.getSamplesCount());
      for (int k = 0; k < ts.getSamplesCount(); k++) {
        assertThat(ws.timestamp(k)).isEqualTo(ts.getSamples(k).getTimestamp());
        assertThat(Double.doubleToRawLongBits(ws.value(k)))
            .isEqualTo(Double.doubleToRawLongBits(ts.getSamples(k).getValue()));
      }
      String[] pairs = ws.pairs();
      Labels.sortPairs(pairs);
      Labels labels = Labels.withWireEncoding(Labels.ofSortedPairs(pairs));
      assertThat(parsed.hash(i)).isEqualTo(labels.hashCode());
      if (ws.hasKey() && ws.key().matches(dev.weir.storage.tsdb.labels.CompactLabels.fromCanonical(labels.wireEncoding(), null))) {
        matchedByBytes++;
      }
    }
    assertThat(matchedByBytes).as("Prometheus encodes labels canonically").isEqualTo(scanned.size());
  }

  @Test
  void remoteReadRequestDecodes() throws Exception {
    ReadRequest req = ReadRequest.parseFrom(Snappy.uncompress(resource("remote-read-0.bin")));
    JsonNode exp = expected("remote-read-0.bin");
    assertThat(req.getQueriesCount()).isEqualTo(exp.get("queries").asInt());
    assertThat(req.getAcceptedResponseTypesCount()).isZero();
    assertThat(req.getQueries(0).getStartTimestampMs()).isEqualTo(exp.get("start_ms").asLong());
    assertThat(req.getQueries(0).getEndTimestampMs()).isEqualTo(exp.get("end_ms").asLong());
    LabelMatcher m = req.getQueries(0).getMatchers(0);
    JsonNode em = exp.get("matchers").get(0);
    assertThat(m.getTypeValue()).isEqualTo(em.get(0).asInt());
    assertThat(m.getName()).isEqualTo(em.get(1).asText());
    assertThat(m.getValue()).isEqualTo(em.get(2).asText());
  }
}
