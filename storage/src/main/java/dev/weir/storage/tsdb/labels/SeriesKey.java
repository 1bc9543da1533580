package dev.weir.storage.tsdb.labels;

/**
 * What a head looks a series up by: a label set's {@link Labels#hashCode()} and a comparison with
 * a series' labels in {@link CompactLabels}' form, the only form in which a head series keeps its
 * labels. {@link Labels} is one; a pushed series' bytes are another ({@code WireSeries.key()}),
 * compared without building Strings.
 */
public interface SeriesKey {
  /** The {@link Labels#hashCode()} of the label set this key stands for. */
  @Override
  int hashCode();

  /**
   * Whether the labels this key stands for are those of {@code compact} ({@link CompactLabels}). A
   * key made from bytes may answer false for equal labels sent in a non-canonical form; its caller
   * then looks up by {@link Labels}, which always answers exactly.
   */
  boolean matches(byte[] compact);

  /**
   * The key of labels known only by their compact form ({@link CompactLabels}, made in this
   * process) and their {@link Labels#hashCode()}. Equal labels have two forms in one process at
   * most (values in full, as a WAL replay reads them, or with value numbers): arrays are
   * compared, then labels one by one (only for another series of the same hash).
   */
  static SeriesKey ofCompact(byte[] compact, int hash) {
    return of(hash, other -> java.util.Arrays.equals(compact, other) || CompactLabels.sameLabels(compact, other));
  }

  /** The key of labels known only by their canonical encoding and their {@link Labels#hashCode()}. */
  static SeriesKey ofEncoded(byte[] canonical, int hash) {
    return of(hash, compact -> CompactLabels.equalsCanonical(compact, canonical, 0, canonical.length));
  }

  private static SeriesKey of(int hash, java.util.function.Predicate<byte[]> matches) {
    return new SeriesKey() {
      @Override
      public int hashCode() {
        return hash;
      }

      @Override
      public boolean equals(@org.jspecify.annotations.Nullable Object o) {
        return this == o;
      }

      @Override
      public boolean matches(byte[] compact) {
        return matches.test(compact);
      }
    };
  }
}
