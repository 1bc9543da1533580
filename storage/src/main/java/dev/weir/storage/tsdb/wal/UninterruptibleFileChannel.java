package dev.weir.storage.tsdb.wal;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;

/**
 * A WAL segment channel that an interrupt cannot close. A {@link FileChannel} from
 * {@link FileChannel#open} is interruptible: a thread interrupt during a write or fsync closes it
 * (ClosedByInterruptException), which would leave a WAL that has to refuse writes until restart.
 * WAL writers run on threads that others may interrupt (request executors, Kafka shard threads at
 * shutdown), so the WAL does its I/O through {@link RandomAccessFile}, whose write, fsync
 * ({@code FileDescriptor.sync}) and truncate ignore interrupts. Supports what the WAL uses:
 * sequential write, position, size, truncate, force; the rest goes to the file's own channel.
 *
 * <p>Not thread-safe beyond what the WAL's locks give: one writer; force from any thread.
 */
final class UninterruptibleFileChannel extends FileChannel {
  private final RandomAccessFile file;

  private UninterruptibleFileChannel(RandomAccessFile file) {
    this.file = file;
  }

  /** Opens {@code path} for writing; honours CREATE_NEW (fails when it exists) and CREATE. */
  static FileChannel openSegment(Path path, OpenOption... options) throws IOException {
    Set<OpenOption> opts = Set.of(options);
    if (opts.contains(StandardOpenOption.CREATE_NEW)) {
      Files.createFile(path);
    } else if (!opts.contains(StandardOpenOption.CREATE) && !Files.exists(path)) {
      throw new java.nio.file.NoSuchFileException(path.toString());
    }
    if (opts.contains(StandardOpenOption.READ) && !opts.contains(StandardOpenOption.WRITE)) {
      return FileChannel.open(path, options); // read-only: no writes to protect
    }
    return new UninterruptibleFileChannel(new RandomAccessFile(path.toFile(), "rw"));
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    int n = src.remaining();
    if (src.hasArray()) {
      file.write(src.array(), src.arrayOffset() + src.position(), n);
      src.position(src.position() + n);
    } else {
      byte[] copy = new byte[n];
      src.get(copy);
      file.write(copy);
    }
    return n;
  }

  @Override
  public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
    long n = 0;
    for (int i = offset; i < offset + length; i++) {
      n += write(srcs[i]);
    }
    return n;
  }

  @Override
  public void force(boolean metaData) throws IOException {
    file.getFD().sync();
  }

  @Override
  public long position() throws IOException {
    return file.getFilePointer();
  }

  @Override
  public FileChannel position(long newPosition) throws IOException {
    file.seek(newPosition);
    return this;
  }

  @Override
  public long size() throws IOException {
    return file.length();
  }

  @Override
  public FileChannel truncate(long size) throws IOException {
    if (size < file.length()) {
      file.setLength(size);
    }
    if (file.getFilePointer() > size) {
      file.seek(size);
    }
    return this;
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    return file.getChannel().read(dst);
  }

  @Override
  public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
    return file.getChannel().read(dsts, offset, length);
  }

  @Override
  public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
    return file.getChannel().transferTo(position, count, target);
  }

  @Override
  public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
    return file.getChannel().transferFrom(src, position, count);
  }

  @Override
  public int read(ByteBuffer dst, long position) throws IOException {
    return file.getChannel().read(dst, position);
  }

  @Override
  public int write(ByteBuffer src, long position) throws IOException {
    return file.getChannel().write(src, position);
  }

  @Override
  public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
    return file.getChannel().map(mode, position, size);
  }

  @Override
  public FileLock lock(long position, long size, boolean shared) throws IOException {
    return file.getChannel().lock(position, size, shared);
  }

  @Override
  public FileLock tryLock(long position, long size, boolean shared) throws IOException {
    return file.getChannel().tryLock(position, size, shared);
  }

  @Override
  protected void implCloseChannel() throws IOException {
    file.close();
  }
}
