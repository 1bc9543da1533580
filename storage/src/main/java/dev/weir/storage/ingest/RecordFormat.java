package dev.weir.storage.ingest;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tenant.TenantIds;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireFormatException;
import dev.weir.storage.wire.WireSeries;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * The Kafka record format: key = tenant ID (UTF-8), value = a {@code prometheus.WriteRequest}
 * protobuf, header {@value #VERSION_HEADER} = {@value #VERSION}. A request too large for one
 * record is split between series; a single series larger than the limit is a client error.
 * Stateless.
 */
public final class RecordFormat {
  public static final String VERSION_HEADER = "weir-version";
  public static final String VERSION = "1";
  /** Protobuf overhead of one {@code timeseries} entry beyond its own bytes (tag + length). */
  private static final int ENTRY_OVERHEAD = 6;

  private RecordFormat() {}

  /** A decoded record. */
  public record Decoded(String tenant, WriteRequest request) {}

  /**
   * Splits a request into requests whose serialized size stays within {@code maxBytes}. Metadata
   * goes with the first part.
   *
   * @throws ClientErrorException when one series alone is larger than {@code maxBytes}
   */
  public static List<WriteRequest> split(WriteRequest request, int maxBytes) {
    if (request.getSerializedSize() <= maxBytes) {
      return List.of(request);
    }
    List<WriteRequest> out = new ArrayList<>();
    WriteRequest.Builder cur = WriteRequest.newBuilder().addAllMetadata(request.getMetadataList());
    int size = cur.build().getSerializedSize();
    for (TimeSeries ts : request.getTimeseriesList()) {
      int s = ts.getSerializedSize() + ENTRY_OVERHEAD;
      if (s > maxBytes) {
        throw new ClientErrorException("series_too_large", "a single series is " + s + " bytes, more than the record"
            + " size limit " + maxBytes + " (--ingest-storage.kafka.producer-max-record-size-bytes)");
      }
      if (size + s > maxBytes && cur.getTimeseriesCount() > 0) {
        out.add(cur.build());
        cur = WriteRequest.newBuilder();
        size = 0;
      }
      cur.addTimeseries(ts);
      size += s;
    }
    if (cur.getTimeseriesCount() > 0 || cur.getMetadataCount() > 0) {
      out.add(cur.build());
    }
    return out;
  }

  /**
   * Decodes a record.
   *
   * @throws ClientErrorException with reason {@code unknown_record_version}, {@code invalid_tenant} or
   *     {@code undecodable_record}
   */
  public static Decoded decode(byte[] key, byte[] value, Headers headers) {
    String tenant = tenant(key, headers);
    try {
      return new Decoded(tenant, WriteRequest.parseFrom(value == null ? new byte[0] : value));
    } catch (InvalidProtocolBufferException e) {
      throw new ClientErrorException("undecodable_record", "record value is not a WriteRequest: " + e.getMessage());
    }
  }

  /** A record whose series stay in their protobuf bytes (the reader's hot path). */
  public record DecodedWire(String tenant, WireBatch batch) {}

  /**
   * Like {@link #decode}, but checks the value's structure and keeps the series as bytes.
   *
   * @throws ClientErrorException with reason {@code unknown_record_version}, {@code invalid_tenant} or
   *     {@code undecodable_record}
   */
  public static DecodedWire decodeWire(byte[] key, byte[] value, Headers headers, WireSeries cursor) {
    String tenant = tenant(key, headers);
    try {
      return new DecodedWire(tenant, WireBatch.parse(value == null ? new byte[0] : value, cursor));
    } catch (WireFormatException e) {
      throw new ClientErrorException("undecodable_record", "record value is not a WriteRequest: " + e.getMessage());
    }
  }

  private static String tenant(byte[] key, Headers headers) {
    Header h = headers.lastHeader(VERSION_HEADER);
    String version = h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    if (!VERSION.equals(version)) {
      throw new ClientErrorException("unknown_record_version", "record version " + (version == null ? "(missing)"
          : "\"" + version + "\"") + " is not supported (expected " + VERSION + ")");
    }
    if (key == null || key.length == 0) {
      throw new ClientErrorException("undecodable_record", "record has no tenant key");
    }
    // The key names directories (the tenant's WAL and blocks): the same rules as HTTP and gRPC.
    String problem = TenantIds.problem(key);
    if (problem != null) {
      throw new ClientErrorException("invalid_tenant", "record key is not a valid tenant ID: " + problem);
    }
    return new String(key, StandardCharsets.US_ASCII);
  }
}
