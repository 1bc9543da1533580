/** A batching consumer: partitions consumed in independent cycles (consume, flush to a sink, commit). */
@NullMarked
package dev.weir.storage.ingest.batch;

import org.jspecify.annotations.NullMarked;
