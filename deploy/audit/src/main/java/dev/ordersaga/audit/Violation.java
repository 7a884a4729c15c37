package dev.ordersaga.audit;

import java.util.Objects;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * One broken invariant. It names the order it belongs to; for a stock count the SKU (whose detail lists the orders in
 * scope that touch it); for a ledger entry that belongs to no order, that entry.
 */
public record Violation(Kind kind, UUID orderId, String sku, String ledgerEntry, String detail) {

    public Violation {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(detail, "detail");
        if (Stream.of(orderId, sku, ledgerEntry).filter(Objects::nonNull).count() != 1) {
            throw new IllegalArgumentException("a violation names an order, a SKU or a ledger entry");
        }
    }

    public static Violation ofOrder(Kind kind, UUID orderId, String detail) {
        return new Violation(kind, orderId, null, null, detail);
    }

    public static Violation ofSku(Kind kind, String sku, String detail) {
        return new Violation(kind, null, sku, null, detail);
    }

    /** @param ledgerEntry which one, e.g. "payment provider charge ch_1" */
    public static Violation ofLedgerEntry(Kind kind, String ledgerEntry, String detail) {
        return new Violation(kind, null, null, ledgerEntry, detail);
    }

    /** "order <id>", "sku <sku>" or the ledger entry ("carrier shipment <id>"). */
    public String subject() {
        return orderId != null ? "order " + orderId : sku != null ? "sku " + sku : ledgerEntry;
    }

    public enum Kind {
        /** asked for with --orders, but order-service has no such order */
        ORDER_NOT_FOUND("order not found"),
        /** neither CONFIRMED nor CANCELLED, and not waiting for an operator with a reason */
        NOT_SETTLED("not settled"),
        /**
         * an order waits for an operator's decision on a participant (waiting_for) whose row is not held: SHIPPING
         * without an ON_HOLD shipment, PAYMENT without a held payment; the operator's retry would resume nothing
         */
        WAIT_WITHOUT_HOLD("waits for a participant that holds nothing"),
        /** CONFIRMED without a CONSUMED reservation, CANCELLED without a reservation or with one still RESERVED or CONSUMED */
        RESERVATION_STATE("reservation in the wrong state"),
        /** CONFIRMED, and the consumed reservation holds other quantities than the order's lines */
        RESERVATION_ITEMS("reservation differs from the order"),
        /**
         * CONFIRMED: succeeded charges minus refunds differ from the total; CANCELLED: they are not zero; either: a
         * refund names the order but refunds another's charge, or refunds one of its charges but names another reference
         */
        NET_CHARGE("net charge wrong"),
        /** CONFIRMED: not exactly one live shipment at the carrier; CANCELLED: a live one */
        LIVE_SHIPMENTS("live shipments wrong"),
        /**
         * a participant's own row disagrees with the finished order, or still owes the provider a call: CONFIRMED needs
         * the payment SUCCEEDED and the shipment CREATED; CANCELLED needs the payment DECLINED, REFUNDED or CANCELLED
         * and the shipment CANCELLED; either needs a row in both
         */
        PARTICIPANT_STATE("participant's state disagrees"),
        /** an effect taken twice: a second payment/shipment/reservation row, charge, refund, carrier shipment, sighting */
        EFFECT_TWICE("effect applied twice"),
        /**
         * a fact the saga states once (Checks.STATED_ONCE: OrderCreated, StockReserved, PaymentSucceeded, ...) on its
         * topic under two event ids or more: a step taken twice, whatever the rows show now
         */
        FACT_TWICE("fact published twice"),
        /**
         * a charge, refund or carrier shipment whose reference names no order order_db has, recorded inside the --since
         * window: money taken, given back or a parcel made for nothing
         */
        ORPHAN_LEDGER_ENTRY("ledger entry of no order"),
        /** a message of the order sits on a dead-letter topic: a consumer refused it and it was never applied */
        PARKED("message parked"),
        /** an event of the order's timeline is not on its producer's topic */
        EVENT_NOT_ON_TOPIC("timeline event missing from its topic"),
        /** a service's state says it published an event that is not on its topic */
        STATE_WITHOUT_EVENT("state without its event"),
        /** stocked differs from available + reserved + shipped */
        STOCK_NOT_CONSERVED("stock not conserved"),
        /** reserved (shipped) differs from what the RESERVED (CONSUMED) reservations hold */
        STOCK_HOLDINGS("stock differs from the reservations");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }
}
