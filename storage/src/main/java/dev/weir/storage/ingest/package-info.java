/**
 * Kafka plumbing of ingest storage: the record format, the {@link dev.weir.storage.ingest.Writer}
 * that produces write requests, and the {@link dev.weir.storage.ingest.PartitionReader} that
 * consumes one partition into the storage. See {@code DESIGN.md} in this package for the offset
 * semantics.
 */
@NullMarked
package dev.weir.storage.ingest;

import org.jspecify.annotations.NullMarked;
