package dev.weir.storage.tsdb.postings;

import java.util.Collection;

/** An inverted index that {@link Selector} can select from: the head's or a block's. */
public interface PostingsSource {
  /** Every series ref, ascending. */
  int[] all();

  /** The values a label name has, in any order; empty when the name is unknown. */
  Collection<String> values(String name);

  /** Refs of the series with {@code name=value}, ascending; empty when none. */
  int[] get(String name, String value);
}
