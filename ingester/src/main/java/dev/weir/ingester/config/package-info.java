@NullMarked
package dev.weir.ingester.config;

import org.jspecify.annotations.NullMarked;
