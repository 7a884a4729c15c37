package dev.ordersaga.inventory.messaging;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.EventHeaders;
import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderConfirmed;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.StockItem;
import dev.ordersaga.events.StockReleased;
import dev.ordersaga.events.StockReservationFailed;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.events.Topics;
import dev.ordersaga.inventory.InventoryRows;
import dev.ordersaga.inventory.application.InventoryService;
import dev.ordersaga.testing.KafkaTestProducer;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static dev.ordersaga.inventory.InventoryRows.newSku;
import static dev.ordersaga.inventory.InventoryRows.orderOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** OrderCreated, OrderCancelling and OrderConfirmed from the topic, to the stock rows and the events inventory answers with. */
@QuarkusTest
@WithTestResource(StackTestResource.class)
class OrderEventsReservationTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private static KafkaTestProducer producer;
    private static KafkaTopicProbe inventoryEvents;

    @Inject
    DataSource dataSource;

    @Inject
    InventoryService inventory;

    @Inject
    OutboxWriter outbox;

    private InventoryRows rows;

    @BeforeAll
    static void connect() {
        producer = new KafkaTestProducer();
        inventoryEvents = KafkaTopicProbe.fromNow(Topics.INVENTORY_EVENTS);
    }

    @AfterAll
    static void disconnect() {
        producer.close();
        inventoryEvents.close();
    }

    @BeforeEach
    void readRows() {
        rows = new InventoryRows(dataSource);
    }

    @Test
    void orderWithEnoughStockIsReserved() throws Exception {
        String mug = stocked("mug", 5);
        String tea = stocked("tea", 3);
        UUID orderId = UUID.randomUUID();
        EventEnvelope<OrderCreated> created = send(orderId, orderOf(mug, 2, tea, 3));

        EventEnvelope<SagaEvent> answer = awaitEvent(orderId, "StockReserved");

        assertThat(answer.causationId()).isEqualTo(created.eventId());
        assertThat(answer.correlationId()).isEqualTo(created.correlationId());
        StockReserved reserved = (StockReserved) answer.payload();
        assertThat(reserved.items()).containsExactlyInAnyOrder(new StockItem(mug, 2), new StockItem(tea, 3));
        assertThat(reserved.reservationId()).isEqualTo(rows.reservationId(orderId));
        assertThat(rows.reservationStatus(orderId)).isEqualTo("RESERVED");
        assertThat(rows.stock(mug)).isEqualTo("3/2/0");
        assertThat(rows.stock(tea)).isEqualTo("0/3/0");
        assertThat(rows.count("SELECT count(*) FROM order_sighting WHERE order_id = ?", orderId)).isEqualTo(1);
    }

    @Test
    void orderShortOfOneLineReservesNothing() throws Exception {
        String mug = stocked("mug", 5);
        String tea = stocked("tea", 1);
        String bystander = stocked("bystander", 7);
        UUID orderId = UUID.randomUUID();
        EventEnvelope<OrderCreated> created = send(orderId, orderOf(mug, 2, tea, 3));

        EventEnvelope<SagaEvent> answer = awaitEvent(orderId, "StockReservationFailed");

        assertThat(answer.causationId()).isEqualTo(created.eventId());
        assertThat(answer.correlationId()).isEqualTo(created.correlationId());
        StockReservationFailed failed = (StockReservationFailed) answer.payload();
        assertThat(failed.reason()).isEqualTo("insufficient stock");
        assertThat(failed.unavailableSkus()).containsExactly(tea);
        assertThat(rows.reservationStatus(orderId)).isEqualTo("FAILED");
        assertThat(rows.reservationItems(orderId)).isEmpty();
        assertThat(rows.stock(mug)).as("all or nothing: the line that was available is not held").isEqualTo("5/0/0");
        assertThat(rows.stock(tea)).isEqualTo("1/0/0");
        assertThat(rows.stock(bystander)).isEqualTo("7/0/0");
    }

    @Test
    void cancelAfterReservationReleasesTheStock() throws Exception {
        String mug = stocked("mug", 4);
        UUID orderId = UUID.randomUUID();
        send(orderId, orderOf(mug, 3));
        StockReserved reserved = (StockReserved) awaitEvent(orderId, "StockReserved").payload();
        assertThat(rows.stock(mug)).isEqualTo("1/3/0");

        EventEnvelope<OrderCancelling> cancelling = send(orderId, new OrderCancelling("payment declined", "saga"));

        EventEnvelope<SagaEvent> answer = awaitEvent(orderId, "StockReleased");
        assertThat(answer.causationId()).isEqualTo(cancelling.eventId());
        assertThat(answer.correlationId()).isEqualTo(cancelling.correlationId());
        StockReleased released = (StockReleased) answer.payload();
        assertThat(released.reservationId()).isEqualTo(reserved.reservationId());
        assertThat(released.items()).containsExactly(new StockItem(mug, 3));
        assertThat(rows.stock(mug)).isEqualTo("4/0/0");
        assertThat(rows.reservationStatus(orderId)).isEqualTo("RELEASED");
    }

    /**
     * An operator re-sends the cancel as a new event, because the order never heard the first answer: the answer is
     * given again, as a new event caused by the new cancel, and the stock is not released twice.
     */
    @Test
    void cancellingAgainIsAnsweredAgainWithTheSameRelease() throws Exception {
        String mug = stocked("mug", 4);
        UUID orderId = UUID.randomUUID();
        send(orderId, orderOf(mug, 3));
        awaitEvent(orderId, "StockReserved");
        EventEnvelope<OrderCancelling> cancelling = send(orderId, new OrderCancelling("payment declined", "saga"));
        EventEnvelope<SagaEvent> first = awaitAnswerTo(cancelling, "StockReleased");
        String stockAfterFirst = rows.stock(mug);
        assertThat(stockAfterFirst).isEqualTo("4/0/0");

        EventEnvelope<SagaEvent> second;
        EventEnvelope<OrderCancelling> again;
        try (LogCapture log = LogCapture.of(InventoryService.class)) {
            again = send(orderId, new OrderCancelling("payment declined", "operator"));
            second = awaitAnswerTo(again, "StockReleased");
            assertThat(log.containing("Order " + orderId + " cancelling again")).singleElement().satisfies(line -> {
                assertThat(line.level()).isEqualTo(org.jboss.logmanager.Level.INFO);
                assertThat(line.message()).contains("answered again");
            });
        }

        assertThat(second.eventId()).isNotEqualTo(first.eventId());
        assertThat(second.correlationId()).isEqualTo(again.correlationId());
        assertThat(second.payload()).as("the answer the release gave").isEqualTo(first.payload());
        assertThat(((StockReleased) second.payload()).items()).containsExactly(new StockItem(mug, 3));
        assertThat(rows.stock(mug)).as("released once").isEqualTo(stockAfterFirst);
        assertThat(rows.reservationStatus(orderId)).isEqualTo("RELEASED");
        assertThat(rows.reservationItems(orderId)).isEqualTo(mug + "=3");
        assertThat(typesBeforeMarker(orderId)).containsExactly("StockReserved", "StockReleased", "StockReleased");
    }

    @Test
    void cancellingAgainAfterAFailedReservationIsAnsweredAgainWithNothingReleased() throws Exception {
        String mug = stocked("mug", 1);
        UUID orderId = UUID.randomUUID();
        send(orderId, orderOf(mug, 2));
        awaitEvent(orderId, "StockReservationFailed");
        EventEnvelope<OrderCancelling> cancelling = send(orderId, new OrderCancelling("insufficient stock", "saga"));
        EventEnvelope<SagaEvent> first = awaitAnswerTo(cancelling, "StockReleased");

        EventEnvelope<OrderCancelling> again = send(orderId, new OrderCancelling("insufficient stock", "operator"));

        EventEnvelope<SagaEvent> second = awaitAnswerTo(again, "StockReleased");
        assertThat(second.payload()).isEqualTo(first.payload());
        StockReleased released = (StockReleased) second.payload();
        assertThat(released.items()).isEmpty();
        assertThat(released.reservationId()).isEqualTo(rows.reservationId(orderId));
        assertThat(rows.stock(mug)).isEqualTo("1/0/0");
        assertThat(rows.reservationStatus(orderId)).isEqualTo("RELEASED");
    }

    @Test
    void cancellingAgainAnOrderNeverSeenIsAnsweredAgainWithNothingReleased() throws Exception {
        UUID orderId = UUID.randomUUID();
        EventEnvelope<OrderCancelling> cancelling = send(orderId, new OrderCancelling("customer", "customer"));
        EventEnvelope<SagaEvent> first = awaitAnswerTo(cancelling, "StockReleased");

        EventEnvelope<OrderCancelling> again = send(orderId, new OrderCancelling("customer", "operator"));

        EventEnvelope<SagaEvent> second = awaitAnswerTo(again, "StockReleased");
        assertThat(second.payload()).isEqualTo(first.payload());
        assertThat(((StockReleased) second.payload()).items()).isEmpty();
        assertThat(rows.count("SELECT count(*) FROM reservation WHERE order_id = ?", orderId)).isEqualTo(1);
    }

    @Test
    void cancelAfterFailedReservationReleasesNothing() throws Exception {
        String unstocked = newSku("none");
        UUID orderId = UUID.randomUUID();
        send(orderId, orderOf(unstocked, 1));
        awaitEvent(orderId, "StockReservationFailed");

        EventEnvelope<OrderCancelling> cancelling = send(orderId, new OrderCancelling("insufficient stock", "saga"));

        EventEnvelope<SagaEvent> answer = awaitEvent(orderId, "StockReleased");
        assertThat(answer.causationId()).isEqualTo(cancelling.eventId());
        StockReleased released = (StockReleased) answer.payload();
        assertThat(released.items()).isEmpty();
        assertThat(released.reservationId()).isEqualTo(rows.reservationId(orderId));
        assertThat(rows.reservationStatus(orderId)).isEqualTo("RELEASED");
        assertThat(rows.stock(unstocked)).as("an unknown SKU is not created").isNull();
    }

    @Test
    void cancelOfAnOrderNeverSeenIsAnsweredWithNothingReleased() throws Exception {
        UUID orderId = UUID.randomUUID();
        send(orderId, new OrderCancelling("customer", "customer"));

        StockReleased released = (StockReleased) awaitEvent(orderId, "StockReleased").payload();

        assertThat(released.items()).isEmpty();
        assertThat(released.reservationId()).isEqualTo(rows.reservationId(orderId));
        assertThat(rows.reservationStatus(orderId)).isEqualTo("RELEASED");
    }

    @Test
    void orderCreatedAfterItsCancellationReservesNothing() throws Exception {
        String mug = stocked("mug", 10);
        UUID orderId = UUID.randomUUID();
        send(orderId, new OrderCancelling("customer", "customer"));
        awaitEvent(orderId, "StockReleased");

        EventEnvelope<OrderCreated> created = send(orderId, orderOf(mug, 2));

        await().atMost(TIMEOUT).until(() -> rows.inboxHas(created.eventId()));
        assertThat(rows.reservationStatus(orderId)).as("the cancellation's answer stands").isEqualTo("RELEASED");
        assertThat(rows.stock(mug)).as("nothing reserved").isEqualTo("10/0/0");
        assertThat(rows.count("SELECT count(*) FROM order_sighting WHERE order_id = ?", orderId)).isEqualTo(1);
    }

    @Test
    void confirmationShipsTheReservedStock() throws Exception {
        String mug = stocked("mug", 10);
        UUID orderId = UUID.randomUUID();
        send(orderId, orderOf(mug, 2));
        awaitEvent(orderId, "StockReserved");

        send(orderId, new OrderConfirmed(new BigDecimal("2.00"), "EUR"));

        await().atMost(TIMEOUT).until(() -> rows.reservationStatus(orderId), "CONSUMED"::equals);
        assertThat(rows.stock(mug)).isEqualTo("8/0/2");
    }

    /** Facts the reservation's machine has no place for are parked, not acknowledged, and change nothing. */
    @Test
    void confirmationOfAReleasedOrFailedReservationAndCancellationOfAConsumedOneAreParked() throws Exception {
        String mug = stocked("mug", 10);
        UUID failed = UUID.randomUUID();
        send(failed, orderOf(mug, 11));
        awaitEvent(failed, "StockReservationFailed");
        UUID released = UUID.randomUUID();
        send(released, orderOf(mug, 2));
        send(released, new OrderCancelling("customer", "customer"));
        awaitEvent(released, "StockReleased");
        UUID consumed = UUID.randomUUID();
        send(consumed, orderOf(mug, 3));
        awaitEvent(consumed, "StockReserved");
        send(consumed, new OrderConfirmed(new BigDecimal("3.00"), "EUR"));
        await().atMost(TIMEOUT).until(() -> rows.reservationStatus(consumed), "CONSUMED"::equals);

        try (KafkaTopicProbe dlq = KafkaTopicProbe.fromNow(Topics.INVENTORY_DLQ)) {
            EventEnvelope<OrderConfirmed> confirmed = send(released, new OrderConfirmed(new BigDecimal("2.00"), "EUR"));
            EventEnvelope<OrderConfirmed> confirmedFailed = send(failed, new OrderConfirmed(new BigDecimal("11.00"), "EUR"));
            EventEnvelope<OrderCancelling> cancelling = send(consumed, new OrderCancelling("customer", "customer"));

            assertThat(dlq.awaitKey(released.toString(), TIMEOUT).header("dead-letter-reason"))
                    .contains("reservation in RELEASED cannot consume");
            assertThat(dlq.awaitKey(consumed.toString(), TIMEOUT).header("dead-letter-reason"))
                    .contains("reservation in CONSUMED cannot release");
            assertThat(dlq.awaitKey(failed.toString(), TIMEOUT).header("dead-letter-reason"))
                    .contains("reservation in FAILED cannot consume");
            assertThat(rows.inboxHas(confirmed.eventId())).isFalse();
            assertThat(rows.inboxHas(cancelling.eventId())).isFalse();
            assertThat(rows.inboxHas(confirmedFailed.eventId())).isFalse();
        }
        assertThat(rows.reservationStatus(released)).isEqualTo("RELEASED");
        assertThat(rows.reservationStatus(consumed)).isEqualTo("CONSUMED");
        assertThat(rows.reservationStatus(failed)).isEqualTo("FAILED");
        assertThat(rows.stock(mug)).as("nothing moved").isEqualTo("7/0/3");
        assertThat(events(consumed, "StockReleased")).isZero();
    }

    @Test
    void confirmationOfAnOrderWithoutReservationIsSkipped() throws Exception {
        UUID orderId = UUID.randomUUID();
        EventEnvelope<OrderConfirmed> confirmed = send(orderId, new OrderConfirmed(new BigDecimal("2.00"), "EUR"));

        await().atMost(TIMEOUT).until(() -> rows.inboxHas(confirmed.eventId()));
        assertThat(rows.reservationStatus(orderId)).isNull();
    }

    @Test
    void duplicateOrderCreatedMakesOneReservation() throws Exception {
        String mug = stocked("mug", 10);
        UUID orderId = UUID.randomUUID();
        EventEnvelope<OrderCreated> created = EventEnvelope.of(orderId, "dup-" + orderId, null, orderOf(mug, 2));
        try (LogCapture log = LogCapture.of(IncomingEvents.class)) {
            producer.send(Topics.ORDER_EVENTS, orderId.toString(), EventCodec.encode(created));
            producer.send(Topics.ORDER_EVENTS, orderId.toString(), EventCodec.encode(created));
            await().atMost(TIMEOUT).until(() -> !log.containing("Duplicate OrderCreated " + created.eventId()).isEmpty());
        }
        assertThat(rows.count("SELECT count(*) FROM reservation WHERE order_id = ?", orderId)).isEqualTo(1);
        assertThat(rows.reservationItems(orderId)).isEqualTo(mug + "=2");
        assertThat(rows.stock(mug)).as("reserved once").isEqualTo("8/2/0");
        assertThat(rows.count("SELECT count(*) FROM order_sighting WHERE order_id = ?", orderId)).isEqualTo(1);
        assertThat(awaitEvent(orderId, "StockReserved").causationId()).isEqualTo(created.eventId());
    }

    private String stocked(String name, int available) {
        String sku = newSku(name);
        inventory.setAvailable(sku, available);
        return sku;
    }

    private <E extends SagaEvent> EventEnvelope<E> send(UUID orderId, E event) {
        EventEnvelope<E> envelope = EventEnvelope.of(orderId, "test-" + orderId, null, event);
        producer.send(Topics.ORDER_EVENTS, orderId.toString(), EventCodec.encode(envelope));
        return envelope;
    }

    private static EventEnvelope<SagaEvent> awaitEvent(UUID orderId, String type) {
        KafkaTopicProbe.Received received = inventoryEvents.await(
                r -> orderId.toString().equals(r.key()) && type.equals(r.header(EventHeaders.EVENT_TYPE)), TIMEOUT);
        EventEnvelope<SagaEvent> envelope = EventCodec.decode(received.value());
        assertThat(envelope.orderId()).isEqualTo(orderId);
        assertThat(envelope.type()).isEqualTo(type);
        return envelope;
    }

    /** The event of the given type that inventory published for the order in answer to {@code cause}. */
    private static EventEnvelope<SagaEvent> awaitAnswerTo(EventEnvelope<?> cause, String type) {
        KafkaTopicProbe.Received received = inventoryEvents.await(r -> cause.orderId().toString().equals(r.key())
                && type.equals(r.header(EventHeaders.EVENT_TYPE))
                && cause.eventId().equals(EventCodec.decode(r.value()).causationId()), TIMEOUT);
        EventEnvelope<SagaEvent> envelope = EventCodec.decode(received.value());
        assertThat(envelope.type()).isEqualTo(type);
        return envelope;
    }

    /**
     * What inventory published for the order before a marker written now through its outbox, in a transaction of its
     * own: the relay publishes in commit order, so what a transaction committed before it published comes first. The
     * marker is found by its id, not its type.
     */
    private List<String> typesBeforeMarker(UUID orderId) {
        UUID marker = QuarkusTransaction.requiringNew().call(() -> {
            try (Correlation.Scope ignored = Correlation.open("marker-" + orderId, null)) {
                return outbox.publish(orderId, new StockReservationFailed("marker", List.of())).eventId();
            }
        });
        await().atMost(TIMEOUT).until(() -> eventsOf(orderId).stream().anyMatch(e -> e.eventId().equals(marker)));
        return eventsOf(orderId).stream().takeWhile(e -> !e.eventId().equals(marker)).map(EventEnvelope::type).toList();
    }

    private static List<EventEnvelope<SagaEvent>> eventsOf(UUID orderId) {
        return inventoryEvents.matching(r -> orderId.toString().equals(r.key())).stream()
                .map(r -> EventCodec.decode(r.value())).toList();
    }

    private static long events(UUID orderId, String type) {
        return inventoryEvents.matching(
                r -> orderId.toString().equals(r.key()) && type.equals(r.header(EventHeaders.EVENT_TYPE))).size();
    }
}
