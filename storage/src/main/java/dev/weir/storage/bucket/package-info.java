/** Long-term block storage (a filesystem directory by default). */
@NullMarked
package dev.weir.storage.bucket;

import org.jspecify.annotations.NullMarked;
