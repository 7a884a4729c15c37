package dev.ordersaga.shipping.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.Inbox;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.ShipmentCreated;
import dev.ordersaga.events.ShipmentOnHold;
import dev.ordersaga.shipping.domain.Address;
import dev.ordersaga.shipping.domain.Shipment;
import dev.ordersaga.shipping.domain.ShipmentStatus;
import dev.ordersaga.shipping.persistence.ShipmentRepository;
import dev.ordersaga.shipping.provider.CarrierClient;
import dev.ordersaga.shipping.rest.OperatorShipmentResource;
import dev.ordersaga.shipping.testing.CarrierSandboxApi;
import dev.ordersaga.shipping.testing.CarrierSandboxResource;
import dev.ordersaga.shipping.testing.SagaEvents;
import dev.ordersaga.shipping.testing.ShippingEventsProbe;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.StackTestResource;
import dev.ordersaga.work.Surpluses;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.ordersaga.shipping.testing.SagaEvents.orderCancelling;
import static dev.ordersaga.shipping.testing.SagaEvents.orderCreated;
import static dev.ordersaga.shipping.testing.SagaEvents.paymentSucceeded;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

/** The worker: its schedule lives in the rows, and a cancellation waits for the call under way. */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(CarrierSandboxResource.class)
class ShipmentWorkerTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final CarrierClient.Destination ADA = new CarrierClient.Destination("Ada Lovelace",
            "12 St James Square", null, "London", "SW1Y 4JH", "GB");

    @RegisterExtension
    static final SagaEvents events = new SagaEvents();

    @RegisterExtension
    static final ShippingEventsProbe published = new ShippingEventsProbe();

    @RegisterExtension
    static final CarrierSandboxApi carrier = CarrierSandboxApi.ofTheApplication();

    @Inject
    ShippingService shipping;

    @Inject
    Inbox inbox;

    @Inject
    DataSource dataSource;

    @Inject
    OutboxWriter outbox;

    @Inject
    ShipmentWorker worker;

    @Inject
    CarrierClient carrierClient;

    @Inject
    CarrierReconciliation reconciliation;

    @Inject
    SurplusCancels surplusCancels;

    @Inject
    MeterRegistry meters;

    @ConfigProperty(name = "shipping.retry.max-attempts")
    int maxAttempts;

    /**
     * A row as a previous process left it when it stopped: three failed attempts, the fourth due in a few seconds.
     * This process never saw it happen; it goes on from the row: not before the persisted time, and counting on from
     * three (max 5: on hold after two more failures, not five).
     */
    @Test
    void retryScheduleIsPersistedAndContinuedFromTheRow() throws Exception {
        UUID orderId = UUID.randomUUID();
        String correlationId = "shipping-test-" + orderId;
        UUID paymentEventId = UUID.randomUUID();
        Instant nextAttempt = Instant.now().plusSeconds(3).truncatedTo(ChronoUnit.MICROS); // as PostgreSQL keeps it
        carrier.outageOf(orderId, 50);
        insertRequestedShipment(orderId, correlationId, paymentEventId, 3, nextAttempt);

        Shipment fourth = await().atMost(WAIT).pollInterval(Duration.ofMillis(20))
                .until(() -> row(orderId), s -> s.attempts() >= 4);
        assertThat(fourth.attempts()).isEqualTo(4);
        // recorded when the carrier's 503 came back, at once: a call made before its time would be recorded before it
        assertThat(fourth.updatedAt()).as("the fourth attempt, not before the persisted time").isAfterOrEqualTo(nextAttempt);
        assertThat(fourth.status()).isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(fourth.lastError()).contains("503");
        assertThat(Duration.between(fourth.updatedAt(), fourth.nextAttemptAt()))
                .as("base 100ms * 2^(4-1)").isEqualTo(Duration.ofMillis(800));

        EventEnvelope<ShipmentOnHold> onHold = published.await(orderId, ShipmentOnHold.class, WAIT);
        assertThat(onHold.payload().attempts()).isEqualTo(5);
        assertThat(onHold.payload().reason()).isEqualTo("carrier unavailable after 5 attempts");
        assertThat(onHold.correlationId()).as("the scope reopened from the row").isEqualTo(correlationId);
        assertThat(onHold.causationId()).isEqualTo(paymentEventId);
        Shipment held = row(orderId);
        assertThat(held.status()).isEqualTo(ShipmentStatus.ON_HOLD);
        assertThat(held.attempts()).isEqualTo(5);
        assertThat(held.nextAttemptAt()).isNull();
        assertThat(carrier.shipmentsOf(orderId)).isEmpty();
    }

    /**
     * PaymentSucceeded's transaction claimed the create call and handed it to a worker. The order's cancellation, heard
     * while the call is under way, waits for it; once the carrier's answer is recorded the new shipment is cancelled
     * at the carrier. The claim is the row's, and the test is the worker: the call is made when the test says, so no
     * sandbox delay has to outlast the test's steps.
     */
    @Test
    void cancelRequestedWhileTheCreateCallIsInFlightIsCancelledAtTheCarrierAfterwards() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        UUID shipmentId = UUID.randomUUID();
        UUID paymentEventId = UUID.randomUUID();
        Instant claimedUntil = Instant.now().plusSeconds(30).truncatedTo(ChronoUnit.MICROS);
        insertShipment(shipmentId, orderId, saga.correlationId(), paymentEventId, 0, Instant.now(), claimedUntil);
        Shipment claimed = row(orderId);
        assertThat(claimed.isInFlight(Instant.now())).isTrue();
        CarrierWork call = new CarrierWork(CarrierWork.Kind.CREATE, shipmentId, orderId, saga.correlationId(),
                paymentEventId, claimed.address(), null, 1, claimedUntil);

        EventEnvelope<OrderCancelling> cancelling = hearCancelling(saga);
        Shipment waiting = row(orderId);
        assertThat(waiting.status()).as("the call is still under way").isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(waiting.isCancelRequested()).isTrue();

        worker.perform(call);
        EventEnvelope<ShipmentCancelled> cancelled = published.await(orderId, ShipmentCancelled.class, WAIT);

        assertThat(cancelled.causationId()).isEqualTo(cancelling.eventId());
        assertThat(published.typesCommittedSoFar(outbox, orderId, saga.correlationId(), WAIT))
                .containsExactly("ShipmentCreated", "ShipmentCancelled");
        String carrierId = published.of(orderId, ShipmentCreated.class).get(0).payload().carrierShipmentId();
        assertCancelledAtTheCarrierAndInTheRow(orderId, carrierId);
    }

    /**
     * PaymentSucceeded's transaction claimed the create call, and the call never went out (the process stopped first).
     * The order's cancellation, heard while the claim held, waits for the call; once the claim has run out the shipment
     * is looked up at the carrier by its key and the cancellation answered: no create call for a cancelled order.
     */
    @Test
    void aCancellationThatWaitedForAClaimedCallThatNeverWentOutCreatesNothing() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        insertShipment(UUID.randomUUID(), orderId, saga.correlationId(), UUID.randomUUID(), 0, Instant.now(),
                Instant.now().plusSeconds(5));

        EventEnvelope<OrderCancelling> cancelling = hearCancelling(saga);
        Shipment waiting = row(orderId);
        assertThat(waiting.status()).as("the claim still holds").isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(waiting.isCancelRequested()).isTrue();

        EventEnvelope<ShipmentCancelled> cancelled = published.await(orderId, ShipmentCancelled.class, WAIT);

        assertThat(cancelled.causationId()).isEqualTo(cancelling.eventId());
        assertThat(published.typesCommittedSoFar(outbox, orderId, saga.correlationId(), WAIT))
                .containsExactly("ShipmentCancelled");
        assertThat(carrier.shipmentsOf(orderId)).isEmpty();
        Shipment done = row(orderId);
        assertThat(done.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(done.carrierShipmentId()).isNull();
        assertThat(done.attempts()).as("no create attempt made").isZero();
    }

    /**
     * Caller A's claim ran out while it stalled, and B claimed the row again: B's call is under way. A's failure,
     * reported late at the last attempt but one, is ignored: it would free the row from B's call and put it on hold.
     */
    @Test
    void aFailureReportedUnderAClaimThatWasReplacedIsIgnored() throws Exception {
        UUID orderId = UUID.randomUUID();
        UUID shipmentId = UUID.randomUUID();
        String correlationId = "shipping-test-" + orderId;
        UUID paymentEventId = UUID.randomUUID();
        Instant claimOfA = Instant.now().minusSeconds(1).truncatedTo(ChronoUnit.MICROS);
        // B's lease is short: once it ran out, the sweep makes B's call again and the row comes to rest
        Instant claimOfB = Instant.now().plusSeconds(10).truncatedTo(ChronoUnit.MICROS);
        insertShipment(shipmentId, orderId, correlationId, paymentEventId, maxAttempts - 1, Instant.now(), claimOfB);
        Shipment claimedByB = row(orderId);
        CarrierWork workOfA = new CarrierWork(CarrierWork.Kind.CREATE, shipmentId, orderId, correlationId,
                paymentEventId, claimedByB.address(), null, maxAttempts - 1, claimOfA);

        try (Correlation.Scope ignored = Correlation.open(correlationId, paymentEventId)) {
            shipping.onCarrierUnavailable(workOfA, "no answer within 2000 ms", true);
        }

        Shipment after = row(orderId);
        assertThat(after.status()).isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(after.attempts()).isEqualTo(maxAttempts - 1);
        assertThat(after.claimedUntil()).as("still B's").isEqualTo(claimOfB);
        assertThat(after.progress()).as("nothing written").isEqualTo(claimedByB.progress());
    }

    /**
     * A process claimed the row, called the carrier (which created the shipment) and died before recording the answer.
     * Once its claim runs out, the row is taken up again and the carrier called with the same idempotency key: the same
     * shipment, never a second one.
     */
    @Test
    void callWhoseCallerDiedIsMadeAgainWithTheSameIdempotencyKey() throws Exception {
        UUID orderId = UUID.randomUUID();
        UUID shipmentId = UUID.randomUUID();
        String correlationId = "shipping-test-" + orderId;
        var firstCall = carrierClient.create(shipmentId.toString(), orderId.toString(), ADA);
        String carrierId = ((CarrierClient.Created) firstCall).carrierShipmentId();
        insertShipment(shipmentId, orderId, correlationId, UUID.randomUUID(), 0, Instant.now().minusSeconds(40),
                Instant.now().minusSeconds(10));

        EventEnvelope<ShipmentCreated> created = published.await(orderId, ShipmentCreated.class, WAIT);

        assertThat(created.payload().carrierShipmentId()).isEqualTo(carrierId);
        assertThat(carrier.shipmentsOf(orderId)).hasSize(1);
        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.isCreationUncertain()).as("the lost answer is remembered").isTrue();
    }

    /**
     * A caller claimed the row and stalled past its lease before its create call went out. The order's cancellation,
     * meanwhile, looked the shipment up by its idempotency key, found none and was answered. Then the stalled call
     * lands and its caller records the answer: the shipment now at the carrier is cancelled too.
     */
    @Test
    void aCreateThatLandsAfterTheCancellationIsCancelledAtTheCarrier() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        String correlationId = saga.correlationId();
        UUID shipmentId = UUID.randomUUID();
        UUID paymentEventId = UUID.randomUUID();
        // the claim ran out; the next attempt is far off, so that only the stalled caller creates
        insertShipment(shipmentId, orderId, correlationId, paymentEventId, 0, Instant.now().plusSeconds(3600),
                Instant.now().minusSeconds(1));
        EventEnvelope<OrderCancelling> cancelling = hearCancelling(saga);
        published.await(orderId, ShipmentCancelled.class, WAIT);
        assertThat(row(orderId).status()).isEqualTo(ShipmentStatus.CANCELLED);

        var lateCall = carrierClient.create(shipmentId.toString(), orderId.toString(), ADA);
        String carrierId = ((CarrierClient.Created) lateCall).carrierShipmentId();
        try (Correlation.Scope ignored = Correlation.open(correlationId, paymentEventId)) {
            shipping.onCreatedAtCarrier(shipmentId, carrierId);
        }

        await().atMost(WAIT).pollInterval(Duration.ofMillis(50))
                .until(() -> published.of(orderId, ShipmentCancelled.class).size() == 2);
        assertThat(published.typesCommittedSoFar(outbox, orderId, saga.correlationId(), WAIT))
                .containsExactly("ShipmentCancelled", "ShipmentCreated", "ShipmentCancelled");
        assertThat(published.of(orderId, ShipmentCancelled.class))
                .allSatisfy(cancelled -> assertThat(cancelled.causationId()).isEqualTo(cancelling.eventId()));
        assertCancelledAtTheCarrierAndInTheRow(orderId, carrierId);
    }

    /**
     * As above, but the stalled caller never records the answer (it timed out, or its process died): no process of ours
     * learns of the shipment now at the carrier. The carrier's shipment report tells, and it is cancelled all the same.
     */
    @Test
    void aCreateThatLandsUnheardAfterTheCancellationIsFoundInTheShipmentReportAndCancelledAtTheCarrier() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        UUID shipmentId = UUID.randomUUID();
        insertShipment(shipmentId, orderId, saga.correlationId(), UUID.randomUUID(), 0, Instant.now().plusSeconds(3600),
                Instant.now().minusSeconds(1));
        hearCancelling(saga);
        published.await(orderId, ShipmentCancelled.class, WAIT);
        assertThat(row(orderId).status()).isEqualTo(ShipmentStatus.CANCELLED);

        String carrierId = createdUnheardAtTheCarrier(shipmentId, orderId);
        assertThat(row(orderId).carrierShipmentId()).as("no caller recorded it").isNull();

        assertThat(reconciliation.reconcile()).as("shipments applied").containsOnlyOnce(shipmentId);
        await().atMost(WAIT).pollInterval(Duration.ofMillis(50))
                .until(() -> published.of(orderId, ShipmentCancelled.class).size() == 2);
        assertThat(published.typesCommittedSoFar(outbox, orderId, saga.correlationId(), WAIT))
                .containsExactly("ShipmentCancelled", "ShipmentCreated", "ShipmentCancelled");
        assertThat(carrier.shipmentsOf(orderId)).singleElement().satisfies(s -> {
            assertThat(s.shipmentId()).isEqualTo(carrierId);
            assertThat(s.status()).isEqualTo("cancelled");
        });
        assertThat(row(orderId).status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(reconciliation.reconcile()).as("not applied again").doesNotContain(shipmentId);
    }

    /**
     * A create that landed unheard before the carrier went down for the attempts left: the shipment went on hold for an
     * operator, though it exists at the carrier. The shipment report tells, and it is recorded as created, so that no
     * operator retries a shipment that is on its way.
     */
    @Test
    void aCreateThatLandedUnheardBeforeTheShipmentWentOnHoldIsFoundInTheShipmentReportAndRecorded() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        UUID shipmentId = shipmentAs(saga, 3, "status = 'ON_HOLD', creation_uncertain = true, next_attempt_at = NULL");

        String carrierId = createdUnheardAtTheCarrier(shipmentId, orderId);
        assertThat(row(orderId).status()).as("no caller recorded it").isEqualTo(ShipmentStatus.ON_HOLD);

        assertThat(reconciliation.reconcile()).as("shipments applied").containsOnlyOnce(shipmentId);
        EventEnvelope<ShipmentCreated> created = published.await(orderId, ShipmentCreated.class, WAIT);
        assertThat(created.payload().carrierShipmentId()).isEqualTo(carrierId);
        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.carrierShipmentId()).isEqualTo(carrierId);
        assertThat(carrier.shipmentsOf(orderId)).singleElement()
                .satisfies(s -> assertThat(s.status()).isNotEqualTo("cancelled"));
        assertThat(reconciliation.reconcile()).as("not applied again").doesNotContain(shipmentId);
    }

    /**
     * A carrier that forgot the shipment's key makes a parcel on each try of a create whose answer is lost. The report
     * adopts the one it shows while the shipment still waits for an answer (until now it passed a requested shipment
     * over, and a parcel shown only then was never looked at again: a fault run with two replicas left such parcels
     * live); an answer that comes in afterwards with another parcel has that one cancelled on its own.
     */
    @Test
    void aParcelTheReportShowsWhileItsCreateAwaitsAnAnswerIsAdoptedAndAnotherParcelAnsweredLaterIsCancelled()
            throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        UUID shipmentId = UUID.randomUUID();
        insertShipment(shipmentId, orderId, saga.correlationId(), UUID.randomUUID(), 1, Instant.now().plusSeconds(3600),
                null);
        String first = createdUnheardAtTheCarrier(shipmentId, orderId);
        assertThat(row(orderId).status()).isEqualTo(ShipmentStatus.REQUESTED);

        assertThat(reconciliation.reconcile()).as("shipments applied").containsOnlyOnce(shipmentId);
        assertThat(published.await(orderId, ShipmentCreated.class, WAIT).payload().carrierShipmentId()).isEqualTo(first);
        assertThat(row(orderId).carrierShipmentId()).isEqualTo(first);
        assertThat(shipping.onCreatedAtCarrier(shipmentId, first)).as("the same parcel: known already")
                .isEqualTo(new ShippingService.CarrierShipmentNoted(false, Optional.empty()));

        carrier.forgetKey(shipmentId.toString());
        String second = createdUnheardAtTheCarrier(shipmentId, orderId);
        Optional<ShipmentRepository.AtCarrier> recorded =
                shipping.onCreatedAtCarrier(shipmentId, second).recordedAnother();
        assertThat(recorded).as("a second parcel").hasValueSatisfying(r -> assertThat(r.carrierShipmentId()).isEqualTo(first));
        reconciliation.anotherParcel(recorded.get(), second);

        await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> carrier.shipmentsOf(orderId).stream()
                .anyMatch(s -> s.shipmentId().equals(second) && s.status().equals("cancelled")));
        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.carrierShipmentId()).isEqualTo(first);
        assertThat(carrier.shipmentsOf(orderId)).filteredOn(s -> s.shipmentId().equals(first)).singleElement()
                .satisfies(s -> assertThat(s.status()).isEqualTo("created"));
    }

    /**
     * The create call's answer records the parcel after the report read the shipment as not knowing it, and before the
     * report applies it: the report finds the parcel known already and does not count it as reconciled (the answer
     * told; the counter is of what only the report told). The answer's transaction holds the row until the report's
     * apply waits for it, so the order is the test's, not the clock's.
     */
    @Test
    void aParcelItsCreateCallsAnswerRecordsWhileTheReportAppliesItIsNotCountedAsReconciled() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        UUID shipmentId = UUID.randomUUID();
        UUID causedBy = UUID.randomUUID();
        insertShipment(shipmentId, orderId, saga.correlationId(), causedBy, 1, Instant.now().plusSeconds(3600), null);
        String parcel = createdUnheardAtTheCarrier(shipmentId, orderId);
        double reconciledBefore = counter("saga.shipping.shipments.reconciled");
        ExecutorService reader = Executors.newSingleThreadExecutor();
        try {
            Future<List<UUID>> reading = QuarkusTransaction.requiringNew().call(() -> {
                try (Correlation.Scope ignored = Correlation.open(saga.correlationId(), causedBy)) {
                    assertThat(shipping.onCreatedAtCarrier(shipmentId, parcel).recorded()).as("by the answer").isTrue();
                }
                int answer = backendPid();
                Future<List<UUID>> read = reader.submit(reconciliation::reconcile);
                // the report read the row as the answer's transaction had not yet changed it, and waits to apply
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                        .until(() -> blockedBy(answer));
                return read;
            });
            List<UUID> applied = reading.get(60, TimeUnit.SECONDS);
            assertThat(applied).as("shipments applied").doesNotContain(shipmentId);
            // exact: only this call reads the report now (no schedule in the tests, and a read is one at a time)
            assertThat(counter("saga.shipping.shipments.reconciled")).as("counted: what the read applied")
                    .isEqualTo(reconciledBefore + applied.size());
        } finally {
            reader.shutdownNow();
        }
        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.carrierShipmentId()).isEqualTo(parcel);
        assertThat(published.typesCommittedSoFar(outbox, orderId, saga.correlationId(), WAIT))
                .as("the answer's, once").containsExactly("ShipmentCreated");
        assertThat(carrier.shipmentsOf(orderId)).singleElement()
                .satisfies(s -> assertThat(s.status()).isEqualTo("created"));
    }

    /** The server process of the connection the caller's transaction uses. */
    private int backendPid() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** Whether a session waits for a lock the given server process holds. */
    private boolean blockedBy(int pid) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))")) {
            ps.setInt(1, pid);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) > 0;
            }
        }
    }

    /**
     * A carrier that forgot the shipment's key finds nothing under it, so a cancellation's lookup by the key ends as if
     * no parcel had been made. The report adopts one it shows while the lookup is under way (until now it passed a
     * cancelling shipment over, and a parcel shown only then stayed live for a cancelled order): the lookup's "none"
     * then ends nothing, and the parcel is cancelled by its id.
     */
    @Test
    void aParcelTheReportShowsWhileTheCancellationLooksItUpIsCancelledThoughTheLookupFindsNone() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        UUID shipmentId = UUID.randomUUID();
        UUID cancellingEventId = UUID.randomUUID();
        CarrierWork lookup = cancellingWithALookupUnderWay(shipmentId, saga, cancellingEventId);
        String parcel = createdUnheardAtTheCarrier(shipmentId, orderId);
        carrier.forgetKey(shipmentId.toString());

        assertThat(reconciliation.reconcile()).as("shipments applied").containsOnlyOnce(shipmentId);
        assertThat(row(orderId).carrierShipmentId()).isEqualTo(parcel);
        worker.perform(lookup);

        await().atMost(WAIT).pollInterval(Duration.ofMillis(50))
                .until(() -> row(orderId).status() == ShipmentStatus.CANCELLED);
        assertCancelledAtTheCarrierAndInTheRow(orderId, parcel);
        assertThat(published.typesCommittedSoFar(outbox, orderId, saga.correlationId(), WAIT))
                .containsExactly("ShipmentCreated", "ShipmentCancelled");
        assertThat(published.await(orderId, ShipmentCancelled.class, WAIT).causationId()).isEqualTo(cancellingEventId);
    }

    /**
     * A carrier that forgot the key makes a parcel on each create under it, and a lookup by the key finds the last. The
     * report shows two for a cancelling shipment: the first is recorded and the other cancelled as a second parcel; the
     * lookup then finds that other one, and the recorded one is cancelled as well, by its id.
     */
    @Test
    void twoParcelsUnderTheKeyOfACancellingShipmentAreBothCancelled() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        UUID shipmentId = UUID.randomUUID();
        CarrierWork lookup = cancellingWithALookupUnderWay(shipmentId, saga, UUID.randomUUID());
        String first = createdUnheardAtTheCarrier(shipmentId, orderId);
        carrier.forgetKey(shipmentId.toString());
        String second = ((CarrierClient.Created) carrierClient.create(shipmentId.toString(), orderId.toString(), ADA))
                .carrierShipmentId();
        double unmatchedBefore = counter("saga.shipping.shipments.unmatched");

        try (LogCapture log = LogCapture.of(CarrierReconciliation.class)) {
            assertThat(reconciliation.reconcile()).as("shipments applied").containsOnlyOnce(shipmentId);
            assertThat(row(orderId).carrierShipmentId()).isEqualTo(first);
            worker.perform(lookup);

            await().atMost(WAIT).pollInterval(Duration.ofMillis(50))
                    .until(() -> row(orderId).status() == ShipmentStatus.CANCELLED);
            await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> carrier.shipmentsOf(orderId).stream()
                    .allMatch(s -> s.status().equals("cancelled")));
            assertThat(log.containing("ALERT shipment of another parcel").stream()
                    .filter(line -> line.message().contains(orderId.toString()))).as("once, however often it is seen")
                    .singleElement().satisfies(line -> assertThat(line.message()).contains(first).contains(second));
        }
        assertThat(carrier.shipmentsOf(orderId)).extracting(CarrierSandboxApi.LedgerShipment::shipmentId)
                .containsExactly(first, second);
        Shipment shipment = row(orderId);
        assertThat(shipment.carrierShipmentId()).isEqualTo(first);
        assertThat(counter("saga.shipping.shipments.unmatched")).isGreaterThanOrEqualTo(unmatchedBefore + 1);
        assertThat(published.typesCommittedSoFar(outbox, orderId, saga.correlationId(), WAIT))
                .containsExactly("ShipmentCreated", "ShipmentCancelled");
    }

    /**
     * A create that went through unseen, then a call made anew under a key the carrier forgot that it refused: the saga
     * is told the shipment failed, while a parcel is live. Its create's late answer, or the report, has it cancelled as
     * a second parcel (it was passed over: a refused shipment took no create, and the report left it out).
     */
    @Test
    void aParcelOfAShipmentTheCarrierRefusedIsCancelledOnItsOwn() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        UUID shipmentId = shipmentAs(saga, 1, "status = 'REJECTED', last_error = 'address undeliverable', "
                + "next_attempt_at = NULL");
        String parcel = createdUnheardAtTheCarrier(shipmentId, orderId);
        double unmatchedBefore = counter("saga.shipping.shipments.unmatched");

        assertThat(shipping.onCreatedAtCarrier(shipmentId, parcel).recordedAnother())
                .as("the late answer: a parcel of none recorded")
                .hasValueSatisfying(recorded -> assertThat(recorded.carrierShipmentId()).isNull());
        try (LogCapture log = LogCapture.of(CarrierReconciliation.class)) {
            assertThat(reconciliation.reconcile()).as("adopted").doesNotContain(shipmentId);
            await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> carrier.shipmentsOf(orderId).stream()
                    .allMatch(s -> s.status().equals("cancelled")));
            assertThat(log.containing("ALERT shipment of another parcel").stream()
                    .filter(line -> line.message().contains(orderId.toString()))).singleElement()
                    .satisfies(line -> assertThat(line.message()).contains(parcel).contains("refused"));
        }
        assertThat(counter("saga.shipping.shipments.unmatched")).isGreaterThanOrEqualTo(unmatchedBefore + 1);
        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.REJECTED);
        assertThat(shipment.carrierShipmentId()).isNull();
    }

    /**
     * The carrier forgot the shipment's key and a create came again under it (an operator's retry-shipping days after a
     * create that went through unseen): its report shows a second live shipment, which is cancelled on its own, once,
     * with an alert; the shipment and its saga are not touched.
     */
    @Test
    void aSecondShipmentUnderAShipmentsKeyIsCancelledOnItsOwnWithAnAlert() throws Exception {
        UUID orderId = UUID.randomUUID();
        UUID shipmentId = UUID.randomUUID();
        insertShipment(shipmentId, orderId, "shipping-test-" + orderId, UUID.randomUUID(), 0, Instant.now(), null);
        String first = published.await(orderId, ShipmentCreated.class, WAIT).payload().carrierShipmentId();
        carrier.forgetKey(shipmentId.toString());
        String second = ((CarrierClient.Created) carrierClient.create(shipmentId.toString(), orderId.toString(), ADA))
                .carrierShipmentId();
        assertThat(second).isNotEqualTo(first);
        double unmatchedBefore = counter("saga.shipping.shipments.unmatched");
        double cancelsBefore = counter("saga.shipping.surplus.cancels");

        try (LogCapture log = LogCapture.of(CarrierReconciliation.class)) {
            reconciliation.reconcile();
            await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> carrier.shipmentsOf(orderId).stream()
                    .anyMatch(s -> s.shipmentId().equals(second) && s.status().equals("cancelled")));
            assertThat(log.containing("ALERT shipment of another parcel").stream()
                    .filter(line -> line.message().contains(orderId.toString()))).singleElement().satisfies(line -> {
                assertThat(line.message()).contains(first).contains(second);
                assertThat(line.correlationId()).isEqualTo("shipping-test-" + orderId);
            });
        }
        assertThat(surplusCancels.found(new ShipmentRepository.AtCarrier(shipmentId, orderId, "shipping-test-" + orderId,
                first), second)).as("known: not recorded again").isFalse();
        assertThat(carrier.shipmentsOf(orderId)).extracting(CarrierSandboxApi.LedgerShipment::shipmentId,
                CarrierSandboxApi.LedgerShipment::status).containsExactly(
                org.assertj.core.groups.Tuple.tuple(first, "created"), org.assertj.core.groups.Tuple.tuple(second, "cancelled"));
        await().atMost(WAIT).until(() -> counter("saga.shipping.surplus.cancels") >= cancelsBefore + 1);
        assertThat(counter("saga.shipping.shipments.unmatched")).isGreaterThanOrEqualTo(unmatchedBefore + 1);
        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.carrierShipmentId()).isEqualTo(first);
        assertThat(published.typesCommittedSoFar(outbox, orderId, "shipping-test-" + orderId, WAIT))
                .as("the saga hears nothing of it").containsExactly("ShipmentCreated");
    }

    /**
     * The carrier's 404 for a shipment its report listed is its error, not "nothing to cancel": retried, alerted, and a
     * refusal no retry mends, which the operator who settled it with the carrier ends. Not while a call is under way;
     * the shipment and its saga are not touched.
     */
    @Test
    void aSurplusShipmentTheCarrierDeniesKnowingIsRetriedWithAnAlertUntilAnOperatorEndsIt() throws Exception {
        UUID orderId = UUID.randomUUID();
        UUID shipmentId = UUID.randomUUID();
        String correlationId = "shipping-test-" + orderId;
        insertShipment(shipmentId, orderId, correlationId, UUID.randomUUID(), 0, Instant.now().plusSeconds(3600), null);
        // created, as a shipment with a surplus is: no carrier work left for the tests that wait for none
        alter(shipmentId, "status = 'CREATED', carrier_shipment_id = 'shp_recorded', next_attempt_at = NULL");
        String unknown = "shp_unknown_" + orderId;
        double failuresBefore = meters.find("saga.compensation.failures").tag("step", "surplus-cancel").counter().count();
        String surplusParcels = "/operator/shipments/{orderId}/surplus-parcels";
        String confirm = surplusParcels + "/{carrierShipmentId}/confirm-cancelled";
        String body = "{\"reason\": \"the carrier's desk, ticket 77: no such parcel left the depot\"}";
        try {
            try (LogCapture log = LogCapture.of(Surpluses.class)) {
                assertThat(surplusCancels.found(new ShipmentRepository.AtCarrier(shipmentId, orderId, correlationId,
                        "shp_recorded"), unknown)).isTrue();
                String alert = "ALERT compensation failed: cancel of surplus shipment " + unknown + " of order "
                        + orderId;
                await().atMost(WAIT).until(() -> log.containing(alert).size() >= 2);
                assertThat(log.containing(alert).get(0).message()).contains("attempt 1").contains("does not know")
                        .endsWith("or an operator confirms it settled with the provider by hand");
                assertThat(log.containing(alert).get(1).message()).contains("attempt 2");
                assertThat(log.containing(alert).get(0).correlationId()).isEqualTo(correlationId);
            }
            // taken from the workers between two calls, its last answer a refusal, as if a call were under way
            await().atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(() -> alterSurplus(unknown, """
                    next_attempt_at = now() + interval '1 hour', claimed_until = now() + interval '1 hour'
                    WHERE provider_ref = ? AND undo_refused
                      AND next_attempt_at IS DISTINCT FROM claimed_until""") == 1);
            operator().body(body).post(confirm, orderId, unknown).then().statusCode(409)
                    .contentType("application/problem+json").body("detail", containsString("under way"));
            assertThat(alterSurplus(unknown, "claimed_until = NULL WHERE provider_ref = ?")).isEqualTo(1);
            operator().get(surplusParcels, orderId).then().statusCode(200).body("size()", equalTo(1))
                    .body("[0].providerRef", equalTo(unknown)).body("[0].undoRefused", equalTo(true));
            given().contentType(ContentType.JSON).body(body).post(confirm, orderId, unknown).then().statusCode(401);
            operator().body("{}").post(confirm, orderId, unknown).then().statusCode(400);
            operator().body(body).post(confirm, orderId, "shp_other").then().statusCode(404);
            operator().get(surplusParcels, UUID.randomUUID()).then().statusCode(404)
                    .contentType("application/problem+json").body("title", equalTo("Shipment not found"));
            // PostgreSQL refuses a NUL in a string parameter; the id is checked as the body's text is
            operator().urlEncodingEnabled(false).body(body)
                    .post("/operator/shipments/" + orderId + "/surplus-parcels/shp%00x/confirm-cancelled")
                    .then().statusCode(400).contentType("application/problem+json");
            operator().body(body).post(confirm, orderId,
                            "s".repeat(OperatorShipmentResource.MAX_CARRIER_ID_LENGTH + 1))
                    .then().statusCode(400).contentType("application/problem+json");

            try (LogCapture log = LogCapture.of(Surpluses.class)) {
                operator().body(body).post(confirm, orderId, unknown).then().statusCode(200)
                        .body("undoneBy", equalTo("operator")).body("nextAttemptAt", nullValue())
                        .body("undoConfirmation",
                                equalTo("the carrier's desk, ticket 77: no such parcel left the depot"));
                assertThat(log.containing("Done by hand: cancel of surplus shipment " + unknown)).singleElement()
                        .satisfies(line -> assertThat(line.correlationId()).isEqualTo(correlationId));
            }
            // asked again (its answer lost), it holds
            operator().body(body).post(confirm, orderId, unknown).then().statusCode(200);
        } finally {
            // not left to fail for ever in the tests that follow, should the test fail before the confirm
            alterSurplus(unknown, """
                    undone_at = now(), next_attempt_at = NULL, undone_by = 'the test'
                    WHERE provider_ref = ? AND undone_at IS NULL""");
        }
        assertThat(meters.find("saga.compensation.failures").tag("step", "surplus-cancel").counter().count())
                .isGreaterThanOrEqualTo(failuresBefore + 2);
        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.carrierShipmentId()).isEqualTo("shp_recorded");
    }

    /** @param change what follows {@code UPDATE surplus_shipment SET}, ? the carrier's id of the parcel */
    private int alterSurplus(String providerRef, String change) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement update = c.prepareStatement("UPDATE surplus_shipment SET " + change)) {
            update.setString(1, providerRef);
            return update.executeUpdate();
        }
    }

    private double counter(String name) {
        Counter counter = meters.find(name).counter();
        return counter == null ? 0 : counter.count();
    }

    /** The order's one shipment at the carrier is {@code carrierId}, cancelled there, and the row knows it. */
    private void assertCancelledAtTheCarrierAndInTheRow(UUID orderId, String carrierId) {
        assertThat(carrier.shipmentsOf(orderId)).singleElement().satisfies(s -> {
            assertThat(s.shipmentId()).isEqualTo(carrierId);
            assertThat(s.status()).isEqualTo("cancelled");
        });
        Shipment done = row(orderId);
        assertThat(done.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(done.carrierShipmentId()).isEqualTo(carrierId);
    }

    /**
     * Reads the carrier's report up to now, so that the next read holds only what follows, then creates the shipment
     * at the carrier as a caller would whose answer nobody records; returns the carrier's id for it.
     */
    private String createdUnheardAtTheCarrier(UUID shipmentId, UUID orderId) throws Exception {
        reconciliation.reconcile();
        return ((CarrierClient.Created) carrierClient.create(shipmentId.toString(), orderId.toString(), ADA))
                .carrierShipmentId();
    }

    /**
     * Workers (threads here; replicas alike) racing for one due row: exactly one gets to call the carrier. The
     * service's own sweep races too, and when it wins none of the threads holds the row; the race is run again with a
     * new row until a thread wins, so that the threads' race is what is shown.
     */
    @Test
    void oneDueRowIsClaimedByOneWorkerOnly() throws Exception {
        int racers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(racers);
        try {
            for (int round = 1; round <= 5; round++) {
                UUID orderId = UUID.randomUUID();
                UUID shipmentId = UUID.randomUUID();
                insertShipment(shipmentId, orderId, "shipping-test-" + orderId, UUID.randomUUID(), 0, Instant.now(),
                        null);
                CyclicBarrier start = new CyclicBarrier(racers);
                List<Future<Optional<CarrierWork>>> runs = new ArrayList<>();
                for (int i = 0; i < racers; i++) {
                    runs.add(pool.submit(() -> {
                        start.await();
                        return shipping.claim(shipmentId);
                    }));
                }
                List<CarrierWork> claims = new ArrayList<>();
                for (Future<Optional<CarrierWork>> run : runs) {
                    run.get(30, TimeUnit.SECONDS).ifPresent(claims::add);
                }
                assertThat(claims).as("round %d", round).hasSizeLessThanOrEqualTo(1);
                claims.forEach(worker::perform);

                published.await(orderId, ShipmentCreated.class, WAIT);
                // the row first, the carrier's books after: a second caller's create call is owed, under way (the
                // row shows it) or made (the carrier counted it before the row could forget it)
                Shipment created = row(orderId);
                assertThat(created.isCreationUncertain()).isFalse();
                assertThat(created.claimedUntil()).as("round %d", round).isNull();
                assertThat(created.nextAttemptAt()).as("round %d", round).isNull();
                assertThat(carrier.shipmentsOf(orderId)).singleElement()
                        .satisfies(s -> assertThat(s.createCalls()).as("one create call").isEqualTo(1));
                UUID marker = published.mark(outbox, orderId, "shipping-test-" + orderId, WAIT);
                assertThat(published.typesBefore(orderId, marker)).containsExactly("ShipmentCreated");
                if (claims.size() == 1) {
                    return;
                }
            }
        } finally {
            pool.shutdownNow();
        }
        throw new AssertionError("the sweep claimed the row before any of the racing threads in every round");
    }

    private void insertRequestedShipment(UUID orderId, String correlationId, UUID causedBy, int attempts, Instant next)
            throws SQLException {
        insertShipment(UUID.randomUUID(), orderId, correlationId, causedBy, attempts, next, null);
    }

    /**
     * Every parcel id a cancel names came from the carrier, so its 404 is the carrier's error, not "nothing to cancel":
     * taken for a cancel, the order would be refunded while the parcel may still go out. Retried, with an alert.
     */
    @Test
    void aParcelTheCarrierDeniesKnowingIsNotTakenForCancelled() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        String unknown = "shp_unknown_" + orderId;
        Instant claim = Instant.now().plusSeconds(3600).truncatedTo(ChronoUnit.MICROS);
        UUID shipmentId = cancellingUnderAClaim(saga, unknown, claim, "now()");
        CarrierWork cancel = new CarrierWork(CarrierWork.Kind.CANCEL, shipmentId, orderId, saga.correlationId(),
                UUID.randomUUID(), null, unknown, 1, claim);
        double before = compensationFailures();
        try (LogCapture log = LogCapture.of(ShippingService.class)) {
            worker.perform(cancel);

            assertThat(log.containing("ALERT compensation failed: shipment cancel of order " + orderId)).singleElement()
                    .satisfies(alert -> assertThat(alert.message()).contains("does not know shipment " + unknown));
        } finally {
            // not left to fail for ever in the tests that follow
            alter(shipmentId, "next_attempt_at = NULL, claimed_until = NULL");
        }
        assertThat(compensationFailures()).isEqualTo(before + 1);
        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
        assertThat(shipment.cancelAttempts()).isEqualTo(1);
        assertThat(shipment.cancelRefused()).as("the carrier's answer, which an operator may settle").isTrue();
        assertThat(published.typesCommittedSoFar(outbox, orderId, saga.correlationId(), WAIT))
                .as("the order is not refunded on it").doesNotContain("ShipmentCancelled");
    }

    /**
     * A cancel the carrier's API keeps refusing is retried for ever; the operator who settled it with the carrier ends
     * it for the parcel they name, and only then is the order's compensation answered, naming who said so. Not while a
     * call is under way (its answer decides), nor before the carrier refused one.
     */
    @Test
    void anOperatorEndsACancelTheCarrierKeepsRefusing() throws Exception {
        SagaEvents.Saga saga = events.saga();
        UUID orderId = saga.orderId();
        String unknown = "shp_unknown_" + orderId;
        Instant claim = Instant.now().plusSeconds(3600).truncatedTo(ChronoUnit.MICROS);
        // its next attempt an hour away: no worker of this test takes the row meanwhile
        UUID shipmentId = cancellingUnderAClaim(saga, unknown, claim, "now() + interval '1 hour'");
        String confirm = "/operator/shipments/{orderId}/confirm-cancelled";
        String body = "{\"carrierShipmentId\": \"" + unknown + "\", "
                + "\"reason\": \"the carrier's desk, by phone: never left\"}";

        operator().body(body).post(confirm, orderId).then().statusCode(409)
                .contentType("application/problem+json").body("detail", containsString("under way"));
        alter(shipmentId, "claimed_until = NULL");
        operator().body(body).post(confirm, orderId).then().statusCode(409)
                .body("detail", containsString("no cancel call refused by the carrier yet"));
        // a call left unanswered may yet cancel
        alter(shipmentId, "cancel_attempts = 1, last_error = 'timed out'");
        operator().body(body).post(confirm, orderId).then().statusCode(409)
                .body("detail", containsString("no cancel call refused by the carrier yet"));
        // as the worker leaves it after three 404s for the parcel
        // (aParcelTheCarrierDeniesKnowingIsNotTakenForCancelled)
        alter(shipmentId, "cancel_attempts = 3, cancel_refused = true, last_error = ?",
                "the carrier does not know shipment " + unknown);

        given().contentType(ContentType.JSON).body(body).post(confirm, orderId).then().statusCode(401);
        operator().body("{\"carrierShipmentId\": \"" + unknown + "\", \"reason\": \" \"}").post(confirm, orderId)
                .then().statusCode(400);
        operator().body("{}").post(confirm, orderId).then().statusCode(400);
        operator().body(body).post(confirm, UUID.randomUUID()).then().statusCode(404);
        operator().body(body.replace(unknown, "shp_other")).post(confirm, orderId).then().statusCode(409)
                .body("detail", containsString("is parcel " + unknown + ", not shp_other"));
        assertThat(published.typesCommittedSoFar(outbox, orderId, saga.correlationId(), WAIT))
                .as("nothing answered before the operator's word").doesNotContain("ShipmentCancelled");

        String confirmedBy = "confirmed cancelled at the carrier by operator operator: the carrier's desk, by phone: "
                + "never left";
        try (LogCapture log = LogCapture.of(ShippingService.class)) {
            operator().body(body).post(confirm, orderId).then().statusCode(200)
                    .body("status", equalTo("CANCELLED")).body("lastError", equalTo(confirmedBy));
            assertThat(log.containing("confirmed cancelled at the carrier by operator operator after 3 refused "
                    + "attempt(s) (last: the carrier does not know shipment " + unknown + ")")).hasSize(1);
        }
        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(shipment.nextAttemptAt()).as("no more calls to the carrier").isNull();
        EventEnvelope<ShipmentCancelled> answered = published.await(orderId, ShipmentCancelled.class, WAIT);
        assertThat(answered.payload()).isEqualTo(new ShipmentCancelled(shipmentId.toString(), "operator",
                "the carrier's desk, by phone: never left"));
        assertThat(answered.correlationId()).isEqualTo(saga.correlationId());

        // asked again (its answer lost), it holds and changes nothing
        operator().body(body).post(confirm, orderId).then().statusCode(200).body("status", equalTo("CANCELLED"));
        assertThat(row(orderId).updatedAt()).isEqualTo(shipment.updatedAt());
        assertThat(published.typesCommittedSoFar(outbox, orderId, saga.correlationId(), WAIT))
                .filteredOn("ShipmentCancelled"::equals).hasSize(1);
    }

    /**
     * The saga's shipment, being cancelled at the carrier as {@code parcel} by a worker whose call is under way until
     * {@code claim}, its next attempt due at {@code next} (an SQL expression); returns its id.
     */
    private UUID cancellingUnderAClaim(SagaEvents.Saga saga, String parcel, Instant claim, String next)
            throws SQLException {
        UUID shipmentId = UUID.randomUUID();
        insertShipment(shipmentId, saga.orderId(), saga.correlationId(), UUID.randomUUID(), 1,
                Instant.now().plusSeconds(3600), null);
        alter(shipmentId, """
                status = 'CANCELLING', cancel_requested = true, carrier_shipment_id = ?, claimed_until = ?,
                next_attempt_at = """ + next, parcel, Timestamp.from(claim));
        return shipmentId;
    }

    private static RequestSpecification operator() {
        return given().auth().preemptive().basic("operator", "operator").contentType(ContentType.JSON);
    }

    @Test
    void aCancelThatFailsForACauseOfOursAlertsToo() {
        // a shipment the service has no row of: the carrier's answer (it knows no such shipment) cannot be recorded
        UUID shipmentId = UUID.randomUUID();
        CarrierWork cancel = new CarrierWork(CarrierWork.Kind.CANCEL, shipmentId, UUID.randomUUID(), "cid-" + shipmentId,
                UUID.randomUUID(), null, null, 1, Instant.now().plusSeconds(30));
        double before = compensationFailures();
        try (LogCapture log = LogCapture.of(ShipmentWorker.class)) {
            worker.perform(cancel);
            assertThat(log.containing("ALERT compensation failed: shipment cancel of order " + cancel.orderId())).hasSize(1);
        }
        assertThat(compensationFailures()).isEqualTo(before + 1);
    }

    @Test
    void aParcelMadeAtTheCarrierThatCannotBeRecordedAlertsAndIsCounted() {
        // a shipment the service has no row of: the carrier makes its parcel, which cannot be recorded
        UUID shipmentId = UUID.randomUUID();
        CarrierWork create = new CarrierWork(CarrierWork.Kind.CREATE, shipmentId, UUID.randomUUID(),
                "cid-" + shipmentId, UUID.randomUUID(),
                new Address("Ada Lovelace", "12 St James Square", null, "London", "SW1Y 4JH", "GB"), null, 1,
                Instant.now().plusSeconds(30));
        double before = unrecorded();
        try (LogCapture log = LogCapture.of(ShipmentWorker.class)) {
            worker.perform(create);
            assertThat(log.containing("ALERT parcel ")).singleElement().satisfies(line -> {
                assertThat(line.message()).contains("of order " + create.orderId() + " was made at the carrier and "
                        + "could not be recorded (shipment " + shipmentId + ")");
                assertThat(line.level()).isEqualTo(org.jboss.logmanager.Level.ERROR);
            });
        }
        assertThat(unrecorded()).isEqualTo(before + 1);
    }

    private double unrecorded() {
        return meters.find("saga.provider.outcomes.unrecorded").tag("outcome", "parcel").counter().count();
    }

    private double compensationFailures() {
        Counter counter = meters.find("saga.compensation.failures").tag("step", "shipment-cancel").counter();
        return counter == null ? 0 : counter.count();
    }

    /** A REQUESTED shipment as a process (this one or an earlier one) left it in the table. */
    private void insertShipment(UUID shipmentId, UUID orderId, String correlationId, UUID causedBy, int attempts,
                                Instant next, Instant claimedUntil) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                INSERT INTO shipment (id, order_id, status, paid, cancel_requested, creation_uncertain,
                    ship_name, ship_line1, ship_city, ship_postal_code, ship_country,
                    attempts, cancel_attempts, next_attempt_at, claimed_until, last_error, correlation_id,
                    caused_by_event_id, created_at, updated_at, version)
                VALUES (?, ?, 'REQUESTED', true, false, false, 'Ada Lovelace', '12 St James Square', 'London', 'SW1Y 4JH',
                    'GB', ?, 0, ?, ?, ?, ?, ?, now(), now(), 3)""")) {
            ps.setObject(1, shipmentId);
            ps.setObject(2, orderId);
            ps.setInt(3, attempts);
            ps.setTimestamp(4, Timestamp.from(next));
            ps.setTimestamp(5, claimedUntil == null ? null : Timestamp.from(claimedUntil));
            ps.setString(6, attempts == 0 ? null : "carrier answered 503");
            ps.setString(7, correlationId);
            ps.setObject(8, causedBy);
            ps.executeUpdate();
        }
    }

    /**
     * A shipment whose order was cancelled while a create call of its may have gone through, as a worker leaves it that
     * is looking it up by its key right now (claimed for an hour, so that no other worker takes it up); returns that
     * worker's call, made when the test chooses.
     */
    private CarrierWork cancellingWithALookupUnderWay(UUID shipmentId, SagaEvents.Saga saga, UUID cancellingEventId)
            throws SQLException {
        Instant claim = Instant.now().plusSeconds(3600).truncatedTo(ChronoUnit.MICROS);
        insertShipment(shipmentId, saga.orderId(), saga.correlationId(), UUID.randomUUID(), 1,
                Instant.now().plusSeconds(3600), null);
        alter(shipmentId, """
                status = 'CANCELLING', cancel_requested = true, creation_uncertain = true, claimed_until = ?,
                next_attempt_at = now(), cancel_caused_by_event_id = ?""", Timestamp.from(claim), cancellingEventId);
        return new CarrierWork(CarrierWork.Kind.CANCEL, shipmentId, saga.orderId(), saga.correlationId(),
                cancellingEventId, null, null, 1, claim);
    }

    /**
     * The saga's shipment, inserted with {@code attempts} failed attempts and no call due, then changed as {@code set}
     * (an UPDATE's SET list) says; returns its id.
     */
    private UUID shipmentAs(SagaEvents.Saga saga, int attempts, String set) throws SQLException {
        UUID shipmentId = UUID.randomUUID();
        insertShipment(shipmentId, saga.orderId(), saga.correlationId(), UUID.randomUUID(), attempts,
                Instant.now().plusSeconds(3600), null);
        alter(shipmentId, set);
        return shipmentId;
    }

    /** Changes a shipment's row as {@code set} (an UPDATE's SET list) says, its {@code ?} bound to {@code values}. */
    private void alter(UUID shipmentId, String set, Object... values) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement update = c.prepareStatement("UPDATE shipment SET " + set + " WHERE id = ?")) {
            for (int i = 0; i < values.length; i++) {
                update.setObject(i + 1, values[i]);
            }
            update.setObject(values.length + 1, shipmentId);
            assertThat(update.executeUpdate()).isEqualTo(1);
        }
    }

    /** The order's OrderCancelling, handled as the consumer hands it over: in its correlation scope, with its claim. */
    private EventEnvelope<OrderCancelling> hearCancelling(SagaEvents.Saga saga) {
        EventEnvelope<OrderCancelling> cancelling = saga.envelope(orderCancelling());
        try (Correlation.Scope ignored = Correlation.open(saga.correlationId(), cancelling.eventId())) {
            shipping.onOrderCancelling(cancelling, cancelling.payload(), inbox.claimOf(cancelling, cancelling.topic(),
                    OptionalInt.of(ShipmentRepository.ORDER_LOCK_SPACE)));
        }
        return cancelling;
    }

    private Shipment row(UUID orderId) {
        return shipping.find(orderId).orElseThrow();
    }
}
