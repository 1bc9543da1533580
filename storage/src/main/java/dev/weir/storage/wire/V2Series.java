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
      } else {
        r.skip(wt);
      }
    }
    for (int i = 0; i < ws.exemplars(); i++) {
      WireSeries.WireExemplar we = ws.exemplar(i);
      Exemplar.Builder e = Exemplar.newBuilder().setValue(we.value()).setTimestamp(we.timestamp());
      String[] p = we.pairs();
      for (int j = 0; j + 1 < p.length; j += 2) {
        e.addLabels(Label.newBuilder().setName(p[j]).setValue(p[j + 1]));
      }
      b.addExemplars(e);
    }
    return b.build();
  }
}
