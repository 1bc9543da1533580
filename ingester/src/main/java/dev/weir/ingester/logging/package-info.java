@NullMarked
package dev.weir.ingester.logging;

import org.jspecify.annotations.NullMarked;
