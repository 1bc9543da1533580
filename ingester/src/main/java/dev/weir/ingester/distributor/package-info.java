@NullMarked
package dev.weir.ingester.distributor;

import org.jspecify.annotations.NullMarked;
