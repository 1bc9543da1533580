/** Protocol adapters: the gRPC Ingester service and the Prometheus-style HTTP API. */
@NullMarked
package dev.weir.ingester.api;

import org.jspecify.annotations.NullMarked;
