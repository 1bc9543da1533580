/** Progress of long phases (WAL replay, Kafka catch-up, block-builder cycles): steady log lines and status. */
@NullMarked
package dev.weir.storage.progress;

import org.jspecify.annotations.NullMarked;
