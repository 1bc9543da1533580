package dev.weir.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.weir.ingester.testing.AckLedger;
import dev.weir.ingester.testing.ExportClient;
import dev.weir.ingester.testing.KafkaCluster;
import dev.weir.ingester.testing.LedgerWriter;
import dev.weir.ingester.testing.WeirProcess;
import dev.weir.ring.testing.EtcdServer;
import dev.weir.storage.testing.KafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two zones × three partitions with real processes: ingester-zone-a-N and ingester-zone-b-N both
 * consume partition N (each commits to its own group), a distributor writes continuously, and a
 * querier in zone-a reads every partition from its own zone first. Zone a is restarted rolling,
 * one ingester at a time with kill -9, while strong reads run back to back: every query answers
 * 200 with every sample acknowledged before it started, exactly once — the partition whose zone-a
 * owner is dead (still ACTIVE and healthy in the ring until its heartbeat times out) or catching up
 * (JOINING) is read from zone b.
 */
class ZoneFailoverIT {
  static final int PARTITIONS = 3;
  static final int SERIES = 24;
  static final String TENANT = "zones";
  static final String METRIC = "zone_metric";
  static final Pattern SERIES_LABEL = Pattern.compile("series=\"(\\d+)\"");

  @TempDir Path dir;

  @Test
  void aRollingKillOfOneZoneNeverMakesAStrongQueryMissAnAckedSample() throws Exception {
    KafkaCluster c = new KafkaCluster(KafkaBroker.shared(), EtcdServer.shared());
    c.broker.createTopic(c.topic, PARTITIONS);
    long t0 = System.currentTimeMillis() - 30 * 60_000L;
    AckLedger ledger = new AckLedger(TENANT, METRIC, SERIES, t0, 100);
    List<WeirProcess> all = new ArrayList<>();
    List<WeirProcess> zoneA = new ArrayList<>();
    try {
      for (String zone : List.of("a", "b")) {
        for (int p = 0; p < PARTITIONS; p++) {
          WeirProcess w = WeirProcess.launch(dir.resolve("ingester-" + zone + p), c.args("--target=ingester",
              "--ingester.id=ingester-zone-" + zone + "-" + p, "--ingester.ring.instance-availability-zone=zone-" + zone));
          all.add(w);
          if (zone.equals("a")) {
            zoneA.add(w);
          }
        }
      }
      for (WeirProcess w : all) {
        w.awaitReady(Duration.ofSeconds(120));
      }
      WeirProcess distributor = WeirProcess.start(dir.resolve("distributor"), c.args("--target=distributor"));
      all.add(distributor);
      WeirProcess querier = WeirProcess.start(dir.resolve("querier"), c.args("--target=querier",
          "--ingester.ring.instance-availability-zone=zone-a"));
      all.add(querier);
      for (WeirProcess w : List.of(distributor, querier)) {
        await().atMost(60, TimeUnit.SECONDS).until(() -> w.get("/ingester/partition-ring")
            .split("<td>ACTIVE</td>", -1).length - 1 == PARTITIONS);
      }
      await().atMost(60, TimeUnit.SECONDS).until(() -> querier.get("/ingester/ring")
          .split("<td>ACTIVE</td>", -1).length - 1 == 2 * PARTITIONS);

      ExportClient export = new ExportClient(querier.httpUrl());
      List<String> failures = new CopyOnWriteArrayList<>();
      AtomicInteger queries = new AtomicInteger();
      AtomicBoolean stop = new AtomicBoolean();
      try (LedgerWriter writer = new LedgerWriter(ledger, LedgerWriter.remoteWrite(distributor.httpUrl(),
          Duration.ofSeconds(30))).startBackground("zones", Duration.ofMillis(20))) {
        await().atMost(30, TimeUnit.SECONDS).until(() -> ledger.ackedWrites() >= 20);
        Thread reader = new Thread(() -> {
          while (!stop.get()) {
            String failure = strongQuery(export, ledger);
            queries.incrementAndGet();
            if (failure != null) {
              failures.add(failure);
            }
          }
        }, "zone-reader");
        reader.start();
        try {
          for (WeirProcess w : zoneA) {
            int before = queries.get();
            w.kill();
            // Queries run while the owner is dead but still ACTIVE and healthy in the ring.
            await().atMost(60, TimeUnit.SECONDS).until(() -> queries.get() >= before + 3);
            w.restart();
            int after = queries.get();
            await().atMost(60, TimeUnit.SECONDS).until(() -> queries.get() >= after + 3);
          }
        } finally {
          stop.set(true);
          reader.join(TimeUnit.MINUTES.toMillis(3));
        }
      }
      assertThat(failures).as("queries that missed acked samples or failed, of %s", queries.get()).isEmpty();
      assertThat(queries.get()).isGreaterThanOrEqualTo(18);
      assertThat(querier.metric("weir_querier_source_failovers_total{kind=\"ingester\"}"))
          .as("calls to the killed zone-a owners moved to zone b").isPositive();
      assertThat(ledger.refusals()).as("the distributor took every write").isEmpty();
      assertThat(strongQuery(export, ledger)).isNull();
      System.out.println("ack-ledger zone failover: " + queries.get() + " strong queries, " + ledger);
    } finally {
      for (int i = all.size() - 1; i >= 0; i--) {
        all.get(i).close();
      }
    }
  }

  /**
   * One strong export through the querier; null when it holds every sample acknowledged before it
   * started, once each, else what was wrong.
   */
  static String strongQuery(ExportClient export, AckLedger ledger) {
    List<Long> ackedBefore = ledger.acked();
    Map<String, ExportClient.Series> found;
    try {
      found = export.export(TENANT, METRIC, "X-Read-Consistency", "strong");
    } catch (Exception e) {
      return "query failed: " + e.getMessage();
    }
    Set<Integer> seriesSeen = new HashSet<>();
    for (ExportClient.Series s : found.values()) {
      Matcher m = SERIES_LABEL.matcher(s.labels());
      if (!m.find()) {
        return "unexpected series " + s.labels();
      }
      seriesSeen.add(Integer.parseInt(m.group(1)));
      Set<Long> ts = new HashSet<>(s.timestamps());
      if (ts.size() != s.timestamps().size()) {
        return "duplicate samples in " + s.labels();
      }
      for (long k : ackedBefore) {
        if (!ts.contains(ledger.t0 + k * ledger.stepMs)) {
          return s.labels() + " misses acked write " + k + " (" + ackedBefore.size() + " acked before the query)";
        }
      }
    }
    if (seriesSeen.size() != SERIES) {
      return seriesSeen.size() + " of " + SERIES + " series found";
    }
    return null;
  }
}
