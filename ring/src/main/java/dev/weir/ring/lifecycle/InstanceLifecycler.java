package dev.weir.ring.lifecycle;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.weir.proto.ring.InstanceDesc;
import dev.weir.proto.ring.InstanceState;
import dev.weir.proto.ring.RingDesc;
import dev.weir.ring.Tokens;
import dev.weir.ring.kv.KvException;
import dev.weir.ring.kv.KvStore;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one instance's entry in the instance ring: registers it (reusing its tokens when the
 * entry survived a restart in place, otherwise picking random free ones), heartbeats every
 * period, applies state changes, and on shutdown either removes the entry or leaves it LEAVING
 * for a restart in place. All ring writes come from the lifecycler's one thread (changes are
 * queued by {@link #changeState}), each as a CAS that concurrent lifecyclers retry.
 *
 * <p>Thread-safe.
 */
public final class InstanceLifecycler implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(InstanceLifecycler.class);

  /**
   * @param ringKey KV key of the ring (e.g. "ingester")
   * @param zone availability zone, or empty
   * @param unregisterOnShutdown remove the entry on stop; otherwise leave it LEAVING
   */
  public record Config(String ringKey, String id, String addr, String zone, int numTokens,
      Duration heartbeatPeriod, boolean unregisterOnShutdown) {}

  private final Config config;
  private final KvStore kv;
  private final LongSupplier clock;
  private final Counter heartbeats;
  private final Counter failures;
  private final BackgroundLoop loop;
  private volatile InstanceState desired = InstanceState.JOINING;
  private volatile long lastHeartbeat;

  public InstanceLifecycler(Config config, KvStore kv, RingMetrics metrics, LongSupplier clock) {
    this.config = config;
    this.kv = kv;
    this.clock = clock;
    this.heartbeats = metrics.heartbeats(config.ringKey());
    this.failures = metrics.heartbeatFailures(config.ringKey());
    this.loop = new BackgroundLoop("ring-lifecycler-" + config.id(), config.heartbeatPeriod().toMillis(),
        this::heartbeat);
  }

  /**
   * Registers the instance (JOINING) and starts heartbeating.
   *
   * @throws KvException when the store cannot be reached
   */
  public void start() {
    update(true);
    log.info("msg=\"instance registered in the ring\" ring={} id={} state={}", config.ringKey(), config.id(), desired);
    loop.start();
  }

  /** Asks for a state change; applied by the lifecycler thread right away. */
  public void changeState(InstanceState state) {
    desired = state;
    loop.wake();
  }

  public InstanceState desiredState() {
    return desired;
  }

  /** Wall-clock time of the last successful heartbeat. */
  public long lastHeartbeatMillis() {
    return lastHeartbeat;
  }

  private void heartbeat() {
    try {
      update(false);
      heartbeats.increment();
    } catch (KvException e) {
      failures.increment();
      log.warn("msg=\"ring heartbeat failed, retrying next period\" ring={} id={} err=\"{}\"", config.ringKey(),
          config.id(), String.valueOf(e.getMessage()).replace('"', '\''));
    }
  }

  private void update(boolean registering) {
    long now = clock.getAsLong();
    InstanceState state = desired;
    kv.cas(config.ringKey(), current -> {
      RingDesc desc = parse(current);
      InstanceDesc existing = desc.getInstancesMap().get(config.id());
      InstanceDesc.Builder me = existing == null ? InstanceDesc.newBuilder().setRegisteredTimestamp(now)
          : existing.toBuilder();
      if (me.getTokensCount() != config.numTokens()) {
        Set<Integer> taken = new HashSet<>();
        desc.getInstancesMap().forEach((id, d) -> {
          if (!id.equals(config.id())) {
            taken.addAll(d.getTokensList());
          }
        });
        me.clearTokens();
        for (int t : Tokens.random(config.numTokens(), taken, new Random())) {
          me.addTokens(t);
        }
      }
      if (registering && existing != null) {
        log.info("msg=\"reusing ring entry from before the restart\" ring={} id={} tokens={}", config.ringKey(),
            config.id(), me.getTokensCount());
      }
      me.setId(config.id()).setAddr(config.addr()).setZone(config.zone()).setState(state).setHeartbeatTimestamp(now);
      return desc.toBuilder().putInstances(config.id(), me.build()).build().toByteArray();
    });
    lastHeartbeat = now;
  }

  static RingDesc parse(byte @Nullable [] b) {
    if (b == null) {
      return RingDesc.getDefaultInstance();
    }
    try {
      return RingDesc.parseFrom(b);
    } catch (InvalidProtocolBufferException e) {
      throw new KvException("ring value is not a RingDesc: " + e.getMessage(), e);
    }
  }

  /** Stops heartbeating; removes the entry or marks it LEAVING, as configured. */
  @Override
  public void close() {
    loop.close();
    try {
      if (config.unregisterOnShutdown()) {
        kv.cas(config.ringKey(), current -> {
          RingDesc desc = parse(current);
          return desc.getInstancesMap().containsKey(config.id())
              ? desc.toBuilder().removeInstances(config.id()).build().toByteArray() : null;
        });
        log.info("msg=\"instance removed from the ring\" ring={} id={}", config.ringKey(), config.id());
      } else {
        desired = InstanceState.LEAVING;
        kv.cas(config.ringKey(), current -> {
          RingDesc desc = parse(current);
          InstanceDesc me = desc.getInstancesMap().get(config.id());
          return me == null ? null : desc.toBuilder()
              .putInstances(config.id(), me.toBuilder().setState(InstanceState.LEAVING).build()).build().toByteArray();
        });
        log.info("msg=\"instance left in the ring as LEAVING for a restart in place\" ring={} id={}",
            config.ringKey(), config.id());
      }
    } catch (KvException e) {
      log.warn("msg=\"could not update the ring on shutdown\" ring={} id={} err=\"{}\"", config.ringKey(), config.id(),
          String.valueOf(e.getMessage()).replace('"', '\''));
    }
  }
}
