/**
 * The querier target: answers the Prometheus read endpoints from a merge of ingesters and
 * store-gateways, all reached through the {@code weir.Ingester} gRPC service.
 */
@NullMarked
package dev.weir.ingester.querier;

import org.jspecify.annotations.NullMarked;
