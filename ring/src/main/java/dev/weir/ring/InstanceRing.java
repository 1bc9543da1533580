package dev.weir.ring;

import dev.weir.proto.ring.InstanceDesc;
import dev.weir.proto.ring.InstanceState;
import dev.weir.proto.ring.RingDesc;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * An immutable view of the instance ring at one moment: members, their health (heartbeat not
 * older than the timeout), token ownership, and the owner of a token among healthy ACTIVE
 * instances (the write path's choice, replication factor 1).
 *
 * <p>Thread-safe (immutable).
 */
public final class InstanceRing {
  private final List<InstanceDesc> instances;
  private final long now;
  private final long heartbeatTimeoutMillis;
  private final int[] activeTokens;
  private final String[] activeTokenOwners;
  private final Map<String, Double> ownership = new HashMap<>();

  public InstanceRing(RingDesc desc, long nowMillis, long heartbeatTimeoutMillis) {
    this.now = nowMillis;
    this.heartbeatTimeoutMillis = heartbeatTimeoutMillis;
    List<InstanceDesc> list = new ArrayList<>(desc.getInstancesMap().values());
    list.sort(Comparator.comparing(InstanceDesc::getId));
    this.instances = List.copyOf(list);
    List<long[]> all = new ArrayList<>();
    List<String> owners = new ArrayList<>();
    List<long[]> everyToken = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      InstanceDesc d = list.get(i);
      for (int t : d.getTokensList()) {
        everyToken.add(new long[] {Integer.toUnsignedLong(t), i});
        if (d.getState() == InstanceState.ACTIVE && healthy(d)) {
          all.add(new long[] {Integer.toUnsignedLong(t), owners.size()});
        }
      }
      owners.add(d.getId());
    }
    all.sort(Comparator.comparingLong(a -> a[0]));
    activeTokens = new int[all.size()];
    activeTokenOwners = new String[all.size()];
    for (int i = 0; i < all.size(); i++) {
      activeTokens[i] = (int) all.get(i)[0];
      activeTokenOwners[i] = owners.get((int) all.get(i)[1]);
    }
    everyToken.sort(Comparator.comparingLong(a -> a[0]));
    int[] sorted = new int[everyToken.size()];
    for (int i = 0; i < sorted.length; i++) {
      sorted[i] = (int) everyToken.get(i)[0];
    }
    double[] f = Tokens.ownedFractions(sorted);
    for (int i = 0; i < sorted.length; i++) {
      ownership.merge(list.get((int) everyToken.get(i)[1]).getId(), f[i], Double::sum);
    }
  }

  public List<InstanceDesc> instances() {
    return instances;
  }

  public boolean healthy(InstanceDesc d) {
    return now - d.getHeartbeatTimestamp() <= heartbeatTimeoutMillis;
  }

  /** Heartbeat age in milliseconds at the time of this view. */
  public long heartbeatAgeMillis(InstanceDesc d) {
    return now - d.getHeartbeatTimestamp();
  }

  /** How many instances are ACTIVE with a heartbeat within the timeout (e.g. distributors sharing a limit). */
  public int healthyActiveInstances() {
    int n = 0;
    for (InstanceDesc d : instances) {
      if (d.getState() == InstanceState.ACTIVE && healthy(d)) {
        n++;
      }
    }
    return n;
  }

  /** Fraction of the token space the instance's tokens own among all registered instances. */
  public double ownership(String id) {
    return ownership.getOrDefault(id, 0.0);
  }

  /** The healthy ACTIVE instance owning {@code token}, or null when there is none. */
  public @Nullable InstanceDesc ownerOf(int token) {
    if (activeTokens.length == 0) {
      return null;
    }
    String id = activeTokenOwners[Tokens.ownerIndex(activeTokens, token)];
    for (InstanceDesc d : instances) {
      if (d.getId().equals(id)) {
        return d;
      }
    }
    return null;
  }

  public @Nullable InstanceDesc get(String id) {
    for (InstanceDesc d : instances) {
      if (d.getId().equals(id)) {
        return d;
      }
    }
    return null;
  }
}
