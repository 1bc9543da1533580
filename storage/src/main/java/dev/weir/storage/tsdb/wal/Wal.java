package dev.weir.storage.tsdb.wal;

import dev.weir.storage.errors.ServerErrorException;
import dev.weir.storage.util.ByteSink;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The write-ahead log of one tenant head, in Prometheus' format: numbered segment files
 * ({@code 00000000}, {@code 00000001}, ...) of {@link WalRecords} framed in 32 KiB pages
 * ({@link WalPages}). Every open starts a new segment after the existing segments and
 * checkpoints, so a repaired tail is never appended to.
 *
 * <p>Positions are LSNs: the number of bytes (fragments and page padding) written since open. {@link #append} writes (the
 * page cache: survives kill -9) and returns the LSN after the batch; {@link #awaitDurable}
 * blocks until an fsync covers it. Concurrent waiters share one fsync (group commit).
 *
 * <p>Failures: a failed write is rolled back (the segment truncated to its previous end) and
 * reported as {@link ServerErrorException}; if even that fails, later appends retry the
 * truncation first, so the file never holds a partial record followed by valid ones. A failed
 * fsync — during a sync, a segment roll or close, or one cut short by a thread interrupt — is
 * <b>sticky</b>: after it the kernel may have dropped the dirty pages while a retried fsync
 * reports success (the "fsyncgate" problem), so nothing written before it can be called durable
 * again. The WAL then refuses every later append and sync with a {@link ServerErrorException}
 * naming the reason, and {@link #failure()} says why, until the process restarts and replays what
 * is really on disk.
 *
 * <p>Interrupts: an interrupt closes a plain {@link FileChannel} in the middle of an I/O call.
 * The default opener returns segments that ignore interrupts ({@link UninterruptibleFileChannel});
 * with any other channel, every call here runs with the caller's interrupt flag cleared (and
 * restored after), and an interrupt that still closes the channel mid-call is an I/O failure
 * (sticky), never counted as durable.
 *
 * <p>Thread-safety: {@link #append} and {@link #roll} are called under the head's append lock
 * (one writer); {@link #awaitDurable} and {@link #sync} from any thread.
 */
public final class Wal implements Closeable {
  private static final Logger log = LoggerFactory.getLogger(Wal.class);

  /** Opens segment files; tests substitute a channel that fails on demand. */
  @FunctionalInterface
  public interface ChannelOpener {
    FileChannel open(Path path, OpenOption... options) throws IOException;
  }

  /** Segments whose writes and fsyncs an interrupt cannot close ({@link UninterruptibleFileChannel}). */
  public static final ChannelOpener DEFAULT_OPENER = UninterruptibleFileChannel::openSegment;

  private final Path dir;
  private final long segmentSize;
  private final ChannelOpener opener;
  private final WalMetrics metrics;
  private final String tenant;

  private final Object state = new Object();
  private FileChannel current;
  private int currentIndex;
  /** End of the last complete record in the current segment. */
  private long segmentPos;
  /**
   * The current batch framed into pages (reused under {@code state}; it grows to the largest
   * batch, about the size of the head's own record buffer plus 7 bytes per 32 KiB).
   */
  private final ByteSink framed = new ByteSink(1 << 16);
  /** Whether a failed write left bytes after {@link #segmentPos} that must be truncated first. */
  private boolean dirtyTail;
  private volatile long written;
  /** Why the WAL refuses writes (sticky once set), or null. */
  private volatile @Nullable String failure;

  private final Object syncMonitor = new Object();
  private long durable;
  private boolean syncing;

  private Wal(Path dir, long segmentSize, ChannelOpener opener, WalMetrics metrics, String tenant,
      FileChannel current, int currentIndex) {
    this.dir = dir;
    this.segmentSize = segmentSize;
    this.opener = opener;
    this.metrics = metrics;
    this.tenant = tenant;
    this.current = current;
    this.currentIndex = currentIndex;
  }

  /** Opens the WAL in {@code dir} for appending, in a new segment after the existing ones. */
  public static Wal open(Path dir, long segmentSize, ChannelOpener opener, WalMetrics metrics, String tenant)
      throws IOException {
    Files.createDirectories(dir);
    List<Integer> existing = segments(dir);
    int next = existing.isEmpty() ? 0 : existing.get(existing.size() - 1) + 1;
    Checkpoint.Info cp = Checkpoint.latest(dir);
    if (cp != null) {
      next = Math.max(next, cp.index() + 1); // replay reads only segments after the checkpoint
    }
    FileChannel ch = createSegment(dir, next, opener);
    return new Wal(dir, segmentSize, opener, metrics, tenant, ch, next);
  }

  private static FileChannel createSegment(Path dir, int index, ChannelOpener opener) throws IOException {
    FileChannel ch = opener.open(segmentPath(dir, index), StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE);
    syncDir(dir);
    return ch;
  }

  public static Path segmentPath(Path dir, int index) {
    return dir.resolve(String.format("%08d", index));
  }

  /** Indexes of the segment files in {@code dir}, ascending. */
  public static List<Integer> segments(Path dir) throws IOException {
    List<Integer> out = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return out;
    }
    try (Stream<Path> s = Files.list(dir)) {
      s.map(p -> p.getFileName().toString())
          .filter(n -> n.length() == 8 && n.chars().allMatch(Character::isDigit))
          .forEach(n -> out.add(Integer.parseInt(n)));
    }
    out.sort(null);
    return out;
  }

  public Path dir() {
    return dir;
  }

  /** Index of the segment being written. */
  public int currentSegment() {
    synchronized (state) {
      return currentIndex;
    }
  }

  /** Why the WAL refuses writes (a failed or interrupted fsync), or null. Sticky. */
  public @Nullable String failure() {
    return failure;
  }

  /** Enters the failed state (first reason wins) and wakes the fsync waiters. */
  private void fail(String what, Throwable cause) {
    boolean first = false;
    synchronized (syncMonitor) {
      if (failure == null) {
        failure = what + ": " + cause;
        first = true;
      }
      syncMonitor.notifyAll();
    }
    if (first) {
      metrics.fsyncsFailed.increment();
      log.error("msg=\"WAL fsync failed; refusing writes until restart\" user={} what=\"{}\" err=\"{}\"",
          tenant, what, cause.toString());
    }
  }

  private ServerErrorException refused() {
    return new ServerErrorException("WAL of tenant " + tenant + " refuses writes after a failed fsync ("
        + failure + "); restart once the disk is healthy");
  }

  /**
   * Writes whole records (a logical stream built with {@link WalRecords#begin}/{@link
   * WalRecords#end}), framed into pages at the segment's position, with one {@code write()};
   * returns the LSN after them. A batch that does not fit in the rest of the segment starts the
   * next one (a batch larger than a segment gets one of its own), so a record never crosses
   * segments.
   *
   * @throws ServerErrorException when nothing could be written (the WAL is unchanged)
   */
  public long append(ByteSink records) {
    if (failure != null) {
      metrics.writesFailed.increment();
      throw refused();
    }
    synchronized (state) {
      if (failure != null) {
        metrics.writesFailed.increment();
        throw refused();
      }
      boolean interrupted = Thread.interrupted();
      try {
        if (dirtyTail) {
          current.truncate(segmentPos);
          current.position(segmentPos);
          dirtyTail = false;
        }
        framed.reset();
        WalPages.frame(records, segmentPos, framed);
        if (segmentPos > 0 && segmentPos + framed.length() > segmentSize) {
          rollLocked();
          framed.reset();
          WalPages.frame(records, 0, framed);
        }
        ByteBuffer b = framed.asBuffer();
        while (b.hasRemaining()) {
          current.write(b);
        }
      } catch (ClosedChannelException e) {
        // Closed under us (an interrupt during the write): the segment cannot be repaired here.
        fail("WAL segment closed during a write", e);
        metrics.writesFailed.increment();
        throw refused();
      } catch (IOException e) {
        dirtyTail = true;
        rollbackLocked();
        metrics.writesFailed.increment();
        if (failure != null) {
          throw refused(); // the roll's fsync failed
        }
        throw new ServerErrorException("WAL write failed for tenant " + tenant + ": " + e.getMessage(), e);
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
      int n = framed.length();
      segmentPos += n;
      written += n;
      metrics.bytesWritten.increment(n);
      return written;
    }
  }

  private void rollbackLocked() {
    try {
      current.truncate(segmentPos);
      current.position(segmentPos);
      dirtyTail = false;
    } catch (IOException e) {
      log.warn("msg=\"cannot truncate WAL segment after failed write, will retry before the next write\""
          + " user={} segment={} err=\"{}\"", tenant, currentIndex, e.toString());
    }
  }

  /**
   * Blocks until everything up to {@code lsn} is fsynced. One caller at a time runs the fsync,
   * outside every lock; the others wait and are usually covered by it (group commit). Lock order:
   * {@code state} before {@code syncMonitor} (see {@link #rollLocked}); this method never holds
   * both.
   */
  public void awaitDurable(long lsn) {
    while (true) {
      synchronized (syncMonitor) {
        while (true) {
          if (failure != null) {
            throw refused(); // even when durable >= lsn: that may have been a lie of a retried fsync
          }
          if (durable >= lsn) {
            return;
          }
          if (!syncing) {
            break;
          }
          try {
            syncMonitor.wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServerErrorException("interrupted while waiting for the WAL fsync");
          }
        }
        syncing = true;
      }
      FileChannel ch;
      long target;
      synchronized (state) {
        ch = current;
        target = written;
      }
      boolean ok = false;
      long t0 = System.nanoTime();
      boolean interrupted = Thread.interrupted();
      try {
        ch.force(false);
        ok = true;
      } catch (ClosedByInterruptException e) {
        fail("WAL fsync interrupted (the segment was closed)", e);
      } catch (ClosedChannelException e) {
        ok = coveredByRoll(target);
        if (!ok) {
          fail("WAL segment closed during an fsync", e);
        }
      } catch (IOException e) {
        fail("WAL fsync failed", e);
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
        metrics.fsyncDuration.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        synchronized (syncMonitor) {
          syncing = false;
          if (ok) {
            durable = Math.max(durable, target);
          }
          syncMonitor.notifyAll();
        }
      }
    }
  }

  /**
   * Whether a roll fsynced and closed the segment while we were forcing it: waits for the roll
   * to finish (it holds {@code state}), then checks that it moved the durable mark past target.
   */
  private boolean coveredByRoll(long target) {
    synchronized (state) {
      synchronized (syncMonitor) {
        return durable >= target && failure == null;
      }
    }
  }

  /** Makes everything appended so far durable. */
  public void sync() {
    if (failure != null) {
      throw refused();
    }
    awaitDurable(written);
  }

  /** The LSN after the last append. */
  public long written() {
    return written;
  }

  /**
   * Closes the current segment (fsynced) and starts the next; returns the index of the segment
   * that was closed, so everything up to it can be checkpointed.
   */
  public int roll() throws IOException {
    synchronized (state) {
      int closed = currentIndex;
      rollLocked();
      return closed;
    }
  }

  private void rollLocked() throws IOException {
    if (failure != null) {
      throw refused();
    }
    FileChannel old = current;
    FileChannel next = createSegment(dir, currentIndex + 1, opener);
    boolean interrupted = Thread.interrupted();
    try {
      old.force(false);
    } catch (IOException e) {
      fail("WAL fsync failed while rolling segment " + currentIndex, e);
      next.close();
      Files.deleteIfExists(segmentPath(dir, currentIndex + 1));
      throw e;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    // Durable before the old channel closes, so a concurrent fsync that sees it closed finds its
    // target covered (coveredByRoll).
    synchronized (syncMonitor) {
      durable = Math.max(durable, written);
      syncMonitor.notifyAll();
    }
    old.close();
    current = next;
    currentIndex++;
    segmentPos = 0;
  }

  /** Deletes segments with index below {@code index}. */
  public void deleteSegmentsBefore(int index) throws IOException {
    for (int s : segments(dir)) {
      if (s < index) {
        Files.deleteIfExists(segmentPath(dir, s));
      }
    }
    syncDir(dir);
  }

  /**
   * Fsyncs and closes the current segment.
   *
   * @throws IOException when the final fsync fails (the WAL is then failed, see {@link #failure()})
   */
  @Override
  public void close() throws IOException {
    synchronized (state) {
      boolean interrupted = Thread.interrupted();
      try {
        if (failure == null) {
          current.force(false);
        }
      } catch (IOException e) {
        fail("WAL fsync failed at close", e);
        throw e;
      } finally {
        current.close();
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /**
   * Fsyncs a directory so that file creations, renames and deletions in it survive a power loss.
   * A failure is an error (on Linux every local file system supports it).
   */
  static void syncDir(Path dir) throws IOException {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }
}
