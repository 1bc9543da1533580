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
 *       hold recent data; PENDING ones were never written), one owner that is ACTIVE and healthy in
 *       the instance ring (ACTIVE = caught up, so ready), own zone first, then by ID. A partition
 *       without one fails the query naming the partition and why each owner was passed over.
 * </ul>
 *
 * Store-gateways are the configured addresses, in flag order. Ready once started (channels built)
 * and, when the ring is used, once the ring client has reached the KV store.
 *
 * <p>Thread-safe. Stopping shuts every channel down.
 */
public final class QuerySources implements Service {
  /** A gRPC endpoint serving the {@code weir.Ingester} query methods; {@code name} is for errors. */
  public record Source(String name, String address) {}

  /** A partition and the owner a query would read it from, or why there is none. */
  public record Owner(int partition, @Nullable Source source, @Nullable String problem) {}

  private final QuerierConfig config;
  private final boolean kafka;
  private final String zone;
  private final Supplier<InstanceRing> instances;
  private final Supplier<PartitionRing> partitions;
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
      Supplier<PartitionRing> partitions, BooleanSupplier ringConnected,
      Function<String, ManagedChannel> channelFactory) {
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
    for (String addr : config.storeGatewayAddresses()) {
      channel(addr);
    }
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
    return kafka || config.ingesterAddresses().isEmpty();
  }

  /** Store-gateways in flag order. */
  public List<Source> storeGateways() {
    List<Source> out = new ArrayList<>();
    for (String addr : config.storeGatewayAddresses()) {
      out.add(new Source("store-gateway " + addr, addr));
    }
    return out;
  }

  /**
   * The ingesters that together hold every series now.
   *
   * @throws ServerErrorException naming the ingester or partition that cannot be read
   */
  public List<Source> ingesters() {
    if (kafka) {
      return partitionOwners();
    }
    List<Source> out = new ArrayList<>();
    if (!config.ingesterAddresses().isEmpty()) {
      for (String addr : config.ingesterAddresses()) {
        out.add(new Source("ingester " + addr, addr));
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
      out.add(new Source("ingester " + d.getId() + " (" + d.getAddr() + ")", d.getAddr()));
    }
    return out;
  }

  private List<Source> partitionOwners() {
    List<Source> out = new ArrayList<>();
    for (Owner o : partitionOwnersOrProblems()) {
      if (o.source() == null) {
        throw new ServerErrorException(String.valueOf(o.problem()));
      }
      out.add(o.source());
    }
    return out;
  }

  /** Kafka mode. */
  public boolean kafka() {
    return kafka;
  }

  /**
   * Every partition a query reads (ACTIVE or INACTIVE) with the owner it would read, or, instead
   * of failing, why there is none (Kafka mode; for {@code /api/v1/user_lag}).
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

  private Source ownerOf(int partition, PartitionRing pr, InstanceRing ir) {
    List<InstanceDesc> healthy = new ArrayList<>();
    List<String> passedOver = new ArrayList<>();
    for (String id : pr.owners(partition)) {
      InstanceDesc d = ir.get(id);
      if (d == null) {
        passedOver.add(id + ": not in the instance ring");
      } else if (!ir.healthy(d)) {
        passedOver.add(id + ": last heartbeat " + ir.heartbeatAgeMillis(d) / 1000 + "s ago");
      } else if (d.getState() != InstanceState.ACTIVE) {
        passedOver.add(id + ": " + d.getState() + ", not ready");
      } else {
        healthy.add(d);
      }
    }
    if (healthy.isEmpty()) {
      throw new ServerErrorException("no healthy owner for partition " + partition + " ("
          + (passedOver.isEmpty() ? "no owners" : String.join("; ", passedOver))
          + "): its series cannot be read (see /ingester/partition-ring)");
    }
    healthy.sort(Comparator.comparing((InstanceDesc d) -> !d.getZone().equals(zone))
        .thenComparing(InstanceDesc::getId));
    InstanceDesc d = healthy.get(0);
    return new Source("ingester " + d.getId() + " (" + d.getAddr() + ", partition " + partition + ")", d.getAddr());
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
