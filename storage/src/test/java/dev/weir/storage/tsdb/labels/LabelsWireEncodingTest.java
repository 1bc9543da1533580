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
      if (pairs.stream().anyMatch(s -> s.chars().anyMatch(c -> c >= 0x80))) {
        nonAscii++;
      }
    }
    assertThat(nonAscii).as("both encodings exercised").isBetween(500, 4_500);
  }
}
