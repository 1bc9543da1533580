package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Labels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Collects the samples of one request and appends them to a {@link TenantHead} in one commit.
 * Usage:
 *
 * <pre>{@code
 * Appender app = head.appender();
 * MemSeries s = app.series(labels);  // sorted, validated labels
 * app.add(s, t, v);
 * CommitResult r = app.commit();
 * }</pre>
 *
 * <p>Not thread-safe; one appender per request (it may be reused after {@link #commit()}).
 */
public final class Appender {
  private final TenantHead head;
  private MemSeries[] series = new MemSeries[64];
  private long[] timestamps = new long[64];
  private double[] values = new double[64];
  private int size;

  Appender(TenantHead head) {
    this.head = head;
  }

  /** The series with these labels, created when new. The labels must be sorted and valid. */
  public MemSeries series(Labels labels) {
    return head.getOrCreate(labels);
  }

  public void add(MemSeries s, long t, double v) {
    if (size == series.length) {
      int n = size * 2;
      series = Arrays.copyOf(series, n);
      timestamps = Arrays.copyOf(timestamps, n);
      values = Arrays.copyOf(values, n);
    }
    series[size] = s;
    timestamps[size] = t;
    values[size] = v;
    size++;
  }

  public int size() {
    return size;
  }

  /** Checks, stores and forgets the collected samples. */
  public CommitResult commit() {
    try {
      return head.commit(series, timestamps, values, size);
    } finally {
      Arrays.fill(series, 0, size, null);
      size = 0;
    }
  }

  static List<Rejection> newRejections() {
    return new ArrayList<>(0);
  }
}
