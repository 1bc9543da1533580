package dev.weir.storage.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real {@link FileChannel} that fails on demand the way a full disk does: a write puts half of
 * its bytes on disk, then throws "No space left on device"; {@code force} can fail too. Used as
 * the WAL's channel opener in tests.
 */
public final class FaultyChannel extends FileChannel {
  /** Switches shared by every channel the opener created. */
  public static final class Faults {
    public final AtomicBoolean diskFull = new AtomicBoolean();
    public final AtomicBoolean fsyncFails = new AtomicBoolean();
    public final AtomicInteger forces = new AtomicInteger();
    /** The next force is hit by an interrupt of its thread (the real channel closes itself). */
    public final AtomicBoolean interruptDuringForce = new AtomicBoolean();

    public FileChannel open(Path path, OpenOption... options) throws IOException {
      if (diskFull.get()) {
        throw new IOException("No space left on device (creating " + path + ")");
      }
      return new FaultyChannel(FileChannel.open(path, options), this);
    }
  }

  private final FileChannel d;
  private final Faults faults;

  private FaultyChannel(FileChannel delegate, Faults faults) {
    this.d = delegate;
    this.faults = faults;
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    if (faults.diskFull.get()) {
      int half = src.remaining() / 2;
      if (half > 0) {
        ByteBuffer part = src.duplicate();
        part.limit(part.position() + half);
        d.write(part);
      }
      throw new IOException("No space left on device");
    }
    return d.write(src);
  }

  @Override
  public void force(boolean metaData) throws IOException {
    faults.forces.incrementAndGet();
    if (faults.fsyncFails.get()) {
      throw new IOException("Input/output error (fsync)");
    }
    if (faults.interruptDuringForce.getAndSet(false)) {
      Thread.currentThread().interrupt(); // as if it arrived now: the delegate sees it mid-call
    }
    d.force(metaData);
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    return d.read(dst);
  }

  @Override
  public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
    return d.read(dsts, offset, length);
  }

  @Override
  public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
    if (faults.diskFull.get()) {
      throw new IOException("No space left on device");
    }
    return d.write(srcs, offset, length);
  }

  @Override
  public long position() throws IOException {
    return d.position();
  }

  @Override
  public FileChannel position(long newPosition) throws IOException {
    d.position(newPosition);
    return this;
  }

  @Override
  public long size() throws IOException {
    return d.size();
  }

  @Override
  public FileChannel truncate(long size) throws IOException {
    d.truncate(size);
    return this;
  }

  @Override
  public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
    return d.transferTo(position, count, target);
  }

  @Override
  public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
    return d.transferFrom(src, position, count);
  }

  @Override
  public int read(ByteBuffer dst, long position) throws IOException {
    return d.read(dst, position);
  }

  @Override
  public int write(ByteBuffer src, long position) throws IOException {
    if (faults.diskFull.get()) {
      throw new IOException("No space left on device");
    }
    return d.write(src, position);
  }

  @Override
  public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
    return d.map(mode, position, size);
  }

  @Override
  public FileLock lock(long position, long size, boolean shared) throws IOException {
    return d.lock(position, size, shared);
  }

  @Override
  public FileLock tryLock(long position, long size, boolean shared) throws IOException {
    return d.tryLock(position, size, shared);
  }

  @Override
  protected void implCloseChannel() throws IOException {
    d.close();
  }
}
