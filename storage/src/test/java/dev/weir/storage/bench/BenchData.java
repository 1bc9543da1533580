package dev.weir.storage.bench;

import dev.weir.storage.tsdb.labels.Labels;
import java.util.Random;

/**
 * Realistic series for benchmarks: 10 labels in the shape node-exporter and Kubernetes targets
 * produce (shared names and low-cardinality values, a few unique ones per series).
 */
public final class BenchData {
  private BenchData() {}

  public static Labels series(int i) {
    return Labels.of(
        "__name__", "node_cpu_seconds_total_" + (i % 50),
        "cluster", "prod-eu-" + (i % 3),
        "namespace", "team-" + (i % 40),
        "job", "kubernetes-pods",
        "pod", "api-server-" + (i / 20) + "-" + Integer.toHexString(i * 2654435761L > 0 ? (int) (i * 2654435761L) : i),
        "instance", "10." + ((i >> 16) & 255) + "." + ((i >> 8) & 255) + "." + (i & 255) + ":9100",
        "container", "app-" + (i % 7),
        "mode", new String[] {"user", "system", "idle", "iowait"}[i % 4],
        "cpu", String.valueOf(i % 16),
        "zone", "eu-west-1" + (char) ('a' + i % 3));
  }

  /** A gauge-like value walk, as scraped values look. */
  public static double value(Random r, double previous) {
    return Math.round((previous + r.nextGaussian()) * 100) / 100.0;
  }
}
