package dev.weir.storage.bucketstore;

import dev.weir.storage.tsdb.chunk.Chunks;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.util.ByteSink;
import dev.weir.storage.util.ByteSource;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.IntFunction;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * Fetches the chunks a query selected from a block's chunk files by range: a chunk's reference
 * is {@code segment << 32 | offset}, and its size is the distance to the series' next chunk in
 * the same segment (writers put a series' chunks one after another) or, for a series' last chunk,
 * an estimate; a chunk longer than its estimate is read again exactly. Neighbouring ranges merge
 * into one read. Every read is reserved in the query's {@link QueryBudget} first; every chunk's
 * checksum is verified. Stateless.
 */
final class ChunkFetcher {
  /**
   * Bytes read for a series' last chunk before its length is known. A 120-sample XOR chunk of a
   * regular scrape is ~100-300 bytes; irregular values reach ~1.5 KiB.
   */
  static final int CHUNK_ESTIMATE = 1024;
  /** A distance to the next chunk above this is not taken as a size (another writer's layout). */
  static final int MAX_CHUNK_DISTANCE = 64 * 1024;
  /** Header of a chunk file: magic, version, padding. */
  static final int SEGMENT_HEADER_BYTES = 8;

  private ChunkFetcher() {}

  /**
   * The data of {@code chunks}, in the same order.
   *
   * @param segmentFile the reader of segment {@code n} (file {@code chunks/%06d} of n + 1)
   */
  static List<ChunkData> fetch(List<SeriesReader.ChunkRef> chunks, List<Long> nextRefs,
      IntFunction<RangeReads.FileReader> segmentFile, QueryBudget budget) throws IOException {
    TreeMap<Integer, List<Integer>> bySegment = new TreeMap<>();
    for (int i = 0; i < chunks.size(); i++) {
      bySegment.computeIfAbsent((int) (chunks.get(i).ref() >>> 32), k -> new ArrayList<>()).add(i);
    }
    ChunkData[] out = new ChunkData[chunks.size()];
    for (var seg : bySegment.entrySet()) {
      RangeReads.FileReader file = segmentFile.apply(seg.getKey());
      List<RangeReads.Range> ranges = new ArrayList<>(seg.getValue().size());
      for (int i : seg.getValue()) {
        ranges.add(estimate(chunks.get(i).ref(), nextRefs.get(i)));
      }
      ByteBuffer[] bufs = RangeReads.read(file, ranges, BucketBlock.CHUNK_MAX_GAP, BucketBlock.MAX_READ, budget);
      for (int k = 0; k < bufs.length; k++) {
        int i = seg.getValue().get(k);
        SeriesReader.ChunkRef c = chunks.get(i);
        ChunkData data = decode(bufs[k], c);
        if (data == null) {
          long offset = c.ref() & 0xFFFFFFFFL;
          int exact = Math.toIntExact(chunkBytes(bufs[k], c.ref()));
          budget.reserve(exact);
          data = decode(ByteBuffer.wrap(file.read(offset, exact)), c);
          if (data == null) {
            throw new IOException("chunk " + c.ref() + " is truncated");
          }
        }
        out[i] = data;
      }
    }
    return List.of(out);
  }

  /** The byte range to read for the chunk at {@code ref}; {@code next} is the series' next chunk or -1. */
  static RangeReads.Range estimate(long ref, long next) throws IOException {
    long offset = ref & 0xFFFFFFFFL;
    if (offset < SEGMENT_HEADER_BYTES) {
      throw new IOException("chunk reference " + ref + " points into a segment header");
    }
    long nextOffset = next & 0xFFFFFFFFL;
    boolean sameSegment = next >= 0 && (next >>> 32) == (ref >>> 32);
    if (sameSegment && nextOffset > offset && nextOffset - offset <= MAX_CHUNK_DISTANCE) {
      return new RangeReads.Range(offset, nextOffset);
    }
    return new RangeReads.Range(offset, offset + CHUNK_ESTIMATE);
  }

  private static long chunkBytes(ByteBuffer b, long ref) throws IOException {
    try {
      long len = new ByteSource(b.duplicate()).uvarint();
      return ByteSink.uvarintSize(len) + 1 + len + 4;
    } catch (BufferUnderflowException | IllegalStateException e) {
      throw new IOException("chunk " + ref + " length is unreadable", e);
    }
  }

  /** The chunk at the buffer's start; null when the buffer ends before it does. */
  private static @Nullable ChunkData decode(ByteBuffer b, SeriesReader.ChunkRef c) throws IOException {
    long ref = c.ref();
    try {
      ByteSource in = new ByteSource(b.duplicate());
      long len = in.uvarint();
      if (in.remaining() < len + 1 + 4) {
        return null;
      }
      byte encoding = (byte) in.get();
      if (!Chunks.isKnown(encoding)) {
        throw new IOException("chunk " + ref + " has unsupported encoding " + (encoding & 0xff));
      }
      byte[] data = new byte[(int) len];
      in.buffer().get(data);
      CRC32C crc = new CRC32C();
      crc.update(encoding);
      crc.update(data);
      if ((int) crc.getValue() != in.be32()) {
        throw new IOException("chunk " + ref + " checksum mismatch");
      }
      return new ChunkData(c.minTime(), c.maxTime(), data, encoding);
    } catch (BufferUnderflowException | IllegalStateException e) {
      throw new IOException("chunk " + ref + " is malformed: " + e, e);
    }
  }
}
