package dev.weir.storage.wire;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The symbols table of one remote write 2.0 request: where each {@code symbols} entry's bytes are
 * in the request buffer. Series refer to strings by index; {@link WireSeries} resolves an index
 * to these positions, so no String is built to read a label. Immutable once read.
 */
final class Symbols {
  private final byte[] buf;
  private int[] offs = new int[64];
  private int[] lens = new int[64];
  private int size;

  Symbols(byte[] buf) {
    this.buf = buf;
  }

  void add(int off, int len) {
    if (size == offs.length) {
      offs = Arrays.copyOf(offs, size * 2);
      lens = Arrays.copyOf(lens, size * 2);
    }
    offs[size] = off;
    lens[size] = len;
    size++;
  }

  int size() {
    return size;
  }

  boolean has(long ref) {
    return ref >= 0 && ref < size;
  }

  int off(int ref) {
    return offs[ref];
  }

  int len(int ref) {
    return lens[ref];
  }

  /** The symbol as a String (error messages and metadata, not the per-series path). */
  String string(int ref) {
    return new String(buf, offs[ref], lens[ref], StandardCharsets.UTF_8);
  }
}
