package dev.weir.ingester.querier;

import dev.weir.proto.prompb.Histogram;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.chunk.HistogramValues;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.wire.HistogramProtos;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Merges the series several sources returned for one query into one label-sorted list: a k-way
 * merge over the sources' label-sorted streams, where series with equal labels become one whose
 * samples are merged by timestamp. A sample present in several sources with the same value (same
 * bits) is kept once; samples at one timestamp with <em>different</em> values are a conflict, and
 * the one from the source listed first wins (the querier lists ingesters before store-gateways,
 * ingesters by partition or ID, store-gateways in flag order), so the answer does not depend on
 * which source replied first. Counts stop the merge as soon as a limit is passed (422, naming the
 * flag).
 *
 * <p>A source that breaks the stream contract (series out of label order, samples out of time
 * order) is sorted first rather than producing a wrong merge. Not thread-safe: one per query.
 */
public final class SeriesMerger {
  private final QueryLimits limits;
  private long duplicates;
  private long conflicts;

  /**
   * One merged series: labels, float samples and native histogram samples, each in ascending,
   * unique timestamp order.
   */
  public record Series(Labels labels, long[] timestamps, double[] values, long[] histogramTimestamps,
      NativeHistogram[] histograms) {
    /** A series of float samples only. */
    public Series(Labels labels, long[] timestamps, double[] values) {
      this(labels, timestamps, values, new long[0], new NativeHistogram[0]);
    }
  }

  /** @param limits caps on the series and samples of the result */
  public SeriesMerger(QueryLimits limits) {
    this.limits = limits;
  }

  /** Samples dropped because another source had the same one (identical value). */
  public long duplicates() {
    return duplicates;
  }

  /** Samples dropped because a source listed earlier had another value at the same timestamp. */
  public long conflicts() {
    return conflicts;
  }

  /**
   * @param sources each source's series, in priority order
   * @throws ClientErrorException 422 when the result has more series or samples than allowed
   */
  public List<Series> merge(List<List<TimeSeries>> sources) {
    PriorityQueue<Cursor> heads = new PriorityQueue<>(Comparator.<Cursor, Labels>comparing(Cursor::labels)
        .thenComparingInt(c -> c.source));
    for (int i = 0; i < sources.size(); i++) {
      Cursor c = new Cursor(i, sorted(sources.get(i)));
      if (c.hasCurrent()) {
        heads.add(c);
      }
    }
    List<Series> out = new ArrayList<>();
    long samples = 0;
    List<Input> group = new ArrayList<>();
    while (!heads.isEmpty()) {
      Labels labels = heads.peek().labels();
      group.clear();
      while (!heads.isEmpty() && heads.peek().labels().equals(labels)) {
        Cursor c = heads.poll();
        group.add(c.current());
        c.advance();
        if (c.hasCurrent()) {
          heads.add(c);
        }
      }
      Series floats = mergeSamples(labels, group);
      Series s = mergeHistograms(floats, group);
      if (s.timestamps().length == 0 && s.histogramTimestamps().length == 0) {
        continue;
      }
      out.add(s);
      samples += s.timestamps().length + s.histogramTimestamps().length;
      limits.check(out.size(), samples);
    }
    return out;
  }

  /** Merges the inputs of one series (in priority order: stable within equal labels). */
  private Series mergeSamples(Labels labels, List<Input> group) {
    int total = 0;
    for (Input in : group) {
      total += in.timestamps.length;
    }
    long[] ts = new long[total];
    double[] vs = new double[total];
    int[] pos = new int[group.size()];
    int n = 0;
    while (true) {
      int winner = -1;
      long min = Long.MAX_VALUE;
      for (int i = 0; i < group.size(); i++) {
        Input in = group.get(i);
        if (pos[i] < in.timestamps.length && (winner < 0 || in.timestamps[pos[i]] < min)) {
          winner = i;
          min = in.timestamps[pos[i]];
        }
      }
      if (winner < 0) {
        break;
      }
      double value = group.get(winner).values[pos[winner]];
      ts[n] = min;
      vs[n] = value;
      n++;
      pos[winner]++;
      for (int i = 0; i < group.size(); i++) {
        Input in = group.get(i);
        while (pos[i] < in.timestamps.length && in.timestamps[pos[i]] == min) {
          if (Double.doubleToRawLongBits(in.values[pos[i]]) == Double.doubleToRawLongBits(value)) {
            duplicates++;
          } else {
            conflicts++;
          }
          pos[i]++;
        }
      }
    }
    if (n < total) {
      ts = java.util.Arrays.copyOf(ts, n);
      vs = java.util.Arrays.copyOf(vs, n);
    }
    return new Series(labels, ts, vs);
  }

  /** Adds the merged histogram samples of the group to {@code floats}, with the same duplicate and conflict rules. */
  private Series mergeHistograms(Series floats, List<Input> group) {
    int total = 0;
    for (Input in : group) {
      total += in.histogramTimestamps.length;
    }
    if (total == 0) {
      return floats;
    }
    long[] ts = new long[total];
    NativeHistogram[] hs = new NativeHistogram[total];
    int[] pos = new int[group.size()];
    int n = 0;
    while (true) {
      int winner = -1;
      long min = Long.MAX_VALUE;
      for (int i = 0; i < group.size(); i++) {
        Input in = group.get(i);
        if (pos[i] < in.histogramTimestamps.length && (winner < 0 || in.histogramTimestamps[pos[i]] < min)) {
          winner = i;
          min = in.histogramTimestamps[pos[i]];
        }
      }
      if (winner < 0) {
        break;
      }
      NativeHistogram value = group.get(winner).histograms[pos[winner]];
      ts[n] = min;
      hs[n] = value;
      n++;
      pos[winner]++;
      for (int i = 0; i < group.size(); i++) {
        Input in = group.get(i);
        while (pos[i] < in.histogramTimestamps.length && in.histogramTimestamps[pos[i]] == min) {
          if (HistogramValues.sameValue(in.histograms[pos[i]], value)) {
            duplicates++;
          } else {
            conflicts++;
          }
          pos[i]++;
        }
      }
    }
    return new Series(floats.labels(), floats.timestamps(), floats.values(), java.util.Arrays.copyOf(ts, n),
        java.util.Arrays.copyOf(hs, n));
  }

  /** The source's series as inputs, stably sorted by labels (a no-op pass when already sorted). */
  private static List<Input> sorted(List<TimeSeries> series) {
    List<Input> inputs = new ArrayList<>(series.size());
    boolean ordered = true;
    for (TimeSeries ts : series) {
      Input in = Input.of(ts);
      if (!inputs.isEmpty() && inputs.get(inputs.size() - 1).labels.compareTo(in.labels) > 0) {
        ordered = false;
      }
      inputs.add(in);
    }
    if (!ordered) {
      inputs.sort(Comparator.comparing(i -> i.labels));
    }
    return inputs;
  }

  /** One source's copy of a series, samples in time order. */
  private record Input(Labels labels, long[] timestamps, double[] values, long[] histogramTimestamps,
      NativeHistogram[] histograms) {
    static Input of(TimeSeries ts) {
      String[] pairs = new String[ts.getLabelsCount() * 2];
      for (int i = 0; i < ts.getLabelsCount(); i++) {
        Label l = ts.getLabels(i);
        pairs[2 * i] = l.getName();
        pairs[2 * i + 1] = l.getValue();
      }
      List<Sample> samples = ts.getSamplesList();
      for (int i = 1; i < samples.size(); i++) {
        if (samples.get(i).getTimestamp() < samples.get(i - 1).getTimestamp()) {
          samples = new ArrayList<>(samples);
          samples.sort(Comparator.comparingLong(Sample::getTimestamp));
          break;
        }
      }
      long[] t = new long[samples.size()];
      double[] v = new double[samples.size()];
      for (int i = 0; i < t.length; i++) {
        t[i] = samples.get(i).getTimestamp();
        v[i] = samples.get(i).getValue();
      }
      List<Histogram> hl = ts.getHistogramsList();
      for (int i = 1; i < hl.size(); i++) {
        if (hl.get(i).getTimestamp() < hl.get(i - 1).getTimestamp()) {
          hl = new ArrayList<>(hl);
          hl.sort(Comparator.comparingLong(Histogram::getTimestamp));
          break;
        }
      }
      long[] ht = new long[hl.size()];
      NativeHistogram[] hs = new NativeHistogram[hl.size()];
      int k = 0;
      for (Histogram h : hl) {
        NativeHistogram decoded = HistogramProtos.fromStored(h).histogram();
        if (decoded != null) { // a source sends what it stored: a refused message is a broken source
          ht[k] = h.getTimestamp();
          hs[k++] = decoded;
        }
      }
      return new Input(Labels.of(pairs), t, v, java.util.Arrays.copyOf(ht, k), java.util.Arrays.copyOf(hs, k));
    }
  }

  /** A position in one source's sorted inputs. */
  private static final class Cursor {
    final int source;
    final List<Input> inputs;
    int index;

    Cursor(int source, List<Input> inputs) {
      this.source = source;
      this.inputs = inputs;
    }

    boolean hasCurrent() {
      return index < inputs.size();
    }

    Input current() {
      return inputs.get(index);
    }

    Labels labels() {
      return inputs.get(index).labels;
    }

    void advance() {
      index++;
    }
  }
}
