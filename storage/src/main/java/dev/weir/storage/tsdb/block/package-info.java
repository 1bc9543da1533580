@NullMarked
package dev.weir.storage.tsdb.block;

import org.jspecify.annotations.NullMarked;
