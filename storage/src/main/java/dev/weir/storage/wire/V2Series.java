package dev.weir.storage.wire;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.weir.proto.prompb.Exemplar;
import dev.weir.proto.prompb.Histogram;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;

/**
 * A remote write 2.0 series as a 1.0 {@link TimeSeries} object, for the paths that work with
 * protobuf objects (the distributors, {@link WireBatch#toWriteRequest()}): labels and exemplar
 * labels resolved from the symbols, samples, and histograms (the 2.0 and 1.0 Histogram messages
 * share field numbers, so the bytes parse unchanged). Stateless.
 */
final class V2Series {
  private V2Series() {}

  /** {@code ws} has just read the series in {@code buf[off, off+len)} with {@link WireSeries#resetV2}. */
  static TimeSeries toTimeSeries(WireSeries ws, byte[] buf, int off, int len) {
    Symbols syms = ws.symbols();
    if (syms == null) {
      throw new IllegalStateException("not a remote write 2.0 series");
    }
    TimeSeries.Builder b = TimeSeries.newBuilder();
    String[] pairs = ws.pairs();
    for (int i = 0; i < pairs.length; i += 2) {
      b.addLabels(Label.newBuilder().setName(pairs[i]).setValue(pairs[i + 1]));
    }
    for (int i = 0; i < ws.samples(); i++) {
      b.addSamples(Sample.newBuilder().setTimestamp(ws.timestamp(i)).setValue(ws.value(i)));
    }
    if (ws.histograms() == 0 && ws.exemplars() == 0) {
      return b.build();
    }
    ProtoReader r = new ProtoReader().reset(buf, off, len);
    while (r.more()) {
      int tag = r.tag();
      int wt = tag & 7;
      if ((tag >>> 3) == 3 && wt == ProtoReader.LEN) {
        int s = r.lengthDelimited();
        try {
          b.addHistograms(Histogram.parseFrom(java.nio.ByteBuffer.wrap(buf, s, r.pos - s)));
        } catch (InvalidProtocolBufferException e) {
          throw new WireFormatException("invalid histogram: " + e.getMessage());
        }
      } else if ((tag >>> 3) == 4 && wt == ProtoReader.LEN) {
        int s = r.lengthDelimited();
        b.addExemplars(exemplar(new ProtoReader().reset(buf, s, r.pos - s), syms));
      } else {
        r.skip(wt);
      }
    }
    return b.build();
  }

  private static Exemplar exemplar(ProtoReader r, Symbols syms) {
    Exemplar.Builder e = Exemplar.newBuilder();
    int[] refs = new int[8];
    int n = 0;
    while (r.more()) {
      int tag = r.tag();
      int f = tag >>> 3;
      int wt = tag & 7;
      if (f == 1 && (wt == ProtoReader.LEN || wt == ProtoReader.VARINT)) {
        int end = r.pos;
        if (wt == ProtoReader.LEN) {
          int s = r.lengthDelimited();
          end = r.pos;
          r.pos = s;
        }
        do {
          if (n == refs.length) {
            refs = java.util.Arrays.copyOf(refs, n * 2);
          }
          refs[n++] = (int) r.varint();
        } while (r.pos < end);
      } else if (f == 2 && wt == ProtoReader.FIXED64) {
        e.setValue(Double.longBitsToDouble(r.fixed64()));
      } else if (f == 3 && wt == ProtoReader.VARINT) {
        e.setTimestamp(r.varint());
      } else {
        r.skip(wt);
      }
    }
    for (int i = 0; i + 1 < n; i += 2) {
      e.addLabels(Label.newBuilder().setName(syms.string(refs[i])).setValue(syms.string(refs[i + 1])));
    }
    return e.build();
  }
}
