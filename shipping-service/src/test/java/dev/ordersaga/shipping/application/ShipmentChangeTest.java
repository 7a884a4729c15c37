package dev.ordersaga.shipping.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.EventStoreException;
import dev.ordersaga.eventing.Inbox;
import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.ShipmentCreated;
import dev.ordersaga.shipping.domain.Address;
import dev.ordersaga.shipping.domain.Shipment;
import dev.ordersaga.shipping.domain.ShipmentStatus;
import dev.ordersaga.shipping.persistence.ShipmentRepository;
import dev.ordersaga.shipping.testing.CarrierSandboxResource;
import dev.ordersaga.shipping.testing.ShippingEventsProbe;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;

import static dev.ordersaga.shipping.testing.SagaEvents.orderCancelling;
import static dev.ordersaga.shipping.testing.SagaEvents.orderCreated;
import static dev.ordersaga.shipping.testing.SagaEvents.paymentSucceeded;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A step's change of a shipment goes to the database with plain JDBC, in the round trip of the event it caused, its
 * version checked: stored together, or not at all.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(CarrierSandboxResource.class)
class ShipmentChangeTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** The fields Hibernate's bytecode enhancement adds to an entity: its own bookkeeping, not the shipment's. */
    private static final String ENHANCEMENT = ".*\\$\\$_hibernate_.*";

    @RegisterExtension
    static final ShippingEventsProbe published = new ShippingEventsProbe();

    @Inject
    ShippingService shipping;

    @Inject
    ShipmentRepository shipments;

    @Inject
    OutboxWriter outbox;

    @Inject
    TransactionalWrites writes;

    @Inject
    Inbox inbox;

    @Inject
    DataSource dataSource;

    @Test
    void aCarrierOutcomeIsStoredWithItsEventAndBumpsTheVersion() throws SQLException {
        InFlight call = createCallInFlight();

        try (Correlation.Scope ignored = Correlation.open(call.correlationId(), call.causedBy())) {
            shipping.onCreatedAtCarrier(call.shipmentId(), "carrier-1");
        }

        Shipment shipment = row(call.orderId());
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.carrierShipmentId()).isEqualTo("carrier-1");
        assertThat(shipment.claimedUntil()).isNull();
        assertThat(shipment.nextAttemptAt()).isNull();
        assertThat(shipment.progress().version()).isEqualTo(InFlight.VERSION + 1);
        EventEnvelope<ShipmentCreated> created = published.await(call.orderId(), ShipmentCreated.class, WAIT);
        assertThat(created.payload()).isEqualTo(new ShipmentCreated(call.shipmentId().toString(), "carrier-1"));
        assertThat(created.causationId()).isEqualTo(call.causedBy());
    }

    @Test
    void aChangeWrittenOverAnotherIsRefusedAndNothingOfItStays() throws SQLException {
        InFlight call = createCallInFlight();

        assertThatThrownBy(() -> QuarkusTransaction.requiringNew().run(() -> {
            try (Correlation.Scope ignored = Correlation.open(call.correlationId(), call.causedBy())) {
                Shipment shipment = shipments.lockByIdForChange(call.shipmentId()).orElseThrow();
                Shipment.Progress read = shipment.progress();
                ShipmentCreated stale = shipment.noteCreated("carrier-stale", Instant.now());
                // the row moves on after it was read: the update must find nothing to write over
                writes.write("UPDATE shipment SET version = version + 1 WHERE id = ?",
                        bump -> bump.setObject(1, call.shipmentId()), () -> "bump shipment " + call.shipmentId());
                outbox.publish(call.orderId(), stale, envelope -> shipments.update(shipment, read).orElseThrow());
            }
        })).isInstanceOf(EventStoreException.class).hasMessageContaining("changed 0 row(s), not 1");

        Shipment untouched = row(call.orderId());
        assertThat(untouched.status()).isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(untouched.carrierShipmentId()).isNull();
        assertThat(untouched.progress().version()).isEqualTo(InFlight.VERSION);

        // the relay publishes in commit order: had the refused event been stored, it would come before this one
        try (Correlation.Scope ignored = Correlation.open(call.correlationId(), call.causedBy())) {
            shipping.onCreatedAtCarrier(call.shipmentId(), "carrier-ok");
        }
        published.await(call.orderId(), ShipmentCreated.class, WAIT);
        assertThat(published.of(call.orderId(), ShipmentCreated.class)).singleElement()
                .satisfies(e -> assertThat(e.payload().carrierShipmentId()).isEqualTo("carrier-ok"));
        assertThat(row(call.orderId()).progress().version()).isEqualTo(InFlight.VERSION + 1);
    }

    @Test
    void aShipmentOpenedByACancellationIsStoredWithItsAnswer() {
        UUID orderId = UUID.randomUUID();
        EventEnvelope<OrderCancelling> cancelling = EventEnvelope.of(orderId, "change-" + orderId, null, orderCancelling());

        try (Correlation.Scope ignored = Correlation.open(cancelling.correlationId(), cancelling.eventId())) {
            shipping.onOrderCancelling(cancelling, cancelling.payload(), claimOf(cancelling));
        }

        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(shipment.cancelCausedByEventId()).isEqualTo(cancelling.eventId());
        assertThat(shipment.correlationId()).isEqualTo(cancelling.correlationId());
        assertThat(shipment.progress().version()).as("inserted, never updated").isZero();
        EventEnvelope<ShipmentCancelled> cancelled = published.await(orderId, ShipmentCancelled.class, WAIT);
        assertThat(cancelled.payload().shipmentId()).isEqualTo(shipment.id().toString());
        assertThat(cancelled.causationId()).isEqualTo(cancelling.eventId());
    }

    /**
     * Two events of one batch, in one transaction: the second reads the row the first inserted (nothing of the first
     * is left in Hibernate's hands), and the carrier call it made due is claimed and made once the transaction
     * committed.
     */
    @Test
    void aLaterEventOfTheSameTransactionReadsWhatAnEarlierOneWrote() {
        UUID orderId = UUID.randomUUID();
        String correlationId = "change-" + orderId;
        EventEnvelope<OrderCreated> created = EventEnvelope.of(orderId, correlationId, null, orderCreated());
        EventEnvelope<PaymentSucceeded> paid = EventEnvelope.of(orderId, correlationId, null, paymentSucceeded());

        QuarkusTransaction.requiringNew().run(() -> {
            try (Correlation.Scope ignored = Correlation.open(correlationId, created.eventId())) {
                shipping.onOrderCreated(created, created.payload(), claimOf(created));
            }
            try (Correlation.Scope ignored = Correlation.open(correlationId, paid.eventId())) {
                shipping.onPaymentSucceeded(paid, paid.payload(), claimOf(paid));
            }
        });

        EventEnvelope<ShipmentCreated> shipped = published.await(orderId, ShipmentCreated.class, WAIT);
        assertThat(shipped.causationId()).isEqualTo(paid.eventId());
        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.isPaid()).isTrue();
        assertThat(shipment.address().line1()).isEqualTo(created.payload().shippingAddress().line1());
        assertThat(shipment.attempts()).isZero();
        assertThat(shipment.progress().version()).as("inserted, paid and claimed, created at the carrier").isEqualTo(2);
    }

    /**
     * The claimed read builds the shipment from its row without Hibernate: every column comes back as Hibernate reads
     * it, the embedded address included (none while every one of its columns is null).
     */
    @Test
    void theClaimedReadReturnsTheShipmentAsStored() throws SQLException {
        UUID orderId = UUID.randomUUID();
        UUID shipmentId = UUID.randomUUID();
        UUID causedBy = UUID.randomUUID();
        UUID cancelCausedBy = UUID.randomUUID();
        Instant createdAt = Instant.now().minusSeconds(600).truncatedTo(ChronoUnit.MICROS);
        Instant nextAttemptAt = createdAt.plusSeconds(30);
        Instant claimedUntil = createdAt.plusSeconds(60);
        Instant updatedAt = createdAt.plusSeconds(90);
        // every column set, in a status without carrier work: no worker takes the row over while it is compared, and
        // no test that waits for the carrier to be idle waits for it
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                INSERT INTO shipment (id, order_id, status, paid, cancel_requested, creation_uncertain,
                    ship_name, ship_line1, ship_line2, ship_city, ship_postal_code, ship_country,
                    attempts, cancel_attempts, next_attempt_at, claimed_until, carrier_shipment_id, last_error,
                    correlation_id, caused_by_event_id, cancel_caused_by_event_id, created_at, updated_at, version,
                    cancel_refused)
                VALUES (?, ?, 'CANCELLED', true, true, true, 'Ada Lovelace', '12 St James Square', 'Flat 2', 'London',
                    'SW1Y 4JH', 'GB', 3, 2, ?, ?, 'carrier-7', 'timed out', ?, ?, ?, ?, ?, 11, true)""")) {
            ps.setObject(1, shipmentId);
            ps.setObject(2, orderId);
            ps.setTimestamp(3, Timestamp.from(nextAttemptAt));
            ps.setTimestamp(4, Timestamp.from(claimedUntil));
            ps.setString(5, "change-" + orderId);
            ps.setObject(6, causedBy);
            ps.setObject(7, cancelCausedBy);
            ps.setTimestamp(8, Timestamp.from(createdAt));
            ps.setTimestamp(9, Timestamp.from(updatedAt));
            ps.executeUpdate();
        }
        EventEnvelope<OrderCancelling> event = EventEnvelope.of(orderId, "change-" + orderId, null, orderCancelling());

        InboxClaim claim = claimOf(event);
        Shipment read = QuarkusTransaction.requiringNew().call(() -> shipments.lockByOrderIdForChange(orderId, claim))
                .orElseThrow();

        assertThat(claim.duplicate()).isFalse();
        assertThat(read).usingRecursiveComparison().ignoringFieldsMatchingRegexes(ENHANCEMENT)
                .isEqualTo(row(orderId));
        assertThat(read.id()).isEqualTo(shipmentId);
        assertThat(read.orderId()).isEqualTo(orderId);
        assertThat(read.correlationId()).isEqualTo("change-" + orderId);
        assertThat(read.createdAt()).isEqualTo(createdAt);
        assertThat(read.progress()).isEqualTo(new Shipment.Progress(ShipmentStatus.CANCELLED,
                new Address("Ada Lovelace", "12 St James Square", "Flat 2", "London", "SW1Y 4JH", "GB"), true, true,
                true, 3, 2, true, nextAttemptAt, claimedUntil, "carrier-7", "timed out", causedBy, cancelCausedBy,
                updatedAt, 11));

        InboxClaim again = claimOf(event);
        QuarkusTransaction.requiringNew().run(() -> shipments.lockByOrderIdForChange(orderId, again));
        assertThat(again.duplicate()).as("the claim of an event applied before").isTrue();

        // the carrier outcome's locked read, by the shipment's id, reads the same
        Shipment byId = QuarkusTransaction.requiringNew().call(() -> shipments.lockByIdForChange(shipmentId))
                .orElseThrow();
        assertThat(byId).usingRecursiveComparison().ignoringFieldsMatchingRegexes(ENHANCEMENT).isEqualTo(read);
        assertThat(QuarkusTransaction.requiringNew().call(() -> shipments.lockByIdForChange(UUID.randomUUID())))
                .isEmpty();
    }

    @Test
    void theClaimedReadOfAShipmentWithoutAnAddressOrOfNoShipmentAnswersTheClaim() {
        UUID orderId = UUID.randomUUID();
        EventEnvelope<PaymentSucceeded> paid = EventEnvelope.of(orderId, "change-" + orderId, null, paymentSucceeded());
        try (Correlation.Scope ignored = Correlation.open(paid.correlationId(), paid.eventId())) {
            shipping.onPaymentSucceeded(paid, paid.payload(), claimOf(paid));
        }
        EventEnvelope<OrderCreated> created = EventEnvelope.of(orderId, "change-" + orderId, null, orderCreated());

        Shipment read = QuarkusTransaction.requiringNew()
                .call(() -> shipments.lockByOrderIdForChange(orderId, claimOf(created))).orElseThrow();

        assertThat(read.address()).as("OrderCreated not heard yet").isNull();
        assertThat(read.isPaid()).isTrue();
        assertThat(read).usingRecursiveComparison().ignoringFieldsMatchingRegexes(ENHANCEMENT)
                .isEqualTo(row(orderId));

        UUID noOrder = UUID.randomUUID();
        InboxClaim claim = claimOf(EventEnvelope.of(noOrder, "change-" + noOrder, null, orderCreated()));
        Optional<Shipment> none = QuarkusTransaction.requiringNew()
                .call(() -> shipments.lockByOrderIdForChange(noOrder, claim));
        assertThat(none).isEmpty();
        assertThat(claim.duplicate()).isFalse();
    }

    /** A shipment whose create call is under way (claimed for a minute: no worker of this service takes it). */
    private record InFlight(UUID shipmentId, UUID orderId, String correlationId, UUID causedBy) {
        static final long VERSION = 3;
    }

    private InFlight createCallInFlight() throws SQLException {
        UUID orderId = UUID.randomUUID();
        InFlight call = new InFlight(UUID.randomUUID(), orderId, "change-" + orderId, UUID.randomUUID());
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                INSERT INTO shipment (id, order_id, status, paid, cancel_requested, creation_uncertain,
                    ship_name, ship_line1, ship_city, ship_postal_code, ship_country,
                    attempts, cancel_attempts, next_attempt_at, claimed_until, correlation_id,
                    caused_by_event_id, created_at, updated_at, version)
                VALUES (?, ?, 'REQUESTED', true, false, false, 'Ada Lovelace', '12 St James Square', 'London', 'SW1Y 4JH',
                    'GB', 0, 0, now(), ?, ?, ?, now(), now(), ?)""")) {
            ps.setObject(1, call.shipmentId());
            ps.setObject(2, call.orderId());
            ps.setTimestamp(3, Timestamp.from(Instant.now().plusSeconds(60)));
            ps.setString(4, call.correlationId());
            ps.setObject(5, call.causedBy());
            ps.setLong(6, InFlight.VERSION);
            ps.executeUpdate();
        }
        return call;
    }

    private Shipment row(UUID orderId) {
        return shipping.find(orderId).orElseThrow();
    }

    /** The event's claim as the consumer makes it: under its order's lock. */
    private InboxClaim claimOf(EventEnvelope<?> event) {
        return inbox.claimOf(event, event.topic(), OptionalInt.of(ShipmentRepository.ORDER_LOCK_SPACE));
    }
}
