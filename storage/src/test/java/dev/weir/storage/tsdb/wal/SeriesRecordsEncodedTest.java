package dev.weir.storage.tsdb.wal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weir.storage.tsdb.labels.CompactLabels;
import dev.weir.storage.tsdb.labels.Labels;
import dev.weir.storage.util.ByteSink;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A replay reads series records straight into the labels' compact form and hash
 * ({@link WalRecords.Visitor#seriesEncoded}) when every label is ASCII, and as {@link Labels}
 * otherwise: either way the head gets exactly the labels that were logged.
 */
class SeriesRecordsEncodedTest {
  private static final String[] PIECES = {"a", "_", "9", "Z", "é", "水", "\uD83D\uDE00"};

  private static String randomString(Random rnd, int max, boolean ascii) {
    StringBuilder b = new StringBuilder();
    int n = rnd.nextInt(max + 1);
    for (int i = 0; i < n; i++) {
      b.append(PIECES[rnd.nextInt(ascii ? 4 : PIECES.length)]);
    }
    return b.toString();
  }

  @Test
  void seriesRecordsDecodeToTheLoggedLabelsAsBytesOrLabels() {
    Random rnd = new Random(5);
    int encodedSeen = 0;
    int labelsSeen = 0;
    for (int round = 0; round < 500; round++) {
      int count = 1 + rnd.nextInt(30);
      int[] refs = new int[count];
      Labels[] labels = new Labels[count];
      for (int k = 0; k < count; k++) {
        boolean ascii = rnd.nextInt(4) != 0;
        List<String> pairs = new ArrayList<>();
        int n = rnd.nextInt(40); // up to 39 labels: past the reader's 64-slot work array
        for (int i = 0; i < n; i++) {
          pairs.add(String.format("%03d", i) + randomString(rnd, 3, ascii));
          // empty values, and values longer than a one-byte varint length
          pairs.add(rnd.nextInt(6) == 0 ? "" : randomString(rnd, rnd.nextBoolean() ? 5 : 200, ascii));
        }
        refs[k] = k + 1;
        labels[k] = Labels.ofSortedPairs(pairs.toArray(String[]::new));
      }
      ByteSink sink = new ByteSink(256);
      WalRecords.series(sink, refs, labels, count, 1 << 20);
      // What a head writes for its new series, from their compact labels: the same bytes.
      byte[][] compact = new byte[count][];
      for (int k = 0; k < count; k++) {
        compact[k] = CompactLabels.fromCanonical(labels[k].encoded().wireEncoding(), null);
      }
      ByteSink fromCompact = new ByteSink(256);
      WalRecords.seriesCompact(fromCompact, refs, compact, count, 1 << 20);
      assertThat(java.util.Arrays.copyOf(fromCompact.array(), fromCompact.length()))
          .isEqualTo(java.util.Arrays.copyOf(sink.array(), sink.length()));
      ByteBuffer payload = ByteBuffer.wrap(sink.array(), WalRecords.HEADER_BYTES, sink.length() - WalRecords.HEADER_BYTES);
      List<Labels> got = new ArrayList<>();
      List<Integer> gotRefs = new ArrayList<>();
      int[] kinds = new int[2];
      WalRecords.decode(payload, new WalRecords.Visitor() {
        @Override
        public void series(int ref, Labels l) {
          kinds[1]++;
          gotRefs.add(ref);
          got.add(l);
        }

        @Override
        public boolean acceptsEncodedSeries() {
          return true;
        }

        @Override
        public void seriesEncoded(int ref, byte[] compact, int hash) {
          kinds[0]++;
          gotRefs.add(ref);
          Labels l = CompactLabels.decode(compact, hash);
          assertThat(CompactLabels.withValueNumbers(compact)).as("the form a head series made from the labels keeps")
              .isEqualTo(CompactLabels.fromCanonical(l.encoded().wireEncoding(), null));
          assertThat(CompactLabels.toCanonical(compact)).as("values in full, as read")
              .isEqualTo(l.encoded().wireEncoding());
          assertThat(hash).as("the hash Labels computes from the strings")
              .isEqualTo(Labels.ofSortedPairs(l.pairsUnsafe().clone()).hashCode());
          got.add(l);
        }

        @Override
        public void sample(int ref, long t, double v) {}
      });
      assertThat(gotRefs).hasSize(count);
      for (int k = 0; k < count; k++) {
        assertThat(gotRefs.get(k)).isEqualTo(refs[k]);
        assertThat(got.get(k)).isEqualTo(labels[k]).hasSameHashCodeAs(labels[k]);
        assertThat(got.get(k).encoded().wireEncoding()).isEqualTo(labels[k].encoded().wireEncoding());
      }
      encodedSeen += kinds[0];
      labelsSeen += kinds[1];
    }
    assertThat(encodedSeen).as("ASCII series as bytes").isGreaterThan(1000);
    assertThat(labelsSeen).as("the others as Labels").isGreaterThan(1000);
  }
}
