/**
 * The compactor target: bucket retention ({@link dev.weir.storage.compactor.BlocksCleaner}) on a
 * thread of its own. Weir's compactor does not merge blocks.
 */
@NullMarked
package dev.weir.ingester.compactor;

import org.jspecify.annotations.NullMarked;
