package dev.weir.storage.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.weir.proto.prompb.Exemplar;
import dev.weir.proto.prompb.Histogram;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.tsdb.labels.CompactLabels;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The byte-level reader against protobuf's own parser, on random, unusual and broken input. */
class WireBatchTest {
  static final String[] NAMES = {"__name__", "job", "instance", "le", "code", "method", "zone", "a", "b", "Ω"};
  static final String[] VALUES = {"http_requests_total", "api", "10.0.0.1:9090", "0.5", "200", "GET", "", "é∂",
      "x", "a\"b\\c", "😀", "z".repeat(300)};

  static TimeSeries randomSeries(Random rnd) {
    TimeSeries.Builder ts = TimeSeries.newBuilder();
    List<String> names = new ArrayList<>(Arrays.asList(NAMES));
    java.util.Collections.shuffle(names, rnd);
    int n = rnd.nextInt(NAMES.length);
    List<String> chosen = new ArrayList<>(names.subList(0, n));
    if (rnd.nextInt(3) > 0) {
      java.util.Collections.sort(chosen, dev.weir.storage.tsdb.labels.Utf8Order.COMPARATOR);
    }
    if (rnd.nextInt(10) == 0 && n > 0) {
      chosen.add(chosen.get(0)); // a duplicate name
    }
    for (String name : chosen) {
      ts.addLabels(Label.newBuilder().setName(name).setValue(VALUES[rnd.nextInt(VALUES.length)]));
    }
    int samples = rnd.nextInt(5);
    for (int i = 0; i < samples; i++) {
      double v = switch (rnd.nextInt(5)) {
        case 0 -> Double.NaN;
        case 1 -> -0.0;
        case 2 -> Double.POSITIVE_INFINITY;
        default -> rnd.nextGaussian() * 1e6;
      };
      ts.addSamples(Sample.newBuilder().setTimestamp(rnd.nextLong() >> rnd.nextInt(64)).setValue(v));
    }
    if (rnd.nextInt(8) == 0) {
      ts.addExemplars(Exemplar.newBuilder().addLabels(Label.newBuilder().setName("trace_id").setValue("abc"))
          .setValue(1).setTimestamp(5));
    }
    if (rnd.nextInt(8) == 0) {
      ts.addHistograms(Histogram.newBuilder().setSum(3).setTimestamp(7));
    }
    return ts.build();
  }

  static WriteRequest randomRequest(Random rnd) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    int n = rnd.nextInt(20);
    for (int i = 0; i < n; i++) {
      b.addTimeseries(randomSeries(rnd));
    }
    if (rnd.nextInt(4) == 0) {
      b.addMetadata(MetricMetadata.newBuilder().setMetricFamilyName("m").setHelp("h")
          .setType(MetricMetadata.MetricType.COUNTER));
    }
    return b.build();
  }

  static void assertSameSeries(WireSeries ws, TimeSeries ts) {
    String[] pairs = ws.pairs();
    assertThat(pairs.length / 2).isEqualTo(ts.getLabelsCount()).isEqualTo(ws.labelCount());
    for (int i = 0; i < ts.getLabelsCount(); i++) {
      assertThat(pairs[2 * i]).isEqualTo(ts.getLabels(i).getName());
      assertThat(pairs[2 * i + 1]).isEqualTo(ts.getLabels(i).getValue());
    }
    assertThat(ws.samples()).isEqualTo(ts.getSamplesCount());
    for (int i = 0; i < ts.getSamplesCount(); i++) {
      assertThat(ws.timestamp(i)).isEqualTo(ts.getSamples(i).getTimestamp());
      assertThat(Double.doubleToRawLongBits(ws.value(i)))
          .isEqualTo(Double.doubleToRawLongBits(ts.getSamples(i).getValue()));
    }
    assertThat(ws.histograms()).isEqualTo(ts.getHistogramsCount());
  }

  /**
   * One batch reused request after request (a remote write handler thread's) reads each as a new
   * batch does: nothing of a larger request before it (series, label facts, metadata, counts)
   * shows through, and a failed parse leaves it reusable.
   */
  @Test
  void aReusedBatchReadsEachRequestAsANewOne() {
    Random rnd = new Random(9);
    WireSeries cursor = new WireSeries();
    WireBatch reused = new WireBatch();
    for (int round = 0; round < 300; round++) {
      WriteRequest req = randomRequest(rnd);
      byte[] bytes = req.toByteArray();
      if (round % 17 == 5 && bytes.length > 2) {
        byte[] cut = Arrays.copyOf(bytes, bytes.length - 1);
        try {
          WireBatch.parse(cut, cut.length, cursor, reused);
        } catch (WireFormatException expected) {
          // broken: the next request must still read whole
        }
      }
      WireBatch fresh = WireBatch.parse(bytes, bytes.length, cursor);
      WireBatch again = WireBatch.parse(bytes, bytes.length, cursor, reused);
      assertThat(again).isSameAs(reused);
      assertThat(again.toWriteRequest()).isEqualTo(req);
      assertThat(again.size()).isEqualTo(fresh.size());
      assertThat(again.samples()).isEqualTo(fresh.samples());
      assertThat(again.floatSamples()).isEqualTo(fresh.floatSamples());
      assertThat(again.histogramSamples()).isEqualTo(fresh.histogramSamples());
      assertThat(again.exemplars()).isEqualTo(fresh.exemplars());
      assertThat(again.metadata()).isEqualTo(req.getMetadataList());
      assertThat(again.hashed()).isTrue();
      WireSeries a = new WireSeries();
      WireSeries b = new WireSeries();
      for (int i = 0; i < fresh.size(); i++) {
        assertThat(again.hash(i)).isEqualTo(fresh.hash(i));
        again.read(i, a);
        fresh.read(i, b);
        assertThat(a.pairs()).containsExactly(b.pairs());
        assertThat(a.hasKey()).isEqualTo(b.hasKey());
        assertSameSeries(a, req.getTimeseries(i));
      }
    }
  }

  /**
   * A released batch and cursor (a handler thread's, between requests) keep no request bytes
   * alive, and read the next request whole.
   */
  @Test
  void aReleasedBatchAndCursorKeepNoRequestAlive() throws Exception {
    WireSeries cursor = new WireSeries();
    WireBatch reused = new WireBatch();
    Random rnd = new Random(3);
    WriteRequest first = WriteRequest.newBuilder().addTimeseries(TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue("m"))
        .addSamples(Sample.newBuilder().setTimestamp(1).setValue(2))).build();
    byte[] body = first.toByteArray();
    java.lang.ref.WeakReference<byte[]> held = new java.lang.ref.WeakReference<>(body);
    WireBatch.parse(body, body.length, cursor, reused).read(0, cursor);
    assertThat(cursor.pairs()).containsExactly("__name__", "m");
    body = null;
    reused.release();
    cursor.release();
    for (int i = 0; i < 50 && held.get() != null; i++) {
      System.gc();
      Thread.sleep(10);
    }
    assertThat(held.get()).as("the request's bytes are unreachable").isNull();
    assertThat(reused.size()).isZero();
    assertThat(cursor.labelCount()).isZero();
    WriteRequest next = randomRequest(rnd);
    byte[] b = next.toByteArray();
    assertThat(WireBatch.parse(b, b.length, cursor, reused).toWriteRequest()).isEqualTo(next);
  }

  @Test
  void aRequestAtTheStartOfALargerBufferIsReadUpToItsLengthOnly() {
    Random rnd = new Random(5);
    WireSeries cursor = new WireSeries();
    for (int round = 0; round < 200; round++) {
      WriteRequest req = randomRequest(rnd);
      byte[] bytes = req.toByteArray();
      // A reused buffer: the request, then what an earlier, longer one left behind.
      byte[] buf = Arrays.copyOf(bytes, bytes.length + 1 + rnd.nextInt(300));
      for (int i = bytes.length; i < buf.length; i++) {
        buf[i] = (byte) rnd.nextInt(256);
      }
      WireBatch parsed = WireBatch.parse(buf, bytes.length, cursor);
      WireBatch scanned = WireBatch.scan(buf, bytes.length);
      assertThat(parsed.toWriteRequest()).isEqualTo(req);
      assertThat(scanned.toWriteRequest()).isEqualTo(req);
      assertThat(parsed.hashed()).isTrue();
      assertThat(scanned.hashed()).isFalse();
      for (int i = 0; i < parsed.size(); i++) {
        assertThat(parsed.hash(i)).isEqualTo(WireBatch.parse(bytes, cursor).hash(i));
      }
    }
  }

  @Test
  void readsWhatProtobufReadsAndHashesLikeLabels() {
    Random rnd = new Random(42);
    WireSeries cursor = new WireSeries();
    int keyed = 0;
    int unkeyed = 0;
    int withCanonical = 0;
    for (int round = 0; round < 2_000; round++) {
      WriteRequest req = randomRequest(rnd);
      byte[] bytes = req.toByteArray();
      WireBatch b = WireBatch.parse(bytes, cursor);
      assertThat(b.size()).isEqualTo(req.getTimeseriesCount());
      assertThat(b.metadata()).isEqualTo(req.getMetadataList());
      assertThat(b.samples()).isEqualTo(req.getTimeseriesList().stream()
          .mapToLong(t -> t.getSamplesCount() + t.getHistogramsCount()).sum());
      assertThat(b.toWriteRequest()).isEqualTo(req);
      WireBatch scanned = WireBatch.scan(bytes);
      assertThat(scanned.size()).isEqualTo(b.size());
      assertThat(scanned.samples()).isEqualTo(b.samples());
      assertThat(scanned.metadata()).isEqualTo(b.metadata());
      assertThat(scanned.toWriteRequest()).isEqualTo(req);
      for (int i = 0; i < b.size(); i++) {
        TimeSeries ts = req.getTimeseries(i);
        WireSeries ws = b.read(i, cursor);
        assertSameSeries(ws, ts);
        String[] sorted = ws.pairs();
        boolean wasSorted = Labels.sortPairs(sorted);
        assertThat(b.hash(i)).as("hash of the sorted labels").isEqualTo(Arrays.hashCode(sorted))
            .isEqualTo(ws.labelsHash());
        boolean unique = true;
        for (int k = 2; k < sorted.length; k += 2) {
          unique &= !sorted[k].equals(sorted[k - 2]);
        }
        boolean ascii = String.join("", sorted).chars().allMatch(c -> c < 0x80);
        assertThat(ws.hasKey()).isEqualTo(ascii && unique && wasSorted);
        if (ws.hasKey()) {
          keyed++;
          Labels l = Labels.ofSortedPairs(sorted);
          assertThat(ws.key().hashCode()).isEqualTo(l.hashCode());
          Labels encoded = Labels.withWireEncoding(l);
          assertThat(ws.key().matches(CompactLabels.fromCanonical(encoded.wireEncoding(), null)))
              .as("protobuf's encoding is the canonical one").isTrue();
          assertThat(encoded).isEqualTo(l);
          boolean emptyValue = false;
          for (int k = 1; k < sorted.length; k += 2) {
            emptyValue |= sorted[k].isEmpty();
          }
          if (emptyValue) {
            assertThat(ws.canonicalLabels()).as("an empty value: built from the strings").isNull();
          } else {
            withCanonical++;
            assertThat(ws.canonicalLabels()).as("the bytes a series of these labels keeps")
                .isEqualTo(encoded.wireEncoding());
          }
          assertThat(Labels.fromWireEncoding(encoded.wireEncoding(), l.hashCode()).pairsUnsafe())
              .as("the canonical bytes decode to the labels").containsExactly(sorted);
          if (sorted.length > 0) {
            String[] other = sorted.clone();
            other[other.length - 1] = other[other.length - 1] + "x";
            assertThat(ws.key().matches(CompactLabels.fromCanonical(Labels.ofSortedPairs(other).encoded().wireEncoding(),
                null))).isFalse();
          }
        } else {
          unkeyed++;
          assertThatThrownBy(ws::key).isInstanceOf(IllegalStateException.class);
          assertThat(ws.canonicalLabels()).isNull();
        }
      }
    }
    assertThat(keyed).as("both paths exercised").isGreaterThan(1000);
    assertThat(unkeyed).isGreaterThan(1000);
    assertThat(withCanonical).isGreaterThan(500);
  }

  /**
   * Labels whose fields are not "name, then value, nothing else" (which the reader takes without
   * its cursor) read as protobuf reads them: value first, unknown fields, a repeated field (the
   * last wins), a missing value, a long name.
   */
  @Test
  void labelsInAnyFieldLayoutReadAsProtobufReadsThem() throws Exception {
    byte[][] labels = {
        {0x12, 1, 'v', 0x0a, 1, 'n'}, // value, then name
        {0x0a, 1, 'n', 0x18, 5, 0x12, 1, 'v'}, // an unknown varint field between them
        {0x0a, 1, 'n', 0x12, 1, 'v', 0x18, 5}, // an unknown field after them
        {0x0a, 1, 'a', 0x0a, 1, 'n', 0x12, 1, 'v'}, // the name twice: the last wins
        {0x0a, 1, 'n', 0x12, 1, 'w', 0x12, 1, 'v'}, // the value twice
        {0x0a, 1, 'n'}, // no value
        {0x0a, 1, 'n', 0x12, 0}, // an empty value written out
    };
    WireSeries cursor = new WireSeries();
    for (byte[] label : labels) {
      java.io.ByteArrayOutputStream series = new java.io.ByteArrayOutputStream();
      series.write(0x0a);
      series.write(label.length);
      series.write(label);
      byte[] sample = Sample.newBuilder().setTimestamp(1).setValue(2).build().toByteArray();
      series.write(0x12);
      series.write(sample.length);
      series.write(sample);
      byte[] ts = series.toByteArray();
      byte[] req = new byte[ts.length + 2];
      req[0] = 0x0a;
      req[1] = (byte) ts.length;
      System.arraycopy(ts, 0, req, 2, ts.length);
      WriteRequest expected = WriteRequest.parseFrom(req);
      WireBatch b = WireBatch.parse(req, cursor);
      assertSameSeries(b.read(0, cursor), expected.getTimeseries(0));
      assertThat(b.hash(0)).as(Arrays.toString(label))
          .isEqualTo(Arrays.hashCode(new String[] {expected.getTimeseries(0).getLabels(0).getName(),
              expected.getTimeseries(0).getLabels(0).getValue()}));
    }
    String longName = "n".repeat(200); // a two-byte length
    TimeSeries ts = TimeSeries.newBuilder().addLabels(Label.newBuilder().setName(longName).setValue("v"))
        .addSamples(Sample.newBuilder().setTimestamp(1)).build();
    WriteRequest req = WriteRequest.newBuilder().addTimeseries(ts).build();
    assertSameSeries(WireBatch.parse(req.toByteArray(), cursor).read(0, cursor), ts);
  }

  @Test
  void everyTruncationOrCorruptionFailsWhereProtobufFails() {
    Random rnd = new Random(7);
    WireSeries cursor = new WireSeries();
    int failures = 0;
    for (int round = 0; round < 300; round++) {
      WriteRequest.Builder b = WriteRequest.newBuilder();
      for (int i = 0; i < 3; i++) {
        TimeSeries ts = randomSeries(rnd).toBuilder().clearExemplars().clearHistograms().build();
        b.addTimeseries(ts);
      }
      byte[] full = b.build().toByteArray();
      for (int len = 0; len < full.length; len++) {
        byte[] cut = Arrays.copyOf(full, len);
        if (rnd.nextInt(4) == 0 && len > 0) {
          cut[rnd.nextInt(len)] = (byte) rnd.nextInt(256);
        }
        boolean protobufOk;
        try {
          WriteRequest.parseFrom(cut);
          protobufOk = true;
        } catch (InvalidProtocolBufferException e) {
          protobufOk = false;
        }
        boolean wireOk;
        try {
          WireBatch.parse(cut, cursor);
          wireOk = true;
        } catch (WireFormatException e) {
          wireOk = false;
        }
        boolean scanOk;
        try {
          WireBatch scanned = WireBatch.scan(cut);
          for (int i = 0; i < scanned.size(); i++) {
            WireSeries ws = scanned.read(i, cursor);
            if (!ws.hasKey()) {
              ws.pairs(); // what the ingester builds for such a series (checks UTF-8)
            }
          }
          scanOk = true;
        } catch (WireFormatException e) {
          scanOk = false;
        }
        assertThat(scanOk).as("scan then read agrees with parse on %s", Arrays.toString(cut)).isEqualTo(wireOk);
        if (!protobufOk) {
          failures++;
          assertThat(wireOk).as("protobuf refuses %s; so must the wire reader", Arrays.toString(cut)).isFalse();
        }
      }
    }
    assertThat(failures).isGreaterThan(1000);
  }

  @Test
  void invalidUtf8AndGroupsAreRefused() {
    // WriteRequest{timeseries: {labels: {name: "n", value: 'a' 0xc3 (a truncated UTF-8 sequence)}}}
    byte[] label = {0x0a, 1, 'n', 0x12, 2, 'a', (byte) 0xc3};
    byte[] series = concat(new byte[] {0x0a, (byte) label.length}, label);
    byte[] bytes = concat(new byte[] {0x0a, (byte) series.length}, series);
    assertThatThrownBy(() -> WriteRequest.parseFrom(bytes)).isInstanceOf(InvalidProtocolBufferException.class);
    assertThatThrownBy(() -> WireBatch.parse(bytes, new WireSeries())).isInstanceOf(WireFormatException.class)
        .hasMessageContaining("UTF-8");
    byte[] group = {(byte) ((9 << 3) | 3), (byte) ((9 << 3) | 4)};
    assertThatThrownBy(() -> WireBatch.parse(group, new WireSeries())).isInstanceOf(WireFormatException.class);
  }

  static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Test
  void batchesTakeSelectedSeriesOfSeveralRequests() {
    Random rnd = new Random(3);
    WireSeries cursor = new WireSeries();
    WriteRequest r1 = randomRequest(rnd);
    WriteRequest r2 = randomRequest(rnd);
    WireBatch b1 = WireBatch.parse(r1.toByteArray(), cursor);
    WireBatch b2 = WireBatch.parse(r2.toByteArray(), cursor);
    WireBatch mixed = new WireBatch();
    WriteRequest.Builder expected = WriteRequest.newBuilder();
    for (int i = 0; i < Math.max(b1.size(), b2.size()); i++) {
      if (i < b1.size()) {
        mixed.add(b1, i);
        expected.addTimeseries(r1.getTimeseries(i));
      }
      if (i < b2.size() && i % 2 == 0) {
        mixed.add(b2, i);
        expected.addTimeseries(r2.getTimeseries(i));
      }
    }
    mixed.addMetadata(r1.getMetadataList());
    expected.addAllMetadata(r1.getMetadataList());
    assertThat(mixed.toWriteRequest()).isEqualTo(expected.build());
    for (int i = 0; i < mixed.size(); i++) {
      assertSameSeries(mixed.read(i, cursor), expected.getTimeseries(i));
    }
  }
}
