package dev.weir.ingester.api;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.weir.ingester.ingest.ReadLevel;
import dev.weir.ingester.server.HttpExchange;
import dev.weir.ingester.server.HttpRouter;
import dev.weir.ingester.server.Tenants;
import dev.weir.proto.prompb.Chunk;
import dev.weir.proto.prompb.ChunkedReadResponse;
import dev.weir.proto.prompb.ChunkedSeries;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.Query;
import dev.weir.proto.prompb.QueryResult;
import dev.weir.proto.prompb.ReadRequest;
import dev.weir.proto.prompb.ReadResponse;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tsdb.head.ChunkData;
import dev.weir.storage.tsdb.head.SeriesChunks;
import dev.weir.storage.tsdb.labels.Labels;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;
import org.xerial.snappy.Snappy;

/**
 * {@code POST /api/v1/read}: Prometheus remote read. The snappy-compressed {@code ReadRequest}
 * holds queries (matchers and a time range); the first response type in the request's
 * {@code accepted_response_types} that Weir speaks is used, SAMPLES when there are none:
 *
 * <ul>
 *   <li>SAMPLES: one snappy-compressed {@code ReadResponse} with the samples in each range;
 *   <li>STREAMED_XOR_CHUNKS: {@code application/x-streamed-protobuf;
 *       proto=prometheus.ChunkedReadResponse}, one frame per series (uvarint length, big-endian
 *       CRC32C, message) carrying its XOR chunks as stored, streamed as they are produced.
 * </ul>
 *
 * A request that decompresses to more than 1 MiB answers 413; limits on series and chunk bytes per
 * query answer 422. Read consistency headers as in {@link PrometheusHttpApi}; the answer carries
 * {@link QueryFreshness#HEADER} (remote read has no warnings: a partition lagging over
 * {@code querier.max-partition-lag} only fails it, with {@code fail-on-high-partition-lag}).
 * Thread-safe.
 */
public final class RemoteReadApi {
  static final String STREAMED_TYPE = "application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse";
  /** Series split into frames of at most this many chunk bytes, as Prometheus does (1 MiB). */
  private static final int MAX_FRAME_CHUNK_BYTES = 1 << 20;
  /**
   * Largest decompressed read request (Mimir's {@code maxRemoteReadQuerySize}, 1 MiB): a request is
   * a few matchers and time ranges, so more is abuse; checked from the snappy header before
   * decompressing (413 above).
   */
  static final int MAX_REQUEST_BYTES = 1 << 20;

  private final ReadSource source;
  private final Tenants tenants;
  private final ApiLimits limits;
  private final QueryFreshness freshness;

  /**
   * @param source the local ingester or the querier
   * @param freshness the {@link QueryFreshness#HEADER} header and the lag failure
   */
  public RemoteReadApi(ReadSource source, Tenants tenants, ApiLimits limits, QueryFreshness freshness) {
    this.source = source;
    this.tenants = tenants;
    this.limits = limits;
    this.freshness = freshness;
  }

  public void register(HttpRouter router) {
    router.add("api_v1_read", Set.of("POST"), "/api/v1/read", this::serve);
  }

  private void serve(HttpExchange ex) throws IOException {
    String tenant = tenants.resolve(ex.header(Tenants.HEADER));
    ReadRequest req = decode(ex.bodyBytes());
    ReadLevel level = ReadLevel.parse(ex.header(ReadLevel.CONSISTENCY_HEADER), ex.header(ReadLevel.OFFSETS_HEADER));
    ReadSource.Reader reader = source.reader(tenant, level);
    boolean streamed = false;
    for (ReadRequest.ResponseType t : req.getAcceptedResponseTypesList()) {
      if (t == ReadRequest.ResponseType.STREAMED_XOR_CHUNKS) {
        streamed = true;
        break;
      }
      if (t == ReadRequest.ResponseType.SAMPLES) {
        break;
      }
    }
    if (streamed) {
      streamChunks(ex, reader, req);
    } else {
      samples(ex, reader, req);
    }
  }

  private static ReadRequest decode(byte[] body) {
    byte[] raw = SnappyBodies.uncompress(body, MAX_REQUEST_BYTES, "remote read requests, as in Mimir");
    try {
      return ReadRequest.parseFrom(raw);
    } catch (InvalidProtocolBufferException e) {
      throw new ClientErrorException("bad_data", "the body is not a remote read request: " + e.getMessage());
    }
  }

  private List<SeriesChunks> select(ReadSource.Reader reader, Query q) {
    List<SeriesChunks> series = reader.select(q.getStartTimestampMs(), q.getEndTimestampMs(),
        Matchers.fromProto(q.getMatchersList()));
    if (limits.maxFetchedSeriesPerQuery() > 0 && series.size() > limits.maxFetchedSeriesPerQuery()) {
      throw new ClientErrorException("query_limit", "the query selects " + series.size() + " series, more than the"
          + " limit of " + limits.maxFetchedSeriesPerQuery() + " (--querier.max-fetched-series-per-query)", 422);
    }
    if (limits.maxFetchedChunkBytesPerQuery() > 0) {
      long bytes = 0;
      for (SeriesChunks s : series) {
        for (ChunkData c : s.chunks()) {
          bytes += c.bytes().length;
        }
      }
      if (bytes > limits.maxFetchedChunkBytesPerQuery()) {
        throw new ClientErrorException("query_limit", "the query fetches " + bytes + " chunk bytes, more than the"
            + " limit of " + limits.maxFetchedChunkBytesPerQuery() + " (--querier.max-fetched-chunk-bytes-per-query)",
            422);
      }
    }
    return series;
  }

  private void samples(HttpExchange ex, ReadSource.Reader reader, ReadRequest req) throws IOException {
    ReadResponse.Builder resp = ReadResponse.newBuilder();
    for (Query q : req.getQueriesList()) {
      QueryResult.Builder r = QueryResult.newBuilder();
      for (SeriesChunks s : select(reader, q)) {
        SeriesChunks.Samples samples = s.samples(q.getStartTimestampMs(), q.getEndTimestampMs());
        SeriesChunks.Histograms hs = s.histograms(q.getStartTimestampMs(), q.getEndTimestampMs());
        if (samples.size() > 0 || hs.size() > 0) {
          r.addTimeseries(QueryingIngesterService.toProto(s.labels(), samples, hs));
        }
      }
      resp.addResults(r);
    }
    Map<String, String> headers = new java.util.HashMap<>(freshness.check(reader.freshness()).headers());
    headers.put("Content-Encoding", "snappy");
    ex.respond(200, "application/x-protobuf", Snappy.compress(resp.build().toByteArray()), headers);
  }

  private void streamChunks(HttpExchange ex, ReadSource.Reader reader, ReadRequest req) throws IOException {
    // Select every query first, so limits fail with a status before the stream starts.
    List<List<SeriesChunks>> selected = new java.util.ArrayList<>();
    for (Query q : req.getQueriesList()) {
      selected.add(select(reader, q));
    }
    try (OutputStream out = ex.stream(200, STREAMED_TYPE, freshness.check(reader.freshness()).headers())) {
      for (int qi = 0; qi < selected.size(); qi++) {
        for (SeriesChunks selectedSeries : selected.get(qi)) {
          // Prometheus reads a streamed series' chunks in sequence: overlapping ones (out-of-order
          // data, a block and the head) are merged first.
          SeriesChunks s = dev.weir.storage.tsdb.head.NonOverlappingChunks.of(selectedSeries);
          ChunkedSeries.Builder cs = newSeries(s.labels());
          int bytes = 0;
          for (ChunkData c : s.chunks()) {
            if (bytes > 0 && bytes + c.bytes().length > MAX_FRAME_CHUNK_BYTES) {
              writeFrame(out, ChunkedReadResponse.newBuilder().addChunkedSeries(cs).setQueryIndex(qi).build());
              cs = newSeries(s.labels());
              bytes = 0;
            }
            cs.addChunks(Chunk.newBuilder().setMinTimeMs(c.minTime()).setMaxTimeMs(c.maxTime())
                .setTypeValue(c.encoding()).setData(com.google.protobuf.ByteString.copyFrom(c.bytes())));
            bytes += c.bytes().length;
          }
          if (cs.getChunksCount() > 0) {
            writeFrame(out, ChunkedReadResponse.newBuilder().addChunkedSeries(cs).setQueryIndex(qi).build());
          }
        }
      }
    }
  }

  private static ChunkedSeries.Builder newSeries(Labels labels) {
    ChunkedSeries.Builder cs = ChunkedSeries.newBuilder();
    for (int i = 0; i < labels.size(); i++) {
      cs.addLabels(Label.newBuilder().setName(labels.name(i)).setValue(labels.value(i)));
    }
    return cs;
  }

  /** A frame: uvarint length, CRC32C of the message (big-endian), the message. */
  static void writeFrame(OutputStream out, ChunkedReadResponse msg) throws IOException {
    byte[] data = msg.toByteArray();
    byte[] header = new byte[10 + 4];
    CodedOutputStream cos = CodedOutputStream.newInstance(header);
    cos.writeUInt32NoTag(data.length);
    int n = cos.getTotalBytesWritten();
    CRC32C crc = new CRC32C();
    crc.update(data);
    int c = (int) crc.getValue();
    header[n] = (byte) (c >>> 24);
    header[n + 1] = (byte) (c >>> 16);
    header[n + 2] = (byte) (c >>> 8);
    header[n + 3] = (byte) c;
    out.write(header, 0, n + 4);
    out.write(data);
  }
}
