package dev.weir.storage.ingest;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.weir.proto.prompb.TimeSeries;
import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.tenant.TenantIds;
import dev.weir.storage.wire.InvalidSeriesException;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireFormatException;
import dev.weir.storage.wire.WireSeries;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * The Kafka record format: key = tenant ID (UTF-8), header {@value #VERSION_HEADER} = the format
 * version, value by version:
 *
 * <ul>
 *   <li>{@code 1}: a {@code prometheus.WriteRequest} (remote write 1.0) protobuf. A record without
 *       the version header (written before the header existed) is read as version 1.
 *   <li>{@code 2}: an {@code io.prometheus.write.v2.Request} (remote write 2.0) with its own
 *       symbols table, so each record decodes alone; metadata travels per series
 *       ({@link RecordV2Encoder}). Smaller, as repeated label strings are written once per record.
 * </ul>
 *
 * <p>Readers accept every version; the writer produces the one {@code
 * -ingest-storage.kafka.producer-record-version} names, so a rolling upgrade updates every reader
 * before any writer produces a new version. A request too large for one record is split between
 * series; a single series larger than the limit is a client error. Stateless.
 */
public final class RecordFormat {
  public static final String VERSION_HEADER = "weir-version";
  /** Version 1, {@code prometheus.WriteRequest}. */
  public static final String VERSION = "1";
  /** Version 2, {@code io.prometheus.write.v2.Request} with a symbols table per record. */
  public static final String VERSION_2 = "2";
  /** Protobuf overhead of one {@code timeseries} entry beyond its own bytes (tag + length). */
  private static final int ENTRY_OVERHEAD = 6;

  private RecordFormat() {}

  /** A decoded record, with the format version it was written in. */
  public record Decoded(String tenant, WriteRequest request, int version) {}

  /**
   * The record values of a request in format {@code version}, each within {@code maxBytes}.
   *
   * @throws ClientErrorException when one series alone is larger than {@code maxBytes}
   * @throws IllegalArgumentException for a version other than 1 and 2
   */
  public static List<byte[]> encode(WriteRequest request, int version, int maxBytes) {
    return switch (version) {
      case 1 -> split(request, maxBytes).stream().map(WriteRequest::toByteArray).toList();
      case 2 -> RecordV2Encoder.encode(request, maxBytes);
      default -> throw new IllegalArgumentException("unknown record version " + version);
    };
  }

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
    int version = version(headers);
    String tenant = tenant(key);
    byte[] v = value == null ? new byte[0] : value;
    if (version == 2) {
      return new Decoded(tenant, decodeV2(v, new WireSeries()).toWriteRequest(), 2);
    }
    try {
      return new Decoded(tenant, WriteRequest.parseFrom(v), 1);
    } catch (InvalidProtocolBufferException e) {
      throw new ClientErrorException("undecodable_record", "record value is not a WriteRequest: " + e.getMessage());
    }
  }

  private static WireBatch decodeV2(byte[] value, WireSeries cursor) {
    try {
      // The distributor checked every series before producing it: an invalid one is a broken record.
      return WireBatch.parseV2(value, cursor, null);
    } catch (WireFormatException | InvalidSeriesException e) {
      throw new ClientErrorException("undecodable_record", "record value is not a remote write 2.0 Request: "
          + e.getMessage());
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
    return decodeWire(key, value == null ? null : ByteBuffer.wrap(value), headers, cursor);
  }

  /**
   * {@link #decodeWire(byte[], byte[], Headers, WireSeries)} of a value read where the consumer left
   * it (the reader's consumers use Kafka's {@code ByteBufferDeserializer}, which copies nothing): a
   * version 1 batch points into the value's array, so that array must not change while the batch is
   * in use. A version 2 value is copied unless it is a whole array (its symbol table is read from
   * index 0).
   */
  public static DecodedWire decodeWire(byte[] key, @Nullable ByteBuffer value, Headers headers, WireSeries cursor) {
    int version = version(headers);
    String tenant = tenant(key);
    ByteBuffer v = value == null ? ByteBuffer.allocate(0) : value;
    if (version == 2) {
      return new DecodedWire(tenant, decodeV2(wholeArray(v), cursor));
    }
    try {
      if (!v.hasArray()) {
        return new DecodedWire(tenant, WireBatch.parse(wholeArray(v), cursor));
      }
      return new DecodedWire(tenant, WireBatch.parse(v.array(), v.arrayOffset() + v.position(), v.remaining(), cursor));
    } catch (WireFormatException e) {
      throw new ClientErrorException("undecodable_record", "record value is not a WriteRequest: " + e.getMessage());
    }
  }

  /** The bytes of {@code v} as an array of their own size: its backing array when that is all of it, else a copy. */
  static byte[] wholeArray(ByteBuffer v) {
    if (v.hasArray() && v.arrayOffset() + v.position() == 0 && v.remaining() == v.array().length) {
      return v.array();
    }
    byte[] b = new byte[v.remaining()];
    v.duplicate().get(b);
    return b;
  }

  /**
   * The record's format version: 1 without the header (records from before it existed).
   *
   * @throws ClientErrorException with reason {@code unknown_record_version} for any other value
   */
  public static int version(Headers headers) {
    Header h = headers.lastHeader(VERSION_HEADER);
    if (h == null) {
      return 1;
    }
    String version = h.value() == null ? "" : new String(h.value(), StandardCharsets.UTF_8);
    if (version.equals(VERSION)) {
      return 1;
    }
    if (version.equals(VERSION_2)) {
      return 2;
    }
    throw new ClientErrorException("unknown_record_version", "record version \"" + version + "\" is not supported"
        + " (this reader knows " + VERSION + " and " + VERSION_2 + "): upgrade the readers before the writers");
  }

  private static String tenant(byte[] key) {
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
