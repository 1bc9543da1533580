@NullMarked
package dev.weir.ingester.push;

import org.jspecify.annotations.NullMarked;
