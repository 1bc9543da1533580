/**
 * Per-tenant time-series storage: {@link dev.weir.storage.tsdb.Tsdb} holds one head per tenant.
 */
@NullMarked
package dev.weir.storage.tsdb;

import org.jspecify.annotations.NullMarked;
