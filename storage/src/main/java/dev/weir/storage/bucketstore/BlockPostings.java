package dev.weir.storage.bucketstore;

import dev.weir.storage.tsdb.labels.Matcher;
import dev.weir.storage.tsdb.postings.PostingsSource;
import dev.weir.storage.tsdb.postings.Selector;
import dev.weir.storage.tsdb.postings.Sorted;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * The postings of one block that a query's matchers need, fetched from the bucket in one batch of
 * range reads, then intersected by {@link Selector} with the same semantics as the head's and a
 * local block's (a series without a label has the empty value for it). Only the lists of the
 * label values the matchers select (or, for a matcher that matches the empty value, exclude) are
 * read, plus the all-series list when a matcher matches the empty value.
 *
 * <p>Not thread-safe: one per query and block.
 */
final class BlockPostings implements PostingsSource {
  /** The name and value of the all-series postings list. */
  private static final Key ALL = new Key("", "");

  private record Key(String name, String value) {}

  private final IndexHeader header;
  private final RangeReads.FileReader index;
  private final Map<Key, int[]> fetched = new HashMap<>();

  private BlockPostings(IndexHeader header, RangeReads.FileReader index) {
    this.header = header;
    this.index = index;
  }

  /** Sorted refs of the block's series that satisfy every matcher (all series when none). */
  static int[] select(IndexHeader header, RangeReads.FileReader index, List<Matcher> matchers) throws IOException {
    BlockPostings p = new BlockPostings(header, index);
    p.fetch(p.needed(matchers));
    try {
      return Selector.select(p, matchers);
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  /** The lists {@link Selector} will ask for, so they can be read in one batch. */
  private Set<Key> needed(List<Matcher> matchers) {
    Set<Key> keys = new LinkedHashSet<>();
    if (matchers.isEmpty()) {
      keys.add(ALL);
    }
    for (Matcher m : matchers) {
      if (m.matchesEmpty()) {
        keys.add(ALL);
        for (String v : header.values(m.name())) {
          if (!m.matches(v)) {
            keys.add(new Key(m.name(), v));
          }
        }
      } else if (m.type() == Matcher.Type.EQ) {
        keys.add(new Key(m.name(), m.value()));
      } else {
        for (String v : header.values(m.name())) {
          if (m.matches(v)) {
            keys.add(new Key(m.name(), v));
          }
        }
      }
    }
    return keys;
  }

  private void fetch(Set<Key> keys) throws IOException {
    List<Key> present = new ArrayList<>();
    List<RangeReads.Range> ranges = new ArrayList<>();
    for (Key k : keys) {
      RangeReads.Range r = header.postings(k.name(), k.value());
      if (r == null) {
        fetched.put(k, Sorted.EMPTY);
      } else {
        present.add(k);
        ranges.add(r);
      }
    }
    ByteBuffer[] bufs = RangeReads.read(index, ranges, BucketBlock.INDEX_MAX_GAP, BucketBlock.MAX_READ,
        QueryBudget.UNLIMITED);
    for (int i = 0; i < present.size(); i++) {
      fetched.put(present.get(i), decode(bufs[i], present.get(i)));
    }
  }

  /** Decodes {@code len | count | refs... | CRC32C}; the CRC covers count and refs. */
  private static int[] decode(ByteBuffer b, Key key) throws IOException {
    if (b.remaining() < 8) {
      throw new IOException("postings list of " + key + " is truncated");
    }
    int len = b.getInt(0);
    int n = b.getInt(4);
    if (len != 4 + 4L * n || b.remaining() < 4L + len + 4) {
      throw new IOException("postings list of " + key + " has a bad length " + len + " for " + n + " entries");
    }
    CRC32C crc = new CRC32C();
    crc.update(b.duplicate().position(4).limit(4 + len));
    if ((int) crc.getValue() != b.getInt(4 + len)) {
      throw new IOException("postings list of " + key + " checksum mismatch");
    }
    int[] refs = new int[n];
    for (int i = 0; i < n; i++) {
      refs[i] = b.getInt(8 + 4 * i);
    }
    return refs;
  }

  @Override
  public int[] all() {
    return get(ALL.name(), ALL.value());
  }

  @Override
  public Collection<String> values(String name) {
    return header.values(name);
  }

  @Override
  public int[] get(String name, String value) {
    Key k = new Key(name, value);
    int[] refs = fetched.get(k);
    if (refs == null) {
      // Not foreseen by needed(): read it on its own rather than answer wrongly.
      try {
        fetch(Set.of(k));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      refs = fetched.get(k);
    }
    return refs == null ? Sorted.EMPTY : refs;
  }
}
