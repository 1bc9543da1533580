package dev.weir.ring.partition;

import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.Tokens;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

/**
 * Shuffle sharding over the partition ring (Mimir's partition-ring {@code ShuffleShard}): a
 * tenant's partitions are found by a random walk over the tokens of all partitions, seeded by the
 * tenant. Each step draws a random ring position and walks clockwise to the first token of a
 * partition not yet chosen; an ACTIVE partition found that way is chosen, a PENDING or INACTIVE
 * one is skipped for the rest of the walk. Properties:
 *
 * <ul>
 *   <li>deterministic: the same ring and tenant give the same partitions in every process
 *       ({@link Random} is specified to the bit, and the seed is a digest of the tenant);
 *   <li>stable: adding one ACTIVE partition changes a tenant's shard by at most one partition
 *       (the new one replaces one old one), because every step's walk only differs where the new
 *       partition's tokens come first; existing partitions keep their tokens when one is added;
 *   <li>spread: different tenants get mostly different partitions.
 * </ul>
 *
 * <p>Stateless.
 */
public final class ShuffleShard {
  private ShuffleShard() {}

  /**
   * IDs of {@code size} ACTIVE partitions of {@code ring} for {@code identifier}, ascending; fewer
   * when the ring has fewer ACTIVE partitions.
   */
  public static Set<Integer> select(PartitionRingDesc ring, String identifier, int size) {
    List<long[]> all = new ArrayList<>();
    for (PartitionDesc p : ring.getPartitionsMap().values()) {
      for (int t : p.getTokensList()) {
        all.add(new long[] {Integer.toUnsignedLong(t), p.getId()});
      }
    }
    all.sort(Comparator.comparingLong(a -> a[0]));
    int[] tokens = new int[all.size()];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = (int) all.get(i)[0];
    }
    Set<Integer> chosen = new TreeSet<>();
    Set<Integer> skipped = new HashSet<>();
    Random random = new Random(seed(identifier));
    while (chosen.size() < size && tokens.length > 0) {
      int start = Tokens.ownerIndex(tokens, random.nextInt());
      boolean found = false;
      for (int i = 0; i < tokens.length && !found; i++) {
        int partition = (int) all.get((start + i) % tokens.length)[1];
        if (chosen.contains(partition) || skipped.contains(partition)) {
          continue;
        }
        if (ring.getPartitionsMap().get(partition).getState() == PartitionState.PARTITION_ACTIVE) {
          chosen.add(partition);
          found = true;
        } else {
          skipped.add(partition);
        }
      }
      if (!found) {
        break; // every token walked: fewer ACTIVE partitions than asked for
      }
    }
    return chosen;
  }

  /** The first 8 bytes of the SHA-256 of the identifier: a seed that does not depend on the JVM. */
  static long seed(String identifier) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(identifier.getBytes(StandardCharsets.UTF_8));
      return ByteBuffer.wrap(d, 0, 8).getLong();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }
}
