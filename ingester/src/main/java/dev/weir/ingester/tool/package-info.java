/**
 * {@code weir tool}: operator subcommands in the same jar, in the manner of Mimir's kafkatool —
 * Kafka offsets and lag, dumping, de-duplicating and replaying ranges of the ingest topic,
 * inspecting WALs and verifying the blocks of a bucket. Every subcommand only reads its source.
 * Entry point: {@link dev.weir.ingester.tool.ToolMain}.
 */
@NullMarked
package dev.weir.ingester.tool;

import org.jspecify.annotations.NullMarked;
