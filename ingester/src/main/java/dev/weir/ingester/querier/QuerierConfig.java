package dev.weir.ingester.querier;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import java.time.Duration;
import java.util.List;

/**
 * Settings of the querier target, with Mimir's {@code querier.*} names where Mimir has the knob.
 *
 * @param storeGatewayAddresses store-gateways to query, {@code host:grpc-port}, instead of the
 *     store-gateway ring; each serves the {@code weir.Ingester} query methods over the bucket's blocks
 * @param ingesterAddresses ingesters to query instead of discovering them in the ring (classic
 *     mode); empty: the ring decides
 * @param queryStoreAfter only the part of a query older than this is sent to store-gateways; 0
 *     sends every query to them
 * @param queryIngestersWithin only the part of a query newer than this is sent to ingesters; 0
 *     sends every query to them
 * @param timeout deadline of each call to one source
 * @param maxFetchedSamplesPerQuery most samples one query may gather after the merge; 0 = unlimited
 * @param maxPartitionLag a query read from a Kafka partition consumed only up to longer ago than
 *     this gets a warning (or fails); 0 = off
 * @param failOnHighPartitionLag fail such a query (503) instead of warning
 */
public record QuerierConfig(List<String> storeGatewayAddresses, List<String> ingesterAddresses,
    Duration queryStoreAfter, Duration queryIngestersWithin, Duration timeout, long maxFetchedSamplesPerQuery,
    Duration maxPartitionLag, boolean failOnHighPartitionLag) {

  /** Flag definitions for {@link QuerierConfig}. */
  public static final class Flags {
    private final Flag<List<String>> storeGateways;
    private final Flag<List<String>> ingesters;
    private final Flag<Duration> storeAfter;
    private final Flag<Duration> ingestersWithin;
    private final Flag<Duration> timeout;
    private final Flag<Long> maxSamples;
    private final Flag<Duration> maxPartitionLag;
    private final Flag<Boolean> failOnHighLag;

    public Flags(FlagSet fs) {
      storeGateways = fs.list("querier.store-gateway-addresses", List.of(), "Store-gateways the querier reads"
          + " blocks from, comma-separated host:grpc-port, each asked, instead of the store-gateway ring (the"
          + " ring key store-gateway in the KV store of ingester.ring.*). Empty: the ring.");
      ingesters = fs.list("querier.ingester-addresses", List.of(), "Classic mode: ingesters the querier reads,"
          + " comma-separated host:grpc-port, instead of every ingester in the ring. Ignored in Kafka mode.");
      storeAfter = fs.duration("querier.query-store-after", Duration.ofHours(12), "The part of a query older"
          + " than this is read from store-gateways; newer data is only in ingesters. 0 reads store-gateways"
          + " for every query.");
      ingestersWithin = fs.duration("querier.query-ingesters-within", Duration.ofHours(13), "The part of a"
          + " query newer than this is read from ingesters; older data is only in store-gateways. 0 reads"
          + " ingesters for every query. Must exceed querier.query-store-after.");
      timeout = fs.duration("querier.timeout", Duration.ofMinutes(2), "Deadline of each call the querier makes"
          + " to one ingester or store-gateway; the query fails (503) naming the source that missed it.");
      maxSamples = fs.int64("querier.max-fetched-samples-per-query", 50_000_000L, "Most samples one querier"
          + " query may gather after merging its sources (422 above); 0 means unlimited.");
      maxPartitionLag = fs.duration("querier.max-partition-lag", Duration.ZERO, "Kafka mode: a query that read a"
          + " partition consumed only up to longer ago than this (see X-Weir-Consumed-Up-To) answers with a warning"
          + " naming the partition. A caught-up partition trails now by up to 1s (the end-offset probe), so use"
          + " at least 2s. 0 disables the check.");
      failOnHighLag = fs.bool("querier.fail-on-high-partition-lag", false, "Kafka mode: answer such a query 503"
          + " naming the lagging partitions instead of warning (needs querier.max-partition-lag).");
    }

    public QuerierConfig build() throws ConfigException {
      Duration within = ingestersWithin.get();
      Duration after = storeAfter.get();
      if (within.isNegative() || after.isNegative()) {
        throw new ConfigException("querier.query-ingesters-within and querier.query-store-after must not be negative");
      }
      if (!within.isZero() && after.compareTo(within) >= 0) {
        throw new ConfigException("querier.query-ingesters-within (" + within + ") must be longer than"
            + " querier.query-store-after (" + after + "), else data between them is read from neither");
      }
      if (timeout.get().toMillis() < 1) {
        throw new ConfigException("querier.timeout must be positive");
      }
      if (maxSamples.get() < 0) {
        throw new ConfigException("querier.max-fetched-samples-per-query must not be negative");
      }
      Duration lag = maxPartitionLag.get();
      if (lag.isNegative() || (!lag.isZero() && lag.compareTo(Duration.ofSeconds(2)) < 0)) {
        throw new ConfigException("querier.max-partition-lag must be 0 (off) or at least 2s: a caught-up partition"
            + " already trails now by up to 1s");
      }
      if (failOnHighLag.get() && lag.isZero()) {
        throw new ConfigException("querier.fail-on-high-partition-lag needs querier.max-partition-lag");
      }
      return new QuerierConfig(List.copyOf(storeGateways.get()), List.copyOf(ingesters.get()), after, within,
          timeout.get(), maxSamples.get(), lag, failOnHighLag.get());
    }
  }
}
