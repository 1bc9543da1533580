@NullMarked
package dev.weir.storage.tsdb.head;

import org.jspecify.annotations.NullMarked;
