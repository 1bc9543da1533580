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
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * WAL checkpoints, so replay does not grow without bound once data moved into blocks. A
 * checkpoint {@code checkpoint.NNNNNNNN} holds, in WAL record format, what segments up to and
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
    Info prev = latest(walDir);
    Path tmp = walDir.resolve(String.format("%s%08d.tmp", PREFIX, throughSegment));
    deleteRecursively(tmp);
    Files.createDirectories(tmp);
    try (Filter filter = new Filter(Wal.segmentPath(tmp, 0), keepSeries, minTime, tail)) {
      if (prev != null) {
        WalReader.readStrict(prev.dir(), Wal.segments(prev.dir()), filter, metrics, tenant);
      }
      List<Integer> inputs = new ArrayList<>(Wal.segments(walDir));
      inputs.removeIf(s -> (prev != null && s <= prev.index()) || s > throughSegment);
      WalReader.readStrict(walDir, inputs, filter, metrics, tenant);
    }
    Wal.syncDir(tmp); // the segment's directory entry, before the directory is published
    Path dest = walDir.resolve(String.format("%s%08d", PREFIX, throughSegment));
    deleteRecursively(dest);
    Files.move(tmp, dest, StandardCopyOption.ATOMIC_MOVE);
    Wal.syncDir(walDir); // the rename is durable before any segment it replaces is deleted
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
    return new Info(dest, throughSegment);
  }

  static void deleteRecursively(Path p) throws IOException {
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
    private final long minTime;
    private final ByteSink sink = new ByteSink(1 << 20);
    private final int[] seriesRefs = new int[SERIES_PER_RECORD];
    private final Labels[] seriesLabels = new Labels[SERIES_PER_RECORD];
    private int numSeries;
    private final int[] refs = new int[SAMPLES_PER_RECORD];
    private final long[] ts = new long[SAMPLES_PER_RECORD];
    private final double[] vs = new double[SAMPLES_PER_RECORD];
    private int numSamples;
    private long maxSource = -1;
    private final java.util.function.Consumer<ByteSink> tail;

    Filter(Path file, IntPredicate keep, long minTime, java.util.function.Consumer<ByteSink> tail) throws IOException {
      this.out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      this.keep = keep;
      this.minTime = minTime;
      this.tail = tail;
    }

    @Override
    public void series(int ref, Labels labels) {
      if (!keep.test(ref)) {
        return;
      }
      flushSamples(); // keep series records before the samples that follow them
      seriesRefs[numSeries] = ref;
      seriesLabels[numSeries] = labels;
      if (++numSeries == SERIES_PER_RECORD) {
        flushSeries();
      }
    }

    @Override
    public void sample(int ref, long t, double v) {
      if (t < minTime || !keep.test(ref)) {
        return;
      }
      flushSeries();
      refs[numSamples] = ref;
      ts[numSamples] = t;
      vs[numSamples] = v;
      if (++numSamples == SAMPLES_PER_RECORD) {
        flushSamples();
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
        ByteBuffer b = sink.asBuffer();
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
