package dev.weir.ingester.ingest;

import dev.weir.ingester.api.JsonWriter;
import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.proto.ring.OwnerDesc;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.proto.ring.PartitionState;
import dev.weir.ring.kv.KvException;
import dev.weir.ring.partition.PartitionStateChange;
import dev.weir.ring.partition.PartitionStateChange.RefusedException;
import dev.weir.storage.errors.ServerErrorException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Mimir's {@code /ingester/prepare-partition-downscale} on a Kafka-mode ingester: POST switches its
 * partition to INACTIVE (distributors stop writing to it as soon as they see the change), DELETE
 * switches it back to ACTIVE, GET shows it. Every answer is the GET body: {@code timestamp} (Unix
 * seconds of the switch to INACTIVE, 0 when not INACTIVE, as Mimir's rollout-operator expects),
 * the state with {@code state_timestamp} in Unix milliseconds (as on {@code /ingester/partition-ring}),
 * and whether the ingester may be removed ({@link DownscaleReadiness}; {@code leave_after} in Unix
 * seconds). {@code owners} lists every zone's owner of the partition with its readiness (each owner
 * publishes its own in the partition ring at every heartbeat) and {@code all_owners_ready_to_leave}
 * says whether the partition's ingesters may all go. The state is one entry in the ring for all
 * zones (as in Mimir): POST on one owner drains the partition in every zone, and every owner leaves
 * the ring when it stops while the partition is INACTIVE.
 *
 * <p>{@code POST /ingester/flush} compacts the whole head into blocks (the shipper uploads them at
 * its next round), so that a drained ingester holds nothing outside long-term storage; it is
 * refused (409) unless the partition is INACTIVE, because afterwards samples older than the end of
 * the last block are refused.
 *
 * <p>{@code POST /ingester/partition-state-lock} locks the partition's state (Mimir's
 * {@code state_change_locked}: neither these requests nor reconciliation change it, and it is never
 * removed from the ring), {@code DELETE} unlocks it; both answer the GET body.
 *
 * <p>A missing partition is 404, a refused change (PENDING, locked) 409, an unreachable KV store
 * 503; none of them changes the ring. Thread-safe.
 */
public final class PrepareDownscaleApi {
  /** An answer: status code and body (JSON when 200, a reason otherwise). */
  public record Response(int status, String body) {}

  /** The ingester's partition in the ring ({@link PartitionRingService}). */
  public interface OwnPartition {
    /** See {@link PartitionRingService#changeState}. */
    PartitionDesc changeState(PartitionState target);

    /** Locks or unlocks the partition's state (nothing changes it while locked). */
    PartitionDesc setStateLocked(boolean locked);

    /** See {@link PartitionRingService#partition}. */
    @Nullable PartitionDesc partition();

    int partitionId();

    /** This owner's ID in the partition ring. */
    String ownerId();

    /** The partition's owners in every zone, by owner ID, as stored now. */
    Map<String, OwnerDesc> owners();
  }

  private final OwnPartition ring;
  private final Duration lookback;
  private final Supplier<DownscaleReadiness.Storage> storage;
  private final LongSupplier clock;
  private final IntSupplier flush;

  /**
   * @param lookback how far back queriers read ingesters ({@code querier.query-ingesters-within})
   * @param storage what the ingester holds outside long-term storage, read on every GET
   * @param flush compacts the whole head into blocks, returns how many were written
   */
  public PrepareDownscaleApi(OwnPartition ring, Duration lookback, Supplier<DownscaleReadiness.Storage> storage,
      LongSupplier clock, IntSupplier flush) {
    this.ring = ring;
    this.lookback = lookback;
    this.storage = storage;
    this.clock = clock;
    this.flush = flush;
  }

  public void register(HttpRouter router) {
    router.add("ingester_prepare_partition_downscale", Set.of("GET", "POST", "DELETE"),
        "/ingester/prepare-partition-downscale", ex -> respond(ex, switch (ex.method()) {
          case "POST" -> change(PartitionState.PARTITION_INACTIVE);
          case "DELETE" -> change(PartitionState.PARTITION_ACTIVE);
          default -> get();
        }));
    router.add("ingester_flush", Set.of("POST"), "/ingester/flush", ex -> respond(ex, flush()));
    router.add("ingester_partition_state_lock", Set.of("POST", "DELETE"), "/ingester/partition-state-lock",
        ex -> respond(ex, lock(ex.method().equals("POST"))));
  }

  private static void respond(HttpExchange ex, Response r) {
    if (r.status() == 200) {
      ex.respond(200, "application/json", r.body().getBytes(StandardCharsets.UTF_8));
    } else {
      ex.respondText(r.status(), r.body() + "\n");
    }
  }

  /** POST (INACTIVE) or DELETE (ACTIVE). */
  public Response change(PartitionState target) {
    try {
      return ok(ring.changeState(target));
    } catch (RefusedException e) {
      return new Response(e.kind() == RefusedException.Kind.NOT_FOUND ? 404 : 409, e.getMessage());
    } catch (KvException | IllegalStateException e) {
      return unavailable(e);
    }
  }

  /** GET. */
  public Response get() {
    try {
      PartitionDesc p = ring.partition();
      if (p == null) {
        return new Response(404, "partition " + ring.partitionId()
            + " is not in the partition ring (not created yet, or already removed)");
      }
      return ok(p);
    } catch (KvException | IllegalStateException e) {
      return unavailable(e);
    }
  }

  /** POST (lock) or DELETE (unlock) /ingester/partition-state-lock. */
  public Response lock(boolean locked) {
    try {
      return ok(ring.setStateLocked(locked));
    } catch (RefusedException e) {
      return new Response(404, e.getMessage());
    } catch (KvException | IllegalStateException e) {
      return unavailable(e);
    }
  }

  /** POST /ingester/flush: only on an INACTIVE partition's ingester. */
  public Response flush() {
    try {
      PartitionDesc p = ring.partition();
      if (p == null || p.getState() != PartitionState.PARTITION_INACTIVE) {
        return new Response(409, "partition " + ring.partitionId() + " is "
            + (p == null ? "not in the ring" : PartitionStateChange.name(p.getState()))
            + ": flush only a drained ingester (POST /ingester/prepare-partition-downscale first), since samples"
            + " older than the flushed blocks are refused afterwards");
      }
      int blocks = flush.getAsInt();
      return new Response(200, "{\"blocks\":" + blocks + "}");
    } catch (KvException | IllegalStateException e) {
      return unavailable(e);
    } catch (ServerErrorException e) {
      return new Response(500, e.getMessage());
    }
  }

  private static Response unavailable(RuntimeException e) {
    return new Response(503, "the partition ring cannot be read or changed now, nothing was changed: "
        + e.getMessage());
  }

  /**
   * Whether this ingester may be removed now ({@link DownscaleReadiness}); what it publishes in its
   * owner entry for the other zones to see.
   */
  public boolean readyToLeave(PartitionDesc p) {
    return DownscaleReadiness.decide(p, clock.getAsLong(), lookback, storage.get()).readyToLeave();
  }

  private Response ok(PartitionDesc p) {
    DownscaleReadiness.Decision d = DownscaleReadiness.decide(p, clock.getAsLong(), lookback, storage.get());
    Map<String, OwnerDesc> owners = ring.owners();
    boolean inactive = p.getState() == PartitionState.PARTITION_INACTIVE;
    JsonWriter w = new JsonWriter(new StringBuilder())
        .raw("{\"timestamp\":").number(inactive ? p.getStateTimestamp() / 1000 : 0)
        .raw(",\"partition\":").number(p.getId())
        .raw(",\"state\":").string(PartitionStateChange.name(p.getState()))
        .raw(",\"state_timestamp\":").number(p.getStateTimestamp())
        .raw(",\"state_change_locked\":").raw(String.valueOf(p.getStateChangeLocked()))
        .raw(",\"ready_to_leave\":").raw(String.valueOf(d.readyToLeave()))
        .raw(",\"inactive_long_enough\":").raw(String.valueOf(d.inactiveLongEnough()))
        .raw(",\"leave_after\":").number(d.leaveAfterMillis() / 1000)
        .raw(",\"storage\":").string(d.storage().name().toLowerCase(java.util.Locale.ROOT))
        .raw(",\"reasons\":[");
    for (int i = 0; i < d.reasons().size(); i++) {
      w.raw(i > 0 ? "," : "").string(d.reasons().get(i));
    }
    // Every zone's owner of the partition: the partition may go only when all of them may. This
    // owner's answer is the live one above; the others' as they published it at their last heartbeat.
    boolean all = d.readyToLeave();
    w.raw("],\"owners\":[");
    boolean first = true;
    for (Map.Entry<String, OwnerDesc> e : owners.entrySet()) {
      boolean self = e.getKey().equals(ring.ownerId());
      boolean ready = self ? d.readyToLeave() : e.getValue().getReadyToLeave();
      all &= ready;
      w.raw(first ? "" : ",").raw("{\"id\":").string(e.getKey()).raw(",\"ready_to_leave\":")
          .raw(String.valueOf(ready)).raw(",\"self\":").raw(String.valueOf(self)).raw('}');
      first = false;
    }
    return new Response(200, w.raw("],\"all_owners_ready_to_leave\":").raw(String.valueOf(all)).raw('}').toString());
  }
}
