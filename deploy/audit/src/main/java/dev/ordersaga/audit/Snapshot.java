package dev.ordersaga.audit;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Everything the audit reads, as plain values: the rows of the four databases for the orders in scope, the stock of
 * the SKUs they touch, the providers' ledger entries (those that reference them, and the others) and their events on
 * the four topics. The loaders ({@code dev.ordersaga.audit.load}) fill it; {@link Checks} judges it without touching
 * anything else.
 *
 * @param scope          what was audited, in words ("orders created at or after ...")
 * @param since          the instant of --since; null when the scope is a list of orders (--orders)
 * @param orders         order-service's orders in scope
 * @param ordersNotFound ids asked for (--orders) that order-service does not have
 * @param timeline       order-service's saga_event rows of those orders
 * @param handConfirmed  undoings of those orders that an operator confirmed settled outside a provider's API, as
 *                       order-service's operator_action rows keep them
 * @param reservations   inventory-service's reservations of those orders (one per order, unless an effect doubled)
 * @param sightings      inventory-service's order_sighting rows: one per applied OrderCreated
 * @param stock          the stock rows of every SKU the orders' lines name
 * @param payments       payment-service's payment rows of those orders
 * @param shipments      shipping-service's shipment rows of those orders
 * @param surpluses      second effects a provider took under one of those orders' keys, as payment-service and
 *                       shipping-service recorded them (surplus_charge, surplus_shipment)
 * @param charges        the payment provider's charges whose reference is one of those orders
 * @param refunds        the payment provider's refunds whose reference is one of those orders
 * @param carrierShipments the carrier's shipments whose reference is one of those orders
 * @param unmatched      the ledgers' other entries: their reference names no order in scope
 * @param events         every record of those orders on the four event topics, duplicates included
 * @param parked         every record of those orders on the four dead-letter topics: messages a consumer refused
 * @param topics         what was read from the topics, in scope or not
 */
public record Snapshot(String scope, Instant since, List<Order> orders, List<UUID> ordersNotFound,
                       List<TimelineEntry> timeline, List<HandConfirmed> handConfirmed, List<Reservation> reservations,
                       List<Sighting> sightings, List<Stock> stock,
                       List<Payment> payments, List<Shipment> shipments, List<Surplus> surpluses,
                       List<ProviderCharge> charges,
                       List<ProviderRefund> refunds, List<CarrierShipment> carrierShipments,
                       List<UnmatchedEntry> unmatched, List<TopicEvent> events, List<Parked> parked, TopicStats topics) {

    public Snapshot {
        orders = List.copyOf(orders);
        ordersNotFound = List.copyOf(ordersNotFound);
        timeline = List.copyOf(timeline);
        handConfirmed = List.copyOf(handConfirmed);
        reservations = List.copyOf(reservations);
        sightings = List.copyOf(sightings);
        stock = List.copyOf(stock);
        payments = List.copyOf(payments);
        shipments = List.copyOf(shipments);
        surpluses = List.copyOf(surpluses);
        charges = List.copyOf(charges);
        refunds = List.copyOf(refunds);
        carrierShipments = List.copyOf(carrierShipments);
        unmatched = List.copyOf(unmatched);
        events = List.copyOf(events);
        parked = List.copyOf(parked);
    }

    // --- order_db

    /**
     * A row of orders with its lines. {@code status} is order-service's OrderStatus name; {@code waitingFor} the
     * participant an operator's decision is awaited for (SHIPPING, PAYMENT), null when the order does not wait or
     * order_db predates the column.
     */
    public record Order(UUID id, String status, BigDecimal total, String currency, String waitingReason,
                        String waitingFor, Instant createdAt, List<Line> lines, Facts facts) {

        public Order {
            lines = List.copyOf(lines);
        }

        public Order withStatus(String newStatus) {
            return new Order(id, newStatus, total, currency, waitingReason, waitingFor, createdAt, lines, facts);
        }

        public Order withWaitingReason(String reason) {
            return new Order(id, status, total, currency, reason, waitingFor, createdAt, lines, facts);
        }

        public Order withWaitingFor(String participant) {
            return new Order(id, status, total, currency, waitingReason, participant, createdAt, lines, facts);
        }

        public Order withTotal(BigDecimal newTotal) {
            return new Order(id, status, newTotal, currency, waitingReason, waitingFor, createdAt, lines, facts);
        }

        public Order withFacts(Facts newFacts) {
            return new Order(id, status, total, currency, waitingReason, waitingFor, createdAt, lines, newFacts);
        }
    }

    /** A line of an order (order_item) or of a reservation (reservation_item). */
    public record Line(String sku, int quantity) {
    }

    /** The participants' facts the order has heard (its boolean columns): each one is an event it consumed. */
    public record Facts(boolean stockReserved, boolean paid, boolean shipmentCreated, boolean stockReleased,
                        boolean paymentRefunded, boolean shipmentCancelled) {

        public static Facts none() {
            return new Facts(false, false, false, false, false, false);
        }
    }

    /** A row of saga_event: an event of the order's saga, its own (producer "order") or one it consumed. */
    public record TimelineEntry(UUID orderId, UUID eventId, String type, String producer, String note) {
    }

    /**
     * An operator's word that an undoing the provider's API kept refusing was settled another way: a refund made at
     * the provider's dashboard, by a chargeback or a transfer; a parcel the carrier confirmed will not go out. The
     * ledgers may then still show the charge or the live parcel.
     *
     * @param action {@link #PAYMENT_REFUNDED} or {@link #SHIPMENT_CANCELLED}, order-service's names of the acts
     * @param word   what the operator gave as the settlement: the place to check it
     */
    public record HandConfirmed(UUID orderId, String action, String operator, String word) {

        public static final String PAYMENT_REFUNDED = "confirm-payment-refunded";
        public static final String SHIPMENT_CANCELLED = "confirm-shipment-cancelled";
        /** Payment-service's and shipping-service's names of the acts for a second charge or parcel (surplus_*). */
        public static final String SURPLUS_REFUNDED = "confirm-surplus-refunded";
        public static final String SURPLUS_CANCELLED = "confirm-surplus-cancelled";
    }

    // --- inventory_db

    /** {@code status}: RESERVED, FAILED, RELEASED, CONSUMED; {@code items} empty unless stock was ever reserved. */
    public record Reservation(UUID orderId, UUID reservationId, String status, String failureReason, List<Line> items) {

        public Reservation {
            items = List.copyOf(items);
        }

        public Reservation withStatus(String newStatus) {
            return new Reservation(orderId, reservationId, newStatus, failureReason, items);
        }

        public Reservation withItems(List<Line> newItems) {
            return new Reservation(orderId, reservationId, status, failureReason, newItems);
        }
    }

    /** A row of order_sighting: inventory applied an OrderCreated of the order. */
    public record Sighting(UUID orderId, UUID eventId) {
    }

    /**
     * The counts of one SKU and what the reservations of the whole database hold of it.
     *
     * @param stocked                units ever made available (PUT /stock); null if the column does not exist yet
     * @param heldByReserved         the sum of the SKU's items over all RESERVED reservations
     * @param heldByConsumed         the sum of the SKU's items over all CONSUMED reservations
     * @param row                    whether the SKU has a stock row; without one, reservations that hold units of it
     *                               reserved or shipped units that were never counted
     */
    public record Stock(String sku, Long stocked, long available, long reserved, long shipped, long heldByReserved,
                        long heldByConsumed, boolean row) {

        public Stock(String sku, Long stocked, long available, long reserved, long shipped, long heldByReserved,
                     long heldByConsumed) {
            this(sku, stocked, available, reserved, shipped, heldByReserved, heldByConsumed, true);
        }

        /** A SKU that reservations hold units of but that has no stock row. */
        public static Stock withoutRow(String sku, long heldByReserved, long heldByConsumed) {
            return new Stock(sku, null, 0, 0, 0, heldByReserved, heldByConsumed, false);
        }
    }

    // --- payment_db, shipping_db

    /**
     * {@code status}: PENDING, CHARGING, SUCCEEDED, DECLINED, REFUNDING, REFUNDED, CANCELLED. {@code held}: CHARGING
     * with no provider call owed, until an operator or the provider's news moves it (payment's {@code Payment.isHeld}).
     *
     * @param providerRefundId  the provider's id of the refund that ended the payment: the one it answered with, or the
     *                          one an operator named confirming it by hand (null for a refund outside the provider)
     * @param refundConfirmedBy the operator who confirmed the refund made outside the provider's API; null if none did
     *                          or payment_db predates the column
     */
    public record Payment(UUID id, UUID orderId, String status, BigDecimal amount, boolean refundAnswered,
                          boolean held, String providerRefundId, String refundConfirmedBy) {

        public Payment(UUID id, UUID orderId, String status, BigDecimal amount, boolean refundAnswered, boolean held) {
            this(id, orderId, status, amount, refundAnswered, held, null, null);
        }

        public Payment withStatus(String newStatus) {
            return new Payment(id, orderId, newStatus, amount, refundAnswered, held, providerRefundId,
                    refundConfirmedBy);
        }

        public Payment confirmedByHand(String operator, String refundId) {
            return new Payment(id, orderId, status, amount, refundAnswered, held, refundId, operator);
        }
    }

    /** {@code status}: PENDING, REQUESTED, CREATED, REJECTED, ON_HOLD, CANCELLING, CANCELLED. */
    public record Shipment(UUID id, UUID orderId, String status, String carrierShipmentId, boolean creationUncertain) {

        public Shipment withStatus(String newStatus) {
            return new Shipment(id, orderId, newStatus, carrierShipmentId, creationUncertain);
        }
    }

    /**
     * A second charge or parcel a provider made under one of our idempotency keys (it had forgotten the key), which
     * the service found in the provider's report and undoes on its own.
     *
     * @param kind        {@link #CHARGE} or {@link #SHIPMENT}
     * @param providerRef the provider's id of the second effect: a charge id, a carrier shipment id
     * @param undone      the service recorded the provider's acceptance of the refund or cancellation, or an
     *                    operator's word that it was settled outside the provider's API
     * @param undoRef     the provider's id of the refund (for a charge), as the service recorded it or the operator
     *                    named it; null where none
     * @param undoneBy    the operator who confirmed it settled by hand; null where the provider's answer undid it
     * @param confirmation what that operator gave as the settlement
     */
    public record Surplus(UUID orderId, String kind, String providerRef, boolean undone, String undoRef,
                          String undoneBy, String confirmation) {

        /** One the service undid through the provider's API, or has still to undo. */
        public Surplus(UUID orderId, String kind, String providerRef, boolean undone) {
            this(orderId, kind, providerRef, undone, null, null, null);
        }

        public static Surplus confirmedByHand(UUID orderId, String kind, String providerRef, String undoRef,
                                              String operator, String confirmation) {
            return new Surplus(orderId, kind, providerRef, true, undoRef, operator, confirmation);
        }

        public boolean onOperatorsWord() {
            return undoneBy != null;
        }

        public static final String CHARGE = "charge";
        public static final String SHIPMENT = "shipment";
    }

    // --- the providers' ledgers (GET /sandbox/ledger)

    /** A charge at the payment provider; {@code status} "succeeded" or "declined"; keyed by the payment id. */
    public record ProviderCharge(String chargeId, String idempotencyKey, String reference, BigDecimal amount,
                                 String currency, String status) {

        public boolean succeeded() {
            return "succeeded".equals(status);
        }
    }

    /** A refund the payment provider made (failed refund calls leave none). */
    public record ProviderRefund(String refundId, String idempotencyKey, String chargeId, String reference,
                                 BigDecimal amount, String currency) {
    }

    /** A shipment at the carrier; {@code status} "created" (live) or "cancelled"; keyed by the shipment id. */
    public record CarrierShipment(String shipmentId, String idempotencyKey, String reference, String status) {

        public boolean live() {
            return "created".equals(status);
        }
    }

    /**
     * An entry of a ledger whose reference names no order in scope: another order's, or no order's at all. The
     * latter is money taken or a parcel made for nothing, unless it was made before the window being audited.
     *
     * @param entry       which one, e.g. "payment provider charge ch_1", "carrier shipment shp_1"
     * @param reference   the order id it names, as the provider keeps it (any text, or null)
     * @param chargeId    for a refund, the charge it refunds; otherwise null
     * @param what        its amount and status, for the report
     * @param orderExists order_db has an order with exactly that id (outside the scope)
     */
    public record UnmatchedEntry(String entry, String reference, String chargeId, String what, boolean orderExists) {

        public UnmatchedEntry withOrderExists(boolean exists) {
            return new UnmatchedEntry(entry, reference, chargeId, what, exists);
        }
    }

    // --- the topics

    /** One record on an event topic. A record that could not be decoded carries its headers' id and type, if any. */
    public record TopicEvent(String topic, int partition, long offset, UUID orderId, UUID eventId, String type) {
    }

    /**
     * A message a consumer parked on its service's dead-letter topic ({@code topic} of {@code message}) instead of
     * applying it.
     *
     * @param reason the dead-letter-reason header, null without one
     */
    public record Parked(TopicEvent message, String reason) {
    }

    /**
     * @param recordsRead records read per topic, in scope or not
     * @param undecodable records of orders in scope with neither a decodable envelope nor an eventId header
     */
    public record TopicStats(Map<String, Long> recordsRead, long undecodable) {

        public TopicStats {
            recordsRead = Collections.unmodifiableMap(new LinkedHashMap<>(recordsRead));
        }

        public static TopicStats none() {
            return new TopicStats(Map.of(), 0);
        }
    }
}
