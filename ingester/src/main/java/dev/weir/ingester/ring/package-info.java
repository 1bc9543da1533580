/** The ingester's ring membership: KV store, lifecycler service, ring status pages. */
@NullMarked
package dev.weir.ingester.ring;

import org.jspecify.annotations.NullMarked;
