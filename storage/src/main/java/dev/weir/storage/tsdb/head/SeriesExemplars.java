package dev.weir.storage.tsdb.head;

import dev.weir.storage.tsdb.labels.Labels;
import java.util.List;

/** The exemplars of one series in a query range, oldest first. */
public record SeriesExemplars(Labels seriesLabels, List<Exemplar> exemplars) {}
