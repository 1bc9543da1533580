@NullMarked
package dev.weir.ingester.server;

import org.jspecify.annotations.NullMarked;
