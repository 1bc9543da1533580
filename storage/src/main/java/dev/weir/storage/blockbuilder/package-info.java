/** The block-builder's sink: cycles of records become Prometheus-format blocks uploaded to a bucket. */
@NullMarked
package dev.weir.storage.blockbuilder;

import org.jspecify.annotations.NullMarked;
