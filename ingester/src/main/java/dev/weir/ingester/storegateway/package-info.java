/** The store-gateway target: a bucket's blocks served over the {@code weir.Ingester} gRPC API. */
@NullMarked
package dev.weir.ingester.storegateway;

import org.jspecify.annotations.NullMarked;
