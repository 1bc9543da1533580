package dev.weir.storage.tsdb.wal;

import dev.weir.storage.tsdb.chunk.NativeHistogram;
import dev.weir.storage.tsdb.labels.Labels;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * A {@link WalRecords.Visitor} that hands what the WAL reader decodes to another thread, which
 * calls the target visitor in the same order: a replay then reads, checks and decodes records on
 * one core while the head creates series and appends samples on another (parallel WAL replay,
 * issue 19). Calls are batched ({@value #BATCH} per hand-off); at most {@value #IN_FLIGHT}
 * batches wait, so what the reader runs ahead is bounded.
 *
 * <p>A failure of the target is rethrown from the next visitor call (or {@link #finish()}) in the
 * reader's thread, so the reader treats it as a visitor failure, as without the pipeline; the
 * applying thread then discards the rest. {@link #recordRead} (progress) is reported by the
 * reading thread as it reads.
 *
 * <p>Use from one reading thread: every visitor call, then {@link #finish()} once; {@link #close()}
 * in a finally block ends the applying thread when the reader stopped early.
 */
public final class PipelinedVisitor implements WalRecords.Visitor, AutoCloseable {
  static final int BATCH = 4096;
  static final int IN_FLIGHT = 4;

  private static final byte SERIES = 1;
  private static final byte SAMPLE = 2;
  private static final byte HISTOGRAM = 3;
  private static final byte SOURCE = 4;
  private static final byte EXEMPLAR = 5;
  private static final byte METADATA = 6;
  private static final byte SERIES_ENCODED = 7;

  /** Calls of the visitor, column by column. */
  private static final class Batch {
    final byte[] kind = new byte[BATCH];
    final int[] ref = new int[BATCH];
    final long[] t = new long[BATCH];
    final double[] v = new double[BATCH];
    final @Nullable Object[] obj = new Object[BATCH];
    int n;
    boolean last;
  }

  private final WalRecords.Visitor target;
  private final UnaryOperator<Labels> seriesLabels;
  private final BlockingQueue<Batch> full = new ArrayBlockingQueue<>(IN_FLIGHT);
  private final BlockingQueue<Batch> free = new ArrayBlockingQueue<>(IN_FLIGHT + 2);
  private final Thread applier;
  private volatile @Nullable RuntimeException failure;
  private Batch current = new Batch();
  private boolean finished;

  /** Starts the applying thread, named {@code threadName}. */
  public PipelinedVisitor(WalRecords.Visitor target, String threadName) {
    this(target, threadName, UnaryOperator.identity());
  }

  /**
   * As above; {@code seriesLabels} maps the labels of each series record in the reading thread
   * before they are handed over (work taken off the applying thread, such as an encoding the
   * target would make).
   */
  public PipelinedVisitor(WalRecords.Visitor target, String threadName, UnaryOperator<Labels> seriesLabels) {
    this.target = target;
    this.seriesLabels = seriesLabels;
    for (int i = 0; i < IN_FLIGHT + 1; i++) {
      free.add(new Batch());
    }
    applier = new Thread(this::applyLoop, threadName);
    applier.setDaemon(true);
    applier.start();
  }

  /**
   * Whether replay on more than one thread can pay: this JVM sees more than one processor (and
   * the system property {@code weir.replay.sequential}, for measurements, is not true).
   */
  public static boolean worthIt() {
    return Runtime.getRuntime().availableProcessors() > 1 && !Boolean.getBoolean("weir.replay.sequential");
  }

  private void applyLoop() {
    while (true) {
      Batch b;
      try {
        b = full.take();
      } catch (InterruptedException e) {
        return; // close() without finish(): the reader gave up
      }
      if (failure == null) {
        try {
          apply(b);
        } catch (RuntimeException e) {
          failure = e;
        } catch (Error e) { // the reader must not wait forever for a thread that is gone
          failure = new IllegalStateException("replay thread failed: " + e, e);
        }
      }
      boolean last = b.last;
      b.n = 0;
      b.last = false;
      java.util.Arrays.fill(b.obj, null); // no labels or histograms kept alive by a recycled batch
      free.add(b);
      if (last) {
        return;
      }
    }
  }

  private void apply(Batch b) {
    for (int i = 0; i < b.n; i++) {
      switch (b.kind[i]) {
        case SERIES -> target.series(b.ref[i], (Labels) b.obj[i]);
        case SERIES_ENCODED -> target.seriesEncoded(b.ref[i], (byte[]) b.obj[i], (int) b.t[i]);
        case SAMPLE -> target.sample(b.ref[i], b.t[i], b.v[i]);
        case HISTOGRAM -> target.histogram(b.ref[i], b.t[i], (NativeHistogram) b.obj[i]);
        case SOURCE -> target.source(b.t[i]);
        case EXEMPLAR -> target.exemplar(b.ref[i], b.t[i], b.v[i], (Labels) b.obj[i]);
        case METADATA -> target.metadata((MetadataRecords.Entry) b.obj[i]);
        default -> throw new IllegalStateException("unknown call " + b.kind[i]);
      }
    }
  }

  private void add(byte kind, int ref, long t, double v, @Nullable Object obj) {
    Batch b = current;
    int i = b.n;
    b.kind[i] = kind;
    b.ref[i] = ref;
    b.t[i] = t;
    b.v[i] = v;
    b.obj[i] = obj;
    b.n = i + 1;
    if (b.n == BATCH) {
      handOff(false);
    }
  }

  private void handOff(boolean last) {
    RuntimeException f = failure;
    if (f != null) {
      throw f;
    }
    Batch b = current;
    b.last = last;
    try {
      full.put(b);
      current = last ? b : free.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while replaying", e);
    }
  }

  @Override
  public void series(int ref, Labels labels) {
    add(SERIES, ref, 0, 0, seriesLabels.apply(labels));
  }

  @Override
  public boolean acceptsEncodedSeries() {
    return target.acceptsEncodedSeries();
  }

  @Override
  public void seriesEncoded(int ref, byte[] compact, int hash) {
    add(SERIES_ENCODED, ref, hash, 0, compact);
  }

  @Override
  public void sample(int ref, long t, double v) {
    add(SAMPLE, ref, t, v, null);
  }

  @Override
  public void histogram(int ref, long t, NativeHistogram h) {
    add(HISTOGRAM, ref, t, 0, h);
  }

  @Override
  public void source(long offset) {
    add(SOURCE, 0, offset, 0, null);
  }

  @Override
  public void exemplar(int ref, long t, double v, Labels labels) {
    add(EXEMPLAR, ref, t, v, labels);
  }

  @Override
  public void metadata(MetadataRecords.Entry entry) {
    add(METADATA, 0, 0, 0, entry);
  }

  @Override
  public void recordRead(int bytes) {
    target.recordRead(bytes);
  }

  /**
   * Hands over the last calls and waits until the target has taken every one.
   *
   * @throws RuntimeException what the target threw, if it did
   */
  public void finish() {
    if (finished) {
      return;
    }
    finished = true;
    handOff(true);
    try {
      applier.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while replaying", e);
    }
    RuntimeException f = failure;
    if (f != null) {
      throw f;
    }
  }

  /** Ends the applying thread without waiting for what is queued (after a failed read). */
  @Override
  public void close() {
    if (!finished) {
      finished = true;
      applier.interrupt();
    }
  }
}
