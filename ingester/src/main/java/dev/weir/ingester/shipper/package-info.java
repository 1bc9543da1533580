/** The ingester's shipper as a service: {@link dev.weir.ingester.shipper.ShipperService}. */
@NullMarked
package dev.weir.ingester.shipper;

import org.jspecify.annotations.NullMarked;
