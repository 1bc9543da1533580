@NullMarked
package dev.weir.ring.partition;

import org.jspecify.annotations.NullMarked;
