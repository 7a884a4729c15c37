package dev.ordersaga.sandbox;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** The carrier sandbox's books and its outage switch, under one lock (one shipment per key, even when raced). */
final class CarrierLedger {

    private final Map<String, Shipment> shipmentsByKey = new LinkedHashMap<>();
    private final Map<String, String> keysByShipmentId = new HashMap<>();
    /** The key of every shipment created, in the order it was. */
    private final Report<String> created = new Report<>();
    /**
     * Calls per idempotency key, for the ledger view only: the books hold one shipment per key whatever the service
     * did, and a test of the service needs to tell one create call from a repeated one, or a status query from one.
     */
    private final Map<String, Integer> createCalls = new HashMap<>();
    private final Map<String, Integer> statusQueries = new HashMap<>();
    private int outageFailuresLeft;

    synchronized void armOutage(int failures) {
        outageFailuresLeft = failures;
    }

    /** True if this create call falls into the outage, which it then shortens by one. */
    synchronized boolean takeOutageFailure() {
        if (outageFailuresLeft == 0) {
            return false;
        }
        outageFailuresLeft--;
        return true;
    }

    synchronized Shipment create(String idempotencyKey, String reference) {
        createCalls.merge(idempotencyKey, 1, Integer::sum);
        return shipmentsByKey.computeIfAbsent(idempotencyKey, key -> {
            Shipment shipment = Shipment.create(key, reference);
            keysByShipmentId.put(shipment.shipmentId(), key);
            created.add(key);
            return shipment;
        });
    }

    synchronized Shipment cancel(String shipmentId) {
        String key = keysByShipmentId.get(shipmentId);
        if (key == null) {
            throw ApiException.notFound("unknown shipment " + shipmentId);
        }
        return shipmentsByKey.computeIfPresent(key, (k, shipment) -> shipment.cancelled());
    }

    /** The status query: counted, whether or not the key was shipped. */
    synchronized Optional<Shipment> queryStatus(String idempotencyKey) {
        statusQueries.merge(idempotencyKey, 1, Integer::sum);
        return Optional.ofNullable(shipmentsByKey.get(idempotencyKey));
    }

    /** A page of the shipment report, each shipment as it is now ({@link Report#page}). */
    synchronized Map<String, Object> shipments(Request request) {
        return created.page(request, "shipments", (key, createdAt) -> {
            Map<String, Object> view = new LinkedHashMap<>(shipmentsByKey.get(key).view());
            view.put("createdAt", createdAt.toString());
            return view;
        });
    }

    synchronized Map<String, Object> ledgerView() {
        return Json.object("shipments", shipmentsByKey.values().stream().map(this::ledgerEntry).toList());
    }

    private Map<String, Object> ledgerEntry(Shipment shipment) {
        Map<String, Object> view = new LinkedHashMap<>(shipment.view());
        view.put("createCalls", createCalls.getOrDefault(shipment.idempotencyKey(), 0));
        view.put("statusQueries", statusQueries.getOrDefault(shipment.idempotencyKey(), 0));
        return view;
    }
}
