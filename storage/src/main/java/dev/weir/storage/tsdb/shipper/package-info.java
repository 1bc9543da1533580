/**
 * The shipper: uploads the blocks that head compaction writes to the long-term bucket, once each,
 * remembering what it uploaded in each tenant's {@code shipper.json}, and keeps local blocks past
 * retention until they are shipped. See {@link dev.weir.storage.tsdb.shipper.Shipper}.
 */
@NullMarked
package dev.weir.storage.tsdb.shipper;

import org.jspecify.annotations.NullMarked;
