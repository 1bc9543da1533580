package dev.weir.ingester.testing;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Acknowledged versus found samples, for fault-injection tests. Writes are numbered k = 0, 1, ...;
 * write k ({@link #request(long)}) holds one sample per series at {@code t0 + k * stepMs} with
 * value k. A test marks each write attempted before sending it and acknowledged when the client got
 * 2xx/OK (or the Kafka producer its ack); {@link #check} then compares what {@code /api/v1/export}
 * returns: every acknowledged sample found, each sample at most once, nothing found that was never
 * attempted, every value the one written.
 *
 * <p>Thread-safe: a background writer records while the test thread reads counts.
 */
public final class AckLedger {
  private static final Pattern SERIES = Pattern.compile("series=\"(\\d+)\"");

  public final String tenant;
  public final String metric;
  public final int series;
  public final long t0;
  public final long stepMs;
  private final AtomicLong next = new AtomicLong();
  private final Set<Long> attempted = new ConcurrentSkipListSet<>();
  private final Set<Long> acked = new ConcurrentSkipListSet<>();
  private final Map<String, AtomicLong> refusals = new ConcurrentHashMap<>();
  private final List<String> refusalSamples = new CopyOnWriteArrayList<>();

  public AckLedger(String tenant, String metric, int series, long t0, long stepMs) {
    this.tenant = tenant;
    this.metric = metric;
    this.series = series;
    this.t0 = t0;
    this.stepMs = stepMs;
  }

  /** Write {@code k}: one sample per series at {@code t0 + k * stepMs}, value {@code k}. */
  public WriteRequest request(long k) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int s = 0; s < series; s++) {
      b.addTimeseries(TimeSeries.newBuilder()
          .addLabels(Label.newBuilder().setName("__name__").setValue(metric))
          .addLabels(Label.newBuilder().setName("series").setValue(String.format("%04d", s)))
          .addSamples(Sample.newBuilder().setTimestamp(t0 + k * stepMs).setValue(k)));
    }
    return b.build();
  }

  /** The next write number, marked attempted. */
  public long attempt() {
    long k = next.getAndIncrement();
    attempted.add(k);
    return k;
  }

  public void ack(long k) {
    acked.add(k);
  }

  /** Records why write {@code k} was not acknowledged (a status, an exception class). */
  public void refused(long k, String kind, String detail) {
    refusals.computeIfAbsent(kind, x -> new AtomicLong()).incrementAndGet();
    if (refusalSamples.size() < 10) {
      refusalSamples.add("k=" + k + " " + kind + ": " + detail);
    }
  }

  /** The acknowledged write numbers, ascending. */
  public List<Long> acked() {
    return List.copyOf(acked);
  }

  public int ackedWrites() {
    return acked.size();
  }

  public long ackedSamples() {
    return (long) acked.size() * series;
  }

  public int attemptedWrites() {
    return attempted.size();
  }

  /** Refusals by kind, e.g. {@code {http 503=4, grpc UNAVAILABLE=2}}. */
  public Map<String, Long> refusals() {
    Map<String, Long> out = new java.util.TreeMap<>();
    refusals.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  /** The outcome of comparing found with acknowledged; {@link #ok()} when found ⊇ acked exactly once. */
  public record Report(long ackedSamples, long foundSamples, int seriesFound, List<String> missing,
      List<String> duplicates, List<String> unexpected, List<String> wrongValues) {
    public boolean ok() {
      return missing.isEmpty() && duplicates.isEmpty() && unexpected.isEmpty() && wrongValues.isEmpty();
    }

    @Override
    public String toString() {
      return "acked samples=" + ackedSamples + ", found samples=" + foundSamples + " in " + seriesFound
          + " series; missing acked=" + head(missing) + "; duplicates=" + head(duplicates)
          + "; never attempted=" + head(unexpected) + "; wrong values=" + head(wrongValues);
    }

    private static String head(List<String> l) {
      return l.size() + (l.isEmpty() ? "" : " e.g. " + l.subList(0, Math.min(8, l.size())));
    }
  }

  /** Exports this ledger's metric and compares it with what was acknowledged. */
  public Report check(ExportClient export) throws Exception {
    Report r = compare(export.export(tenant, metric));
    // The fault suite's record of acked vs found, in the build log (grep "ack-ledger").
    System.out.println("ack-ledger " + tenant + "/" + metric + ": " + r + "; " + this);
    return r;
  }

  /** Compares exported series with what was acknowledged and attempted. */
  public Report compare(Map<String, ExportClient.Series> found) {
    Set<Long> ackedNow = new TreeSet<>(acked);
    Set<Long> attemptedNow = new TreeSet<>(attempted);
    List<String> missing = new ArrayList<>();
    List<String> duplicates = new ArrayList<>();
    List<String> unexpected = new ArrayList<>();
    List<String> wrong = new ArrayList<>();
    long foundSamples = 0;
    Set<Integer> seen = new TreeSet<>();
    for (ExportClient.Series s : found.values()) {
      Matcher m = SERIES.matcher(s.labels());
      if (!m.find()) {
        unexpected.add(s.labels());
        continue;
      }
      int id = Integer.parseInt(m.group(1));
      seen.add(id);
      Set<Long> ks = new TreeSet<>();
      for (int i = 0; i < s.timestamps().size(); i++) {
        foundSamples++;
        long ts = s.timestamps().get(i);
        long k = (ts - t0) / stepMs;
        if ((ts - t0) % stepMs != 0 || !attemptedNow.contains(k)) {
          unexpected.add("series " + id + " t=" + ts);
          continue;
        }
        if (!ks.add(k)) {
          duplicates.add("series " + id + " k=" + k);
        }
        if (s.values().get(i) != k) {
          wrong.add("series " + id + " k=" + k + " value " + s.values().get(i));
        }
      }
      for (long k : ackedNow) {
        if (!ks.contains(k)) {
          missing.add("series " + id + " k=" + k);
        }
      }
    }
    for (int id = 0; id < series; id++) {
      if (!seen.contains(id) && !ackedNow.isEmpty()) {
        missing.add("series " + id + " (absent, " + ackedNow.size() + " acked writes)");
      }
    }
    return new Report((long) ackedNow.size() * series, foundSamples, seen.size(), missing, duplicates,
        unexpected, wrong);
  }

  @Override
  public String toString() {
    return metric + "@" + tenant + ": attempted " + attempted.size() + " writes, acked " + acked.size()
        + " (" + ackedSamples() + " samples), refusals " + refusals() + " " + refusalSamples;
  }
}
