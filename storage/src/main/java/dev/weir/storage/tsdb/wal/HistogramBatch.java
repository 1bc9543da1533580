package dev.weir.storage.tsdb.wal;

import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.util.ByteSink;
import java.util.Arrays;

/**
 * Histogram samples collected for the WAL: refs, timestamps and histograms in parallel arrays,
 * written as {@link HistogramRecords} and then forgotten. Not thread-safe.
 */
public final class HistogramBatch {
  private int[] refs = new int[16];
  private long[] ts = new long[16];
  private NativeHistogram[] hs = new NativeHistogram[16];
  private int size;

  public void add(int ref, long t, NativeHistogram h) {
    if (size == refs.length) {
      int n = size * 2;
      refs = Arrays.copyOf(refs, n);
      ts = Arrays.copyOf(ts, n);
      hs = Arrays.copyOf(hs, n);
    }
    refs[size] = ref;
    ts[size] = t;
    hs[size] = h;
    size++;
  }

  public int size() {
    return size;
  }

  /** Appends the histogram records (payloads within {@link WalRecords#MAX_WRITE_PAYLOAD_BYTES}), then clears. */
  public void writeTo(ByteSink sink) {
    writeTo(sink, WalRecords.MAX_WRITE_PAYLOAD_BYTES);
  }

  /** Appends the histogram records with payloads within {@code maxPayload}, then clears. */
  public void writeTo(ByteSink sink, int maxPayload) {
    HistogramRecords.append(sink, refs, ts, hs, size, maxPayload);
    Arrays.fill(hs, 0, size, null);
    size = 0;
  }
}
