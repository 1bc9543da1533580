package dev.weir.storage.tsdb.labels;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.TimeSeries;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LabelsWireEncodingTest {
  /** Characters of 1 to 4 UTF-8 bytes (the last a surrogate pair), and nothing. */
  private static final String[] PIECES = {"a", "_", "9", "é", "ß", "€", "水", "\uD83D\uDE00", ""};

  private static String randomString(Random rnd, int maxPieces) {
    StringBuilder b = new StringBuilder();
    int n = rnd.nextInt(maxPieces + 1);
    boolean ascii = rnd.nextBoolean();
    for (int i = 0; i < n; i++) {
      b.append(ascii ? PIECES[rnd.nextInt(3)] : PIECES[rnd.nextInt(PIECES.length)]);
    }
    return b.toString();
  }

  @Test
  void isWhatProtobufWritesForTheLabelsOfATimeSeries() {
    Random rnd = new Random(7);
    int nonAscii = 0;
    for (int round = 0; round < 5_000; round++) {
      int n = rnd.nextInt(6);
      List<String> pairs = new ArrayList<>();
      TimeSeries.Builder ts = TimeSeries.newBuilder();
      for (int i = 0; i < n; i++) {
        // Names unique and sorted by the index prefix; long values cross the one-byte varint length.
        String name = (char) ('a' + i) + randomString(rnd, 3);
        String value = rnd.nextInt(10) == 0 ? "" : randomString(rnd, rnd.nextBoolean() ? 4 : 90);
        pairs.add(name);
        pairs.add(value);
        ts.addLabels(Label.newBuilder().setName(name).setValue(value));
      }
      Labels l = Labels.ofSortedPairs(pairs.toArray(String[]::new));
      Labels encoded = Labels.withWireEncoding(l);
      assertThat(encoded.wireEncoding()).as("%s", l).isEqualTo(ts.build().toByteArray());
      assertThat(encoded).isEqualTo(l).hasSameHashCodeAs(l);
      // What a head series keeps: the bytes and the hash; everything else is decoded from them.
      Labels decoded = Labels.fromWireEncoding(encoded.wireEncoding(), l.hashCode());
      assertThat(decoded.pairsUnsafe()).containsExactly(l.pairsUnsafe());
      assertThat(decoded).isEqualTo(l).hasSameHashCodeAs(l);
      assertThat(decoded.wireEncoding()).isSameAs(encoded.wireEncoding());
      byte[] compact = CompactLabels.fromCanonical(encoded.wireEncoding(), null);
      assertThat(CompactLabels.count(compact)).isEqualTo(n);
      for (int i = 0; i < n; i++) {
        assertThat(CompactLabels.value(compact, utf8(l.name(i)))).isEqualTo(l.value(i));
      }
      assertThat(CompactLabels.value(compact, utf8("zz-absent"))).isNull();
      assertThat(encoded.matches(compact)).isTrue();
      assertThat(l.matches(compact)).as("encodes itself to compare").isTrue();
      if (pairs.stream().anyMatch(s -> s.chars().anyMatch(c -> c >= 0x80))) {
        nonAscii++;
      }
    }
    assertThat(nonAscii).as("both encodings exercised").isBetween(500, 4_500);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** A commit logs new series from their bytes: the same records as from their labels. */
  @Test
  void seriesRecordsFromCompactLabelsEqualThoseFromLabels() {
    Random rnd = new Random(11);
    for (int round = 0; round < 300; round++) {
      int count = 1 + rnd.nextInt(20);
      int[] refs = new int[count];
      Labels[] labels = new Labels[count];
      byte[][] canonical = new byte[count][];
      for (int k = 0; k < count; k++) {
        List<String> pairs = new ArrayList<>();
        for (int i = 0; i < rnd.nextInt(5); i++) {
          pairs.add((char) ('a' + i) + randomString(rnd, 3));
          pairs.add(rnd.nextInt(5) == 0 ? "" : randomString(rnd, 40));
        }
        refs[k] = 1 + rnd.nextInt(1_000_000);
        labels[k] = Labels.ofSortedPairs(pairs.toArray(String[]::new));
        canonical[k] = CompactLabels.fromCanonical(labels[k].encoded().wireEncoding(), null);
      }
      int maxPayload = 20 + rnd.nextInt(400); // small: the series spread over several records
      dev.weir.storage.util.ByteSink fromLabels = new dev.weir.storage.util.ByteSink(64);
      dev.weir.storage.util.ByteSink fromBytes = new dev.weir.storage.util.ByteSink(64);
      dev.weir.storage.tsdb.wal.WalRecords.series(fromLabels, refs, labels, count, maxPayload);
      dev.weir.storage.tsdb.wal.WalRecords.seriesCompact(fromBytes, refs, canonical, count, maxPayload);
      assertThat(java.util.Arrays.copyOf(fromBytes.array(), fromBytes.length()))
          .isEqualTo(java.util.Arrays.copyOf(fromLabels.array(), fromLabels.length()));
    }
  }
}
