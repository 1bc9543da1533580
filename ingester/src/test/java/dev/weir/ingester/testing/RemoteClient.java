package dev.weir.ingester.testing;

import com.google.protobuf.CodedInputStream;
import dev.weir.proto.prompb.Chunk;
import dev.weir.proto.prompb.ChunkedReadResponse;
import dev.weir.proto.prompb.ChunkedSeries;
import dev.weir.proto.prompb.Label;
import dev.weir.proto.prompb.QueryResult;
import dev.weir.proto.prompb.ReadRequest;
import dev.weir.proto.prompb.ReadResponse;
import dev.weir.proto.prompb.Sample;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.tsdb.chunk.XorIterator;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;
import org.xerial.snappy.Snappy;

/**
 * Prometheus' remote write and remote read against one Weir HTTP endpoint, with the results of a
 * read as plain maps (series text → "timestamp=value bits" strings) for exact comparison.
 */
public final class RemoteClient {
  private final HttpClient http = HttpClient.newHttpClient();
  private final String baseUrl;

  public RemoteClient(String baseUrl) {
    this.baseUrl = baseUrl;
  }

  /** A response: status and body. */
  public record Response(int status, byte[] body, String contentType) {
    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  public Response post(String path, byte[] body, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    return new Response(r.statusCode(), r.body(), r.headers().firstValue("Content-Type").orElse(""));
  }

  /** Remote write; fails unless 2xx. */
  public void write(WriteRequest req) throws Exception {
    Response r = post("/api/v1/push", Snappy.compress(req.toByteArray()), "Content-Encoding", "snappy",
        "Content-Type", "application/x-protobuf", "X-Prometheus-Remote-Write-Version", "0.1.0");
    if (r.status() / 100 != 2) {
      throw new IllegalStateException("remote write failed: " + r.status() + " " + r.text());
    }
  }

  /** Remote read, the raw response. */
  public Response read(ReadRequest req) throws Exception {
    return post("/api/v1/read", Snappy.compress(req.toByteArray()), "Content-Encoding", "snappy",
        "Content-Type", "application/x-protobuf", "X-Prometheus-Remote-Read-Version", "0.1.0");
  }

  /** Remote read of one query in the SAMPLES type: series text → samples. */
  public Map<String, List<String>> readSamples(ReadRequest req) throws Exception {
    Response r = read(req.toBuilder().clearAcceptedResponseTypes()
        .addAcceptedResponseTypes(ReadRequest.ResponseType.SAMPLES).build());
    if (r.status() != 200) {
      throw new IllegalStateException("remote read failed: " + r.status() + " " + r.text());
    }
    Map<String, List<String>> out = new TreeMap<>();
    for (QueryResult q : ReadResponse.parseFrom(Snappy.uncompress(r.body())).getResultsList()) {
      for (TimeSeries ts : q.getTimeseriesList()) {
        List<String> list = out.computeIfAbsent(key(ts.getLabelsList()), k -> new ArrayList<>());
        for (Sample s : ts.getSamplesList()) {
          list.add(sample(s.getTimestamp(), s.getValue()));
        }
      }
    }
    return out;
  }

  /** Remote read of one query in the STREAMED_XOR_CHUNKS type, checking each frame's CRC32C. */
  public Map<String, List<String>> readStreamed(ReadRequest req, long mint, long maxt) throws Exception {
    Response r = read(req.toBuilder().clearAcceptedResponseTypes()
        .addAcceptedResponseTypes(ReadRequest.ResponseType.STREAMED_XOR_CHUNKS).build());
    if (r.status() != 200 || !r.contentType().startsWith("application/x-streamed-protobuf")) {
      throw new IllegalStateException("streamed remote read failed: " + r.status() + " " + r.contentType());
    }
    Map<String, List<String>> out = new TreeMap<>();
    CodedInputStream in = CodedInputStream.newInstance(r.body());
    while (!in.isAtEnd()) {
      int len = in.readRawVarint32();
      int crc = ByteBuffer.wrap(in.readRawBytes(4)).getInt();
      byte[] msg = in.readRawBytes(len);
      CRC32C c = new CRC32C();
      c.update(msg);
      if ((int) c.getValue() != crc) {
        throw new IllegalStateException("frame CRC32C mismatch");
      }
      for (ChunkedSeries cs : ChunkedReadResponse.parseFrom(msg).getChunkedSeriesList()) {
        List<String> list = out.computeIfAbsent(key(cs.getLabelsList()), k -> new ArrayList<>());
        for (Chunk ch : cs.getChunksList()) {
          XorIterator it = new XorIterator(ch.getData().toByteArray());
          while (it.next()) {
            if (it.timestamp() >= mint && it.timestamp() <= maxt) {
              list.add(sample(it.timestamp(), it.value()));
            }
          }
        }
      }
    }
    return out;
  }

  public static String sample(long t, double v) {
    return t + "=" + Long.toHexString(Double.doubleToRawLongBits(v));
  }

  /** Labels as text, e.g. {@code {__name__="up",job="x"}}. */
  public static String key(List<Label> labels) {
    StringBuilder sb = new StringBuilder("{");
    for (Label l : labels) {
      sb.append(sb.length() > 1 ? "," : "").append(l.getName()).append("=\"").append(l.getValue()).append('"');
    }
    return sb.append('}').toString();
  }
}
