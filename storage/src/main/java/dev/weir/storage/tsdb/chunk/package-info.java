@NullMarked
package dev.weir.storage.tsdb.chunk;

import org.jspecify.annotations.NullMarked;
