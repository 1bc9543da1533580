package dev.weir.ingester.push;

import dev.weir.proto.prompb.WriteRequest;
import dev.weir.storage.errors.ClientErrorException;
import dev.weir.storage.wire.WireBatch;
import dev.weir.storage.wire.WireFormatException;

/**
 * Whatever a process does with a write: the ingester appends it (classic mode), a distributor
 * produces it to Kafka or forwards it to ingesters. Throws {@link
 * dev.weir.storage.errors.ClientErrorException} after storing the valid part when some of it was
 * refused, {@link dev.weir.storage.errors.ServerErrorException} when nothing was stored and the
 * client should retry.
 */
@FunctionalInterface
public interface PushHandler {
  void push(String tenant, WriteRequest request);

  /** The same for a request still in its protobuf bytes; handlers on the hot path override it. */
  default void push(String tenant, WireBatch request) {
    WriteRequest parsed;
    try {
      parsed = request.toWriteRequest();
    } catch (WireFormatException e) {
      throw new ClientErrorException("bad_data", "the request is not a valid remote write request"
          + " (prometheus.WriteRequest): " + e.getMessage());
    }
    push(tenant, parsed);
  }
}
