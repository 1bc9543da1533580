/**
 * The compactor's bucket jobs. Weir's compactor does not merge blocks yet; it enforces retention
 * on the bucket: {@link dev.weir.storage.compactor.BlocksCleaner} marks blocks past a tenant's
 * retention for deletion and deletes them after the deletion delay.
 */
@NullMarked
package dev.weir.storage.compactor;

import org.jspecify.annotations.NullMarked;
