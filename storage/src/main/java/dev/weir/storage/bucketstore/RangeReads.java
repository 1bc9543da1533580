package dev.weir.storage.bucketstore;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Reads many byte ranges of one bucket file with few range reads: ranges sorted by offset are
 * merged into one read while the gap between them is at most {@code maxGap} and the read stays
 * under {@code maxRead} (an object store charges per request, so a few wasted bytes are cheaper
 * than another round trip). Stateless.
 */
final class RangeReads {
  /** A half-open byte range {@code [start, end)} of a file. */
  record Range(long start, long end) {
    Range {
      if (start < 0 || end < start) {
        throw new IllegalArgumentException("bad range [" + start + ", " + end + ")");
      }
    }

    long length() {
      return end - start;
    }
  }

  /** One file of a block, read by range. */
  interface FileReader {
    /** {@code length} bytes from {@code offset}; fewer only when the file ends first. */
    byte[] read(long offset, int length) throws IOException;
  }

  private RangeReads() {}

  /**
   * Reads every range, each merged read first reserved in {@code budget} (what the file did not
   * have is given back).
   *
   * @return per range, in the order given, a buffer from the range's start to the end of the read
   *     that covered it: a parser may look past the range into bytes read for a neighbour, and a
   *     buffer is shorter than its range only when the file ended first
   */
  static ByteBuffer[] read(FileReader file, List<Range> ranges, long maxGap, int maxRead, QueryBudget budget)
      throws IOException {
    List<Integer> order = new ArrayList<>(ranges.size());
    for (int i = 0; i < ranges.size(); i++) {
      order.add(i);
    }
    order.sort(Comparator.comparingLong(i -> ranges.get(i).start()));
    ByteBuffer[] out = new ByteBuffer[ranges.size()];
    int first = 0;
    while (first < order.size()) {
      long start = ranges.get(order.get(first)).start();
      long end = ranges.get(order.get(first)).end();
      int last = first;
      while (last + 1 < order.size()) {
        Range next = ranges.get(order.get(last + 1));
        long merged = Math.max(end, next.end());
        if (next.start() > end + maxGap || merged - start > maxRead) {
          break;
        }
        end = merged;
        last++;
      }
      int length = Math.toIntExact(end - start);
      budget.reserve(length);
      byte[] bytes = file.read(start, length);
      budget.release(length - bytes.length); // the file ended first
      for (int k = first; k <= last; k++) {
        int idx = order.get(k);
        int from = (int) Math.min(bytes.length, ranges.get(idx).start() - start);
        out[idx] = ByteBuffer.wrap(bytes, from, bytes.length - from).slice();
      }
      first = last + 1;
    }
    return out;
  }
}
