/**
 * How failures are classified everywhere in Weir. A {@link dev.weir.storage.errors.ClientErrorException}
 * is the caller's fault: count it, report it, skip the offending data and keep the rest. A
 * {@link dev.weir.storage.errors.ServerErrorException} is ours: retry (the client retries a push;
 * the Kafka reader retries the record and holds the partition). Anything else is a bug and fails
 * loudly.
 */
@NullMarked
package dev.weir.storage.errors;

import org.jspecify.annotations.NullMarked;
