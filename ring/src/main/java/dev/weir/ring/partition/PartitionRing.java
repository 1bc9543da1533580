package dev.weir.ring.partition;

import dev.weir.proto.ring.OwnerDesc;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionRingDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.Tokens;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An immutable view of the partition ring: partitions with state and tokens, and their owners.
 * The write path shards a series onto the ACTIVE partition owning its {@link
 * dev.weir.ring.SeriesHash token}, among all ACTIVE partitions or among a tenant's {@link
 * #shuffleShard shuffle shard}.
 *
 * <p>Thread-safe (immutable; the shuffle-shard cache is a concurrent map).
 */
public final class PartitionRing {
  private final PartitionRingDesc desc;
  private final List<Integer> active;
  private final int[] activeTokens;
  private final int[] activeTokenPartition;
  private final Map<Integer, List<String>> owners = new TreeMap<>();
  private final Map<Integer, Double> ownership = new HashMap<>();
  /**
   * Shuffle shards computed on this view, by size and tenant. A new view (any ring change) starts
   * empty; past {@link #SHARD_CACHE_MAX} entries the cache is cleared, so memory stays bounded
   * whatever the number of tenants.
   */
  private final Map<String, PartitionRing> shards = new ConcurrentHashMap<>();
  static final int SHARD_CACHE_MAX = 10_000;

  public PartitionRing(PartitionRingDesc desc) {
    this.desc = desc;
    List<Integer> act = new ArrayList<>();
    List<long[]> tokens = new ArrayList<>();
    List<long[]> all = new ArrayList<>();
    for (PartitionDesc p : desc.getPartitionsMap().values()) {
      for (int t : p.getTokensList()) {
        all.add(new long[] {Integer.toUnsignedLong(t), p.getId()});
      }
      if (p.getState() == PartitionState.PARTITION_ACTIVE) {
        act.add(p.getId());
        for (int t : p.getTokensList()) {
          tokens.add(new long[] {Integer.toUnsignedLong(t), p.getId()});
        }
      }
    }
    act.sort(null);
    active = List.copyOf(act);
    tokens.sort(Comparator.comparingLong(a -> a[0]));
    activeTokens = new int[tokens.size()];
    activeTokenPartition = new int[tokens.size()];
    for (int i = 0; i < tokens.size(); i++) {
      activeTokens[i] = (int) tokens.get(i)[0];
      activeTokenPartition[i] = (int) tokens.get(i)[1];
    }
    all.sort(Comparator.comparingLong(a -> a[0]));
    int[] sorted = new int[all.size()];
    for (int i = 0; i < sorted.length; i++) {
      sorted[i] = (int) all.get(i)[0];
    }
    double[] f = Tokens.ownedFractions(sorted);
    for (int i = 0; i < sorted.length; i++) {
      ownership.merge((int) all.get(i)[1], f[i], Double::sum);
    }
    for (Map.Entry<String, OwnerDesc> e : desc.getOwnersMap().entrySet()) {
      owners.computeIfAbsent(e.getValue().getOwnedPartition(), k -> new ArrayList<>()).add(e.getKey());
    }
    owners.values().forEach(l -> l.sort(null));
  }

  public PartitionRingDesc desc() {
    return desc;
  }

  /** IDs of ACTIVE partitions, ascending. */
  public List<Integer> activePartitions() {
    return active;
  }

  /** All partitions by ID. */
  public Map<Integer, PartitionDesc> partitions() {
    return new TreeMap<>(desc.getPartitionsMap());
  }

  /**
   * The ACTIVE partition owning a series token.
   *
   * @throws IllegalStateException when no partition is ACTIVE
   */
  public int partitionFor(int seriesToken) {
    if (activeTokens.length == 0) {
      throw new IllegalStateException("no ACTIVE partition in the partition ring");
    }
    return activeTokenPartition[Tokens.ownerIndex(activeTokens, seriesToken)];
  }

  /**
   * The number of partitions {@link #shuffleShard} returns for {@code size}: all ACTIVE partitions
   * when {@code size} is 0 (or negative) or not smaller than their number, else {@code size}.
   */
  public int shuffleShardSize(int size) {
    return size <= 0 || size >= active.size() ? active.size() : size;
  }

  /**
   * The ring restricted to {@code identifier}'s shuffle shard: {@link #shuffleShardSize} ACTIVE
   * partitions chosen by {@link ShuffleShard}, with their tokens and owners; this ring itself when
   * the shard holds every ACTIVE partition. Deterministic for a ring and identifier; cached.
   */
  public PartitionRing shuffleShard(String identifier, int size) {
    int n = shuffleShardSize(size);
    if (n == active.size()) {
      return this;
    }
    String key = n + "/" + identifier;
    PartitionRing cached = shards.get(key);
    if (cached != null) {
      return cached;
    }
    PartitionRingDesc.Builder sub = PartitionRingDesc.newBuilder();
    for (int p : ShuffleShard.select(desc, identifier, n)) {
      sub.putPartitions(p, desc.getPartitionsMap().get(p));
    }
    desc.getOwnersMap().forEach((id, o) -> {
      if (sub.containsPartitions(o.getOwnedPartition())) {
        sub.putOwners(id, o);
      }
    });
    PartitionRing ring = new PartitionRing(sub.build());
    if (shards.size() >= SHARD_CACHE_MAX) {
      shards.clear();
    }
    shards.put(key, ring);
    return ring;
  }

  /** Instance IDs owning a partition, sorted. */
  public List<String> owners(int partition) {
    return owners.getOrDefault(partition, List.of());
  }

  /** Fraction of the token space a partition's tokens own among all partitions. */
  public double ownership(int partition) {
    return ownership.getOrDefault(partition, 0.0);
  }
}
