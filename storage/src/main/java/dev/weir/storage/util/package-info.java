/** Small binary-encoding helpers shared by the WAL, blocks and the Kafka record format. */
@NullMarked
package dev.weir.storage.util;

import org.jspecify.annotations.NullMarked;
