/** Tenant IDs: the one set of rules every entry point (HTTP, gRPC, Kafka record keys) applies. */
@NullMarked
package dev.weir.storage.tenant;

import org.jspecify.annotations.NullMarked;
