package dev.weir.ingester.push;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Identity and local storage of an ingester.
 *
 * @param id instance ID; its trailing number names the Kafka partition it consumes
 * @param dataDir directory for the WAL, blocks and offsets
 * @param activeSeriesIdleTimeout a series without samples for this long stops counting as active
 */
public record IngesterConfig(String id, Path dataDir, Duration activeSeriesIdleTimeout) {

  public void validate() throws ConfigException {
    if (id.isEmpty()) {
      throw new ConfigException("ingester.id must not be empty");
    }
    if (activeSeriesIdleTimeout.isNegative() || activeSeriesIdleTimeout.isZero()) {
      throw new ConfigException("ingester.active-series-metrics-idle-timeout must be positive");
    }
  }

  static String hostname() {
    String env = System.getenv("HOSTNAME");
    if (env != null && !env.isEmpty()) {
      return env;
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return "localhost";
    }
  }

  /** Flag definitions for {@link IngesterConfig}. */
  public static final class Flags {
    private final Flag<String> id;
    private final Flag<String> dataDir;
    private final Flag<Duration> idle;

    public Flags(FlagSet fs) {
      id = fs.string("ingester.id", "",
          "Instance ID, unique in the ring; empty means the hostname. In Kafka mode its trailing number"
              + " is the partition it consumes: ingester-zone-a-7 owns partition 7.");
      dataDir = fs.string("ingester.data-dir", "./data",
          "Directory for the ingester's local data: WAL, blocks, offsets.");
      idle = fs.duration("ingester.active-series-metrics-idle-timeout", Duration.ofMinutes(20),
          "After what time a series without new samples no longer counts as active.");
    }

    public IngesterConfig build() throws ConfigException {
      String instance = id.get().isEmpty() ? hostname() : id.get();
      IngesterConfig c = new IngesterConfig(instance, Path.of(dataDir.get()), idle.get());
      c.validate();
      return c;
    }
  }
}
