package dev.weir.ingester.testing;

import dev.weir.proto.ingester.IngesterGrpc;
import dev.weir.storage.ingest.Writer;
import io.grpc.StatusRuntimeException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.xerial.snappy.Snappy;

/**
 * Writes an {@link AckLedger}'s requests through one path (HTTP remote write, gRPC Push, or a Kafka
 * {@link Writer} to partition 0) and records each as acknowledged or refused; optionally in a
 * background thread at a fixed pace while a test injects a fault.
 *
 * <p>One writer per thread; {@link #close()} stops and joins the background thread.
 */
public final class LedgerWriter implements AutoCloseable {
  /** One attempt of write k; true when acknowledged. Refusals are recorded in the ledger. */
  public interface Sink {
    boolean write(AckLedger ledger, long k);
  }

  private final AckLedger ledger;
  private final Sink sink;
  private final AtomicBoolean stop = new AtomicBoolean();
  /** {@link System#nanoTime()} at each acknowledgement, for tests that count acks in a window. */
  private final java.util.Queue<Long> ackTimes = new java.util.concurrent.ConcurrentLinkedQueue<>();
  private Thread thread;

  public LedgerWriter(AckLedger ledger, Sink sink) {
    this.ledger = ledger;
    this.sink = sink;
  }

  /** Attempts the next write once; true when acknowledged. */
  public boolean writeNext() {
    long k = ledger.attempt();
    boolean ok = sink.write(ledger, k);
    if (ok) {
      ledger.ack(k);
      ackTimes.add(System.nanoTime());
    }
    return ok;
  }

  /** Writes acknowledged in {@code (fromNanos, toNanos]} ({@link System#nanoTime()} when the ack came). */
  public long acksBetween(long fromNanos, long toNanos) {
    return ackTimes.stream().filter(t -> t - fromNanos > 0 && t - toNanos <= 0).count();
  }

  /** Attempts {@code n} writes in a row; returns how many were acknowledged. */
  public int write(int n) {
    int ok = 0;
    for (int i = 0; i < n; i++) {
      ok += writeNext() ? 1 : 0;
    }
    return ok;
  }

  /** Starts writing in the background, one attempt every {@code every}, until {@link #close()}. */
  public LedgerWriter startBackground(String name, Duration every) {
    thread = new Thread(() -> {
      while (!stop.get()) {
        writeNext();
        try {
          Thread.sleep(every.toMillis());
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "ledger-writer-" + name);
    thread.setDaemon(true);
    thread.start();
    return this;
  }

  @Override
  public void close() throws InterruptedException {
    stop.set(true);
    if (thread != null) {
      thread.join(TimeUnit.SECONDS.toMillis(90));
    }
  }

  /** Prometheus remote write 0.1.0 to {@code baseUrl/api/v1/push}; 2xx acknowledges. */
  public static Sink remoteWrite(String baseUrl, Duration timeout) {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    return (ledger, k) -> {
      try {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(baseUrl + "/api/v1/push"))
            .timeout(timeout)
            .header("X-Scope-OrgID", ledger.tenant)
            .header("Content-Encoding", "snappy")
            .header("Content-Type", "application/x-protobuf")
            .header("X-Prometheus-Remote-Write-Version", "0.1.0")
            .POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(ledger.request(k).toByteArray())))
            .build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 == 2) {
          return true;
        }
        ledger.refused(k, "http " + r.statusCode(), r.body().strip());
      } catch (Exception e) {
        ledger.refused(k, "http " + e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
      }
      return false;
    };
  }

  /** gRPC Push with a deadline; OK acknowledges. */
  public static Sink grpcPush(IngesterGrpc.IngesterBlockingStub stub, Duration deadline) {
    return (ledger, k) -> {
      try {
        stub.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS).push(ledger.request(k));
        return true;
      } catch (StatusRuntimeException e) {
        ledger.refused(k, "grpc " + e.getStatus().getCode(), String.valueOf(e.getStatus().getDescription()));
      } catch (RuntimeException e) {
        ledger.refused(k, "grpc " + e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
      }
      return false;
    };
  }

  /** A Kafka record to partition 0 keyed by the tenant; the producer's ack acknowledges. */
  public static Sink kafka(Writer writer) {
    return (ledger, k) -> {
      try {
        writer.write(ledger.tenant, Map.of(0, ledger.request(k)));
        return true;
      } catch (RuntimeException e) {
        ledger.refused(k, "kafka " + e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
        return false;
      }
    };
  }
}
