package dev.weir.ingester.bench;

import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Realistic remote-write data: series with 8–12 labels in the shapes node-exporter, kube-state and
 * application metrics have (Prometheus-like names, job/instance/namespace/pod labels, a few
 * high-cardinality values per series), counters that grow and gauges that wander.
 */
final class BenchData {
  private static final String[] NAMES = {
    "node_cpu_seconds_total", "node_memory_MemAvailable_bytes", "node_network_receive_bytes_total",
    "node_disk_read_bytes_total", "node_filesystem_avail_bytes", "http_requests_total",
    "http_request_duration_seconds_bucket", "grpc_server_handled_total", "process_resident_memory_bytes",
    "container_cpu_usage_seconds_total", "container_memory_working_set_bytes", "kube_pod_status_phase",
    "go_goroutines", "jvm_memory_used_bytes", "kafka_consumergroup_lag", "up"};
  private static final String[] METHODS = {"GET", "POST", "PUT", "DELETE"};
  private static final String[] CODES = {"200", "201", "204", "400", "404", "500", "503"};

  private final List<Label[]> labels = new ArrayList<>();
  private final boolean[] counter;

  BenchData(int series, long seed) {
    Random r = new Random(seed);
    counter = new boolean[series];
    for (int i = 0; i < series; i++) {
      String name = NAMES[i % NAMES.length];
      counter[i] = name.endsWith("_total") || name.endsWith("_bucket");
      int pod = i / 40;
      List<Label> l = new ArrayList<>();
      l.add(label("__name__", name));
      l.add(label("cluster", "prod-eu-" + (i % 3)));
      l.add(label("container", "app-" + (pod % 50)));
      l.add(label("instance", "10." + (pod >> 16 & 255) + "." + (pod >> 8 & 255) + "." + (pod & 255) + ":9100"));
      l.add(label("job", "kubernetes-pods-" + (i % 12)));
      l.add(label("namespace", "team-" + (pod % 37)));
      l.add(label("pod", "app-" + (pod % 50) + "-" + Long.toString(0x7fffffffL & (pod * 2654435761L), 36)));
      l.add(label("series_id", Integer.toString(i / NAMES.length)));
      int extra = r.nextInt(5); // 8..12 labels in all
      if (extra > 0) {
        l.add(label("method", METHODS[i % METHODS.length]));
      }
      if (extra > 1) {
        l.add(label("status_code", CODES[(i / 4) % CODES.length]));
      }
      if (extra > 2) {
        l.add(label("le", String.valueOf(0.005 * (1 << (i % 12)))));
      }
      if (extra > 3) {
        l.add(label("version", "v1." + (pod % 9) + "." + (i % 4)));
      }
      l.sort((a, b) -> a.getName().compareTo(b.getName()));
      labels.add(l.toArray(Label[]::new));
    }
  }

  private static Label label(String n, String v) {
    return Label.newBuilder().setName(n).setValue(v).build();
  }

  int series() {
    return labels.size();
  }

  /** Series {@code [from, to)} with one sample each at {@code ts}, round {@code round}'s values. */
  WriteRequest request(int from, int to, long ts, int round) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int i = from; i < to; i++) {
      double v = counter[i] ? round * (1 + i % 7) * 3.0 : 100 + ((i * 31 + round * 17) % 1000) / 10.0;
      TimeSeries.Builder ts1 = TimeSeries.newBuilder();
      for (Label l : labels.get(i)) {
        ts1.addLabels(l);
      }
      b.addTimeseries(ts1.addSamples(Sample.newBuilder().setTimestamp(ts).setValue(v)));
    }
    return b.build();
  }
}
