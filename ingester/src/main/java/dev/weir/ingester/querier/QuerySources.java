package dev.weir.ingester.querier;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.proto.ring.InstanceDesc;
import dev.weir.proto.ring.InstanceState;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.InstanceRing;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.storage.errors.ServerErrorException;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The sources a querier asks, and one pooled gRPC channel per address. Ingesters are found anew
 * for every query:
 *
 * <ul>
 *   <li>classic mode: the configured {@code querier.ingester-addresses}, else every instance in the
 *       instance ring that may hold series (not PENDING or LEFT). With one copy of each series, an
 *       unhealthy instance (stale heartbeat) fails the query: its series cannot be read elsewhere.
 *   <li>Kafka mode: per ACTIVE or INACTIVE partition of the partition ring (INACTIVE ones still
 *       hold recent data; PENDING ones were never written), one target whose replicas are the
 *       owners that are ACTIVE and healthy in the instance ring (ACTIVE = caught up, so ready), own
 *       zone first, then by ID: the other zone answers when the first owner fails. A partition
 *       without one fails the query naming the partition and why each owner was passed over.
 * </ul>
 *
 * Store-gateways are the configured addresses, in flag order, each asked; without addresses, the
 * store-gateway ring: every store-gateway serves every block, so one target whose replicas are the
 * healthy ACTIVE store-gateways, own zone first, then in an order that depends on the tenant (so
 * tenants spread over them). A ring that has store-gateways but none healthy and ACTIVE fails the
 * query; an empty ring means there are none (nothing is asked). Ready once started (channels
 * built) and, when a ring is used, once the ring clients have reached the KV store.
 *
 * <p>A {@link Target} lists replicas that hold the same data: a call goes to the first, and moves
 * to the next when one fails with a server error ({@link SourceCalls}).
 *
 * <p>Thread-safe. Stopping shuts every channel down.
 */
public final class QuerySources implements Service {
  /** A gRPC endpoint serving the {@code weir.Ingester} query methods; {@code name} is for errors. */
  public record Source(String name, String address) {}

  /**
   * What one call must read, and the replicas that can answer it, in the order to try them.
   *
   * @param what names the data for errors ("partition 3", "store-gateway ring")
   */
  /** A partition and the owners a query would read it from, or why there is none. */
  public record Owner(int partition, @Nullable Target target, @Nullable String problem) {}

  public record Target(String what, List<Source> replicas) {
    public Target {
      if (replicas.isEmpty()) {
        throw new IllegalArgumentException("a target needs a replica");
      }
      replicas = List.copyOf(replicas);
    }

    static Target of(Source only) {
      return new Target(only.name(), List.of(only));
    }
  }

  private final QuerierConfig config;
  private final boolean kafka;
  private final String zone;
  private final Supplier<InstanceRing> instances;
  private final Supplier<PartitionRing> partitions;
  private final Supplier<InstanceRing> storeGatewayRing;
  private final BooleanSupplier ringConnected;
  private final Function<String, ManagedChannel> channelFactory;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private volatile boolean started;
  private volatile boolean ringReached;

  /**
   * @param zone this querier's availability zone, preferred among partition owners
   * @param channelFactory builds the channel to an address (tests pass in-process channels)
   */
  public QuerySources(QuerierConfig config, boolean kafka, String zone, Supplier<InstanceRing> instances,
      Supplier<PartitionRing> partitions, Supplier<InstanceRing> storeGatewayRing, BooleanSupplier ringConnected,
      Function<String, ManagedChannel> channelFactory) {
    this.storeGatewayRing = storeGatewayRing;
    this.config = config;
    this.kafka = kafka;
    this.zone = zone;
    this.instances = instances;
    this.partitions = partitions;
    this.ringConnected = ringConnected;
    this.channelFactory = channelFactory;
  }

  @Override
  public String name() {
    return "querier-sources";
  }

  @Override
  public void start() {
    config.storeGatewayAddresses().forEach(this::channel);
    for (String addr : config.ingesterAddresses()) {
      channel(addr);
    }
    started = true;
  }

  @Override
  public @Nullable String notReadyReason() {
    if (!started) {
      return "querier clients not set up";
    }
    if (usesRing() && !ringReached) {
      if (!ringConnected.getAsBoolean()) {
        return "querier has not reached the ring's KV store yet";
      }
      ringReached = true;
    }
    return null;
  }

  private boolean usesRing() {
    return kafka || config.ingesterAddresses().isEmpty() || config.storeGatewayAddresses().isEmpty();
  }

  /**
   * The store-gateways to ask for {@code tenant}: each configured address, else one target over
   * the store-gateway ring (none when the ring is empty).
   *
   * @throws ServerErrorException when the ring has store-gateways but none can answer
   */
  public List<Target> storeGateways(String tenant) {
    List<Target> out = new ArrayList<>();
    if (!config.storeGatewayAddresses().isEmpty()) {
      for (String addr : config.storeGatewayAddresses()) {
        out.add(Target.of(new Source("store-gateway " + addr, addr)));
      }
      return out;
    }
    InstanceRing ring = storeGatewayRing.get();
    if (ring.instances().isEmpty()) {
      return out;
    }
    List<InstanceDesc> usable = new ArrayList<>();
    List<String> passedOver = new ArrayList<>();
    for (InstanceDesc d : ring.instances()) {
      String why = unusable(ring, d);
      if (why == null) {
        usable.add(d);
      } else {
        passedOver.add(d.getId() + ": " + why);
      }
    }
    if (usable.isEmpty()) {
      throw new ServerErrorException("no healthy ACTIVE store-gateway in the store-gateway ring ("
          + String.join("; ", passedOver) + "): blocks in the bucket cannot be read (see /store-gateway/ring)");
    }
    // Own zone first; within each group, a rotation that depends on the tenant spreads tenants evenly.
    usable.sort(Comparator.comparing(InstanceDesc::getId));
    List<InstanceDesc> rotated = rotated(usable.stream().filter(d -> d.getZone().equals(zone)).toList(), tenant);
    rotated.addAll(rotated(usable.stream().filter(d -> !d.getZone().equals(zone)).toList(), tenant));
    List<Source> replicas = new ArrayList<>();
    for (InstanceDesc d : rotated) {
      replicas.add(new Source("store-gateway " + d.getId() + " (" + d.getAddr() + ")", d.getAddr()));
    }
    out.add(new Target("the store-gateway ring", replicas));
    return out;
  }

  private static List<InstanceDesc> rotated(List<InstanceDesc> list, String tenant) {
    List<InstanceDesc> out = new ArrayList<>(list.size());
    int shift = list.isEmpty() ? 0 : Math.floorMod(tenant.hashCode(), list.size());
    out.addAll(list.subList(shift, list.size()));
    out.addAll(list.subList(0, shift));
    return out;
  }

  /** Why a ring member cannot be asked, or null when it can (healthy and ACTIVE). */
  private static @Nullable String unusable(InstanceRing ring, InstanceDesc d) {
    if (!ring.healthy(d)) {
      return "last heartbeat " + ring.heartbeatAgeMillis(d) / 1000 + "s ago";
    }
    if (d.getState() != InstanceState.ACTIVE) {
      return d.getState() + ", not ready";
    }
    return null;
  }

  /**
   * The ingesters that together hold every series now.
   *
   * @throws ServerErrorException naming the ingester or partition that cannot be read
   */
  public List<Target> ingesters() {
    if (kafka) {
      return partitionOwners();
    }
    List<Target> out = new ArrayList<>();
    if (!config.ingesterAddresses().isEmpty()) {
      for (String addr : config.ingesterAddresses()) {
        out.add(Target.of(new Source("ingester " + addr, addr)));
      }
      return out;
    }
    InstanceRing ring = instances.get();
    for (InstanceDesc d : ring.instances()) {
      if (d.getState() == InstanceState.PENDING || d.getState() == InstanceState.LEFT) {
        continue;
      }
      if (!ring.healthy(d)) {
        throw new ServerErrorException("ingester " + d.getId() + " (" + d.getAddr() + ") is unhealthy (last heartbeat "
            + ring.heartbeatAgeMillis(d) / 1000 + "s ago, " + d.getState() + "): its series cannot be read"
            + " (see /ingester/ring)");
      }
      out.add(Target.of(new Source("ingester " + d.getId() + " (" + d.getAddr() + ")", d.getAddr())));
    }
    return out;
  }

  private List<Target> partitionOwners() {
    List<Target> out = new ArrayList<>();
    for (Owner o : partitionOwnersOrProblems()) {
      if (o.target() == null) {
        throw new ServerErrorException(String.valueOf(o.problem()));
      }
      out.add(o.target());
    }
    return out;
  }

  /** Kafka mode. */
  public boolean kafka() {
    return kafka;
  }

  /**
   * Every partition a query reads (ACTIVE or INACTIVE) with the owners it would read, or, instead
   * of failing, why there are none (Kafka mode; for {@code /api/v1/user_lag}).
   */
  public List<Owner> partitionOwnersOrProblems() {
    PartitionRing pr = partitions.get();
    InstanceRing ir = instances.get();
    List<Owner> out = new ArrayList<>();
    for (PartitionDesc p : pr.partitions().values()) {
      if (p.getState() != PartitionState.PARTITION_ACTIVE && p.getState() != PartitionState.PARTITION_INACTIVE) {
        continue;
      }
      try {
        out.add(new Owner(p.getId(), ownerOf(p.getId(), pr, ir), null));
      } catch (ServerErrorException e) {
        out.add(new Owner(p.getId(), null, e.getMessage()));
      }
    }
    out.sort(Comparator.comparingInt(Owner::partition));
    return out;
  }

  /** The partition's healthy ACTIVE owners, own zone first, then by ID: the replicas to try in order. */
  private Target ownerOf(int partition, PartitionRing pr, InstanceRing ir) {
    List<InstanceDesc> healthy = new ArrayList<>();
    List<String> passedOver = new ArrayList<>();
    for (String id : pr.owners(partition)) {
      InstanceDesc d = ir.get(id);
      String why = d == null ? "not in the instance ring" : unusable(ir, d);
      if (why == null) {
        healthy.add(d);
      } else {
        passedOver.add(id + ": " + why);
      }
    }
    if (healthy.isEmpty()) {
      throw new ServerErrorException("no healthy owner for partition " + partition + " ("
          + (passedOver.isEmpty() ? "no owners" : String.join("; ", passedOver))
          + "): its series cannot be read (see /ingester/partition-ring)");
    }
    healthy.sort(Comparator.comparing((InstanceDesc d) -> !d.getZone().equals(zone))
        .thenComparing(InstanceDesc::getId));
    List<Source> replicas = new ArrayList<>();
    for (InstanceDesc d : healthy) {
      replicas.add(new Source("ingester " + d.getId() + " (" + d.getAddr() + ", partition " + partition + ")",
          d.getAddr()));
    }
    return new Target("partition " + partition, replicas);
  }

  /** The production channel: plaintext HTTP/2 with room for large QueryStream batches (100 MiB). */
  public static ManagedChannel plaintextChannel(String address) {
    return NettyChannelBuilder.forTarget(address).usePlaintext().maxInboundMessageSize(100 << 20).build();
  }

  /** The pooled channel to {@code address}, built on first use. */
  public ManagedChannel channel(String address) {
    return channels.computeIfAbsent(address, channelFactory);
  }

  @Override
  public void stop() {
    channels.values().forEach(ManagedChannel::shutdownNow);
    channels.clear();
  }
}
