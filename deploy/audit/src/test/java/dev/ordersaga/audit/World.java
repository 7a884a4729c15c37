package dev.ordersaga.audit;

import dev.ordersaga.audit.Snapshot.CarrierShipment;
import dev.ordersaga.audit.Snapshot.Facts;
import dev.ordersaga.audit.Snapshot.Line;
import dev.ordersaga.audit.Snapshot.Order;
import dev.ordersaga.audit.Snapshot.Payment;
import dev.ordersaga.audit.Snapshot.ProviderCharge;
import dev.ordersaga.audit.Snapshot.ProviderRefund;
import dev.ordersaga.audit.Snapshot.Reservation;
import dev.ordersaga.audit.Snapshot.Shipment;
import dev.ordersaga.audit.Snapshot.Sighting;
import dev.ordersaga.audit.Snapshot.Stock;
import dev.ordersaga.audit.Snapshot.TimelineEntry;
import dev.ordersaga.audit.Snapshot.TopicEvent;
import dev.ordersaga.audit.Snapshot.TopicStats;
import dev.ordersaga.audit.Snapshot.UnmatchedEntry;
import dev.ordersaga.events.Topics;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * A world in which every saga went right, built the way the services would have left it: rows in the four
 * databases, entries in the ledgers, events on the topics and in the order's timeline. A test breaks exactly one
 * thing in it and expects exactly that violation.
 */
final class World {

    static final String PRICE = "10.50";
    static final int SPARE = 7;
    static final Instant PLACED_AT = Instant.parse("2026-01-31T10:15:00Z");

    /** The audit's --since (the world's orders are placed at that instant); null: the scope is a list (--orders). */
    Instant since = PLACED_AT;

    final List<Order> orders = new ArrayList<>();
    final List<UUID> ordersNotFound = new ArrayList<>();
    final List<TimelineEntry> timeline = new ArrayList<>();
    final List<Snapshot.HandConfirmed> handConfirmed = new ArrayList<>();
    final List<Reservation> reservations = new ArrayList<>();
    final List<Sighting> sightings = new ArrayList<>();
    final List<Payment> payments = new ArrayList<>();
    final List<Shipment> shipments = new ArrayList<>();
    final List<Snapshot.Surplus> surpluses = new ArrayList<>();
    final List<ProviderCharge> charges = new ArrayList<>();
    final List<ProviderRefund> refunds = new ArrayList<>();
    final List<CarrierShipment> carrierShipments = new ArrayList<>();
    /** Ledger entries whose reference names no order of the world: none in a clean one. */
    final List<UnmatchedEntry> unmatched = new ArrayList<>();
    final List<TopicEvent> events = new ArrayList<>();
    final List<Snapshot.Parked> parked = new ArrayList<>();
    /** Stock rows that replace the clean ones (derived from the reservations) for their SKU. */
    final Map<String, Stock> stockOverrides = new LinkedHashMap<>();

    private long offset;

    // --- sagas

    /** Rule 1: reserved, charged, shipped, confirmed. */
    UUID confirmed() {
        String sku = newSku();
        UUID order = placed(sku, 2);
        BigDecimal total = total(2);
        UUID payment = UUID.randomUUID();
        UUID shipment = UUID.randomUUID();
        publish(order, Topics.INVENTORY_EVENTS, "StockReserved");
        publish(order, Topics.PAYMENT_EVENTS, "PaymentSucceeded");
        publish(order, Topics.SHIPPING_EVENTS, "ShipmentCreated");
        publish(order, Topics.ORDER_EVENTS, "OrderConfirmed");
        finish(order, "CONFIRMED", new Facts(true, true, true, false, false, false));
        reservations.add(new Reservation(order, UUID.randomUUID(), "CONSUMED", null, List.of(new Line(sku, 2))));
        payments.add(new Payment(payment, order, "SUCCEEDED", total, false, false));
        shipments.add(new Shipment(shipment, order, "CREATED", "shp_" + order, false));
        charges.add(new ProviderCharge("ch_" + order, payment.toString(), order.toString(), total, "EUR", "succeeded"));
        carrierShipments.add(new CarrierShipment("shp_" + order, shipment.toString(), order.toString(), "created"));
        return order;
    }

    /** Rule 3: payment declined, stock released, cancelled. */
    UUID declined() {
        String sku = newSku();
        UUID order = placed(sku, 1);
        UUID payment = UUID.randomUUID();
        publish(order, Topics.INVENTORY_EVENTS, "StockReserved");
        publish(order, Topics.PAYMENT_EVENTS, "PaymentFailed");
        compensated(order);
        finish(order, "CANCELLED", new Facts(true, false, false, true, true, true));
        reservations.add(new Reservation(order, UUID.randomUUID(), "RELEASED", null, List.of(new Line(sku, 1))));
        payments.add(new Payment(payment, order, "DECLINED", total(1), true, false));
        shipments.add(new Shipment(UUID.randomUUID(), order, "CANCELLED", null, false));
        charges.add(new ProviderCharge("ch_" + order, payment.toString(), order.toString(), total(1), "EUR", "declined"));
        return order;
    }

    /** Rule 2: out of stock, nothing reserved, nothing charged, cancelled. */
    UUID outOfStock() {
        String sku = newSku();
        UUID order = placed(sku, 1);
        publish(order, Topics.INVENTORY_EVENTS, "StockReservationFailed");
        compensated(order);
        finish(order, "CANCELLED", new Facts(false, false, false, true, true, true));
        reservations.add(new Reservation(order, UUID.randomUUID(), "RELEASED", "insufficient stock", List.of()));
        payments.add(new Payment(UUID.randomUUID(), order, "CANCELLED", total(1), true, false));
        shipments.add(new Shipment(UUID.randomUUID(), order, "CANCELLED", null, false));
        return order;
    }

    /** Rule 8: charged, the carrier rejects, refunded, released, cancelled. */
    UUID undeliverable() {
        String sku = newSku();
        UUID order = placed(sku, 2);
        BigDecimal total = total(2);
        UUID payment = UUID.randomUUID();
        publish(order, Topics.INVENTORY_EVENTS, "StockReserved");
        publish(order, Topics.PAYMENT_EVENTS, "PaymentSucceeded");
        publish(order, Topics.SHIPPING_EVENTS, "ShipmentFailed");
        compensated(order);
        finish(order, "CANCELLED", new Facts(true, true, false, true, true, true));
        reservations.add(new Reservation(order, UUID.randomUUID(), "RELEASED", null, List.of(new Line(sku, 2))));
        payments.add(new Payment(payment, order, "REFUNDED", total, true, false));
        shipments.add(new Shipment(UUID.randomUUID(), order, "CANCELLED", null, false));
        charges.add(new ProviderCharge("ch_" + order, payment.toString(), order.toString(), total, "EUR", "succeeded"));
        refunds.add(new ProviderRefund("re_" + order, "refund-" + payment, "ch_" + order, order.toString(), total, "EUR"));
        return order;
    }

    /** Rule 10-like: cancelled while the shipment was being created; the shipment is cancelled at the carrier. */
    UUID cancelledAfterShipmentCreated() {
        String sku = newSku();
        UUID order = placed(sku, 1);
        BigDecimal total = total(1);
        UUID payment = UUID.randomUUID();
        UUID shipment = UUID.randomUUID();
        publish(order, Topics.INVENTORY_EVENTS, "StockReserved");
        publish(order, Topics.PAYMENT_EVENTS, "PaymentSucceeded");
        publish(order, Topics.ORDER_EVENTS, "OrderCancelling");
        publish(order, Topics.SHIPPING_EVENTS, "ShipmentCreated");
        publish(order, Topics.INVENTORY_EVENTS, "StockReleased");
        publish(order, Topics.PAYMENT_EVENTS, "PaymentRefunded");
        publish(order, Topics.SHIPPING_EVENTS, "ShipmentCancelled");
        publish(order, Topics.ORDER_EVENTS, "OrderCancelled");
        finish(order, "CANCELLED", new Facts(true, true, false, true, true, true));
        reservations.add(new Reservation(order, UUID.randomUUID(), "RELEASED", null, List.of(new Line(sku, 1))));
        payments.add(new Payment(payment, order, "REFUNDED", total, true, false));
        shipments.add(new Shipment(shipment, order, "CANCELLED", "shp_" + order, false));
        charges.add(new ProviderCharge("ch_" + order, payment.toString(), order.toString(), total, "EUR", "succeeded"));
        refunds.add(new ProviderRefund("re_" + order, "refund-" + payment, "ch_" + order, order.toString(), total, "EUR"));
        carrierShipments.add(new CarrierShipment("shp_" + order, shipment.toString(), order.toString(), "cancelled"));
        return order;
    }

    /** Rule 7: the carrier stayed down, the order waits for an operator (PAID, with a reason). */
    UUID waitingForOperator() {
        String sku = newSku();
        UUID order = placed(sku, 1);
        UUID payment = UUID.randomUUID();
        publish(order, Topics.INVENTORY_EVENTS, "StockReserved");
        publish(order, Topics.PAYMENT_EVENTS, "PaymentSucceeded");
        publish(order, Topics.SHIPPING_EVENTS, "ShipmentOnHold");
        finish(order, "PAID", new Facts(true, true, false, false, false, false));
        replaceOrder(order, o -> o.withWaitingReason("carrier unavailable after 4 attempts").withWaitingFor("SHIPPING"));
        reservations.add(new Reservation(order, UUID.randomUUID(), "RESERVED", null, List.of(new Line(sku, 1))));
        payments.add(new Payment(payment, order, "SUCCEEDED", total(1), false, false));
        shipments.add(new Shipment(UUID.randomUUID(), order, "ON_HOLD", null, false));
        charges.add(new ProviderCharge("ch_" + order, payment.toString(), order.toString(), total(1), "EUR", "succeeded"));
        return order;
    }

    /**
     * A charge the provider may have forgotten: stock reserved, the payment held (CHARGING, no call owed), the order
     * waits for an operator. No charge at the provider, and the shipment still waits for the payment.
     */
    UUID waitingForPayment() {
        String sku = newSku();
        UUID order = placed(sku, 1);
        publish(order, Topics.INVENTORY_EVENTS, "StockReserved");
        publish(order, Topics.PAYMENT_EVENTS, "PaymentOnHold");
        finish(order, "STOCK_RESERVED", new Facts(true, false, false, false, false, false));
        replaceOrder(order, o -> o.withWaitingReason("no charge at the provider under a key it may have forgotten")
                .withWaitingFor("PAYMENT"));
        reservations.add(new Reservation(order, UUID.randomUUID(), "RESERVED", null, List.of(new Line(sku, 1))));
        payments.add(new Payment(UUID.randomUUID(), order, "CHARGING", total(1), false, true));
        shipments.add(new Shipment(UUID.randomUUID(), order, "PENDING", null, false));
        return order;
    }

    /** One saga of each kind. */
    World everyKind() {
        confirmed();
        declined();
        outOfStock();
        undeliverable();
        cancelledAfterShipmentCreated();
        waitingForOperator();
        return this;
    }

    // --- building blocks

    private UUID placed(String sku, int quantity) {
        UUID order = UUID.randomUUID();
        orders.add(new Order(order, "PENDING", total(quantity), "EUR", null, null, PLACED_AT,
                List.of(new Line(sku, quantity)), Facts.none()));
        publish(order, Topics.ORDER_EVENTS, "OrderCreated");
        sightings.add(new Sighting(order, eventOf(order, "OrderCreated").eventId()));
        return order;
    }

    private void compensated(UUID order) {
        publish(order, Topics.ORDER_EVENTS, "OrderCancelling");
        publish(order, Topics.INVENTORY_EVENTS, "StockReleased");
        publish(order, Topics.PAYMENT_EVENTS, "PaymentRefunded");
        publish(order, Topics.SHIPPING_EVENTS, "ShipmentCancelled");
        publish(order, Topics.ORDER_EVENTS, "OrderCancelled");
    }

    private void finish(UUID order, String status, Facts facts) {
        replaceOrder(order, o -> o.withStatus(status).withFacts(facts));
    }

    /** An event on its topic and in the order's timeline, as the producer and order-service would have left it. */
    void publish(UUID order, String topic, String type) {
        UUID eventId = UUID.randomUUID();
        events.add(new TopicEvent(topic, 0, offset++, order, eventId, type));
        timeline.add(new TimelineEntry(order, eventId, type, producerOf(topic), null));
    }

    private static String producerOf(String topic) {
        return topic.substring(0, topic.indexOf('.'));
    }

    // --- breaking things

    Order order(UUID id) {
        return orders.stream().filter(o -> o.id().equals(id)).findFirst().orElseThrow();
    }

    void replaceOrder(UUID id, UnaryOperator<Order> change) {
        orders.replaceAll(o -> o.id().equals(id) ? change.apply(o) : o);
    }

    void replaceReservation(UUID orderId, UnaryOperator<Reservation> change) {
        reservations.replaceAll(r -> r.orderId().equals(orderId) ? change.apply(r) : r);
    }

    void replacePayment(UUID orderId, UnaryOperator<Payment> change) {
        payments.replaceAll(p -> p.orderId().equals(orderId) ? change.apply(p) : p);
    }

    void replaceShipment(UUID orderId, UnaryOperator<Shipment> change) {
        shipments.replaceAll(s -> s.orderId().equals(orderId) ? change.apply(s) : s);
    }

    TopicEvent eventOf(UUID order, String type) {
        return events.stream().filter(e -> e.orderId().equals(order) && type.equals(e.type())).findFirst().orElseThrow();
    }

    /** The event never reached its topic, and the order never heard of it. */
    void unpublish(UUID order, String type) {
        TopicEvent event = eventOf(order, type);
        events.remove(event);
        timeline.removeIf(t -> t.eventId().equals(event.eventId()));
    }

    String skuOf(UUID order) {
        return order(order).lines().get(0).sku();
    }

    /** The stock row a clean world has for the SKU: what the reservations hold, plus spare units available. */
    Stock cleanStock(String sku) {
        long held = 0;
        long consumed = 0;
        for (Reservation r : reservations) {
            for (Line l : r.items()) {
                if (l.sku().equals(sku) && r.status().equals("RESERVED")) {
                    held += l.quantity();
                } else if (l.sku().equals(sku) && r.status().equals("CONSUMED")) {
                    consumed += l.quantity();
                }
            }
        }
        return new Stock(sku, SPARE + held + consumed, SPARE, held, consumed, held, consumed);
    }

    Snapshot snapshot() {
        Map<String, Stock> stock = new TreeMap<>();
        orders.forEach(o -> o.lines().forEach(l -> stock.put(l.sku(), cleanStock(l.sku()))));
        stock.putAll(stockOverrides);
        Map<String, Long> read = new LinkedHashMap<>();
        Topics.EVENT_TOPICS.forEach(t -> read.put(t, events.stream().filter(e -> e.topic().equals(t)).count()));
        return new Snapshot("a test world", since, orders, ordersNotFound, timeline, handConfirmed, reservations,
                sightings, List.copyOf(stock.values()), payments, shipments, surpluses, charges, refunds,
                carrierShipments, unmatched, events, parked, new TopicStats(read, 0));
    }

    AuditResult audit() {
        return Checks.run(snapshot());
    }

    static BigDecimal total(int quantity) {
        return new BigDecimal(PRICE).multiply(BigDecimal.valueOf(quantity));
    }

    private static String newSku() {
        return "SKU-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
