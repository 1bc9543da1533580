package dev.weir.storage.tsdb.head;

import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.tsdb.wal.Wal;
import dev.weir.storage.tsdb.wal.WalRecords;
import dev.weir.storage.util.ByteSink;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * The head's write-behind log (Prometheus' WBL, {@code <tenant>/wbl}): the out-of-order samples of
 * each commit as SAMPLES records (type 2) in a {@link Wal} of its own. Series records stay in the
 * WAL, which the commit writes first, so every ref a WBL record uses is defined there. Opened on
 * the first out-of-order sample (a tenant that never has one gets no directory).
 *
 * <p>Guarded by the head's append lock, except {@link #current()}.
 */
public final class Wbl {
  /** Opens the WBL directory for appending. */
  @FunctionalInterface
  public interface Opener {
    Wal open() throws IOException;
  }

  private static final int BUFFER_BYTES = 16 * 1024;

  private @Nullable Opener opener;
  private volatile @Nullable Wal wal;
  private ByteSink buffer = new ByteSink(BUFFER_BYTES);

  void attach(Opener o, @Nullable Wal opened) {
    this.opener = o;
    this.wal = opened;
  }

  /** The open WBL, or null (none yet, or a head without logs). */
  @Nullable Wal current() {
    return wal;
  }

  /**
   * The WBL, opened when needed; null when the head has no logs (tests, block building).
   *
   * @throws ServerErrorException when it cannot be opened
   */
  @Nullable Wal get() {
    Wal w = wal;
    if (w != null || opener == null) {
      return w;
    }
    try {
      w = opener.open();
    } catch (IOException e) {
      throw new ServerErrorException("cannot open the out-of-order write-behind log: " + e.getMessage(), e);
    }
    wal = w;
    return w;
  }

  /**
   * Appends the commit's out-of-order samples; returns the LSN to await, or 0 without a WBL.
   *
   * @throws ServerErrorException when the write failed (nothing of the commit is applied then)
   */
  long log(@Nullable Wal w, TenantHead.Accepted a, int count, int maxPayload) {
    if (w == null) {
      return 0;
    }
    int[] r = new int[count];
    long[] t = new long[count];
    double[] v = new double[count];
    int k = 0;
    for (int i = 0; i < a.n(); i++) {
      if (a.kinds()[i] == SampleCheck.OUT_OF_ORDER) {
        r[k] = a.batch()[i].ref();
        t[k] = a.ts()[i];
        v[k] = a.vs()[i];
        k++;
      }
    }
    buffer.reset();
    WalRecords.samples(buffer, r, t, v, count, maxPayload);
    try {
      return w.append(buffer);
    } finally {
      if (buffer.array().length > 16 * BUFFER_BYTES) {
        buffer = new ByteSink(BUFFER_BYTES);
      }
    }
  }
}
