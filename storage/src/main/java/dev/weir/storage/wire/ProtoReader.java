package dev.weir.storage.wire;

/**
 * A cursor over protobuf bytes: tags, varints, fixed64, length-delimited fields, skipping unknown
 * fields the way protobuf does. Every read checks bounds and throws {@link WireFormatException}.
 * Not thread-safe; reusable through {@link #reset}.
 */
final class ProtoReader {
  static final int VARINT = 0;
  static final int FIXED64 = 1;
  static final int LEN = 2;
  static final int FIXED32 = 5;

  byte[] buf = new byte[0];
  int pos;
  int limit;

  ProtoReader reset(byte[] b, int off, int len) {
    if (off < 0 || len < 0 || off + len > b.length) {
      throw new WireFormatException("range out of bounds");
    }
    buf = b;
    pos = off;
    limit = off + len;
    return this;
  }

  boolean more() {
    return pos < limit;
  }

  /** Reads a tag; field number {@code tag >>> 3}, wire type {@code tag & 7}. */
  int tag() {
    int p = pos;
    if (p < limit) {
      int b = buf[p];
      if (b >= 8) { // one byte (fields 1-15) and a field number > 0: almost every tag
        pos = p + 1;
        return b;
      }
    }
    long t = varint();
    if (t >>> 32 != 0 || (t >>> 3) == 0) {
      throw new WireFormatException("invalid tag " + t);
    }
    return (int) t;
  }

  long varint() {
    int p = pos;
    if (p < limit) {
      byte b = buf[p];
      if (b >= 0) { // one byte: tags, lengths under 128, small numbers
        pos = p + 1;
        return b;
      }
    }
    return varintLong();
  }

  private long varintLong() {
    long r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= limit) {
        throw new WireFormatException("truncated varint");
      }
      byte b = buf[pos++];
      r |= (long) (b & 0x7f) << shift;
      if (b >= 0) {
        return r;
      }
    }
    throw new WireFormatException("malformed varint");
  }

  long fixed64() {
    if (limit - pos < 8) {
      throw new WireFormatException("truncated fixed64");
    }
    long r = 0;
    for (int i = 7; i >= 0; i--) {
      r = (r << 8) | (buf[pos + i] & 0xffL);
    }
    pos += 8;
    return r;
  }

  /** Reads a length prefix and returns the start of the field's bytes; {@link #pos} moves past them. */
  int lengthDelimited() {
    long n = varint();
    if (n < 0 || n > limit - pos) {
      throw new WireFormatException("truncated length-delimited field (length " + n + ")");
    }
    int start = pos;
    pos += (int) n;
    return start;
  }

  /** Skips a field of this wire type. Groups (deprecated) are refused, as proto3 has none. */
  void skip(int wireType) {
    switch (wireType) {
      case VARINT -> varint();
      case FIXED64 -> {
        if (limit - pos < 8) {
          throw new WireFormatException("truncated fixed64");
        }
        pos += 8;
      }
      case LEN -> lengthDelimited();
      case FIXED32 -> {
        if (limit - pos < 4) {
          throw new WireFormatException("truncated fixed32");
        }
        pos += 4;
      }
      default -> throw new WireFormatException("unsupported wire type " + wireType);
    }
  }
}
