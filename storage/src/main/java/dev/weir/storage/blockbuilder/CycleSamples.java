package dev.weir.storage.blockbuilder;

import dev.weir.proto.prompb.Histogram;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.tsdb.block.BlockMeta;
import dev.weir.storage.tsdb.block.BlockWriter;
import dev.weir.storage.tsdb.chunk.HistogramValues;
import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.chunk.XorAppender;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.wire.HistogramProtos;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The samples of one cycle, per tenant and series, in arrival (offset) order; then cut into blocks
 * per tenant and block range. Samples of a series may arrive in any time order; at the same
 * timestamp the first one consumed wins, as in an ingester, so a redo of the cycle builds the
 * same blocks.
 *
 * <p>Not thread-safe: one cycle, one thread.
 */
final class CycleSamples {
  /** Prometheus cuts chunks at 120 samples. */
  static final int SAMPLES_PER_CHUNK = 120;

  private final Map<String, Map<Labels, Buffer>> tenants = new HashMap<>();
  /** Per tenant the latest metadata per family seen in the cycle, for the blocks' side files. */
  private final Map<String, Map<String, dev.weir.proto.prompb.MetricMetadata>> metadata = new HashMap<>();
  private long samples;
  private long histograms;
  private long invalidSeries;

  /** A series' samples as received: timestamps and raw value bits. */
  static final class Buffer {
    long[] ts = new long[8];
    long[] vs = new long[8];
    int n;
    boolean sorted = true;
    /** Native histogram samples, apart from the floats: timestamps and histograms. */
    long[] hts = new long[0];
    NativeHistogram[] hs = new NativeHistogram[0];
    int hn;

    void addHistogram(long t, NativeHistogram h) {
      if (hn == hts.length) {
        hts = Arrays.copyOf(hts, Math.max(8, hn * 2));
        hs = Arrays.copyOf(hs, Math.max(8, hn * 2));
      }
      hts[hn] = t;
      hs[hn] = h;
      hn++;
    }

    /** {@link #sortDedupe} for the histogram samples. */
    void sortDedupeHistograms() {
      Integer[] idx = new Integer[hn];
      for (int i = 0; i < hn; i++) {
        idx[i] = i;
      }
      long[] t0 = hts;
      Arrays.sort(idx, (a, b) -> Long.compare(t0[a], t0[b])); // stable: the first consumed wins a tie
      long[] t = new long[hn];
      NativeHistogram[] h = new NativeHistogram[hn];
      int w = 0;
      for (int i = 0; i < hn; i++) {
        if (w > 0 && hts[idx[i]] == t[w - 1]) {
          continue;
        }
        t[w] = hts[idx[i]];
        h[w] = hs[idx[i]];
        w++;
      }
      hts = t;
      hs = h;
      hn = w;
    }

    void add(long t, double v) {
      if (n == ts.length) {
        ts = Arrays.copyOf(ts, n * 2);
        vs = Arrays.copyOf(vs, n * 2);
      }
      if (n > 0 && t < ts[n - 1]) {
        sorted = false;
      }
      ts[n] = t;
      vs[n] = Double.doubleToRawLongBits(v);
      n++;
    }

    /** Sorts by time (stable: arrival order among equal timestamps) and keeps the first per timestamp. */
    void sortDedupe() {
      if (!sorted) {
        Integer[] idx = new Integer[n];
        for (int i = 0; i < n; i++) {
          idx[i] = i;
        }
        long[] t0 = ts;
        Arrays.sort(idx, (a, b) -> Long.compare(t0[a], t0[b])); // stable for objects
        long[] t = new long[n];
        long[] v = new long[n];
        for (int i = 0; i < n; i++) {
          t[i] = ts[idx[i]];
          v[i] = vs[idx[i]];
        }
        ts = t;
        vs = v;
        sorted = true;
      }
      int w = 0;
      for (int i = 0; i < n; i++) {
        if (w > 0 && ts[i] == ts[w - 1]) {
          continue;
        }
        ts[w] = ts[i];
        vs[w] = vs[i];
        w++;
      }
      n = w;
    }
  }

  /** A block built into the staging directory. */
  record Built(String tenant, String id, Path dir, BlockMeta meta) {}

  void add(String tenant, WriteRequest request) {
    Map<Labels, Buffer> series = tenants.computeIfAbsent(tenant, t -> new HashMap<>());
    for (dev.weir.proto.prompb.MetricMetadata m : request.getMetadataList()) {
      if (!m.getMetricFamilyName().isEmpty()) {
        metadata.computeIfAbsent(tenant, t -> new HashMap<>()).put(m.getMetricFamilyName(), m);
      }
    }
    for (TimeSeries ts : request.getTimeseriesList()) {
      if (ts.getSamplesCount() == 0 && ts.getHistogramsCount() == 0) {
        continue;
      }
      String[] pairs = new String[ts.getLabelsCount() * 2];
      int i = 0;
      for (Label l : ts.getLabelsList()) {
        pairs[i++] = l.getName();
        pairs[i++] = l.getValue();
      }
      Labels labels;
      try {
        labels = Labels.of(pairs);
      } catch (IllegalArgumentException e) {
        invalidSeries++;
        continue;
      }
      Buffer b = series.computeIfAbsent(labels, k -> new Buffer());
      for (Sample s : ts.getSamplesList()) {
        b.add(s.getTimestamp(), s.getValue());
        samples++;
      }
      for (Histogram h : ts.getHistogramsList()) {
        NativeHistogram decoded = HistogramProtos.fromProto(h).histogram();
        if (decoded == null) {
          histograms++; // the distributor checked it: only a record from elsewhere gets here
          continue;
        }
        b.addHistogram(h.getTimestamp(), decoded);
        samples++;
      }
    }
  }

  long samples() {
    return samples;
  }

  /** Histogram samples dropped as inconsistent. */
  long histograms() {
    return histograms;
  }

  long invalidSeries() {
    return invalidSeries;
  }

  /**
   * Writes one block per tenant and block range into {@code staging}, IDs from {@link BlockIds}.
   *
   * @param extraJson the {@code "weir": {…}} member of every meta.json
   */
  List<Built> build(Path staging, long rangeMillis, long firstRecordTimestamp, int partition, long startOffset,
      String extraJson) throws IOException {
    List<Built> out = new ArrayList<>();
    for (String tenant : new TreeMap<>(tenants).keySet()) {
      Map<Labels, Buffer> series = tenants.get(tenant);
      List<Labels> sortedLabels = new ArrayList<>(series.keySet());
      sortedLabels.sort(null);
      // range index -> series chunks, in label order
      TreeMap<Long, List<SeriesChunks>> byRange = new TreeMap<>();
      TreeMap<Long, long[]> bounds = new TreeMap<>();
      for (Labels l : sortedLabels) {
        Buffer b = series.get(l);
        b.sortDedupe();
        b.sortDedupeHistograms();
        TreeMap<Long, List<ChunkData>> seriesRanges = new TreeMap<>();
        // Floats and histograms in one time order: a chunk holds a run of one kind, so a series'
        // chunks never overlap (a float and a histogram at one timestamp: the float is kept).
        int i = 0;
        int k = 0;
        while (i < b.n || k < b.hn) {
          boolean floatRun = k >= b.hn || (i < b.n && b.ts[i] <= b.hts[k]);
          long range = Math.floorDiv(floatRun ? b.ts[i] : b.hts[k], rangeMillis);
          List<ChunkData> chunks = seriesRanges.computeIfAbsent(range, r -> new ArrayList<>());
          if (floatRun) {
            XorAppender app = new XorAppender();
            int inChunk = 0;
            while (i < b.n && inChunk < SAMPLES_PER_CHUNK && Math.floorDiv(b.ts[i], rangeMillis) == range
                && (k >= b.hn || b.ts[i] <= b.hts[k])) {
              app.append(b.ts[i], Double.longBitsToDouble(b.vs[i]));
              if (k < b.hn && b.hts[k] == b.ts[i]) {
                k++; // the float wins the timestamp
              }
              i++;
              inChunk++;
            }
            chunks.add(new ChunkData(app.minTime(), app.maxTime(), app.bytes()));
          } else {
            int from = k;
            while (k < b.hn && Math.floorDiv(b.hts[k], rangeMillis) == range && (i >= b.n || b.hts[k] < b.ts[i])) {
              k++;
            }
            for (HistogramValues.Encoded e : HistogramValues.encode(Arrays.copyOfRange(b.hts, from, k),
                Arrays.copyOfRange(b.hs, from, k), k - from, SAMPLES_PER_CHUNK)) {
              chunks.add(new ChunkData(e.minTime(), e.maxTime(), e.bytes(), e.encoding()));
            }
          }
        }
        for (Map.Entry<Long, List<ChunkData>> sr : seriesRanges.entrySet()) {
          long range = sr.getKey();
          List<ChunkData> chunks = sr.getValue();
          byRange.computeIfAbsent(range, r -> new ArrayList<>()).add(new SeriesChunks(l, chunks));
          long[] mm = bounds.computeIfAbsent(range, r -> new long[] {Long.MAX_VALUE, Long.MIN_VALUE});
          for (ChunkData c : chunks) { // float and histogram chunks may overlap in time
            mm[0] = Math.min(mm[0], c.minTime());
            mm[1] = Math.max(mm[1], c.maxTime());
          }
        }
      }
      for (Map.Entry<Long, List<SeriesChunks>> e : byRange.entrySet()) {
        String id = BlockIds.of(firstRecordTimestamp, partition, startOffset, e.getKey());
        long[] mm = bounds.get(e.getKey());
        Path parent = staging.resolve(tenant);
        BlockMeta meta = BlockWriter.write(parent, id, mm[0], mm[1] + 1, e.getValue(), extraJson);
        java.util.Set<String> names = new java.util.HashSet<>();
        e.getValue().forEach(sc -> names.add(sc.labels().getOrEmpty(Labels.METRIC_NAME)));
        dev.weir.storage.tsdb.MetadataFile.write(parent.resolve(id), dev.weir.storage.tsdb.head.HeadMetadata.forNames(
            metadata.getOrDefault(tenant, Map.of()), names::contains));
        out.add(new Built(tenant, id, parent.resolve(id), meta));
      }
    }
    return out;
  }
}
