@NullMarked
package dev.weir.storage.tsdb.labels;

import org.jspecify.annotations.NullMarked;
