package dev.ordersaga.shipping.application;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The carrier calls one transaction claimed, fired once inside it and handed to the worker once it committed: the
 * calls it left claimed when it ended, not each claim it made on the way. A later step of the same transaction may
 * still take a claim back ({@link #withdraw}): until the commit no call can have gone out on it.
 */
public final class ClaimedCalls {

    private final Map<UUID, CarrierWork> byShipment = new LinkedHashMap<>();

    void add(CarrierWork work) {
        byShipment.put(work.shipmentId(), work);
    }

    /** The call claimed for the shipment in this transaction, no longer to be made. */
    Optional<CarrierWork> withdraw(UUID shipmentId) {
        return Optional.ofNullable(byShipment.remove(shipmentId));
    }

    Collection<CarrierWork> calls() {
        return Collections.unmodifiableCollection(byShipment.values());
    }
}
