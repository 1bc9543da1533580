package dev.weir.storage.tsdb.wal;

import java.nio.file.Path;

/**
 * The WAL is corrupt before its last record: valid records follow the damage, so truncating it
 * would lose acknowledged data. Start-up stops with this error unless the repair flag is set.
 */
public final class WalCorruptionException extends Exception {
  private static final long serialVersionUID = 1L;

  private final transient Path segment;
  private final long offset;

  public WalCorruptionException(Path segment, long offset, String message) {
    super(message);
    this.segment = segment;
    this.offset = offset;
  }

  public Path segment() {
    return segment;
  }

  public long offset() {
    return offset;
  }
}
