package dev.weir.storage.ingest;

import com.google.protobuf.CodedOutputStream;
import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.errors.ClientErrorException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Collects the series of one partition's part of a write as {@code TimeSeries} message bytes (as
 * the client sent them, or re-encoded when the distributor changed them) and assembles version-1
 * record values ({@code prometheus.WriteRequest}) from them without building protobuf objects:
 * each value is the series entries copied once, split between series so that no value exceeds the
 * record size limit, metadata with the first part ({@link RecordFormat#split}'s rules, with exact
 * sizes). Holds references to the callers' buffers until {@link #values} ran.
 *
 * <p>Not thread-safe.
 */
public final class RecordV1Builder {
  private static final int WRITE_REQUEST_TIMESERIES = 1;
  private static final int WRITE_REQUEST_METADATA = 3;
  private static final int LEN = 2;

  private byte[][] bufs = new byte[16][];
  private int[] offs = new int[16];
  private int[] lens = new int[16];
  private int size;
  private final List<MetricMetadata> metadata = new ArrayList<>();
  private long exemplars;

  /** Adds a series given as the bytes {@code buf[off, off+len)} of its {@code TimeSeries} message. */
  public void addSeries(byte[] buf, int off, int len) {
    if (size == bufs.length) {
      int c = size * 2;
      bufs = Arrays.copyOf(bufs, c);
      offs = Arrays.copyOf(offs, c);
      lens = Arrays.copyOf(lens, c);
    }
    bufs[size] = buf;
    offs[size] = off;
    lens[size] = len;
    size++;
  }

  /** Adds a series built as an object (encoded now); its exemplars are counted. */
  public void addSeries(TimeSeries series) {
    byte[] b = series.toByteArray();
    addSeries(b, 0, b.length);
    exemplars += series.getExemplarsCount();
  }

  public void addMetadata(List<MetricMetadata> more) {
    metadata.addAll(more);
  }

  /** Series added. */
  public int series() {
    return size;
  }

  /** Exemplars of the series added as objects (series added as bytes carry none). */
  public long exemplars() {
    return exemplars;
  }

  /**
   * The record values, each within {@code maxBytes}.
   *
   * @throws ClientErrorException when one series alone is larger than {@code maxBytes}
   */
  public List<byte[]> values(int maxBytes) {
    int metaBytes = 0;
    for (MetricMetadata m : metadata) {
      metaBytes += CodedOutputStream.computeMessageSize(WRITE_REQUEST_METADATA, m);
    }
    int total = metaBytes;
    for (int i = 0; i < size; i++) {
      total += entrySize(i);
    }
    if (total <= maxBytes) {
      return List.of(write(0, size, metaBytes, total));
    }
    List<byte[]> out = new ArrayList<>();
    int from = 0;
    int bytes = metaBytes;
    boolean first = true;
    for (int i = 0; i < size; i++) {
      int s = entrySize(i);
      if (s > maxBytes) {
        throw new ClientErrorException("series_too_large", "a single series is " + s + " bytes, more than the record"
            + " size limit " + maxBytes + " (--ingest-storage.kafka.producer-max-record-size-bytes)");
      }
      if (bytes + s > maxBytes && i > from) {
        out.add(write(from, i, first ? metaBytes : 0, bytes));
        first = false;
        from = i;
        bytes = 0;
      }
      bytes += s;
    }
    out.add(write(from, size, first ? metaBytes : 0, bytes));
    return out;
  }

  private int entrySize(int i) {
    return CodedOutputStream.computeTagSize(WRITE_REQUEST_TIMESERIES) + CodedOutputStream.computeUInt32SizeNoTag(lens[i])
        + lens[i];
  }

  /** Series {@code [from, to)}, and the metadata when {@code metaBytes > 0}, in one value of {@code bytes}. */
  private byte[] write(int from, int to, int metaBytes, int bytes) {
    byte[] value = new byte[bytes];
    CodedOutputStream out = CodedOutputStream.newInstance(value);
    try {
      for (int i = from; i < to; i++) {
        out.writeTag(WRITE_REQUEST_TIMESERIES, LEN);
        out.writeUInt32NoTag(lens[i]);
        out.writeRawBytes(bufs[i], offs[i], lens[i]);
      }
      if (metaBytes > 0) {
        for (MetricMetadata m : metadata) {
          out.writeMessage(WRITE_REQUEST_METADATA, m);
        }
      }
      out.checkNoSpaceLeft();
    } catch (IOException e) {
      throw new UncheckedIOException("record value size miscounted", e);
    }
    return value;
  }
}
