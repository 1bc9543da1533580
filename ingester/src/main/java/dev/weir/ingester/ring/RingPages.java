package dev.weir.ingester.ring;

import dev.weir.ingester.api.JsonWriter;
import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.proto.ring.InstanceDesc;
import dev.weir.proto.ring.OwnerDesc;
import dev.weir.proto.ring.PartitionDesc;
import dev.weir.ring.InstanceRing;
import dev.weir.ring.partition.PartitionRing;
import dev.weir.storage.progress.ProgressBoard;
import dev.weir.storage.progress.ProgressReporter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Ring status pages: {@code /ingester/ring} and {@code /store-gateway/ring} (instances: state,
 * address, zone, heartbeat age, health, tokens, ownership) and {@code /ingester/partition-ring}
 * (partitions: state, state time, tokens, ownership, owners, whether the state is locked, and the
 * consumer lag in records: an ingester knows its own partition's live, and every Kafka-mode process
 * asks Kafka for the others' (end offset minus the owners' committed offsets, at most one round
 * per 10 s, {@code PartitionLags}); unknown shows -1 (JSON) or "-" (HTML)). The ingester pages
 * also show what this instance is doing or did last in its long phases (WAL replay, Kafka
 * catch-up): done/total, percent, rate, time left ({@code progress} in JSON). HTML by default,
 * JSON when the {@code Accept} header asks for json.
 */
public final class RingPages {
  private RingPages() {}

  /** A partition's consumer lag in records as this process knows it, -1 when it does not. */
  public interface PartitionLag {
    PartitionLag UNKNOWN = partition -> -1;

    long records(int partition);
  }

  public static void register(HttpRouter router, Supplier<InstanceRing> instances, Supplier<PartitionRing> partitions,
      BooleanSupplier kvConnected) {
    register(router, instances, partitions, kvConnected, PartitionLag.UNKNOWN);
  }

  public static void register(HttpRouter router, Supplier<InstanceRing> instances, Supplier<PartitionRing> partitions,
      BooleanSupplier kvConnected, PartitionLag lag) {
    register(router, instances, partitions, kvConnected, lag, List::of);
  }

  /** As above, with the progress of this instance's long phases ({@link ProgressBoard#snapshots()}). */
  public static void register(HttpRouter router, Supplier<InstanceRing> instances, Supplier<PartitionRing> partitions,
      BooleanSupplier kvConnected, PartitionLag lag, Supplier<List<ProgressReporter.Snapshot>> progress) {
    router.get("ingester_ring", "/ingester/ring", ex -> instances(ex, "Instance ring", instances.get(),
        kvConnected.getAsBoolean(), progress.get()));
    router.get("ingester_partition_ring", "/ingester/partition-ring",
        ex -> partitions(ex, partitions.get(), kvConnected.getAsBoolean(), lag, progress.get()));
  }

  /** {@code /store-gateway/ring}: the store-gateway ring, in the same shape as {@code /ingester/ring}. */
  public static void registerStoreGatewayRing(HttpRouter router, Supplier<InstanceRing> ring,
      BooleanSupplier kvConnected) {
    router.get("store_gateway_ring", "/store-gateway/ring", ex -> instances(ex, "Store-gateway ring", ring.get(),
        kvConnected.getAsBoolean(), List.of()));
  }

  /**
   * {@code /distributor/ring}: the distributor ring's members, as {@code /ingester/ring} shows
   * ingesters; the global ingestion-rate strategy divides a tenant's limit by its healthy ACTIVE
   * members.
   */
  public static void registerDistributors(HttpRouter router, Supplier<InstanceRing> distributors,
      BooleanSupplier kvConnected) {
    router.get("distributor_ring", "/distributor/ring",
        ex -> instances(ex, "Distributor ring", distributors.get(), kvConnected.getAsBoolean(), List.of()));
  }

  private static boolean wantsJson(HttpExchange ex) {
    String accept = ex.header("Accept");
    return accept != null && accept.contains("json");
  }

  static void instances(HttpExchange ex, String title, InstanceRing ring, boolean connected,
      List<ProgressReporter.Snapshot> progress) {
    if (wantsJson(ex)) {
      JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"kv_connected\":").raw(String.valueOf(connected));
      progressJson(w, progress).raw(",\"instances\":[");
      boolean first = true;
      for (InstanceDesc d : ring.instances()) {
        if (!first) {
          w.raw(',');
        }
        first = false;
        w.raw("{\"id\":").string(d.getId()).raw(",\"state\":").string(d.getState().name())
            .raw(",\"address\":").string(d.getAddr()).raw(",\"zone\":").string(d.getZone())
            .raw(",\"heartbeat_timestamp\":").number(d.getHeartbeatTimestamp())
            .raw(",\"heartbeat_age_seconds\":").raw(String.format("%.3f", ring.heartbeatAgeMillis(d) / 1000.0))
            .raw(",\"healthy\":").raw(String.valueOf(ring.healthy(d)))
            .raw(",\"registered_timestamp\":").number(d.getRegisteredTimestamp())
            .raw(",\"tokens\":").number(d.getTokensCount())
            .raw(",\"ownership\":").raw(String.format("%.6f", ring.ownership(d.getId()))).raw('}');
      }
      ex.respond(200, "application/json", w.raw("]}").toString().getBytes(StandardCharsets.UTF_8));
      return;
    }
    StringBuilder h = page(title, connected, progress);
    h.append("<table><tr><th>Instance ID</th><th>State</th><th>Address</th><th>Zone</th><th>Last heartbeat</th>")
        .append("<th>Health</th><th>Tokens</th><th>Ownership</th></tr>\n");
    for (InstanceDesc d : ring.instances()) {
      h.append("<tr><td>").append(esc(d.getId())).append("</td><td>").append(d.getState()).append("</td><td>")
          .append(esc(d.getAddr())).append("</td><td>").append(esc(d.getZone())).append("</td><td>")
          .append(String.format("%.1fs ago", ring.heartbeatAgeMillis(d) / 1000.0)).append("</td><td>")
          .append(ring.healthy(d) ? "healthy" : "<b>UNHEALTHY</b>").append("</td><td>").append(d.getTokensCount())
          .append("</td><td>").append(String.format("%.2f%%", ring.ownership(d.getId()) * 100)).append("</td></tr>\n");
    }
    html(ex, h.append("</table></body></html>\n"));
  }

  static void partitions(HttpExchange ex, PartitionRing ring, boolean connected, PartitionLag lag,
      List<ProgressReporter.Snapshot> progress) {
    if (wantsJson(ex)) {
      ex.respond(200, "application/json", partitionsJson(ring, connected, lag, progress)
          .getBytes(StandardCharsets.UTF_8));
    } else {
      html(ex, new StringBuilder(partitionsHtml(ring, connected, lag, progress)));
    }
  }

  static String partitionsJson(PartitionRing ring, boolean connected, PartitionLag lag) {
    return partitionsJson(ring, connected, lag, List.of());
  }

  static String partitionsJson(PartitionRing ring, boolean connected, PartitionLag lag,
      List<ProgressReporter.Snapshot> progress) {
    Map<Integer, PartitionDesc> parts = ring.partitions();
    JsonWriter w = new JsonWriter(new StringBuilder()).raw("{\"kv_connected\":").raw(String.valueOf(connected));
    progressJson(w, progress).raw(",\"partitions\":[");
    boolean first = true;
    for (PartitionDesc p : parts.values()) {
      if (!first) {
        w.raw(',');
      }
      first = false;
      w.raw("{\"id\":").number(p.getId()).raw(",\"state\":").string(stateName(p))
          .raw(",\"state_timestamp\":").number(p.getStateTimestamp())
          .raw(",\"state_change_locked\":").raw(String.valueOf(p.getStateChangeLocked()))
          .raw(",\"lag_records\":").number(lag.records(p.getId()))
          .raw(",\"tokens\":").number(p.getTokensCount())
          .raw(",\"ownership\":").raw(String.format("%.6f", ring.ownership(p.getId())))
          .raw(",\"owners\":[");
      List<String> owners = ring.owners(p.getId());
      for (int i = 0; i < owners.size(); i++) {
        w.raw(i > 0 ? "," : "").string(owners.get(i));
      }
      w.raw("]}");
    }
    w.raw("],\"owners\":{");
    Map<String, OwnerDesc> owners = new TreeMap<>(ring.desc().getOwnersMap());
    first = true;
    for (Map.Entry<String, OwnerDesc> e : owners.entrySet()) {
      w.raw(first ? "" : ",").string(e.getKey()).raw(":{\"partition\":").number(e.getValue().getOwnedPartition())
          .raw(",\"state\":").string(e.getValue().getState().name().replace("OWNER_", ""))
          .raw(",\"ready_to_leave\":").raw(String.valueOf(e.getValue().getReadyToLeave())).raw('}');
      first = false;
    }
    return w.raw("}}").toString();
  }

  static String partitionsHtml(PartitionRing ring, boolean connected, PartitionLag lag) {
    return partitionsHtml(ring, connected, lag, List.of());
  }

  static String partitionsHtml(PartitionRing ring, boolean connected, PartitionLag lag,
      List<ProgressReporter.Snapshot> progress) {
    Map<Integer, PartitionDesc> parts = ring.partitions();
    StringBuilder h = page("Partition ring", connected, progress);
    h.append("<table><tr><th>Partition</th><th>State</th><th>State since</th><th>Tokens</th><th>Ownership</th>")
        .append("<th>Owners</th><th>Lag (records)</th></tr>\n");
    for (PartitionDesc p : parts.values()) {
      long lagRecords = lag.records(p.getId());
      h.append("<tr><td>").append(p.getId()).append("</td><td>").append(stateName(p))
          .append(p.getStateChangeLocked() ? " (locked)" : "").append("</td><td>")
          .append(java.time.Instant.ofEpochMilli(p.getStateTimestamp())).append("</td><td>").append(p.getTokensCount())
          .append("</td><td>").append(String.format("%.2f%%", ring.ownership(p.getId()) * 100)).append("</td><td>")
          .append(esc(String.join(", ", ring.owners(p.getId())))).append("</td><td>")
          .append(lagRecords < 0 ? "-" : String.valueOf(lagRecords)).append("</td></tr>\n");
    }
    return h.append("</table></body></html>\n").toString();
  }

  private static String stateName(PartitionDesc p) {
    return p.getState().name().replace("PARTITION_", "");
  }

  private static StringBuilder page(String title, boolean connected, List<ProgressReporter.Snapshot> progress) {
    StringBuilder h = new StringBuilder("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>")
        .append(title).append("</title><style>table{border-collapse:collapse}td,th{border:1px solid #999;")
        .append("padding:2px 8px;text-align:left}</style></head><body><h1>").append(title).append("</h1>\n");
    if (!connected) {
      h.append("<p><b>The KV store is unreachable: this is the last known view.</b></p>\n");
    }
    if (!progress.isEmpty()) {
      h.append("<h2>This instance</h2>\n<table><tr><th>Phase</th><th>Where</th><th>Done</th><th>Total</th>")
          .append("<th>Percent</th><th>Rate</th><th>Time left</th><th>State</th></tr>\n");
      for (ProgressReporter.Snapshot p : progress) {
        h.append("<tr><td>").append(esc(p.phase())).append("</td><td>").append(esc(p.context())).append("</td><td>")
            .append(p.done()).append(' ').append(esc(p.unit())).append("</td><td>").append(p.total()).append("</td><td>")
            .append(Double.isNaN(p.percent()) ? "-" : String.format("%.1f%%", p.percent())).append("</td><td>")
            .append(Double.isNaN(p.ratePerSecond()) ? "-" : String.format("%.0f/s", p.ratePerSecond()))
            .append("</td><td>").append(p.etaSeconds() < 0 ? "unknown" : p.etaSeconds() + "s").append("</td><td>")
            .append(p.finished() ? "done in " : "running for ").append(String.format("%.1fs", p.elapsedMillis() / 1000.0))
            .append("</td></tr>\n");
      }
      h.append("</table>\n<h2>Ring</h2>\n");
    }
    return h;
  }

  /** {@code ,"progress":[…]}: this instance's long phases, newest last. */
  private static JsonWriter progressJson(JsonWriter w, List<ProgressReporter.Snapshot> progress) {
    w.raw(",\"progress\":[");
    for (int i = 0; i < progress.size(); i++) {
      ProgressReporter.Snapshot p = progress.get(i);
      w.raw(i > 0 ? ",{\"phase\":" : "{\"phase\":").string(p.phase()).raw(",\"context\":").string(p.context())
          .raw(",\"unit\":").string(p.unit()).raw(",\"done\":").number(p.done()).raw(",\"total\":").number(p.total())
          .raw(",\"percent\":").raw(Double.isNaN(p.percent()) ? "null" : String.format("%.1f", p.percent()))
          .raw(",\"rate_per_second\":")
          .raw(Double.isNaN(p.ratePerSecond()) ? "null" : String.format("%.1f", p.ratePerSecond()))
          .raw(",\"eta_seconds\":").number(p.etaSeconds())
          .raw(",\"elapsed_seconds\":").raw(String.format("%.3f", p.elapsedMillis() / 1000.0))
          .raw(",\"finished\":").raw(String.valueOf(p.finished())).raw('}');
    }
    return w.raw(']');
  }

  private static void html(HttpExchange ex, StringBuilder h) {
    ex.respond(200, "text/html; charset=utf-8", h.toString().getBytes(StandardCharsets.UTF_8));
  }

  private static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
