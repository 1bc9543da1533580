/**
 * The store-gateway's view of a bucket: blocks discovered by listing, an index header (TOC,
 * symbols, postings offset table) per block kept in memory and cached on local disk, and queries
 * that range-read only the postings, series and chunks they need. See {@link
 * dev.weir.storage.bucketstore.BucketStore}.
 */
@NullMarked
package dev.weir.storage.bucketstore;

import org.jspecify.annotations.NullMarked;
