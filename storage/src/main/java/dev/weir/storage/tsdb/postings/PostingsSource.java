package dev.weir.storage.tsdb.postings;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;

/** An inverted index that {@link Selector} can select from: the head's or a block's. */
public interface PostingsSource {
  /** Every series ref, ascending. */
  int[] all();

  /** The values a label name has, in any order; empty when the name is unknown. */
  Collection<String> values(String name);

  /** Refs of the series with {@code name=value}, ascending; empty when none. */
  int[] get(String name, String value);

  /** The predicate of {@link #refsMatching} that every value satisfies: no value need be decoded. */
  Predicate<String> ANY = v -> true;

  /**
   * The refs ({@link #get}) of each value of {@code name} that {@code matches} ({@link #ANY}: of
   * every value), in any order. An index that can walk its values and their refs together
   * overrides this lookup per value.
   */
  default List<int[]> refsMatching(String name, Predicate<String> matches) {
    List<int[]> out = new ArrayList<>();
    for (String v : values(name)) {
      if (matches.test(v)) {
        out.add(get(name, v));
      }
    }
    return out;
  }
}
