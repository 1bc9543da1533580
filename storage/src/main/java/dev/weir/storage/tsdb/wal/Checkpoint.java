package dev.weir.storage.tsdb.wal;

import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.ByteSink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.IntPredicate;
import java.util.function.IntToLongFunction;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * WAL checkpoints, so replay does not grow without bound once data moved into blocks. A
 * checkpoint {@code checkpoint.NNNNNNNN} (Prometheus' name and format: a directory holding one
 * WAL segment {@code 00000000}) holds what segments up to and
 * including N (and the previous checkpoint) still contribute to the head: the series records of
 * series still in the head, and their samples at or after the head's new minimum time. It is
 * written to a temporary directory, fsynced and renamed, so it either exists whole or not at all;
 * only then are older checkpoints and segments up to N deleted.
 *
 * <p>Stateless.
 */
public final class Checkpoint {
  public static final String PREFIX = "checkpoint.";
  private static final int SAMPLES_PER_RECORD = 10_000;
  private static final int SERIES_PER_RECORD = 1_000;

  private Checkpoint() {}

  /** A checkpoint directory and the last segment it covers. */
  public record Info(Path dir, int index) {}

  /** The newest complete checkpoint in {@code walDir}, or null. */
  public static @Nullable Info latest(Path walDir) throws IOException {
    List<Info> all = list(walDir);
    return all.isEmpty() ? null : all.get(all.size() - 1);
  }

  private static List<Info> list(Path walDir) throws IOException {
    List<Info> out = new ArrayList<>();
    if (!Files.isDirectory(walDir)) {
      return out;
    }
    try (Stream<Path> s = Files.list(walDir)) {
      s.forEach(p -> {
        String n = p.getFileName().toString();
        if (n.startsWith(PREFIX) && n.length() == PREFIX.length() + 8 && Files.isDirectory(p)) {
          try {
            out.add(new Info(p, Integer.parseInt(n.substring(PREFIX.length()))));
          } catch (NumberFormatException e) {
            // not ours
          }
        }
      });
    }
    out.sort(Comparator.comparingInt(Info::index));
    return out;
  }

  /**
   * Writes the checkpoint covering segments up to {@code throughSegment}, then deletes older
   * checkpoints and those segments.
   *
   * @param keepSeries whether a series ref is still in the head
   * @param minTime samples older than this are dropped
   */
  public static Info create(Path walDir, int throughSegment, IntPredicate keepSeries, long minTime,
      WalMetrics metrics, String tenant) throws IOException, WalCorruptionException {
    return create(walDir, throughSegment, keepSeries, minTime, metrics, tenant, sink -> {});
  }

  /**
   * As above; {@code tail} then appends records taken from memory (the head's exemplars and
   * metadata of live series) behind the filtered ones. Exemplar and metadata records of the old
   * segments are not copied: the head's current state replaces them.
   */
  public static Info create(Path walDir, int throughSegment, IntPredicate keepSeries, long minTime,
      WalMetrics metrics, String tenant, java.util.function.Consumer<ByteSink> tail)
      throws IOException, WalCorruptionException {
    return create(walDir, throughSegment, keepSeries, ref -> Long.MIN_VALUE, minTime, metrics, tenant, tail);
  }

  /**
   * As above; {@code heldFrom} also drops, per series ref, the samples older than the oldest one
   * the head still holds for it (after an early compaction the head's minimum time differs from
   * series to series).
   */
  public static Info create(Path walDir, int throughSegment, IntPredicate keepSeries, IntToLongFunction heldFrom,
      long minTime, WalMetrics metrics, String tenant, java.util.function.Consumer<ByteSink> tail)
      throws IOException, WalCorruptionException {
    Info prev = latest(walDir);
    Info made = publish(walDir, throughSegment, keepSeries, heldFrom, minTime, tail, filter -> {
      if (prev != null) {
        WalReader.readStrict(prev.dir(), Wal.segments(prev.dir()), filter, metrics, tenant);
      }
      List<Integer> inputs = new ArrayList<>(Wal.segments(walDir));
      inputs.removeIf(s -> (prev != null && s <= prev.index()) || s > throughSegment);
      WalReader.readStrict(walDir, inputs, filter, metrics, tenant);
    });
    for (Info old : list(walDir)) {
      if (old.index() < throughSegment) {
        deleteRecursively(old.dir());
      }
    }
    for (int s : Wal.segments(walDir)) {
      if (s <= throughSegment) {
        Files.deleteIfExists(Wal.segmentPath(walDir, s));
      }
    }
    Wal.syncDir(walDir);
    return made;
  }

  /** Feeds records to a checkpoint being written. */
  @FunctionalInterface
  public interface Source {
    void feed(WalRecords.Visitor into) throws IOException, WalCorruptionException;
  }

  /**
   * Writes a checkpoint {@code checkpoint.<index>} of everything {@code source} feeds (series,
   * samples, and the highest source offset), e.g. a WAL of another format being converted. Like
   * {@link #create}, it appears whole or not at all.
   */
  public static Info write(Path walDir, int index, Source source) throws IOException, WalCorruptionException {
    Files.createDirectories(walDir);
    return publish(walDir, index, ref -> true, ref -> Long.MIN_VALUE, Long.MIN_VALUE, sink -> {}, source);
  }

  /** Writes the checkpoint to a temporary directory, fsyncs it and renames it into place. */
  private static Info publish(Path walDir, int index, IntPredicate keepSeries, IntToLongFunction heldFrom,
      long minTime, java.util.function.Consumer<ByteSink> tail, Source source)
      throws IOException, WalCorruptionException {
    Path tmp = walDir.resolve(String.format("%s%08d.tmp", PREFIX, index));
    deleteRecursively(tmp);
    Files.createDirectories(tmp);
    try (Filter filter = new Filter(Wal.segmentPath(tmp, 0), keepSeries, heldFrom, minTime, tail)) {
      source.feed(filter);
    }
    Wal.syncDir(tmp); // the segment's directory entry, before the directory is published
    Path dest = walDir.resolve(String.format("%s%08d", PREFIX, index));
    deleteRecursively(dest);
    Files.move(tmp, dest, StandardCopyOption.ATOMIC_MOVE);
    Wal.syncDir(walDir); // the rename is durable before any segment it replaces is deleted
    return new Info(dest, index);
  }

  /** Deletes a file or a directory tree (no-op when missing); not atomic, callers order it. */
  public static void deleteRecursively(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      List<Path> all = s.sorted(Comparator.reverseOrder()).toList();
      for (Path x : all) {
        Files.deleteIfExists(x);
      }
    }
  }

  /** Re-encodes the records that survive into one segment file. */
  private static final class Filter implements WalRecords.Visitor, AutoCloseable {
    private final FileChannel out;
    private final IntPredicate keep;
    private final IntToLongFunction heldFrom;
    private final long minTime;
    private final ByteSink sink = new ByteSink(1 << 20);
    private final ByteSink framed = new ByteSink(1 << 20);
    /** Bytes written to the checkpoint's segment: where the next batch's pages start. */
    private long pos;
    private final int[] seriesRefs = new int[SERIES_PER_RECORD];
    private final Labels[] seriesLabels = new Labels[SERIES_PER_RECORD];
    private int numSeries;
    private final int[] refs = new int[SAMPLES_PER_RECORD];
    private final long[] ts = new long[SAMPLES_PER_RECORD];
    private final double[] vs = new double[SAMPLES_PER_RECORD];
    private int numSamples;
    private long maxSource = -1;
    private final HistogramBatch histograms = new HistogramBatch();
    private final java.util.function.Consumer<ByteSink> tail;

    Filter(Path file, IntPredicate keep, IntToLongFunction heldFrom, long minTime,
        java.util.function.Consumer<ByteSink> tail) throws IOException {
      this.out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      this.keep = keep;
      this.heldFrom = heldFrom;
      this.minTime = minTime;
      this.tail = tail;
    }

    @Override
    public void series(int ref, Labels labels) {
      if (!keep.test(ref)) {
        return;
      }
      flushSamples(); // keep series records before the samples that follow them
      flushHistograms();
      seriesRefs[numSeries] = ref;
      seriesLabels[numSeries] = labels;
      if (++numSeries == SERIES_PER_RECORD) {
        flushSeries();
      }
    }

    @Override
    public void sample(int ref, long t, double v) {
      if (t < minTime || !keep.test(ref) || t < heldFrom.applyAsLong(ref)) {
        return;
      }
      flushSeries();
      flushHistograms();
      refs[numSamples] = ref;
      ts[numSamples] = t;
      vs[numSamples] = v;
      if (++numSamples == SAMPLES_PER_RECORD) {
        flushSamples();
      }
    }

    /** Histogram samples go out in their own records, after the float samples seen so far. */
    @Override
    public void histogram(int ref, long t, dev.weir.storage.tsdb.chunk.NativeHistogram h) {
      if (t < minTime || !keep.test(ref) || t < heldFrom.applyAsLong(ref)) {
        return;
      }
      flushSeries();
      flushSamples();
      histograms.add(ref, t, h);
      if (histograms.size() == SAMPLES_PER_RECORD) {
        flushHistograms();
      }
    }

    private void flushHistograms() {
      if (histograms.size() > 0) {
        histograms.writeTo(sink);
        writeSink();
      }
    }

    /** Kept as one SOURCE record of the highest offset, so a replay still knows what was applied. */
    @Override
    public void source(long offset) {
      maxSource = Math.max(maxSource, offset);
    }

    private void flushSeries() {
      if (numSeries > 0) {
        WalRecords.series(sink, seriesRefs, seriesLabels, numSeries);
        numSeries = 0;
        writeSink();
      }
    }

    private void flushSamples() {
      if (numSamples > 0) {
        WalRecords.samples(sink, refs, ts, vs, numSamples);
        numSamples = 0;
        writeSink();
      }
    }

    private void writeSink() {
      try {
        framed.reset();
        pos += WalPages.frame(sink, pos, framed);
        ByteBuffer b = framed.asBuffer();
        while (b.hasRemaining()) {
          out.write(b);
        }
        sink.reset();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    @Override
    public void close() throws IOException {
      try {
        flushSeries();
        flushSamples();
        flushHistograms();
        if (maxSource >= 0) {
          WalRecords.source(sink, maxSource);
          writeSink();
        }
        tail.accept(sink);
        writeSink();
      } catch (java.io.UncheckedIOException e) {
        throw e.getCause();
      }
      out.force(true);
      out.close();
    }
  }
}
