package dev.weir.storage.wire;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Series of remote-write requests kept as their protobuf bytes: for each series the buffer, the
 * offset and length of its {@code TimeSeries} message, its sample count and its labels' hash
 * ({@link WireSeries#labelsHash()}), plus the requests' metadata. {@link #parse} reads a whole
 * {@code WriteRequest} and checks every series' structure once, so consumers can walk series with
 * a {@link WireSeries} without failing half-way ({@link #scan} leaves those checks to the reader); the Kafka reader also builds batches from
 * selected series of several requests with {@link #add}.
 *
 * <p>Not thread-safe; immutable in practice once handed over.
 */
public final class WireBatch {
  private static final int WRITE_REQUEST_TIMESERIES = 1;
  private static final int WRITE_REQUEST_METADATA = 3;

  private byte[][] bufs;
  private int[] offs;
  private int[] lens;
  private int[] hashes;
  private int[] sampleCounts;
  private int size;
  private long samples;
  private List<MetricMetadata> metadata = List.of();
  private boolean hashed = true;
  /** Per series the request's symbols when it is a remote write 2.0 series; null while there is none. */
  private @Nullable Symbols @Nullable [] symbolsOf;
  private long floats;
  private long histogramSamples;
  private long exemplarCount;
  /** Per series {@link WireSeries#SAVED_INTS} label facts from {@link #parse}, or null (scanned batches). */
  private int @Nullable [] saved;

  public WireBatch() {
    this(16);
  }

  /** An empty batch with room for {@code capacity} series before it grows. */
  public WireBatch(int capacity) {
    allocate(capacity);
  }

  /** New per-series arrays with room for {@code capacity} series. */
  private void allocate(int capacity) {
    int c = Math.max(1, capacity);
    bufs = new byte[c][];
    offs = new int[c];
    lens = new int[c];
    hashes = new int[c];
    sampleCounts = new int[c];
  }

  /**
   * Reads a {@code prometheus.WriteRequest}: every series is checked (labels, samples, valid UTF-8)
   * and hashed with {@code cursor}.
   *
   * @throws WireFormatException when the bytes are not a well-formed WriteRequest
   */
  public static WireBatch parse(byte[] buf, WireSeries cursor) {
    return readRequest(buf, cursor);
  }

  /** {@link #parse} of the request in {@code buf[0, length)}. */
  public static WireBatch parse(byte[] buf, int length, WireSeries cursor) {
    return readRequest(buf, 0, length, cursor, null);
  }

  /**
   * {@link #parse} of the request in {@code buf[0, length)} into {@code reuse}, emptied first and
   * its arrays kept when large enough (a thread that parses one request after another allocates
   * them once). Whatever {@code reuse} held before is gone; on an exception it holds nothing usable.
   */
  public static WireBatch parse(byte[] buf, int length, WireSeries cursor, WireBatch reuse) {
    return readRequest(buf, 0, length, cursor, reuse);
  }

  /**
   * {@link #parse} of the request in {@code buf[offset, offset + length)}: the batch points into
   * {@code buf}, which must not change while the batch is in use (a Kafka record's value is read
   * where the consumer left it, without a copy).
   */
  public static WireBatch parse(byte[] buf, int offset, int length, WireSeries cursor) {
    return readRequest(buf, offset, length, cursor, null);
  }

  /**
   * Reads a {@code prometheus.WriteRequest} lightly: the series' positions and sample counts, and
   * the metadata; labels and samples are checked only when the series are read, so a consumer
   * must be ready for {@link WireFormatException} from {@link #read} and store nothing of the
   * batch then. Series hashes are not computed.
   *
   * @throws WireFormatException when the request's or a series' top-level structure is broken
   */
  public static WireBatch scan(byte[] buf) {
    return readRequest(buf, 0, buf.length, null, null);
  }

  /** {@link #scan} of the request in {@code buf[0, length)}. */
  public static WireBatch scan(byte[] buf, int length) {
    return readRequest(buf, 0, length, null, null);
  }

  /** {@link #parse} with a cursor, {@link #scan} without. */
  private static WireBatch readRequest(byte[] buf, @Nullable WireSeries cursor) {
    return readRequest(buf, 0, buf.length, cursor, null);
  }

  private static WireBatch readRequest(byte[] buf, int offset, int length, @Nullable WireSeries cursor,
      @Nullable WireBatch reuse) {
    ProtoReader r = new ProtoReader().reset(buf, offset, length);
    int n = countSeries(r, length);
    WireBatch b = reuse != null ? reuse.clear(n) : new WireBatch(n);
    b.hashed = cursor != null;
    r.reset(buf, offset, length);
    ProtoReader series = new ProtoReader();
    boolean hasMetadata = false;
    while (r.more()) {
      int tag = r.tag();
      int field = tag >>> 3;
      int wt = tag & 7;
      if (wt == ProtoReader.LEN && field == WRITE_REQUEST_TIMESERIES) {
        int s = r.lengthDelimited();
        if (cursor != null) {
          cursor.reset(buf, s, r.pos - s);
          b.add(buf, s, r.pos - s, cursor.labelsHash(), cursor.samples() + cursor.histograms());
          b.save(cursor);
        } else {
          b.add(buf, s, r.pos - s, 0, countSamples(series.reset(buf, s, r.pos - s)));
        }
      } else if (wt == ProtoReader.LEN && field == WRITE_REQUEST_METADATA) {
        r.lengthDelimited();
        hasMetadata = true;
      } else {
        r.skip(wt);
      }
    }
    if (hasMetadata) {
      try {
        b.metadata = WriteRequest.parseFrom(java.nio.ByteBuffer.wrap(buf, offset, length))
            .getMetadataList();
      } catch (InvalidProtocolBufferException e) {
        throw new WireFormatException("invalid metadata: " + e.getMessage());
      }
    }
    return b;
  }

  /**
   * The number of series fields at the top level of a request: one cheap pass over tags and
   * lengths, so that the batch's arrays are allocated once at their size (an estimate from the
   * byte length was about twice too large for typical series, and the reader parses every record).
   * A broken structure is left to the reading pass, which reports it; then the estimate is used.
   */
  private static int countSeries(ProtoReader r, int length) {
    int n = 0;
    try {
      while (r.more()) {
        int tag = r.tag();
        if (tag == (WRITE_REQUEST_TIMESERIES << 3 | ProtoReader.LEN)) {
          n++;
        }
        r.skip(tag & 7);
      }
      return Math.min(n, 1 << 16); // more (empty or hostile series) grow the arrays as they come
    } catch (WireFormatException e) {
      return Math.min(4096, 16 + length / 128);
    }
  }

  /** Receives the series of a remote write 2.0 request that are refused, with what they held. */
  @FunctionalInterface
  public interface Refused {
    void series(int index, InvalidSeriesException problem, int samples, int histograms, int exemplars);
  }

  /**
   * Reads an {@code io.prometheus.write.v2.Request}: the symbols table, then every series, checked
   * and hashed with {@code cursor} like {@link #parse}. Labels stay positions of symbol bytes in
   * {@code buf}. A series with an invalid reference or histogram ({@link InvalidSeriesException})
   * goes to {@code refused} and is left out; with {@code refused} null it is thrown. Per-series
   * metadata becomes one {@link MetricMetadata} per metric name (the first one wins).
   *
   * @throws WireFormatException when the bytes are not a well-formed Request
   * @throws InvalidSeriesException when a series is invalid and {@code refused} is null
   */
  public static WireBatch parseV2(byte[] buf, WireSeries cursor, @Nullable Refused refused) {
    Symbols syms = new Symbols(buf);
    ProtoReader r = new ProtoReader().reset(buf, 0, buf.length);
    int[] series = new int[32];
    int n = 0;
    while (r.more()) {
      int tag = r.tag();
      int field = tag >>> 3;
      int wt = tag & 7;
      if (wt == ProtoReader.LEN && field == 4) {
        int s = r.lengthDelimited();
        syms.add(s, r.pos - s);
      } else if (wt == ProtoReader.LEN && field == 5) {
        int s = r.lengthDelimited();
        if (n + 2 > series.length) {
          series = Arrays.copyOf(series, series.length * 2);
        }
        series[n++] = s;
        series[n++] = r.pos - s;
      } else {
        r.skip(wt);
      }
    }
    WireBatch b = new WireBatch(Math.max(16, n / 2));
    java.util.Map<Integer, MetricMetadata> meta = null;
    for (int i = 0; i < n; i += 2) {
      try {
        cursor.resetV2(buf, series[i], series[i + 1], syms);
      } catch (InvalidSeriesException e) {
        if (refused == null) {
          throw e;
        }
        refused.series(i / 2, e, cursor.samples(), cursor.histograms(), cursor.exemplars());
        continue;
      }
      b.add(buf, series[i], series[i + 1], cursor.labelsHash(), cursor.samples() + cursor.histograms());
      b.save(cursor);
      b.symbolsFor(b.size - 1)[b.size - 1] = syms;
      b.floats += cursor.samples();
      b.histogramSamples += cursor.histograms();
      b.exemplarCount += cursor.exemplars();
      if (cursor.hasMetadata() && cursor.nameRef() >= 0 && (cursor.metadataType() != 0 || cursor.helpRef() != 0
          || cursor.unitRef() != 0)) {
        if (meta == null) {
          meta = new java.util.LinkedHashMap<>();
        }
        // One String per metric name and request, not per series.
        if (!meta.containsKey(cursor.nameRef())) {
          meta.put(cursor.nameRef(), MetricMetadata.newBuilder().setTypeValue(cursor.metadataType())
              .setMetricFamilyName(syms.string(cursor.nameRef())).setHelp(syms.string(cursor.helpRef()))
              .setUnit(syms.string(cursor.unitRef())).build());
        }
      }
    }
    if (meta != null) {
      b.metadata = List.copyOf(meta.values());
    }
    return b;
  }

  private @Nullable Symbols[] symbolsFor(int i) {
    @Nullable Symbols[] a = symbolsOf;
    if (a == null) {
      a = new Symbols[Math.max(i + 1, offs.length)];
    } else if (a.length <= i) {
      a = Arrays.copyOf(a, Math.max(i + 1, a.length * 2));
    }
    symbolsOf = a;
    return a;
  }

  /** Samples and histograms of a series, from its top-level fields only. */
  private static int countSamples(ProtoReader series) {
    int samples = 0;
    while (series.more()) {
      int t = series.tag();
      int f = t >>> 3;
      if ((t & 7) == ProtoReader.LEN && (f == 2 || f == 4)) {
        samples++;
      }
      series.skip(t & 7);
    }
    return samples;
  }

  /** Series {@code i} of another batch. */
  public void add(WireBatch from, int i) {
    boolean keep = from.saved != null && (size == 0 || saved != null);
    hashed &= from.hashed;
    add(from.bufs[i], from.offs[i], from.lens[i], from.hashes[i], from.sampleCounts[i]);
    @Nullable Symbols[] fromSymbols = from.symbolsOf;
    if (fromSymbols != null && fromSymbols.length > i && fromSymbols[i] != null) {
      symbolsFor(size - 1)[size - 1] = fromSymbols[i];
    }
    if (keep) {
      int[] dst = savedFor(size - 1);
      System.arraycopy(from.saved, i * WireSeries.SAVED_INTS, dst, (size - 1) * WireSeries.SAVED_INTS,
          WireSeries.SAVED_INTS);
    } else {
      saved = null;
    }
  }

  /**
   * Forgets the request it held (its buffers, series and metadata), keeping its arrays for the
   * next {@link #parse(byte[], int, WireSeries, WireBatch)}: a thread that keeps the batch between
   * requests then keeps none of their buffers alive.
   */
  public void release() {
    clear(0);
  }

  /** Empties the batch for a new request of about {@code capacity} series, keeping its arrays when large enough. */
  private WireBatch clear(int capacity) {
    if (offs.length < capacity) {
      allocate(capacity);
    } else {
      Arrays.fill(bufs, 0, size, null); // no request buffer stays reachable from here
    }
    size = 0;
    samples = 0;
    metadata = List.of();
    hashed = true;
    symbolsOf = null;
    floats = 0;
    histogramSamples = 0;
    exemplarCount = 0;
    if (saved != null) {
      savedSpare = saved;
      saved = null;
    }
    return this;
  }

  /** The label facts array of the batch's previous request, for {@link #savedFor} to take again. */
  private int @Nullable [] savedSpare;

  private void save(WireSeries cursor) {
    cursor.saveLabels(savedFor(size - 1), (size - 1) * WireSeries.SAVED_INTS);
  }

  private int[] savedFor(int i) {
    int need = (i + 1) * WireSeries.SAVED_INTS;
    int[] a = saved;
    if (a == null) {
      int want = Math.max(need, offs.length * WireSeries.SAVED_INTS);
      int[] spare = savedSpare;
      a = spare != null && spare.length >= want ? spare : new int[want];
      savedSpare = null;
    } else if (a.length < need) {
      a = Arrays.copyOf(a, Math.max(need, a.length * 2));
    }
    saved = a;
    return a;
  }

  private void add(byte[] buf, int off, int len, int hash, int sampleCount) {
    if (size == offs.length) {
      int n = size * 2;
      bufs = Arrays.copyOf(bufs, n);
      offs = Arrays.copyOf(offs, n);
      lens = Arrays.copyOf(lens, n);
      hashes = Arrays.copyOf(hashes, n);
      sampleCounts = Arrays.copyOf(sampleCounts, n);
    }
    bufs[size] = buf;
    offs[size] = off;
    lens[size] = len;
    hashes[size] = hash;
    sampleCounts[size] = sampleCount;
    size++;
    samples += sampleCount;
  }

  public void addMetadata(List<MetricMetadata> more) {
    if (more.isEmpty()) {
      return;
    }
    List<MetricMetadata> m = new ArrayList<>(metadata);
    m.addAll(more);
    metadata = m;
  }

  public int size() {
    return size;
  }

  /** Series the batch holds before its arrays grow. */
  public int capacity() {
    return offs.length;
  }

  /** Samples and histogram samples of all series. */
  public long samples() {
    return samples;
  }

  public List<MetricMetadata> metadata() {
    return metadata;
  }

  /** Float samples of the series of a remote write 2.0 request read by {@link #parseV2}. */
  public long floatSamples() {
    return floats;
  }

  /** Histogram samples of the series {@link #parseV2} read. */
  public long histogramSamples() {
    return histogramSamples;
  }

  /** Exemplars of the series {@link #parseV2} read. */
  public long exemplars() {
    return exemplarCount;
  }

  /** Whether series {@code i} is a remote write 2.0 series. */
  public boolean isV2(int i) {
    @Nullable Symbols[] s = symbolsOf;
    return s != null && s.length > i && s[i] != null;
  }

  /** Whether the series were hashed when read ({@link #parse}, not {@link #scan}): {@link #hash} answers. */
  public boolean hashed() {
    return hashed;
  }

  /** The hash of series {@code i}'s labels, equal to {@code Labels.hashCode()} of its sorted labels. */
  public int hash(int i) {
    if (!hashed) {
      throw new IllegalStateException("a scanned batch has no series hashes: use parse()");
    }
    return hashes[i];
  }

  /** Points {@code cursor} at series {@code i}. */
  public WireSeries read(int i, WireSeries cursor) {
    @Nullable Symbols[] syms = symbolsOf;
    if (syms != null && syms.length > i && syms[i] != null) {
      return cursor.resetV2(bufs[i], offs[i], lens[i], syms[i]);
    }
    int[] s = saved;
    if (s != null && hashed) {
      return cursor.resetKnownLabels(bufs[i], offs[i], lens[i], hashes[i], s, i * WireSeries.SAVED_INTS);
    }
    return cursor.reset(bufs[i], offs[i], lens[i]);
  }

  /** The same content as protobuf objects (for paths that are not performance-critical). */
  public WriteRequest toWriteRequest() {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    WireSeries cursor = null;
    for (int i = 0; i < size; i++) {
      if (isV2(i)) {
        cursor = cursor == null ? new WireSeries() : cursor;
        b.addTimeseries(V2Series.toTimeSeries(read(i, cursor), bufs[i], offs[i], lens[i]));
        continue;
      }
      try {
        b.addTimeseries(TimeSeries.parseFrom(java.nio.ByteBuffer.wrap(bufs[i], offs[i], lens[i])));
      } catch (InvalidProtocolBufferException e) {
        throw new WireFormatException("invalid series: " + e.getMessage());
      }
    }
    return b.addAllMetadata(metadata).build();
  }
}
