package dev.ordersaga.shipping.messaging;

import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.ShipmentCreated;
import dev.ordersaga.events.ShipmentFailed;
import dev.ordersaga.shipping.application.ShippingService;
import dev.ordersaga.shipping.domain.Shipment;
import dev.ordersaga.shipping.domain.ShipmentStatus;
import dev.ordersaga.shipping.testing.CarrierSandboxApi;
import dev.ordersaga.shipping.testing.CarrierSandboxResource;
import dev.ordersaga.shipping.testing.SagaEvents;
import dev.ordersaga.shipping.testing.ShippingEventsProbe;
import dev.ordersaga.testing.Inboxes;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.StackTestResource;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.logging.Level;

import static dev.ordersaga.shipping.testing.SagaEvents.orderCancelling;
import static dev.ordersaga.shipping.testing.SagaEvents.orderCreated;
import static dev.ordersaga.shipping.testing.SagaEvents.orderCreatedTo;
import static dev.ordersaga.shipping.testing.SagaEvents.paymentSucceeded;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

/** The shipping step driven by the other services' events on the real topics, against the carrier sandbox. */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(CarrierSandboxResource.class)
class ShippingSagaTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @RegisterExtension
    static final SagaEvents events = new SagaEvents();

    @RegisterExtension
    static final ShippingEventsProbe published = new ShippingEventsProbe();

    @RegisterExtension
    static final CarrierSandboxApi carrier = CarrierSandboxApi.ofTheApplication();

    @Inject
    ShippingService shipping;

    @Inject
    MeterRegistry meters;

    @Inject
    DataSource dataSource;

    @Inject
    OutboxWriter outbox;

    @Test
    void paidOrderIsShippedAtTheCarrier() {
        try (LogCapture logs = LogCapture.of("dev.ordersaga.shipping")) {
            SagaEvents.Saga saga = events.saga();
            saga.send(orderCreated());
            EventEnvelope<PaymentSucceeded> paid = saga.send(paymentSucceeded());

            EventEnvelope<ShipmentCreated> created = published.await(saga.orderId(), ShipmentCreated.class, WAIT);

            Shipment shipment = row(saga.orderId());
            assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
            assertThat(shipment.attempts()).isZero();
            assertThat(created.payload()).isEqualTo(new ShipmentCreated(shipment.id().toString(), shipment.carrierShipmentId()));
            assertThat(created.correlationId()).isEqualTo(saga.correlationId());
            assertThat(created.causationId()).as("the event that started the step").isEqualTo(paid.eventId());
            assertThat(carrier.shipmentsOf(saga.orderId())).singleElement().satisfies(s -> {
                assertThat(s.shipmentId()).isEqualTo(shipment.carrierShipmentId());
                assertThat(s.idempotencyKey()).isEqualTo(shipment.id().toString());
                assertThat(s.status()).isEqualTo("created");
                assertThat(s.createCalls()).as("answered at once: no call is sent again").isEqualTo(1);
            });

            List<LogCapture.Line> lines = logs.containing(saga.orderId().toString());
            assertThat(lines).as("the consumers' and the worker's lines")
                    .anySatisfy(l -> assertThat(l.message()).contains("paid"))
                    .anySatisfy(l -> assertThat(l.message()).contains("Requesting shipment"))
                    .anySatisfy(l -> assertThat(l.message()).contains("created at the carrier"))
                    .allSatisfy(l -> assertThat(l.correlationId()).as(l.message()).isEqualTo(saga.correlationId()));

            given().auth().preemptive().basic("operator", "operator").get("/shipments/{orderId}", saga.orderId())
                    .then().statusCode(200)
                    .body("shipmentId", equalTo(shipment.id().toString()))
                    .body("status", equalTo("CREATED"))
                    .body("attempts", equalTo(0))
                    .body("nextAttemptAt", nullValue())
                    .body("carrierShipmentId", equalTo(shipment.carrierShipmentId()))
                    .body("lastError", nullValue());
        }
    }

    @Test
    void undeliverableAddressFailsTheShipment() {
        SagaEvents.Saga saga = events.saga();
        saga.send(orderCreatedTo("UNDELIVERABLE"));
        saga.send(paymentSucceeded());

        EventEnvelope<ShipmentFailed> failed = published.await(saga.orderId(), ShipmentFailed.class, WAIT);

        assertThat(failed.payload().reason()).isEqualTo("address undeliverable");
        Shipment shipment = row(saga.orderId());
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.REJECTED);
        assertThat(shipment.lastError()).isEqualTo("address undeliverable");
        assertThat(shipment.nextAttemptAt()).as("a rejection is final: no retry").isNull();
        assertThat(carrier.shipmentsOf(saga.orderId())).isEmpty();
        assertThat(published.typesCommittedSoFar(outbox, saga.orderId(), saga.correlationId(), WAIT))
                .containsExactly("ShipmentFailed");
    }

    @Test
    void carrierOutageIsRetriedWithBackoffUntilTheShipmentIsCreated() {
        SagaEvents.Saga saga = events.saga();
        carrier.outageOf(saga.orderId(), 2);
        saga.send(orderCreated());
        saga.send(paymentSucceeded());

        published.await(saga.orderId(), ShipmentCreated.class, WAIT);

        Shipment shipment = row(saga.orderId());
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.attempts()).as("failed attempts recorded").isEqualTo(2);
        assertThat(shipment.lastError()).contains("503");
        assertThat(published.typesCommittedSoFar(outbox, saga.orderId(), saga.correlationId(), WAIT))
                .containsExactly("ShipmentCreated");
        assertThat(carrier.shipmentsOf(saga.orderId())).singleElement()
                .satisfies(s -> assertThat(s.status()).isEqualTo("created"));
    }

    @Test
    void cancelAfterTheShipmentWasCreatedCancelsItAtTheCarrier() {
        SagaEvents.Saga saga = events.saga();
        saga.send(orderCreated());
        saga.send(paymentSucceeded());
        published.await(saga.orderId(), ShipmentCreated.class, WAIT);

        EventEnvelope<OrderCancelling> cancelling = saga.send(orderCancelling());
        EventEnvelope<ShipmentCancelled> cancelled = published.await(saga.orderId(), ShipmentCancelled.class, WAIT);

        assertThat(cancelled.causationId()).as("answers the OrderCancelling").isEqualTo(cancelling.eventId());
        assertThat(cancelled.correlationId()).isEqualTo(saga.correlationId());
        assertThat(carrier.shipmentsOf(saga.orderId())).singleElement()
                .satisfies(s -> assertThat(s.status()).isEqualTo("cancelled"));
        assertThat(row(saga.orderId()).status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(published.typesCommittedSoFar(outbox, saga.orderId(), saga.correlationId(), WAIT))
                .containsExactly("ShipmentCreated", "ShipmentCancelled");
    }

    /**
     * An operator re-sends OrderCancelling (a new event id, the same payload) for an order that never heard the
     * answer: the shipment, cancelled already, answers again and asks the carrier nothing.
     */
    @ParameterizedTest(name = "shipment created before the cancellation: {0}")
    @ValueSource(booleans = {false, true})
    void aReSentOrderCancellingIsAnsweredAgainWithoutAskingTheCarrier(boolean shipmentCreated) {
        SagaEvents.Saga saga = events.saga();
        saga.send(orderCreated());
        if (shipmentCreated) {
            saga.send(paymentSucceeded());
            published.await(saga.orderId(), ShipmentCreated.class, WAIT);
        }
        EventEnvelope<OrderCancelling> first = saga.send(orderCancelling());
        published.await(saga.orderId(), ShipmentCancelled.class, WAIT);
        // committed with the answer's outbox row: what a cancel call (made under a claim) would change
        Shipment.Progress cancelled = row(saga.orderId()).progress();
        List<CarrierSandboxApi.LedgerShipment> books = carrier.shipmentsOf(saga.orderId());

        try (LogCapture logs = LogCapture.of(ShippingService.class.getName())) {
            EventEnvelope<OrderCancelling> resent = saga.send(first.payload());

            List<EventEnvelope<ShipmentCancelled>> answers = await().atMost(WAIT).pollInterval(Duration.ofMillis(50))
                    .until(() -> published.of(saga.orderId(), ShipmentCancelled.class), list -> list.size() >= 2);

            assertThat(answers.get(0).causationId()).isEqualTo(first.eventId());
            assertThat(answers.get(1).causationId()).as("answers the re-sent OrderCancelling").isEqualTo(resent.eventId());
            assertThat(answers.get(1).eventId()).isNotEqualTo(answers.get(0).eventId());
            assertThat(answers.get(1).payload()).isEqualTo(answers.get(0).payload())
                    .isEqualTo(new ShipmentCancelled(row(saga.orderId()).id().toString()));
            assertThat(answers.get(1).correlationId()).isEqualTo(saga.correlationId());
            assertThat(logs.containing(resent.eventId().toString())).singleElement().satisfies(line -> {
                assertThat(line.message()).contains("answered again");
                assertThat(line.level().intValue()).isEqualTo(Level.INFO.intValue());
            });
        }
        UUID marker = published.mark(outbox, saga.orderId(), saga.correlationId(), WAIT);
        assertThat(published.typesBefore(saga.orderId(), marker)).containsExactlyElementsOf(shipmentCreated
                ? List.of("ShipmentCreated", "ShipmentCancelled", "ShipmentCancelled")
                : List.of("ShipmentCancelled", "ShipmentCancelled"));
        assertThat(row(saga.orderId()).progress()).as("no cancel call made, owed or under way").isEqualTo(cancelled);
        assertThat(carrier.shipmentsOf(saga.orderId())).isEqualTo(books);
        if (shipmentCreated) {
            assertThat(books).singleElement().satisfies(s -> {
                assertThat(s.status()).isEqualTo("cancelled");
                assertThat(s.createCalls()).isEqualTo(1);
            });
        } else {
            assertThat(books).isEmpty();
        }
    }

    @Test
    void cancelBeforePaymentIsAnsweredAtOnceAndTheLatePaymentShipsNothing() {
        SagaEvents.Saga saga = events.saga();
        saga.send(orderCreated());
        saga.send(orderCancelling());
        published.await(saga.orderId(), ShipmentCancelled.class, WAIT);

        EventEnvelope<PaymentSucceeded> latePayment = saga.send(paymentSucceeded());
        await().atMost(WAIT).until(() -> Inboxes.claimed(dataSource, latePayment.eventId()));

        Shipment shipment = row(saga.orderId());
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(shipment.isPaid()).isTrue();
        // nothing now does not mean nothing later: the worker calls the carrier only for a row that owes a call
        assertThat(shipment.nextAttemptAt()).as("no call scheduled").isNull();
        assertThat(shipment.claimedUntil()).as("no call under way").isNull();
        assertThat(carrier.shipmentsOf(saga.orderId())).isEmpty();
        UUID marker = published.mark(outbox, saga.orderId(), saga.correlationId(), WAIT);
        assertThat(published.typesBefore(saga.orderId(), marker)).containsExactly("ShipmentCancelled");
    }

    /**
     * A charge that settled after the payment was declined (or while the order was being cancelled) is refunded at
     * once, and its PaymentSucceeded says so. Heard before the order's cancellation, which comes on another topic, it
     * must not have the carrier create a parcel; the cancellation then answers for the shipment that never started.
     */
    @Test
    void aPaymentRefundedAtOnceShipsNothingEvenBeforeTheCancellationArrives() {
        SagaEvents.Saga saga = events.saga();
        saga.send(orderCreated());
        PaymentSucceeded charged = paymentSucceeded();
        EventEnvelope<PaymentSucceeded> late = saga.send(new PaymentSucceeded(charged.paymentId(), charged.amount(),
                charged.currency(), "ch_late", true));
        await().atMost(WAIT).until(() -> Inboxes.claimed(dataSource, late.eventId()));

        Shipment shipment = row(saga.orderId());
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.PENDING);
        assertThat(shipment.isPaid()).isFalse();
        assertThat(carrier.shipmentsOf(saga.orderId())).isEmpty();

        saga.send(orderCancelling());
        published.await(saga.orderId(), ShipmentCancelled.class, WAIT);
        assertThat(row(saga.orderId()).status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(carrier.shipmentsOf(saga.orderId())).isEmpty();
        assertThat(published.typesCommittedSoFar(outbox, saga.orderId(), saga.correlationId(), WAIT))
                .containsExactly("ShipmentCancelled");
    }

    @Test
    void duplicatePaymentSucceededCreatesOneShipmentAtTheCarrier() {
        SagaEvents.Saga saga = events.saga();
        saga.send(orderCreated());
        EventEnvelope<PaymentSucceeded> paid = saga.envelope(paymentSucceeded());
        saga.send(paid);
        saga.send(paid);
        // the same fact again under a new event id (e.g. a producer that published it twice)
        EventEnvelope<PaymentSucceeded> again = saga.send(paid.payload());

        published.await(saga.orderId(), ShipmentCreated.class, WAIT);
        await().atMost(WAIT).until(() -> Inboxes.claimed(dataSource, again.eventId()));

        // The row first, the carrier's books after: a second create call is either owed or under way (the row shows
        // it) or made (the carrier counted it before the row could forget it). Its ShipmentCreated would be the
        // worker's, published after the call; that a duplicate published nothing itself the marker shows.
        Shipment shipment = row(saga.orderId());
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.nextAttemptAt()).as("no call scheduled").isNull();
        assertThat(shipment.claimedUntil()).as("no call under way").isNull();
        assertThat(shipment.attempts()).isZero();
        assertThat(carrier.shipmentsOf(saga.orderId())).singleElement()
                .satisfies(s -> assertThat(s.createCalls()).as("one create call").isEqualTo(1));
        UUID marker = published.mark(outbox, saga.orderId(), saga.correlationId(), WAIT);
        assertThat(published.typesBefore(saga.orderId(), marker)).containsExactly("ShipmentCreated");
    }

    @Test
    void paymentHeardBeforeTheOrderShipsOnceBothAreIn() {
        SagaEvents.Saga saga = events.saga();
        saga.send(paymentSucceeded());
        await().atMost(WAIT).until(() -> shipping.find(saga.orderId()).map(Shipment::isPaid).orElse(false));
        assertThat(row(saga.orderId()).status()).isEqualTo(ShipmentStatus.PENDING);
        assertThat(carrier.shipmentsOf(saga.orderId())).isEmpty();

        saga.send(orderCreated());

        published.await(saga.orderId(), ShipmentCreated.class, WAIT);
        assertThat(carrier.shipmentsOf(saga.orderId())).singleElement()
                .satisfies(s -> assertThat(s.createCalls()).isEqualTo(1));
    }

    @Test
    void failingCancelIsAlertedAndRetriedUntilItSucceeds() {
        SagaEvents.Saga saga = events.saga();
        saga.send(orderCreated());
        saga.send(paymentSucceeded());
        published.await(saga.orderId(), ShipmentCreated.class, WAIT);
        double failuresBefore = compensationFailures();

        try (LogCapture logs = LogCapture.of(ShippingService.class.getName())) {
            carrier.slow(2600); // longer than the client's timeout: every cancel call fails
            saga.send(orderCancelling());

            await().atMost(WAIT).until(() -> alerts(logs, saga.orderId()).size() >= 2);
            assertThat(compensationFailures() - failuresBefore).isGreaterThanOrEqualTo(2.0);
            assertThat(alerts(logs, saga.orderId())).allSatisfy(line -> {
                assertThat(line.level().intValue()).isGreaterThanOrEqualTo(Level.SEVERE.intValue());
                assertThat(line.correlationId()).isEqualTo(saga.correlationId());
            });
            // the alert is logged in the transaction that records its attempt, just before the commit
            await().atMost(WAIT).until(() -> row(saga.orderId()).cancelAttempts() >= 2);
            assertThat(row(saga.orderId()).status()).isEqualTo(ShipmentStatus.CANCELLING);
            assertThat(published.of(saga.orderId(), ShipmentCancelled.class)).as("not answered while failing").isEmpty();

            carrier.slow(0);

            published.await(saga.orderId(), ShipmentCancelled.class, WAIT);
            assertThat(row(saga.orderId()).status()).isEqualTo(ShipmentStatus.CANCELLED);
            assertThat(carrier.shipmentsOf(saga.orderId())).singleElement()
                    .satisfies(s -> assertThat(s.status()).isEqualTo("cancelled"));
        }
    }

    @Test
    void shipmentOfAnUnknownOrderIsNotFound() {
        given().auth().preemptive().basic("operator", "operator").get("/shipments/{orderId}", UUID.randomUUID())
                .then().statusCode(404)
                .contentType("application/problem+json")
                .body("title", equalTo("Shipment not found"));
    }

    /** Its last error is the carrier's or the transport's own text, and may name an operator: not for customers. */
    @Test
    void aShipmentIsShownToOperatorsOnly() {
        given().get("/shipments/{orderId}", UUID.randomUUID())
                .then().statusCode(401)
                .contentType("application/problem+json");
    }

    private static List<LogCapture.Line> alerts(LogCapture logs, UUID orderId) {
        return logs.containing("ALERT").stream().filter(l -> l.message().contains(orderId.toString())).toList();
    }

    private double compensationFailures() {
        var counter = meters.find("saga.compensation.failures").tag("step", "shipment-cancel").counter();
        return counter == null ? 0 : counter.count();
    }

    private Shipment row(UUID orderId) {
        return shipping.find(orderId).orElseThrow();
    }

}
