@NullMarked
package dev.weir.ring.kv;

import org.jspecify.annotations.NullMarked;
