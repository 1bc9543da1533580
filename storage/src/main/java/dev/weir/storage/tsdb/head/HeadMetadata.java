package dev.weir.storage.tsdb.head;

import dev.weir.proto.prompb.MetricMetadata;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.postings.Selector;
import dev.weir.storage.tsdb.wal.MetadataRecords;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.util.ByteSink;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Predicate;

/**
 * A tenant's metric metadata, one entry per metric family (type, help, unit; the latest wins), as
 * remote write sends it. A family's metadata is logged in the WAL (record type 6) when it first
 * arrives or changes, so a restart keeps it; checkpoints keep the families that still have a
 * series in the head, and block side files ({@code weir-metadata.json}) the families of the
 * series each block holds. Memory: one small entry per family ever seen by this process.
 *
 * <p>Thread-safe.
 */
public final class HeadMetadata {
  /** Suffixes of the series of a family whose name lacks them (histograms, summaries, counters). */
  public static final List<String> FAMILY_SUFFIXES = List.of("", "_total", "_bucket", "_count", "_sum", "_created",
      "_info", "_gcount", "_gsum");

  private final TenantHead head;
  private final ConcurrentSkipListMap<String, MetricMetadata> byFamily = new ConcurrentSkipListMap<>();

  HeadMetadata(TenantHead head) {
    this.head = head;
  }

  /** The metadata by family name, sorted (a live view). */
  public SortedMap<String, MetricMetadata> all() {
    return java.util.Collections.unmodifiableSortedMap(byFamily);
  }

  /**
   * Stores the entries that are new or changed and logs them first; unchanged ones cost a map
   * lookup and an equals.
   *
   * @param durable wait for the WAL fsync before returning
   * @throws dev.weir.storage.errors.ServerErrorException when the WAL write failed (nothing stored)
   */
  public int commit(List<MetricMetadata> meta, boolean durable) {
    List<MetricMetadata> changed = new ArrayList<>(0);
    for (MetricMetadata m : meta) {
      if (!m.getMetricFamilyName().isEmpty() && !m.equals(byFamily.get(m.getMetricFamilyName()))) {
        changed.add(m);
      }
    }
    if (changed.isEmpty()) {
      return 0;
    }
    long lsn = 0;
    head.appendLock().lock();
    try {
      Wal w = head.wal();
      if (w != null) {
        ByteSink sink = new ByteSink(256);
        List<MetadataRecords.Entry> entries = new ArrayList<>(changed.size());
        // While a replay's index is still being built the record names no series (ref 0, which
        // replay does not use): a write does not wait for the build.
        PostingsIndex p = head.postingsIfBuilt();
        for (MetricMetadata m : changed) {
          entries.add(entry(p == null ? 0 : refOf(p, m.getMetricFamilyName()), m));
        }
        MetadataRecords.write(sink, entries, head.walRecordBytes());
        lsn = w.append(sink);
      }
      for (MetricMetadata m : changed) {
        byFamily.put(m.getMetricFamilyName(), m);
      }
    } finally {
      head.appendLock().unlock();
    }
    Wal w = head.wal();
    if (durable && lsn > 0 && w != null) {
      w.awaitDurable(lsn);
    }
    return changed.size();
  }

  private static MetadataRecords.Entry entry(int ref, MetricMetadata m) {
    return new MetadataRecords.Entry(ref, m.getTypeValue(), m.getMetricFamilyName(), m.getUnit(), m.getHelp());
  }

  /** A logged series of the family (its name is the family's or the family's plus a suffix), or 0. */
  private int refOf(PostingsIndex postings, String family) {
    for (String suffix : FAMILY_SUFFIXES) {
      for (int ref : Selector.select(postings, List.of(Matcher.eq(Labels.METRIC_NAME, family + suffix)))) {
        MemSeries s = head.byRef(ref);
        if (s != null && s.logged) {
          return ref;
        }
      }
    }
    return 0;
  }

  /** Whether some series of the family is in the head. */
  private boolean live(String family) {
    for (String suffix : FAMILY_SUFFIXES) {
      if (Selector.select(head.postings(), List.of(Matcher.eq(Labels.METRIC_NAME, family + suffix))).length > 0) {
        return true;
      }
    }
    return false;
  }

  /** A metadata entry from the WAL (the latest record wins, as it did when written). */
  public void replay(MetadataRecords.Entry e) {
    byFamily.put(e.family(), MetricMetadata.newBuilder().setMetricFamilyName(e.family()).setTypeValue(e.type())
        .setHelp(e.help()).setUnit(e.unit()).build());
  }

  /** Metadata loaded from a block's side file: kept unless the WAL or a newer block had the family. */
  public void load(Map<String, MetricMetadata> fromBlock) {
    fromBlock.forEach(byFamily::put);
  }

  /** The families that have a series among {@code names} (metric names of a block's series). */
  public SortedMap<String, MetricMetadata> forNames(Predicate<String> hasName) {
    return forNames(byFamily, hasName);
  }

  /** The entries of {@code all} whose family has a series name {@code hasName} accepts. */
  public static SortedMap<String, MetricMetadata> forNames(Map<String, MetricMetadata> all, Predicate<String> hasName) {
    SortedMap<String, MetricMetadata> out = new java.util.TreeMap<>();
    for (Map.Entry<String, MetricMetadata> e : all.entrySet()) {
      for (String suffix : FAMILY_SUFFIXES) {
        if (hasName.test(e.getKey() + suffix)) {
          out.put(e.getKey(), e.getValue());
          break;
        }
      }
    }
    return out;
  }

  /** Appends a metadata record of every family that still has a series in the head (for a checkpoint). */
  public void writeLive(ByteSink sink) {
    List<MetadataRecords.Entry> entries = new ArrayList<>();
    for (MetricMetadata m : byFamily.values()) {
      if (live(m.getMetricFamilyName())) {
        entries.add(entry(refOf(head.postings(), m.getMetricFamilyName()), m));
      }
    }
    if (!entries.isEmpty()) {
      MetadataRecords.write(sink, entries, dev.weir.storage.tsdb.wal.WalRecords.MAX_WRITE_PAYLOAD_BYTES);
    }
  }
}
