package dev.ordersaga.payment.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.domain.PaymentStatus;
import dev.ordersaga.payment.persistence.PaymentRepository;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.testing.Inboxes;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;

import static dev.ordersaga.payment.testing.PaymentFixtures.orderCancelling;
import static dev.ordersaga.payment.testing.PaymentFixtures.orderCreated;
import static dev.ordersaga.payment.testing.PaymentFixtures.stockReserved;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each handler sends the event's inbox claim with its first read and acts only if the claim was new: an event
 * delivered again writes nothing, not even the payment's row at its version, nor an event. Applied here as the
 * consumer applies a delivery ({@link IncomingEvents#apply}, a transaction each), so that what a delivery wrote is
 * counted in its own transaction: the outbox row of an event is deleted in the transaction that writes it.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(PaymentSandboxResource.class)
class SagaEventsRedeliveryTest {

    private static final Written NOTHING = new Written(0, 0, 0, 0);

    @Inject
    IncomingEvents incoming;

    @Inject
    SagaEventsConsumer consumer;

    @Inject
    PaymentRepository payments;

    @Inject
    DataSource dataSource;

    /** Rows one delivery's transaction wrote. */
    private record Written(long inbox, long paymentsInserted, long paymentsUpdated, long outbox) {

        Written minus(Written before) {
            return new Written(inbox - before.inbox, paymentsInserted - before.paymentsInserted,
                    paymentsUpdated - before.paymentsUpdated, outbox - before.outbox);
        }
    }

    @Test
    void eachEventDeliveredAgainChangesNothing() {
        UUID orderId = UUID.randomUUID();
        String correlationId = "payment-redelivery-" + orderId;
        EventEnvelope<?> created = EventEnvelope.of(orderId, correlationId, null, orderCreated("tok_ok"));
        // cancelled before the stock is reserved: nothing is charged, so no worker touches the row meanwhile
        EventEnvelope<?> cancelling = EventEnvelope.of(orderId, correlationId, created.eventId(), orderCancelling());
        EventEnvelope<?> reserved = EventEnvelope.of(orderId, correlationId, created.eventId(), stockReserved());

        try (LogCapture log = LogCapture.of(IncomingEvents.class)) {
            assertThat(delivered(created)).as("the payment opened").isEqualTo(new Written(1, 1, 0, 0));
            Payment.Progress opened = payment(orderId).progress();
            assertThat(delivered(created)).isEqualTo(NOTHING);
            assertThat(payment(orderId).progress()).isEqualTo(opened);
            assertThat(opened.status()).isEqualTo(PaymentStatus.PENDING);
            assertThat(opened.version()).isZero();

            assertThat(delivered(cancelling)).as("cancelled, with its PaymentRefunded").isEqualTo(new Written(1, 0, 1, 1));
            Payment.Progress cancelled = payment(orderId).progress();
            assertThat(delivered(cancelling)).isEqualTo(NOTHING);
            assertThat(payment(orderId).progress()).isEqualTo(cancelled);
            assertThat(cancelled.status()).isEqualTo(PaymentStatus.CANCELLED);
            assertThat(cancelled.refundAnswered()).isTrue();
            assertThat(cancelled.version()).isEqualTo(1);

            assertThat(delivered(reserved)).as("noted, never charged").isEqualTo(new Written(1, 0, 1, 0));
            Payment.Progress noted = payment(orderId).progress();
            assertThat(delivered(reserved)).isEqualTo(NOTHING);
            assertThat(payment(orderId).progress()).isEqualTo(noted);
            assertThat(noted.status()).isEqualTo(PaymentStatus.CANCELLED);
            assertThat(noted.stockReserved()).isTrue();
            assertThat(noted.version()).isEqualTo(2);

            for (EventEnvelope<?> event : new EventEnvelope<?>[]{created, cancelling, reserved}) {
                assertThat(log.containing("Duplicate " + event.type() + " " + event.eventId()))
                        .as("the repeat of %s is skipped as a duplicate", event.type()).hasSize(1);
                assertThat(Inboxes.rows(dataSource, event.eventId())).isEqualTo(1);
            }
        }
    }

    /** The event applied in a transaction of its own, as the consumer applies a delivery; what that transaction wrote. */
    private Written delivered(EventEnvelope<?> event) {
        String json = EventCodec.encode(event);
        return QuarkusTransaction.requiringNew().call(() -> {
            Written before = writtenSoFar();
            incoming.apply(event.topic(), json, consumer.handlers());
            return writtenSoFar().minus(before);
        });
    }

    /**
     * Counted by PostgreSQL on this transaction's connection, the one the handler writes through (the pool hands it to
     * every caller in the transaction): this transaction's rows, and those of earlier transactions on the connection
     * that the server has not reported yet. It reports them only while idle outside a transaction, so within one the
     * latter stay put and a delivery's rows are what the counts grew by.
     */
    private Written writtenSoFar() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("""
                     SELECT coalesce(sum(n_tup_ins) FILTER (WHERE relname = 'inbox'), 0),
                            coalesce(sum(n_tup_ins) FILTER (WHERE relname = 'payment'), 0),
                            coalesce(sum(n_tup_upd) FILTER (WHERE relname = 'payment'), 0),
                            coalesce(sum(n_tup_ins) FILTER (WHERE relname = 'outbox'), 0)
                     FROM pg_stat_xact_user_tables""");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return new Written(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4));
        }
    }

    private Payment payment(UUID orderId) {
        return QuarkusTransaction.requiringNew().call(() -> payments.findByOrderId(orderId)).orElseThrow();
    }

}
