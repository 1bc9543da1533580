package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Labels;

/** One exemplar: its own labels (e.g. a trace id), value and timestamp in milliseconds. */
public record Exemplar(Labels labels, double value, long timestamp) {}
