package dev.ordersaga.sandbox;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** The carrier sandbox's books and its outage switch, under one lock (one shipment per key, even when raced). */
final class CarrierLedger {

    /** Every shipment created, in the order it was. */
    private final Map<String, Shipment> shipmentsById = new LinkedHashMap<>();
    /**
     * The shipment of each key the carrier remembers: a key it forgot ({@link #forgetKey}), as real carriers do after
     * some days, is created anew.
     */
    private final Map<String, String> idsByKey = new HashMap<>();
    /** The id of every shipment created, in the order it was. */
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
        String known = idsByKey.get(idempotencyKey);
        if (known != null) {
            return shipmentsById.get(known);
        }
        Shipment shipment = Shipment.create(idempotencyKey, reference);
        shipmentsById.put(shipment.shipmentId(), shipment);
        idsByKey.put(idempotencyKey, shipment.shipmentId());
        created.add(shipment.shipmentId());
        return shipment;
    }

    synchronized Shipment cancel(String shipmentId) {
        Shipment cancelled = shipmentsById.computeIfPresent(shipmentId, (id, shipment) -> shipment.cancelled());
        if (cancelled == null) {
            throw ApiException.notFound("unknown shipment " + shipmentId);
        }
        return cancelled;
    }

    /** The status query: counted, whether or not the key was shipped. */
    synchronized Optional<Shipment> queryStatus(String idempotencyKey) {
        statusQueries.merge(idempotencyKey, 1, Integer::sum);
        return Optional.ofNullable(idsByKey.get(idempotencyKey)).map(shipmentsById::get);
    }

    /**
     * Forgets the key's shipment as far as idempotency goes: the next create call under the key makes a second one.
     *
     * @return the shipment that was under the key
     */
    synchronized Shipment forgetKey(String idempotencyKey) {
        String id = idsByKey.remove(idempotencyKey);
        if (id == null) {
            throw ApiException.notFound("no shipment with idempotency key " + idempotencyKey);
        }
        return shipmentsById.get(id);
    }

    /** A page of the shipment report, each shipment as it is now ({@link Report#page}). */
    synchronized Map<String, Object> shipments(Request request) {
        return created.page(request, "shipments", (id, createdAt) -> {
            Map<String, Object> view = new LinkedHashMap<>(shipmentsById.get(id).view());
            view.put("createdAt", createdAt.toString());
            return view;
        });
    }

    synchronized Map<String, Object> ledgerView() {
        return Json.object("shipments", shipmentsById.values().stream().map(this::ledgerEntry).toList());
    }

    private Map<String, Object> ledgerEntry(Shipment shipment) {
        Map<String, Object> view = new LinkedHashMap<>(shipment.view());
        view.put("createCalls", createCalls.getOrDefault(shipment.idempotencyKey(), 0));
        view.put("statusQueries", statusQueries.getOrDefault(shipment.idempotencyKey(), 0));
        return view;
    }
}
