package dev.weir.ingester.api;

import dev.weir.ingester.config.ConfigException;
import dev.weir.ingester.config.Flag;
import dev.weir.ingester.config.FlagSet;
import dev.weir.storage.errors.ClientErrorException;

/**
 * Limits of the HTTP write and read APIs against abuse.
 *
 * @param maxDecompressedBytes largest remote-write body after snappy decompression (413 above;
 *     checked from the snappy header before anything is allocated)
 * @param maxSeriesPerRequest most series in one write request (413 above, INVALID_ARGUMENT on gRPC)
 * @param maxSamplesPerRequest most samples in one write request (413 above, INVALID_ARGUMENT on gRPC)
 * @param maxFetchedSeriesPerQuery most series one remote-read query may return; 0 = unlimited
 * @param maxFetchedChunkBytesPerQuery most chunk bytes one remote-read query may return; 0 = unlimited
 */
public record ApiLimits(int maxDecompressedBytes, int maxSeriesPerRequest, int maxSamplesPerRequest,
    int maxFetchedSeriesPerQuery, long maxFetchedChunkBytesPerQuery) {

  public static final ApiLimits DEFAULT = new ApiLimits(64 << 20, 100_000, 1_000_000, 0, 0);

  /**
   * Refuses a write request over the per-request series or sample limit; remote write and gRPC
   * Push both call it.
   *
   * @param samples samples and histogram samples of all series
   * @throws ClientErrorException 413 with the count and the flag (INVALID_ARGUMENT on gRPC: the
   *     request can never succeed, so it must not be retried)
   */
  void checkWriteRequest(int series, long samples) {
    if (series > maxSeriesPerRequest) {
      throw new ClientErrorException("request_too_large", "the request has " + series + " series, more than the"
          + " limit of " + maxSeriesPerRequest + " (--distributor.max-series-per-request)", 413);
    }
    if (samples > maxSamplesPerRequest) {
      throw new ClientErrorException("request_too_large", "the request has " + samples + " samples, more than the"
          + " limit of " + maxSamplesPerRequest + " (--distributor.max-samples-per-request)", 413);
    }
  }

  /** Flag definitions for {@link ApiLimits}. */
  public static final class Flags {
    private final Flag<Integer> maxDecompressed;
    private final Flag<Integer> maxSeries;
    private final Flag<Integer> maxSamples;
    private final Flag<Integer> maxFetchedSeries;
    private final Flag<Long> maxChunkBytes;

    public Flags(FlagSet fs) {
      maxDecompressed = fs.integer("distributor.max-recv-msg-size", DEFAULT.maxDecompressedBytes,
          "Largest remote-write request accepted, after snappy decompression (bytes); larger ones get 413."
              + " The declared size is checked before decompressing, so a snappy bomb costs nothing.");
      maxSeries = fs.integer("distributor.max-series-per-request", DEFAULT.maxSeriesPerRequest,
          "Most series in one write request; more gets 413 on remote write, INVALID_ARGUMENT on gRPC Push.");
      maxSamples = fs.integer("distributor.max-samples-per-request", DEFAULT.maxSamplesPerRequest,
          "Most samples (and histogram samples) in one write request; more gets 413 on remote write,"
              + " INVALID_ARGUMENT on gRPC Push.");
      maxFetchedSeries = fs.integer("querier.max-fetched-series-per-query", DEFAULT.maxFetchedSeriesPerQuery,
          "Most series a remote-read query may return (422 above); 0 means unlimited.");
      maxChunkBytes = fs.int64("querier.max-fetched-chunk-bytes-per-query", DEFAULT.maxFetchedChunkBytesPerQuery,
          "Most chunk bytes a remote-read query may return (422 above); 0 means unlimited.");
    }

    public ApiLimits build() throws ConfigException {
      if (maxDecompressed.get() < 1024 || maxSeries.get() < 1 || maxSamples.get() < 1) {
        throw new ConfigException("distributor.max-recv-msg-size (>= 1024), max-series-per-request and"
            + " max-samples-per-request (>= 1) must be positive");
      }
      if (maxFetchedSeries.get() < 0 || maxChunkBytes.get() < 0) {
        throw new ConfigException("querier.max-fetched-* limits must not be negative");
      }
      return new ApiLimits(maxDecompressed.get(), maxSeries.get(), maxSamples.get(), maxFetchedSeries.get(),
          maxChunkBytes.get());
    }
  }
}
