package dev.ordersaga.sandbox;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

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
    /** The shipment each cancel key cancelled. */
    private final Map<String, String> cancelsByKey = new HashMap<>();
    private int outageFailuresLeft;
    /** Outages of one shipment reference (an order): the create calls of other orders go through meanwhile. */
    private final Map<String, Integer> outageFailuresLeftOf = new HashMap<>();
    /**
     * While set, the carrier forgets each shipment's key as soon as it created the shipment, and answers a create this
     * late (a carrier whose key store was lost, under load): a create whose answer the caller gave up on is made
     * again under the same key.
     */
    private Duration forgetfulDelay;
    private final Set<String> forgottenKeys = new HashSet<>();
    /** Creates that made a new shipment under a key whose shipment had been forgotten: how a fault run sees its effect. */
    private long createdUnderForgottenKeys;

    /** The next {@code failures} create calls fail; 0 ends every outage, of one reference or not. */
    synchronized void armOutage(int failures) {
        outageFailuresLeft = failures;
        if (failures == 0) {
            outageFailuresLeftOf.clear();
        }
    }

    /** The next {@code failures} create calls for {@code reference} fail; 0 ends its outage. */
    synchronized void armOutage(int failures, String reference) {
        if (failures == 0) {
            outageFailuresLeftOf.remove(reference);
        } else {
            outageFailuresLeftOf.put(reference, failures);
        }
    }

    /** True if this create call falls into the outage, which it then shortens by one. */
    synchronized boolean takeOutageFailure() {
        if (outageFailuresLeft == 0) {
            return false;
        }
        outageFailuresLeft--;
        return true;
    }

    /** True if this create call for {@code reference} falls into its outage, which it then shortens by one. */
    synchronized boolean takeOutageFailureOf(String reference) {
        Integer left = outageFailuresLeftOf.get(reference);
        if (left == null) {
            return false;
        }
        armOutage(left - 1, reference);
        return true;
    }

    synchronized Shipment create(String idempotencyKey, String reference, boolean cancellable) {
        createCalls.merge(idempotencyKey, 1, Integer::sum);
        String known = idsByKey.get(idempotencyKey);
        if (known != null) {
            Shipment shipment = shipmentsById.get(known);
            if (!shipment.reference().equals(reference)) {
                // a key stands for one request, as at real carriers: the shipment it made is another order's
                throw ApiException.unprocessable("idempotency key " + idempotencyKey
                        + " was used with another request");
            }
            return shipment;
        }
        Shipment shipment = Shipment.create(idempotencyKey, reference, cancellable);
        shipmentsById.put(shipment.shipmentId(), shipment);
        if (forgottenKeys.contains(idempotencyKey)) {
            createdUnderForgottenKeys++;
        }
        if (forgetfulDelay == null) {
            idsByKey.put(idempotencyKey, shipment.shipmentId());
        } else {
            forgottenKeys.add(idempotencyKey);
        }
        created.add(shipment.shipmentId());
        return shipment;
    }

    /**
     * Cancels the shipment, or answers a cancel under a key it has seen with the shipment that key cancelled, as a
     * carrier's key store does whatever the request says now: a caller that used one key for two shipments learns
     * that the second is cancelled when it is not.
     */
    synchronized Shipment cancel(String shipmentId, String idempotencyKey) {
        String cancelledUnderKey = cancelsByKey.get(idempotencyKey);
        if (cancelledUnderKey != null) {
            return shipmentsById.get(cancelledUnderKey);
        }
        Shipment shipment = shipmentsById.get(shipmentId);
        if (shipment == null) {
            throw ApiException.notFound("unknown shipment " + shipmentId);
        }
        if (!shipment.cancellable()) {
            throw ApiException.unprocessable("shipment " + shipmentId
                    + " was handed to the courier: too late to cancel");
        }
        Shipment cancelled = shipment.cancelled();
        shipmentsById.put(shipmentId, cancelled);
        cancelsByKey.put(idempotencyKey, shipmentId);
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
        forgottenKeys.add(idempotencyKey);
        return shipmentsById.get(id);
    }

    /** Forgetful with creates answered {@code delay} late, or (null) back to remembering keys. */
    synchronized void forgetful(Duration delay) {
        forgetfulDelay = delay;
    }

    /** How late a create is answered in the forgetful mode; zero when the carrier remembers keys. */
    synchronized Duration createAnswerDelay() {
        return forgetfulDelay == null ? Duration.ZERO : forgetfulDelay;
    }

    synchronized Map<String, Object> forgetfulView() {
        return Json.object("forgetful", forgetfulDelay != null, "createdUnderForgottenKeys", createdUnderForgottenKeys);
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
