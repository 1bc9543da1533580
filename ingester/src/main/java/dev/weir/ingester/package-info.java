/** The {@code weir} binary: {@link dev.weir.ingester.Main} and the assembly of its targets. */
@NullMarked
package dev.weir.ingester;

import org.jspecify.annotations.NullMarked;
