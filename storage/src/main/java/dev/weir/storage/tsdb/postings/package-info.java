/** Sorted series-ref lists and label-matcher selection, shared by the head and blocks. */
@NullMarked
package dev.weir.storage.tsdb.postings;

import org.jspecify.annotations.NullMarked;
