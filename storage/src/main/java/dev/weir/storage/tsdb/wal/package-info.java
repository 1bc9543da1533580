@NullMarked
package dev.weir.storage.tsdb.wal;

import org.jspecify.annotations.NullMarked;
