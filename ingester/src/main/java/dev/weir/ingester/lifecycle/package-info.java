@NullMarked
package dev.weir.ingester.lifecycle;

import org.jspecify.annotations.NullMarked;
