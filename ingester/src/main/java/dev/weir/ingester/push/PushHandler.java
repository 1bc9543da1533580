package dev.weir.ingester.push;

import dev.weir.proto.prompb.WriteRequest;

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
}
