package dev.weir.ingester.ingest;

import dev.weir.ingester.lifecycle.Service;
import dev.weir.storage.ingest.KafkaConfig;
import dev.weir.storage.ingest.Writer;
import dev.weir.storage.ingest.WriterMetrics;
import dev.weir.storage.errors.ServerErrorException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The distributor's Kafka writer: ensures the topic at start, closes the producer at stop. */
public final class KafkaWriterService implements Service {
  private final KafkaConfig config;
  private final WriterMetrics metrics;
  private static final Logger log = LoggerFactory.getLogger(KafkaWriterService.class);
  private volatile @Nullable Writer writer;
  private volatile boolean stopped;

  public KafkaWriterService(KafkaConfig config, WriterMetrics metrics) {
    this.config = config;
    this.metrics = metrics;
  }

  @Override
  public String name() {
    return "kafka-writer";
  }

  /**
   * Creates the producer, and the topic if needed. When Kafka cannot be reached yet the service
   * still starts: pushes fail with 503 until it can, and the topic check is retried every 10 s.
   */
  @Override
  public void start() {
    writer = new Writer(config, metrics);
    try {
      Writer.ensureTopic(config);
    } catch (ServerErrorException e) {
      log.error("msg=\"cannot check or create the ingest topic yet; retrying in the background\" err=\"{}\"",
          e.getMessage());
      Thread t = new Thread(() -> {
        while (!stopped) {
          try {
            Thread.sleep(10_000);
            Writer.ensureTopic(config);
            return;
          } catch (InterruptedException ie) {
            return;
          } catch (ServerErrorException again) {
            log.warn("msg=\"ingest topic still not available\" err=\"{}\"", again.getMessage());
          }
        }
      }, "kafka-topic-check");
      t.setDaemon(true);
      t.start();
    }
  }

  public Writer writer() {
    Writer w = writer;
    if (w == null) {
      throw new IllegalStateException("Kafka writer not started");
    }
    return w;
  }

  @Override
  public void stop() {
    stopped = true;
    Writer w = writer;
    if (w != null) {
      w.close();
    }
  }
}
