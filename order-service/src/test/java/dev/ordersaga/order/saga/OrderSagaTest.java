package dev.ordersaga.order.saga;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.DeadLetters;
import dev.ordersaga.eventing.EventHeaders;
import dev.ordersaga.eventing.InboxPruner;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.Ids;
import dev.ordersaga.events.OrderCancelled;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.PaymentFailed;
import dev.ordersaga.events.PaymentOnHold;
import dev.ordersaga.events.PaymentRetryRequested;
import dev.ordersaga.events.PaymentRefunded;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.ShipmentCreated;
import dev.ordersaga.events.ShipmentOnHold;
import dev.ordersaga.events.ShipmentRetryRequested;
import dev.ordersaga.events.StockItem;
import dev.ordersaga.events.StockReleased;
import dev.ordersaga.events.StockReservationFailed;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.events.Topics;
import dev.ordersaga.order.domain.Address;
import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.OrderItem;
import dev.ordersaga.order.messaging.ParticipantEventsConsumer;
import dev.ordersaga.order.persistence.OrderRepository;
import dev.ordersaga.order.testing.OrderRows;
import dev.ordersaga.testing.Inboxes;
import dev.ordersaga.testing.KafkaTestProducer;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.Orders;
import dev.ordersaga.testing.StackTestResource;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.net.URL;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.DoubleStream;
import java.util.stream.IntStream;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

/**
 * order-service's side of the saga, with the participants played by the test: it publishes their facts on their
 * topics and watches what the order does.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
class OrderSagaTest {

    @Inject
    OrderRepository orders;

    @Inject
    TransactionalWrites writes;

    @Inject
    DataSource dataSource;

    @Inject
    OutboxWriter outbox;

    @Inject
    InboxPruner inboxPruner;

    @Inject
    ParticipantEventsConsumer consumer;

    @Inject
    MeterRegistry meters;


    private static KafkaTopicProbe orderEvents;
    private static KafkaTestProducer participants;

    @BeforeAll
    static void connect() {
        orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS, Topics.ORDER_DLQ);
        participants = new KafkaTestProducer();
    }

    @AfterAll
    static void disconnect() {
        orderEvents.close();
        participants.close();
    }

    @Test
    void happyPathConfirmsAndTheTimelineShowsTheFiveSteps() {
        Placed order = place();
        EventEnvelope<?> reserved = publish(order, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        awaitStatus(order, "STOCK_RESERVED");
        publish(order, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        awaitStatus(order, "PAID");
        EventEnvelope<?> shipped = publish(order, new ShipmentCreated("shp-1", "car_1"));
        awaitStatus(order, "CONFIRMED");

        EventEnvelope<SagaEvent> confirmed = awaitEvent(order, "OrderConfirmed");
        assertThat(confirmed.causationId()).isEqualTo(shipped.eventId());
        assertThat(confirmed.correlationId()).isEqualTo(order.correlationId());
        given().get("/orders/{id}/timeline", order.id()).then().statusCode(200)
                .body("type", equalTo(List.of("OrderCreated", "StockReserved", "PaymentSucceeded", "ShipmentCreated", "OrderConfirmed")))
                .body("producer", equalTo(List.of("order", "inventory", "payment", "shipping", "order")))
                .body("[1].eventId", equalTo(reserved.eventId().toString()))
                .body("[1].causationId", equalTo(order.createdEventId().toString()))
                .body("correlationId", everyItemIs(order.correlationId()));
    }

    @Test
    void factsArrivingOutOfOrderStillConfirm() {
        Placed order = place();
        publish(order, new ShipmentCreated("shp-1", "car_1"));
        publish(order, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        publish(order, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        awaitStatus(order, "CONFIRMED");
    }

    @Test
    void aFailedStepCompensatesAndCancelsWithTheReason() {
        Placed order = place();
        publish(order, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        publish(order, new PaymentFailed("pay-1", "card declined"));
        awaitStatus(order, "COMPENSATING");
        OrderCancelling cancelling = (OrderCancelling) awaitEvent(order, "OrderCancelling").payload();
        assertThat(cancelling.reason()).isEqualTo("payment failed: card declined");

        publish(order, new StockReleased("res-1", List.of(new StockItem("SKU-MUG", 2))));
        publish(order, new PaymentRefunded("pay-1", BigDecimal.ZERO, "EUR", null));
        publish(order, new ShipmentCancelled("shp-1"));
        awaitStatus(order, "CANCELLED");
        given().get("/orders/{id}", order.id()).then().body("cancelReason", equalTo("payment failed: card declined"));
        awaitEvent(order, "OrderCancelled");
        // each undoing is what the compensation waited for: none of them is late
        String undoings = "findAll { it.type in ['StockReleased', 'PaymentRefunded', 'ShipmentCancelled'] }";
        given().get("/orders/{id}/timeline", order.id()).then()
                .body(undoings, hasSize(3))
                .body(undoings + ".note", everyItem(nullValue()));
    }

    /** Undoings a provider's API kept refusing, ended on an operator's word: the order keeps whose, and the word. */
    @Test
    void undoingsConfirmedByHandAreLoggedWithWhoConfirmedThemAndNotedWithTheirWord() {
        Placed order = place();
        publish(order, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        publish(order, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        awaitStatus(order, "PAID");
        given().post("/orders/{id}/cancel", order.id()).then().statusCode(202);
        awaitStatus(order, "COMPENSATING");

        publish(order, new StockReleased("res-1", List.of(new StockItem("SKU-MUG", 2))));
        EventEnvelope<?> refundedByHand = publish(order, new PaymentRefunded("pay-1", new BigDecimal("21.00"), "EUR",
                null, "ivan", "returned by the card's chargeback"));
        EventEnvelope<?> cancelledByHand = publish(order,
                new ShipmentCancelled("shp-1", "heidi", "the carrier's desk, by phone"));
        awaitStatus(order, "CANCELLED");
        // the word for the customer's timeline, the name for the operators' log of the order's actions
        String timeline = given().get("/orders/{id}/timeline", order.id()).then()
                .body("find { it.eventId == '%s' }.note".formatted(cancelledByHand.eventId()),
                        equalTo("confirmed cancelled at the carrier by an operator: the carrier's desk, by phone"))
                .body("find { it.eventId == '%s' }.note".formatted(refundedByHand.eventId()),
                        equalTo("confirmed refunded outside the provider's API by an operator: returned by the "
                                + "card's chargeback"))
                .extract().asString();
        // names no id or time can hold by chance (ids are hex)
        assertThat(timeline).doesNotContain("heidi").doesNotContain("ivan");
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders/{id}/actions", order.id())
                .then().statusCode(200)
                .body("find { it.action == 'confirm-shipment-cancelled' }.operator", equalTo("heidi"))
                .body("find { it.action == 'confirm-shipment-cancelled' }.detail",
                        equalTo("the carrier's desk, by phone"))
                .body("find { it.action == 'confirm-payment-refunded' }.operator", equalTo("ivan"))
                .body("find { it.action == 'confirm-payment-refunded' }.detail",
                        equalTo("returned by the card's chargeback"));
    }

    @Test
    void paymentSucceededAfterTheOrderWasCancelledLeavesItCancelled() {
        Placed order = cancelled(place());
        EventEnvelope<?> late = publish(order, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_late"));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                given().get("/orders/{id}/timeline", order.id()).then().body("eventId", hasItem(late.eventId().toString())));
        given().get("/orders/{id}", order.id()).then().body("status", equalTo("CANCELLED"));
        given().get("/orders/{id}/timeline", order.id()).then()
                .body("find { it.eventId == '%s' }.note".formatted(late.eventId()), org.hamcrest.Matchers.startsWith("late"));
    }

    @Test
    void aChargeRefundedAtOnceLeavesTheOrderWaitingForItsPaymentsOutcome() {
        Placed order = place();
        publish(order, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        awaitStatus(order, "STOCK_RESERVED");
        // a charge that settled after its decline, whose PaymentFailed the order has not heard (parked, say)
        EventEnvelope<?> late = publish(order, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_late", true));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                given().get("/orders/{id}/timeline", order.id()).then().body("eventId", hasItem(late.eventId().toString())));
        given().get("/orders/{id}", order.id()).then().body("status", equalTo("STOCK_RESERVED"));

        publish(order, new PaymentFailed("pay-1", "card declined"));
        awaitStatus(order, "COMPENSATING");
    }

    @Test
    void customerCancelIsAcceptedUntilPaidAndRefusedAfter() {
        Placed pending = place();
        given().post("/orders/{id}/cancel", pending.id()).then().statusCode(202).body("status", equalTo("COMPENSATING"));
        OrderCancelling cancelling = (OrderCancelling) awaitEvent(pending, "OrderCancelling").payload();
        assertThat(cancelling.requestedBy()).isEqualTo("customer");
        // asked again, its first answer lost: the cancel holds, and nothing more is asked of the participants
        given().post("/orders/{id}/cancel", pending.id()).then().statusCode(202)
                .body("status", equalTo("COMPENSATING"));
        publish(pending, new StockReleased("res-1", List.of()));
        publish(pending, new PaymentRefunded("pay-1", BigDecimal.ZERO, "EUR", null));
        publish(pending, new ShipmentCancelled("shp-1"));
        awaitStatus(pending, "CANCELLED");
        given().post("/orders/{id}/cancel", pending.id()).then().statusCode(202).body("status", equalTo("CANCELLED"));
        assertThat(committedSoFar(pending.id().toString(), pending.correlationId()))
                .filteredOn(r -> "OrderCancelling".equals(r.header("eventType"))).hasSize(1);

        Placed paid = place();
        publish(paid, new StockReserved("res-1", List.of()));
        publish(paid, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        awaitStatus(paid, "PAID");
        given().post("/orders/{id}/cancel", paid.id()).then().statusCode(202).body("status", equalTo("COMPENSATING"));

        Placed confirmed = place();
        publish(confirmed, new StockReserved("res-1", List.of()));
        publish(confirmed, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        publish(confirmed, new ShipmentCreated("shp-1", "car_1"));
        awaitStatus(confirmed, "CONFIRMED");
        given().post("/orders/{id}/cancel", confirmed.id()).then().statusCode(409)
                .contentType("application/problem+json")
                .body("detail", equalTo("order in CONFIRMED cannot startCompensation"));
        given().post("/orders/{id}/cancel", UUID.randomUUID()).then().statusCode(404).contentType("application/problem+json");
    }

    @Test
    void sameIdempotencyKeyAndBodyGiveTheSameOrderAndAnotherBodyIsRefused() throws Exception {
        String key = "key-" + UUID.randomUUID();
        // one correlation id for every request: an order written by any of them is counted, whatever its id
        String correlationId = "idem-" + key;
        String first = given().contentType(ContentType.JSON).header("Idempotency-Key", key)
                .header("X-Correlation-Id", correlationId).body(Orders.requestJson())
                .post("/orders").then().statusCode(201).extract().path("orderId");
        String again = given().contentType(ContentType.JSON).header("Idempotency-Key", key)
                .header("X-Correlation-Id", correlationId).body(Orders.requestJson())
                .post("/orders").then().statusCode(201).extract().path("orderId");
        assertThat(again).isEqualTo(first);
        given().contentType(ContentType.JSON).header("Idempotency-Key", key).header("X-Correlation-Id", correlationId)
                .body(Orders.requestJson("SKU-MUG", 3, "10.50", "tok_ok"))
                .post("/orders").then().statusCode(422).contentType("application/problem+json");
        assertThat(OrderRows.withCorrelation(dataSource, correlationId)).as("one order written").isEqualTo(1);
        assertThat(committedSoFar(first, correlationId)).as("one OrderCreated").hasSize(1);
    }

    @Test
    void requestsWithTheSameKeyAtTheSameMomentAllGetTheOneOrderTheyPlaced() throws Exception {
        String key = "key-" + UUID.randomUUID();
        String correlationId = "idem-" + key;
        int requests = 8;
        ExecutorService clients = Executors.newFixedThreadPool(requests);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<io.restassured.response.Response>> answers = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                answers.add(clients.submit(() -> {
                    start.await();
                    return given().contentType(ContentType.JSON).header("Idempotency-Key", key)
                            .header("X-Correlation-Id", correlationId).body(Orders.requestJson()).post("/orders");
                }));
            }
            start.countDown();
            Set<String> orderIds = new HashSet<>();
            for (Future<io.restassured.response.Response> answer : answers) {
                io.restassured.response.Response response = answer.get(60, TimeUnit.SECONDS);
                assertThat(response.statusCode()).as(response.body().asString()).isEqualTo(201);
                orderIds.add(response.path("orderId"));
            }
            assertThat(orderIds).hasSize(1);
            assertThat(OrderRows.withCorrelation(dataSource, correlationId)).as("one order written, not one a request").isEqualTo(1);
            String placed = orderIds.iterator().next();
            assertThat(committedSoFar(placed, correlationId)).as("one OrderCreated").hasSize(1);
        } finally {
            clients.shutdownNow();
        }
    }

    @Test
    void aReasonLongerThanTheOrderKeepsIsShortenedAndTheSagaGoesOn() {
        Placed order = place();
        List<String> skus = IntStream.range(0, 20).mapToObj(i -> "SKU-" + "X".repeat(56) + "-" + (100 + i)).toList();
        publish(order, new StockReservationFailed("insufficient stock", skus));
        awaitStatus(order, "COMPENSATING");
        String reason = given().get("/orders/{id}", order.id()).then().extract().path("cancelReason");
        assertThat(reason).hasSize(Order.MAX_REASON_LENGTH).startsWith("out of stock: " + skus.get(0)).endsWith("…");
        OrderCancelling cancelling = (OrderCancelling) awaitEvent(order, "OrderCancelling").payload();
        assertThat(cancelling.reason()).isEqualTo(reason);
    }

    @Test
    void aFactThatFailsTheSameWayOnEveryAttemptIsParkedAtOnceAndTheConsumerGoesOn() {
        Placed order = place();
        double retriesBefore = consumerRetries(Topics.INVENTORY_EVENTS);
        // decodes, but lacks what its handler needs: every attempt would fail the same way
        EventEnvelope<?> lacking = publish(order, new StockReservationFailed("insufficient stock", null));
        KafkaTopicProbe.Received parked = orderEvents.await(r -> Topics.ORDER_DLQ.equals(r.record().topic())
                && r.value().contains(lacking.eventId().toString()), Duration.ofSeconds(30));
        assertThat(parked.header(DeadLetters.CAUSE)).isEqualTo(NullPointerException.class.getName());
        assertThat(consumerRetries(Topics.INVENTORY_EVENTS)).as("retries").isEqualTo(retriesBefore);
        assertThat(Inboxes.claimed(dataSource, lacking.eventId())).isFalse();

        publish(order, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        awaitStatus(order, "STOCK_RESERVED");
    }

    @Test
    void anOperatorsReasonLongerThanTheOrderKeepsIsRefused() {
        Placed order = place();
        given().auth().preemptive().basic("operator", "operator").contentType(ContentType.JSON)
                .body(Map.of("reason", "x".repeat(Order.MAX_REASON_LENGTH + 1)))
                .post("/operator/orders/{id}/cancel", order.id())
                .then().statusCode(400).contentType("application/problem+json");
        given().get("/orders/{id}", order.id()).then().body("status", equalTo("PENDING"));
    }

    @Test
    void anOperatorsReasonWithAControlCharacterIsRefused() {
        Placed order = place();
        given().auth().preemptive().basic("operator", "operator").contentType(ContentType.JSON)
                .body("{\"reason\": \"customer\\u0000called\"}")
                .post("/operator/orders/{id}/cancel", order.id())
                .then().statusCode(400).contentType("application/problem+json")
                .body("violations.field", equalTo(List.of("reason")));
        given().get("/orders/{id}", order.id()).then().body("status", equalTo("PENDING"));
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders/{id}/actions", order.id())
                .then().body("$", hasSize(0));
    }

    @Test
    void anOrderOnHoldIsListedForOperatorsWhoCanRetryOrCancelIt() {
        Instant before = Instant.now();
        Placed order = place();
        publish(order, new StockReserved("res-1", List.of()));
        publish(order, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        publish(order, new ShipmentOnHold("shp-1", "carrier unavailable after 5 attempts", 5));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                given().get("/orders/{id}", order.id()).then().body("waitingReason", equalTo("carrier unavailable after 5 attempts")));

        given().get("/operator/orders?waiting=true").then().statusCode(401);
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders?waiting=true&since=" + before)
                .then().statusCode(200)
                .body("find { it.orderId == '%s' }.reason".formatted(order.id()), equalTo("carrier unavailable after 5 attempts"))
                .body("find { it.orderId == '%s' }.waitingFor".formatted(order.id()), equalTo("SHIPPING"));

        // two people (the test profile's accounts): the events and the order's log name each one's action
        given().auth().preemptive().basic("alice", "alice")
                .post("/operator/orders/{id}/retry-shipping", order.id()).then().statusCode(202);
        ShipmentRetryRequested retry = (ShipmentRetryRequested) awaitEvent(order, "ShipmentRetryRequested").payload();
        assertThat(retry.requestedBy()).isEqualTo("operator:alice");
        given().auth().preemptive().basic("bob", "bob")
                .post("/operator/orders/{id}/retry-shipping", order.id()).then().statusCode(409);
        given().auth().preemptive().basic("bob", "alice")
                .post("/operator/orders/{id}/cancel", order.id()).then().statusCode(401);

        given().auth().preemptive().basic("bob", "bob").contentType(ContentType.JSON).body("{\"reason\": \"customer called\"}")
                .post("/operator/orders/{id}/cancel", order.id()).then().statusCode(202);
        OrderCancelling cancelling = (OrderCancelling) awaitEvent(order, "OrderCancelling").payload();
        assertThat(cancelling.requestedBy()).isEqualTo("operator:bob");
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders/{id}/actions", order.id())
                .then().body("action", equalTo(List.of("retry-shipping", "cancel")))
                .body("operator", equalTo(List.of("alice", "bob")));
    }

    /**
     * An order that stays COMPENSATING because an answer never came (lost with a replication slot, or its participant
     * mended since): an operator asks the participants again, the order moving only on their answers.
     */
    @Test
    void anOperatorAsksTheParticipantsAgainForACompensatingOrdersMissingAnswers() {
        Placed order = place();
        publish(order, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        awaitStatus(order, "STOCK_RESERVED");
        given().auth().preemptive().basic("operator", "operator")
                .post("/operator/orders/{id}/resend-cancellation", order.id())
                .then().statusCode(409).contentType("application/problem+json");

        given().auth().preemptive().basic("operator", "operator").contentType(ContentType.JSON)
                .body("{\"reason\": \"customer called\"}")
                .post("/operator/orders/{id}/cancel", order.id()).then().statusCode(202);
        EventEnvelope<?> released = publish(order, new StockReleased("res-1", List.of(new StockItem("SKU-MUG", 2))));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> given().get("/orders/{id}/timeline", order.id())
                .then().body("eventId", hasItem(released.eventId().toString())));

        given().auth().preemptive().basic("operator", "operator")
                .post("/operator/orders/{id}/resend-cancellation", order.id())
                .then().statusCode(202).body("status", equalTo("COMPENSATING"));

        List<OrderCancelling> asked = await().atMost(Duration.ofSeconds(30)).until(() -> orderEvents.matching(r ->
                        order.id().toString().equals(r.key()) && "OrderCancelling".equals(r.header("eventType"))).stream()
                .map(r -> (OrderCancelling) EventCodec.decode(r.value()).payload()).toList(), list -> list.size() == 2);
        assertThat(asked.get(1)).isEqualTo(new OrderCancelling("customer called", "operator:operator"));
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders/{id}/actions", order.id())
                .then().body("action", equalTo(List.of("cancel", "resend-cancellation")))
                .body("detail[1]", equalTo("waiting for payment, shipping"));

        publish(order, new StockReleased("res-1", List.of(new StockItem("SKU-MUG", 2))));
        publish(order, new PaymentRefunded("pay-1", BigDecimal.ZERO, "EUR", null));
        publish(order, new ShipmentCancelled("shp-1"));
        awaitStatus(order, "CANCELLED");
        given().auth().preemptive().basic("operator", "operator")
                .post("/operator/orders/{id}/resend-cancellation", order.id())
                .then().statusCode(409).contentType("application/problem+json");
    }

    @Test
    void anOrderWhoseChargeIsHeldIsSentBackToPaymentByAnOperator() {
        Placed order = place();
        publish(order, new StockReserved("res-1", List.of()));
        publish(order, new PaymentOnHold("pay-1", "payment provider has no charge under key pay-1", 3));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                given().get("/orders/{id}", order.id()).then().body("waitingReason", equalTo(
                        "payment provider has no charge under key pay-1")));

        given().auth().preemptive().basic("operator", "operator")
                .post("/operator/orders/{id}/retry-payment", order.id()).then().statusCode(202)
                .body("waitingReason", nullValue());
        PaymentRetryRequested retry = (PaymentRetryRequested) awaitEvent(order, "PaymentRetryRequested").payload();
        assertThat(retry.requestedBy()).isEqualTo("operator:operator");
        given().auth().preemptive().basic("operator", "operator")
                .post("/operator/orders/{id}/retry-payment", order.id()).then().statusCode(409)
                .contentType("application/problem+json");
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders/{id}/actions", order.id())
                .then().body("action", equalTo(List.of("retry-payment")))
                .body("detail", equalTo(List.of("payment provider has no charge under key pay-1")));

        publish(order, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        awaitStatus(order, "PAID");
    }

    @Test
    void anOrderWhoseChargeIsHeldIsListedForOperatorsWhoCanCancelButNotRetryShipping() {
        Instant before = Instant.now();
        Placed order = place();
        publish(order, new StockReserved("res-1", List.of()));
        String reason = "payment provider has no charge under key pay-1: it may have forgotten the key";
        publish(order, new PaymentOnHold("pay-1", reason, 3));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                given().get("/orders/{id}", order.id()).then().body("waitingReason", equalTo(reason)));

        given().auth().preemptive().basic("operator", "operator").get("/operator/orders?waiting=true&since=" + before)
                .then().statusCode(200)
                .body("find { it.orderId == '%s' }.reason".formatted(order.id()), equalTo(reason))
                .body("find { it.orderId == '%s' }.waitingFor".formatted(order.id()), equalTo("PAYMENT"))
                .body("find { it.orderId == '%s' }.status".formatted(order.id()), equalTo("STOCK_RESERVED"));
        given().auth().preemptive().basic("operator", "operator")
                .post("/operator/orders/{id}/retry-shipping", order.id()).then().statusCode(409)
                .contentType("application/problem+json");

        given().auth().preemptive().basic("operator", "operator").contentType(ContentType.JSON)
                .body("{\"reason\": \"no charge at the provider\"}")
                .post("/operator/orders/{id}/cancel", order.id()).then().statusCode(202);
        OrderCancelling cancelling = (OrderCancelling) awaitEvent(order, "OrderCancelling").payload();
        assertThat(cancelling.requestedBy()).isEqualTo("operator:operator");
        given().get("/orders/{id}", order.id()).then().body("status", equalTo("COMPENSATING"))
                .body("waitingReason", nullValue());
    }

    @Test
    void aSagaThatHearsNothingMoreIsListedAsStalledAndCounted() {
        // the database keeps the orders of earlier runs, stalled too: the list is asked for those silent since now
        Instant start = Instant.now().minusSeconds(1);
        Placed stalled = place();
        publish(stalled, new StockReserved("res-1", List.of()));
        publish(stalled, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        awaitStatus(stalled, "PAID");
        Placed onHold = place();
        publish(onHold, new ShipmentOnHold("shp-1", "carrier unavailable after 5 attempts", 5));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                given().get("/orders/{id}", onHold.id()).then().body("waitingReason", equalTo("carrier unavailable after 5 attempts")));
        Placed confirmed = place();
        publish(confirmed, new StockReserved("res-1", List.of()));
        publish(confirmed, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        publish(confirmed, new ShipmentCreated("shp-1", "car_1"));
        awaitStatus(confirmed, "CONFIRMED");
        // placed last and left alone: once it counts as stalled, so would every order above that is still open
        Placed last = place();

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(stalledIds(start)).contains(last.id().toString()));
        List<String> listed = stalledIds(start);
        assertThat(listed).contains(stalled.id().toString()).doesNotContain(onHold.id().toString(), confirmed.id().toString());
        given().auth().preemptive().basic("operator", "operator").queryParam("since", start.toString())
                .get("/operator/orders?stalled=true").then()
                .body("find { it.orderId == '%s' }.status".formatted(stalled.id()), equalTo("PAID"))
                .body("find { it.orderId == '%s' }.reason".formatted(stalled.id()), equalTo("stalled: nothing heard since PaymentSucceeded"))
                .body("find { it.orderId == '%s' }.reason".formatted(last.id()), equalTo("stalled: nothing heard since OrderCreated"));
        given().get("/operator/orders?stalled=true").then().statusCode(401);
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders?stalled=true&since=yesterday")
                .then().statusCode(400).contentType("application/problem+json");
        // an instant Java takes and PostgreSQL does not (it was a 500)
        for (String beyond : List.of("+300000-01-01T00:00:00Z", "-5000-01-01T00:00:00Z")) {
            given().auth().preemptive().basic("operator", "operator").queryParam("since", beyond)
                    .get("/operator/orders?stalled=true")
                    .then().statusCode(400).contentType("application/problem+json");
        }
        // the gauges count every stalled order of the database, earlier runs' too: compared with a count of its own,
        // not the service's query (this test's two are among them)
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            long[] counted = stalledCountedApart();
            assertThat(counted[0]).isGreaterThanOrEqualTo(2);
            assertThat(gauge("saga_orders_stalled")).isEqualTo((double) counted[0]);
            assertThat((long) gauge("saga_orders_stalled_oldest_seconds")).isBetween(counted[1] - 3, counted[1]);
        });

        publish(stalled, new ShipmentCreated("shp-1", "car_1"));
        awaitStatus(stalled, "CONFIRMED");
        assertThat(stalledIds(start)).doesNotContain(stalled.id().toString());
    }

    /** The stalled orders, and the seconds since the longest silent one was heard of, as the README defines them. */
    private long[] stalledCountedApart() throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("""
                     SELECT count(*), coalesce(floor(extract(epoch FROM now() - min(heard)))::bigint, 0) FROM (
                         SELECT greatest(o.updated_at, (SELECT max(e.recorded_at) FROM saga_event e
                                                         WHERE e.order_id = o.id)) AS heard
                         FROM orders o
                         WHERE o.status NOT IN ('CONFIRMED', 'CANCELLED') AND o.waiting_reason IS NULL) open
                     WHERE heard < now() - interval '2 seconds'""")) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2)};
        }
    }

    private static List<String> stalledIds(Instant since) {
        return given().auth().preemptive().basic("operator", "operator").queryParam("since", since.toString())
                .get("/operator/orders?stalled=true&limit=1000")
                .then().statusCode(200).extract().jsonPath().getList("orderId", String.class);
    }

    /** /q/metrics on the management interface (not the API's port); the URL it hands over ends in its root, /q */
    @TestHTTPResource(value = "/metrics", management = true)
    URL metricsUrl;

    private double gauge(String name) {
        return metricValues(name, "").findFirst().orElseThrow(() -> new AssertionError(name + " is not among the metrics"));
    }

    /** The values of every series of the named metric whose labels contain {@code labels}. */
    private DoubleStream metricValues(String name, String labels) {
        String metrics = given().get(metricsUrl).then().statusCode(200).extract().asString();
        return metrics.lines().filter(line -> (line.startsWith(name + " ") || line.startsWith(name + "{"))
                        && line.contains(labels))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
    }

    @Test
    void aFactTheOrderHasNoPlaceForIsParkedListedForOperatorsAndReplayedToThisServiceAlone() {
        Placed order = place();
        publish(order, new StockReserved("res-1", List.of()));
        publish(order, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        awaitStatus(order, "PAID");
        EventEnvelope<?> twice = publish(order, new StockReserved("res-2", List.of()));
        KafkaTopicProbe.Received parked = orderEvents.await(r -> Topics.ORDER_DLQ.equals(r.record().topic())
                && r.value().contains(twice.eventId().toString()), Duration.ofSeconds(30));
        assertThat(parked.header("dead-letter-reason")).contains("cannot onStockReserved");
        given().get("/orders/{id}", order.id()).then().body("status", equalTo("PAID"));

        String listed = "find { it.eventId == '%s' }".formatted(twice.eventId());
        given().get("/operator/dead-letters").then().statusCode(401);
        var entry = given().auth().preemptive().basic("operator", "operator").get("/operator/dead-letters?limit=1000")
                .then().statusCode(200)
                .body(listed + ".reason", org.hamcrest.Matchers.containsString("cannot onStockReserved"))
                .body(listed + ".topic", equalTo(Topics.INVENTORY_EVENTS))
                .body(listed + ".eventType", equalTo("StockReserved"))
                .body(listed + ".orderId", equalTo(order.id().toString()))
                .body(listed + ".correlationId", equalTo(order.correlationId()))
                .extract().jsonPath();
        assertThat(entry.getInt(listed + ".partition")).isEqualTo(parked.record().partition());
        assertThat(entry.getLong(listed + ".offset")).isEqualTo(parked.record().offset());
        // the next page begins below the offset of the last one's last entry
        long offset = parked.record().offset();
        given().auth().preemptive().basic("operator", "operator")
                .get("/operator/dead-letters?limit=1&before={before}", offset + 1).then().statusCode(200)
                .body("eventId", org.hamcrest.Matchers.contains(twice.eventId().toString()));
        given().auth().preemptive().basic("operator", "operator")
                .get("/operator/dead-letters?limit=1000&before={before}", offset).then().statusCode(200)
                .body("offset", everyItem(lessThan((int) offset)))
                .body("eventId", not(hasItem(twice.eventId().toString())));
        given().auth().preemptive().basic("operator", "operator").get("/operator/dead-letters?before=-1")
                .then().statusCode(400).contentType("application/problem+json")
                .body("detail", org.hamcrest.Matchers.containsString("before must be a whole number"));

        try (KafkaTopicProbe replays = KafkaTopicProbe.fromNow(Topics.ORDER_REPLAY, Topics.INVENTORY_EVENTS)) {
            given().auth().preemptive().basic("operator", "operator")
                    .post("/operator/dead-letters/{partition}/{offset}/replay", parked.record().partition(), parked.record().offset())
                    .then().statusCode(202)
                    .body("eventId", equalTo(twice.eventId().toString()))
                    .body("topic", equalTo(Topics.ORDER_REPLAY));
            // on order-service's own replay topic as it was before it was parked, with the topic it came from
            KafkaTopicProbe.Received again = replays.await(r -> r.value().contains(twice.eventId().toString()),
                    Duration.ofSeconds(30));
            assertThat(again.record().topic()).isEqualTo(Topics.ORDER_REPLAY);
            assertThat(again.key()).isEqualTo(order.id().toString());
            assertThat(again.value()).isEqualTo(parked.value());
            assertThat(again.header("dead-letter-reason")).isNull();
            assertThat(again.header("replayed-from")).isEqualTo(Topics.INVENTORY_EVENTS);
            assertThat(again.header("replayed-from-partition")).isEqualTo(parked.header("dead-letter-partition"));
            assertThat(again.header("replayed-from-offset")).isEqualTo(parked.header("dead-letter-offset"));
            // not on inventory's topic, where payment and shipping would hear it too and order-service would have to
            // be allowed to publish inventory's facts (the replay was acknowledged before its 202: read to the end)
            replays.awaitCaughtUp(Duration.ofSeconds(30));
            assertThat(replays.matching(r -> Topics.INVENTORY_EVENTS.equals(r.record().topic())
                    && r.value().contains(twice.eventId().toString()))).isEmpty();
        }
        // heard again; its cause is not mended (the order is PAID), so it is parked again, as from the topic it first
        // came from, and the order stays as it was
        await().atMost(Duration.ofSeconds(30)).until(() -> orderEvents.matching(r -> Topics.ORDER_DLQ.equals(r.record().topic())
                && r.value().contains(twice.eventId().toString())).size() == 2);
        assertThat(orderEvents.matching(r -> Topics.ORDER_DLQ.equals(r.record().topic())
                && r.value().contains(twice.eventId().toString())))
                .allSatisfy(r -> assertThat(r.header("dead-letter-topic")).isEqualTo(Topics.INVENTORY_EVENTS))
                // and where it lay there, not where it lay on the replay topic
                .allSatisfy(r -> assertThat(r.header("dead-letter-partition") + "@" + r.header("dead-letter-offset"))
                        .isEqualTo(parked.header("dead-letter-partition") + "@" + parked.header("dead-letter-offset")));
        given().get("/orders/{id}", order.id()).then().body("status", equalTo("PAID"));

        given().auth().preemptive().basic("operator", "operator")
                .post("/operator/dead-letters/{partition}/{offset}/replay", parked.record().partition(), Long.MAX_VALUE - 1)
                .then().statusCode(404).contentType("application/problem+json");
    }

    /** Kafka allows a header without a value; one such message parked must not break the operators' list (a 500). */
    @Test
    void aParkedMessageWithAHeaderWithoutValueIsListed() {
        String key = UUID.randomUUID().toString();
        participants.send(Topics.INVENTORY_EVENTS, key, "not an event",
                new org.apache.kafka.common.header.internals.RecordHeader(EventHeaders.EVENT_ID, null));
        orderEvents.await(r -> Topics.ORDER_DLQ.equals(r.record().topic()) && key.equals(r.key()), Duration.ofSeconds(30));

        String listed = "find { it.orderId == '%s' }".formatted(key);
        given().auth().preemptive().basic("operator", "operator").get("/operator/dead-letters?limit=1000")
                .then().statusCode(200)
                .body(listed + ".topic", equalTo(Topics.INVENTORY_EVENTS))
                .body(listed + ".eventId", org.hamcrest.Matchers.nullValue());
    }

    /** A message that was no event has no correlation id to log its replay under: replayed all the same, and answered. */
    @Test
    void aParkedMessageThatIsNoEventIsReplayed() {
        String key = UUID.randomUUID().toString();
        participants.send(Topics.INVENTORY_EVENTS, key, "not an event");
        KafkaTopicProbe.Received parked = orderEvents.await(r -> Topics.ORDER_DLQ.equals(r.record().topic())
                && key.equals(r.key()), Duration.ofSeconds(30));

        given().auth().preemptive().basic("operator", "operator")
                .post("/operator/dead-letters/{partition}/{offset}/replay", parked.record().partition(), parked.record().offset())
                .then().statusCode(202)
                .body("topic", equalTo(Topics.ORDER_REPLAY));
        await().atMost(Duration.ofSeconds(30)).until(() -> orderEvents.matching(r -> Topics.ORDER_DLQ.equals(r.record().topic())
                && key.equals(r.key())).size() == 2);
    }

    @Test
    void aParkedFactOlderThanTheInboxesRememberIsNotReplayed() {
        Placed order = place();
        publish(order, new StockReserved("res-1", List.of()));
        publish(order, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        awaitStatus(order, "PAID");
        // nine days old: longer ago than the inboxes keep an applied event's id (eventing.inbox.retention, 8 days)
        EventEnvelope<SagaEvent> old = new EventEnvelope<>(Ids.timeOrdered(), "StockReserved", 1,
                Instant.now().minus(Duration.ofDays(9)), order.id(), order.correlationId(), order.createdEventId(),
                new StockReserved("res-2", List.of()));
        participants.send(old.topic(), order.id().toString(), EventCodec.encode(old));
        KafkaTopicProbe.Received parked = orderEvents.await(r -> Topics.ORDER_DLQ.equals(r.record().topic())
                && r.value().contains(old.eventId().toString()), Duration.ofSeconds(30));

        given().auth().preemptive().basic("operator", "operator")
                .post("/operator/dead-letters/{partition}/{offset}/replay", parked.record().partition(), parked.record().offset())
                .then().statusCode(409).contentType("application/problem+json")
                .body("title", equalTo("Parked message too old to replay"))
                .body("detail", org.hamcrest.Matchers.containsString("eventing.inbox.retention"));
    }

    @Test
    void aFactThatComesBeforeItsOrderShowsIsAppliedOnceItDoes() {
        // the order is written only after the consumer heard its fact and found no order, as when the POST's commit
        // is streamed before it is visible to the consumer's session; skipped, the saga would have stopped for good
        String correlationId = "saga-" + UUID.randomUUID();
        Order.Placed placed = Order.place(Ids.timeOrdered(), "customer-early", List.of(new OrderItem("SKU-MUG", 2,
                        new BigDecimal("10.50"))), "EUR", new Address("Ada", "1 Main St", null, "Springfield", "12345", "DE"),
                "tok_visa", correlationId);
        Placed order = new Placed(placed.order().id(), correlationId, UUID.randomUUID());
        double retriesBefore = consumerRetries(Topics.INVENTORY_EVENTS);
        EventEnvelope<?> reserved = publish(order, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        await().atMost(Duration.ofSeconds(30)).until(() -> consumerRetries(Topics.INVENTORY_EVENTS) > retriesBefore);
        given().get("/orders/{id}", order.id()).then().statusCode(404);

        QuarkusTransaction.requiringNew().run(() -> writes.write(orders.insertion(placed.order()), () -> "insert the order"));
        awaitStatus(order, "STOCK_RESERVED");
        given().get("/orders/{id}/timeline", order.id()).then()
                .body("eventId", hasItem(reserved.eventId().toString()));
    }

    @Test
    void aFactForAnOrderPlacedMomentsAgoThatNeverShowsIsParkedUnclaimed() throws Exception {
        Placed stranger = new Placed(Ids.timeOrdered(), "saga-" + UUID.randomUUID(), UUID.randomUUID());
        EventEnvelope<?> fact = publish(stranger, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        KafkaTopicProbe.Received parked = orderEvents.await(r -> Topics.ORDER_DLQ.equals(r.record().topic())
                && r.value().contains(fact.eventId().toString()), Duration.ofSeconds(60));
        assertThat(parked.header("dead-letter-reason")).contains("does not show");
        // its claim rolled back with each attempt: replayed once the order exists, it would be applied
        assertThat(Inboxes.claimed(dataSource, fact.eventId())).isFalse();
        given().get("/orders/{id}", stranger.id()).then().statusCode(404);
    }

    @Test
    void aFactForAnOrderThisServiceDidNotPlaceLatelyIsSkipped() {
        // not an id of this service's lately (a random one, as another system's): no order of it can be becoming
        // visible, so the fact is claimed and passed over at once rather than held up for the retries above
        Placed stranger = new Placed(UUID.randomUUID(), "saga-" + UUID.randomUUID(), UUID.randomUUID());
        EventEnvelope<?> fact = publish(stranger, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        await().atMost(Duration.ofSeconds(30)).until(() -> Inboxes.claimed(dataSource, fact.eventId()));
        assertThat(orderEvents.matching(r -> Topics.ORDER_DLQ.equals(r.record().topic())
                && r.value().contains(fact.eventId().toString()))).isEmpty();
        given().get("/orders/{id}", stranger.id()).then().statusCode(404);
    }

    @Test
    void aFactHeardAgainAfterTheInboxForgotItIsNotAppliedTwiceAndTheConsumerGoesOn() {
        Placed order = place();
        given().post("/orders/{id}/cancel", order.id()).then().statusCode(202);
        EventEnvelope<?> released = publish(order, new StockReleased("res-1", List.of()));
        publish(order, new PaymentRefunded("pay-1", BigDecimal.ZERO, "EUR", null));
        publish(order, new ShipmentCancelled("shp-1"));
        awaitStatus(order, "CANCELLED");
        // as after the inbox's retention: an operator replays a dead letter, or Kafka redelivers after the consumer
        // group's offsets expired
        inboxPruner.prune(Instant.now().plusSeconds(1));
        assertThat(Inboxes.claimed(dataSource, released.eventId())).isFalse();

        participants.send(released.topic(), order.id().toString(), EventCodec.encode(released));
        await().atMost(Duration.ofSeconds(30)).until(() -> Inboxes.claimed(dataSource, released.eventId()));
        given().get("/orders/{id}/timeline", order.id()).then()
                .body("findAll { it.eventId == '%s' }".formatted(released.eventId()), hasSize(1));
        given().get("/orders/{id}", order.id()).then().body("status", equalTo("CANCELLED"));
        Placed next = place();
        publish(next, new StockReserved("res-1", List.of(new StockItem("SKU-MUG", 2))));
        awaitStatus(next, "STOCK_RESERVED");
    }

    @Test
    void theOrdersWaitingForAnOperatorAreListedAtMostLimitAtATimeAndPagedBySince() {
        Instant before = Instant.now();
        List<Placed> onHold = List.of(place(), place(), place());
        for (Placed order : onHold) {
            publish(order, new ShipmentOnHold("shp-1", "carrier unavailable after 5 attempts", 5));
        }
        for (Placed order : onHold) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> given().get("/orders/{id}", order.id()).then()
                    .body("waitingReason", equalTo("carrier unavailable after 5 attempts")));
        }
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders?waiting=true&limit=1")
                .then().statusCode(200).body("$", hasSize(1));
        List<String> all = given().auth().preemptive().basic("operator", "operator")
                .get("/operator/orders?waiting=true&limit=1000&since=" + before)
                .then().statusCode(200).extract().jsonPath().getList("orderId", String.class);
        assertThat(all).containsAll(onHold.stream().map(o -> o.id().toString()).toList());

        // longest waiting first; the page after a row starts at its since (the row itself again)
        List<String> ids = onHold.stream().map(o -> o.id().toString()).toList();
        JsonPath firstPage = given().auth().preemptive().basic("operator", "operator")
                .get("/operator/orders?waiting=true&limit=2&since=" + before).then().statusCode(200).extract().jsonPath();
        List<String> first = firstPage.getList("orderId", String.class);
        assertThat(first).hasSize(2).isSubsetOf(ids);
        List<String> next = given().auth().preemptive().basic("operator", "operator")
                .get("/operator/orders?waiting=true&limit=2&since=" + firstPage.getString("[1].since"))
                .then().statusCode(200).extract().jsonPath().getList("orderId", String.class);
        assertThat(next).as("the second page").hasSize(2).startsWith(first.get(1)).doesNotContain(first.get(0));
        assertThat(List.of(first.get(0), first.get(1), next.get(1))).containsExactlyInAnyOrderElementsOf(ids);
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders?waiting=true&since=yesterday")
                .then().statusCode(400).contentType("application/problem+json");
    }

    /**
     * Orders put on hold in one consumer transaction wait since the same instant. Paged by since alone, a page of
     * them is followed by itself for ever; with the last row's id in after, each page goes on from that row.
     */
    @Test
    void ordersWaitingSinceTheSameInstantArePagedOneAfterAnother() throws Exception {
        List<Placed> onHold = List.of(place(), place(), place());
        for (Placed order : onHold) {
            publish(order, new ShipmentOnHold("shp-1", "carrier unavailable after 5 attempts", 5));
        }
        for (Placed order : onHold) {
            awaitWaiting(order);
        }
        Walk walk = walkAtOneInstant(onHold, "waiting_since", "waiting=true&");

        // the database's order of ids, which is their text's
        assertThat(walk.ids()).containsExactlyElementsOf(onHold.stream().map(o -> o.id().toString()).sorted().toList());
        for (String misused : List.of("waiting=true&stalled=true", "after=" + onHold.get(0).id(),
                "waiting=true&after=" + onHold.get(0).id(), "waiting=true&since=" + walk.since() + "&after=first")) {
            given().auth().preemptive().basic("operator", "operator").get("/operator/orders?" + misused)
                    .then().statusCode(400).contentType("application/problem+json");
        }
    }

    /**
     * The list of open orders is paged as the waiting one, by the instant it shows (when an order was last changed, or
     * put on hold) and, among orders of the same instant, by id: each page goes on from the last row.
     */
    @Test
    void openOrdersArePagedOneAfterAnother() throws Exception {
        List<Placed> open = List.of(place(), place(), place());

        Walk walk = walkAtOneInstant(open, "updated_at", "");

        assertThat(walk.ids()).containsExactlyElementsOf(open.stream().map(o -> o.id().toString()).sorted().toList());
    }

    private record Walk(Instant since, List<String> ids) {
    }

    /**
     * The orders given one instant in {@code column}, a far future one of their own so that no other test's order
     * falls among them, and the list ({@code list}: its flag and an ampersand, or nothing) walked from it a row a page,
     * each page from the last row's since and id; the column is given back the present after.
     */
    private Walk walkAtOneInstant(List<Placed> orders, String column, String list) throws Exception {
        Instant since = Instant.parse("9000-01-01T00:00:00Z").plusMillis((long) (Math.random() * 1e9));
        Object[] ids = orders.stream().map(Placed::id).toArray();
        try (var c = dataSource.getConnection();
             var tie = c.prepareStatement("UPDATE orders SET " + column + " = ? WHERE id = ANY (?)")) {
            tie.setTimestamp(1, java.sql.Timestamp.from(since));
            tie.setArray(2, c.createArrayOf("uuid", ids));
            assertThat(tie.executeUpdate()).isEqualTo(orders.size());
        }
        List<String> walked = new java.util.ArrayList<>();
        String query = "/operator/orders?" + list + "limit=1&since=" + since;
        try {
            for (int page = 0; page <= orders.size(); page++) {
                JsonPath rows = given().auth().preemptive().basic("operator", "operator").get(query).then()
                        .statusCode(200).extract().jsonPath();
                if (rows.getList("orderId").isEmpty()) {
                    break;
                }
                assertThat(rows.getString("[0].since")).isEqualTo(since.toString());
                walked.add(rows.getString("[0].orderId"));
                query = "/operator/orders?" + list + "limit=1&since=" + rows.getString("[0].since") + "&after="
                        + rows.getString("[0].orderId");
            }
        } finally {
            try (var c = dataSource.getConnection();
                 var back = c.prepareStatement("UPDATE orders SET " + column + " = now() WHERE id = ANY (?)")) {
                // not left in the year 9000 for other tests' lists
                back.setArray(1, c.createArrayOf("uuid", ids));
                back.executeUpdate();
            }
        }
        return new Walk(since, walked);
    }

    private static void awaitWaiting(Placed order) {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> given().get("/orders/{id}", order.id()).then()
                .body("waitingReason", equalTo("carrier unavailable after 5 attempts")));
    }

    @Test
    void anOrderConfirmedInAPollThatRolledBackIsCountedOnce() {
        Placed order = place();
        publish(order, new StockReserved("res-1", List.of()));
        publish(order, new PaymentSucceeded("pay-1", new BigDecimal("21.00"), "EUR", "ch_1"));
        awaitStatus(order, "PAID");
        double confirmedBefore = counted("saga.orders.finished", "status", "CONFIRMED");
        double fallbacksBefore = counted("saga.consumer.batch.fallbacks");
        EventEnvelope<ShipmentCreated> shipped = EventEnvelope.of(order.id(), order.correlationId(),
                order.createdEventId(), new ShipmentCreated("shp-1", "car_1"));

        // the order is confirmed, then the poll's transaction fails on a message that can never be applied: it rolls
        // back, and each record is applied again in a transaction of its own
        TopicPartition partition = new TopicPartition(Topics.SHIPPING_EVENTS, 0);
        consumer.consume(new ConsumerRecords<>(Map.of(partition, List.of(
                new ConsumerRecord<>(partition.topic(), 0, 1_000_000L, order.id().toString(), EventCodec.encode(shipped)),
                new ConsumerRecord<>(partition.topic(), 0, 1_000_001L, order.id().toString(), "{\"this is\": \"not an event\"}"))),
                Map.of()));

        assertThat(counted("saga.consumer.batch.fallbacks")).as("the poll rolled back").isEqualTo(fallbacksBefore + 1);
        given().get("/orders/{id}", order.id()).then().body("status", equalTo("CONFIRMED"));
        assertThat(counted("saga.orders.finished", "status", "CONFIRMED")).isEqualTo(confirmedBefore + 1);
    }

    private double counted(String name, String... tags) {
        return meters.find(name).tags(tags).counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private double consumerRetries(String topic) {
        return metricValues("saga_consumer_retries_total", "topic=\"" + topic + "\"").sum();
    }

    // --- fixtures

    private record Placed(UUID id, String correlationId, UUID createdEventId) {
    }

    private static Placed place() {
        String correlationId = "saga-" + UUID.randomUUID();
        String id = given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId).body(Orders.requestJson())
                .post("/orders").then().statusCode(201).extract().path("orderId");
        KafkaTopicProbe.Received created = orderEvents.awaitKey(id, Duration.ofSeconds(30));
        return new Placed(UUID.fromString(id), correlationId, EventCodec.decode(created.value()).eventId());
    }

    private static Placed cancelled(Placed order) {
        given().post("/orders/{id}/cancel", order.id()).then().statusCode(202);
        publish(order, new StockReleased("res-1", List.of()));
        publish(order, new PaymentRefunded("pay-1", BigDecimal.ZERO, "EUR", null));
        publish(order, new ShipmentCancelled("shp-1"));
        awaitStatus(order, "CANCELLED");
        return order;
    }

    private static EventEnvelope<?> publish(Placed order, SagaEvent fact) {
        EventEnvelope<SagaEvent> envelope = EventEnvelope.of(order.id(), order.correlationId(), order.createdEventId(), fact);
        participants.send(envelope.topic(), order.id().toString(), EventCodec.encode(envelope));
        return envelope;
    }

    private static void awaitStatus(Placed order, String status) {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                given().get("/orders/{id}", order.id()).then().body("status", equalTo(status)));
    }

    private static EventEnvelope<SagaEvent> awaitEvent(Placed order, String type) {
        KafkaTopicProbe.Received received = orderEvents.await(r -> Topics.ORDER_EVENTS.equals(r.record().topic())
                && order.id().toString().equals(r.key()) && type.equals(r.header("eventType")), Duration.ofSeconds(30));
        return EventCodec.decode(received.value());
    }

    private static org.hamcrest.Matcher<Iterable<? extends String>> everyItemIs(String value) {
        return org.hamcrest.Matchers.everyItem(equalTo(value));
    }

    /**
     * The order's records on order.events once a marker committed after everything the test did has arrived, the
     * marker left out: the relay publishes in commit order, so an event committed before it is among them, not missed
     * because the topic was read as the first one arrived.
     */
    private List<KafkaTopicProbe.Received> committedSoFar(String orderId, String correlationId) {
        String marker;
        try (Correlation.Scope ignored = Correlation.open(correlationId, null)) {
            marker = QuarkusTransaction.requiringNew().call(
                    () -> outbox.publish(UUID.fromString(orderId), new OrderCancelled("marker")).eventId().toString());
        }
        orderEvents.await(r -> orderId.equals(r.key()) && r.value().contains(marker), Duration.ofSeconds(30));
        return orderEvents.matching(r -> orderId.equals(r.key()) && !r.value().contains(marker));
    }
}
