@NullMarked
package dev.weir.ingester.ingest;

import org.jspecify.annotations.NullMarked;
