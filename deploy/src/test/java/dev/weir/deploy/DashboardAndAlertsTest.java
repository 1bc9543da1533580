package dev.weir.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The alert rules pass promtool; the dashboard is well-formed and covers what the issue asks. */
class DashboardAndAlertsTest {
  @Test
  void promtoolAcceptsTheAlertRules() throws Exception {
    Path rules = Repo.root().resolve("deploy/prometheus/weir-alerts.yaml");
    Process p = new ProcessBuilder("/usr/bin/promtool", "check", "rules", rules.toString()).redirectErrorStream(true)
        .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out).contains("SUCCESS: 20 rules found");
  }

  @Test
  void theDashboardShowsLagCommitsErrorsAndStorage() throws Exception {
    JsonNode d = new ObjectMapper().readTree(Repo.root().resolve("deploy/grafana/weir-dashboard.json").toFile());
    assertThat(d.get("uid").asText()).isEqualTo("weir-overview");
    Set<Integer> ids = new HashSet<>();
    for (JsonNode panel : d.get("panels")) {
      assertThat(ids.add(panel.get("id").asInt())).as("panel ids are unique").isTrue();
    }
    String exprs = String.join("\n", d.findValuesAsText("expr"));
    for (String needed : List.of("weir_ingest_storage_reader_lag_records", "weir_ingest_storage_reader_lag_seconds",
        "weir_ingest_storage_reader_last_commit_timestamp_seconds", "weir_discarded_samples_total",
        "weir_tsdb_wal_size_bytes", "weir_tsdb_head_memory_estimate_bytes", "weir_distributor_received_samples_total")) {
      assertThat(exprs).contains(needed);
    }
  }
}
