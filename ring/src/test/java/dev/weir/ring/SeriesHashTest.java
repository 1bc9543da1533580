package dev.weir.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SeriesHashTest {
  private static int ofBytes(String tenant, String[] pairs) {
    int h = SeriesHash.begin(tenant);
    for (String s : pairs) {
      // Each string inside a larger buffer, so offsets matter.
      byte[] b = ("<<" + s + ">>").getBytes(StandardCharsets.UTF_8);
      h = SeriesHash.add(h, b, 2, b.length - 4);
    }
    return SeriesHash.finish(h);
  }

  @Test
  void theByteLevelTokenEqualsTheStringToken() {
    Random rnd = new Random(7);
    String alphabet = "abcXYZ_:09é€😀 \u0000";
    for (int n = 0; n < 2_000; n++) {
      String[] pairs = new String[2 * (1 + rnd.nextInt(6))];
      for (int i = 0; i < pairs.length; i++) {
        StringBuilder sb = new StringBuilder();
        for (int c = rnd.nextInt(12); c > 0; c--) {
          sb.appendCodePoint(alphabet.codePointAt(alphabet.offsetByCodePoints(0,
              rnd.nextInt(alphabet.codePointCount(0, alphabet.length())))));
        }
        pairs[i] = sb.toString();
      }
      String tenant = "tenant-" + rnd.nextInt(5);
      assertThat(ofBytes(tenant, pairs)).as("%s %s", tenant, String.join(",", pairs))
          .isEqualTo(SeriesHash.of(tenant, pairs));
    }
  }

  @Test
  void tokensAreStableAcrossVersions() {
    // Changing the token moves series between partitions: these values must never change.
    assertThat(SeriesHash.of("t", new String[] {"__name__", "up"})).isEqualTo(PINNED_UP);
    assertThat(SeriesHash.of("team-a", new String[] {"__name__", "http_requests_total", "code", "200"}))
        .isEqualTo(PINNED_HTTP);
  }

  @Test
  void separatorsKeepAdjacentStringsApart() {
    assertThat(SeriesHash.of("t", new String[] {"ab", "c"})).isNotEqualTo(SeriesHash.of("t", new String[] {"a", "bc"}));
    assertThat(SeriesHash.of("ta", new String[] {"b", "c"})).isNotEqualTo(SeriesHash.of("t", new String[] {"ab", "c"}));
  }

  /** Computed by the release before the byte-level API existed. */
  static final int PINNED_UP = -1240362694;
  static final int PINNED_HTTP = 1759138559;
}
