@NullMarked
package dev.weir.ring.lifecycle;

import org.jspecify.annotations.NullMarked;
