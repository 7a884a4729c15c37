package dev.ordersaga.payment.persistence;

import dev.ordersaga.eventing.EventStoreException;
import dev.ordersaga.eventing.Inbox;
import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.Topics;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.domain.PaymentStatus;
import dev.ordersaga.payment.domain.SettlementWatch;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.retry.Backoff;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.OptionalInt;
import java.util.UUID;

import static dev.ordersaga.payment.testing.PaymentFixtures.TOTAL;
import static dev.ordersaga.payment.testing.PaymentFixtures.orderCancelling;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * On the event path a payment is read and written with plain SQL, not by Hibernate: read whole, with its version, in
 * the round trip of the event's inbox claim; written whole in the round trip of its event, with its version moved on,
 * and never over a row that moved on meanwhile.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(PaymentSandboxResource.class)
class PaymentWritesTest {

    @Inject
    PaymentRepository payments;

    @Inject
    TransactionalWrites writes;

    @Inject
    Inbox inbox;

    @Test
    void aNewPaymentIsStoredWhole() {
        Payment opened = open();

        Payment stored = QuarkusTransaction.requiringNew().call(() -> payments.findById(opened.id()));
        // the column keeps four decimals: 21.00 comes back as 21.0000
        assertThat(stored.progress()).usingRecursiveComparison()
                .withComparatorForType(BigDecimal::compareTo, BigDecimal.class).isEqualTo(opened.progress());
        assertThat(stored.orderId()).isEqualTo(opened.orderId());
        assertThat(stored.correlationId()).isEqualTo(opened.correlationId());
        assertThat(stored.createdAt()).isEqualTo(opened.createdAt());
        assertThat(stored.amount()).isEqualByComparingTo(TOTAL);
        assertThat(stored.currency()).isEqualTo("EUR");
    }

    @Test
    void aTransitionIsWrittenWithTheVersionMovedOnAndNothingUnchangedIsWritten() {
        Payment opened = open();

        QuarkusTransaction.requiringNew().run(() -> {
            Payment payment = payments.lockForChange(opened.id()).orElseThrow();
            Payment.Progress asRead = payment.progress();
            assertThat(payments.update(payment, asRead)).as("nothing changed, nothing to write").isEmpty();
            payment.noteStockReserved(UUID.randomUUID(), now());
            writes.write(payments.update(payment, asRead).orElseThrow(), () -> "charge");
        });

        Payment stored = QuarkusTransaction.requiringNew().call(() -> payments.findById(opened.id()));
        assertThat(stored.status()).isEqualTo(PaymentStatus.CHARGING);
        assertThat(stored.stockReserved()).isTrue();
        assertThat(stored.nextAttemptAt()).isNotNull();
        assertThat(stored.progress().version()).isEqualTo(1);
    }

    @Test
    void aTransitionOfAPaymentReadBeforeTheRowMovedOnChangesNothing() {
        Payment opened = open();
        Payment stale = QuarkusTransaction.requiringNew().call(() -> payments.lockForChange(opened.id()).orElseThrow());
        Payment.Progress asRead = stale.progress();
        QuarkusTransaction.requiringNew().run(() -> writes.write("UPDATE payment SET version = version + 1 WHERE id = ?",
                bump -> bump.setObject(1, opened.id()), () -> "bump the version"));

        stale.noteStockReserved(UUID.randomUUID(), now());
        assertThatThrownBy(() -> QuarkusTransaction.requiringNew().run(() ->
                writes.write(payments.update(stale, asRead).orElseThrow(), () -> "charge")))
                .isInstanceOf(EventStoreException.class).hasMessageContaining("changed 0 row(s), not 1");

        Payment stored = QuarkusTransaction.requiringNew().call(() -> payments.findById(opened.id()));
        assertThat(stored.status()).isEqualTo(PaymentStatus.PENDING);
        assertThat(stored.stockReserved()).isFalse();
    }

    @Test
    void theReadSentWithAnEventsClaimReturnsThePaymentAsStored() {
        Payment opened = open();
        // a late settlement of a declined charge, its refund claimed and failed once: every column but the refund id,
        // an operator's confirm of it (theColumnsOfARefundConfirmedByHandAreReadAsStored) and the token (forgotten
        // once past charging: a charge read with it is goodCardIsChargedAndPaymentSucceededPublished) set, and the
        // version moved on; the next attempt an hour away, so that the worker leaves the row alone
        QuarkusTransaction.requiringNew().run(() -> {
            Payment payment = payments.lockForChange(opened.id()).orElseThrow();
            Payment.Progress asRead = payment.progress();
            payment.noteStockReserved(UUID.randomUUID(), now());
            payment.requestCancellation(UUID.randomUUID(), now());
            payment.chargeDeclined("insufficient funds", now(), new SettlementWatch(Duration.ofSeconds(2), 5));
            payment.chargeSucceeded("ch-late", now());
            payment.lease(now(), now().plusSeconds(30));
            payment.refundFailed(now(), new Backoff(Duration.ofHours(1), Duration.ofHours(2)), true);
            writes.write(payments.update(payment, asRead).orElseThrow(), () -> "move on");
        });
        Payment stored = QuarkusTransaction.requiringNew().call(() -> payments.findById(opened.id()));
        assertThat(stored.progress()).hasNoNullFieldsOrPropertiesExcept("providerRefundId", "paymentToken",
                "refundConfirmedBy", "refundConfirmation");
        assertThat(stored.progress().version()).isEqualTo(1);

        InboxClaim claim = claimOf(opened.orderId());
        Payment read = QuarkusTransaction.requiringNew().call(
                () -> payments.lockByOrderIdForChange(opened.orderId(), claim)).orElseThrow();

        assertThat(claim.duplicate()).isFalse();
        assertStoredAs(read, stored);
        // and so does the provider outcome's locked read by id, with its order
        Payment byId = QuarkusTransaction.requiringNew().call(() -> payments.lockForChange(opened.id())).orElseThrow();
        assertStoredAs(byId, stored);
        assertThat(byId.orderId()).isEqualTo(opened.orderId());
        assertThat(QuarkusTransaction.requiringNew().call(() -> payments.lockForChange(UUID.randomUUID()))).isEmpty();
    }

    @Test
    void theColumnsOfARefundConfirmedByHandAreReadAsStored() {
        Payment opened = open();
        QuarkusTransaction.requiringNew().run(() -> {
            Payment payment = payments.lockForChange(opened.id()).orElseThrow();
            Payment.Progress asRead = payment.progress();
            payment.noteStockReserved(UUID.randomUUID(), now());
            payment.chargeSucceeded("ch-hand", now());
            payment.requestCancellation(UUID.randomUUID(), now());
            payment.refundFailed(now(), new Backoff(Duration.ofHours(1), Duration.ofHours(2)), true);
            payment.confirmRefundedByHand("re-hand", "ada", "refunded at the provider's dashboard", now());
            writes.write(payments.update(payment, asRead).orElseThrow(), () -> "confirm");
        });
        Payment stored = QuarkusTransaction.requiringNew().call(() -> payments.findById(opened.id()));
        assertThat(stored.refundConfirmedBy()).isEqualTo("ada");
        assertThat(stored.refundConfirmation()).isEqualTo("refunded at the provider's dashboard");
        assertThat(stored.providerRefundId()).isEqualTo("re-hand");

        Payment byId = QuarkusTransaction.requiringNew().call(() -> payments.lockForChange(opened.id())).orElseThrow();
        assertStoredAs(byId, stored);
    }

    @Test
    void theReadSentWithAnEventsClaimReturnsAPaymentWithoutItsOrderAsStoredAndNothingForAnOrderWithout() {
        // StockReserved came first: no amount, currency, token, nor a call owed
        Payment early = Payment.beforeOrderCreated(UUID.randomUUID(), "writes-" + UUID.randomUUID(), UUID.randomUUID(),
                now());
        QuarkusTransaction.requiringNew().run(() -> writes.write(payments.insertion(early), () -> "open"));
        Payment stored = QuarkusTransaction.requiringNew().call(() -> payments.findById(early.id()));

        InboxClaim claim = claimOf(early.orderId());
        Payment read = QuarkusTransaction.requiringNew().call(
                () -> payments.lockByOrderIdForChange(early.orderId(), claim)).orElseThrow();
        assertStoredAs(read, stored);
        assertThat(read.amount()).isNull();
        assertThat(read.nextAttemptAt()).isNull();

        UUID unknown = UUID.randomUUID();
        InboxClaim none = claimOf(unknown);
        assertThat(QuarkusTransaction.requiringNew().call(() -> payments.lockByOrderIdForChange(unknown, none))).isEmpty();
        assertThat(none.duplicate()).isFalse();
    }

    @Test
    void theClaimSentWithTheReadTellsARepeatedEvent() {
        Payment opened = open();
        EventEnvelope<OrderCancelling> event = EventEnvelope.of(opened.orderId(), opened.correlationId(), null,
                orderCancelling());
        InboxClaim first = claimOf(event);
        InboxClaim again = claimOf(event);

        QuarkusTransaction.requiringNew().run(() -> payments.lockByOrderIdForChange(opened.orderId(), first));
        QuarkusTransaction.requiringNew().run(() -> payments.lockByOrderIdForChange(opened.orderId(), again));

        assertThat(first.duplicate()).isFalse();
        assertThat(again.duplicate()).isTrue();
    }

    /** The payment read with plain SQL is the one Hibernate reads, field by field. */
    private static void assertStoredAs(Payment read, Payment stored) {
        assertThat(read.id()).isEqualTo(stored.id());
        assertThat(read.orderId()).isEqualTo(stored.orderId());
        assertThat(read.correlationId()).isEqualTo(stored.correlationId());
        assertThat(read.createdAt()).isEqualTo(stored.createdAt());
        assertThat(read.progress()).isEqualTo(stored.progress());
    }

    /** The claim of an OrderCancelling for the order, under its lock as the consumer's claims are. */
    private InboxClaim claimOf(UUID orderId) {
        return claimOf(EventEnvelope.of(orderId, "writes-" + orderId, null, orderCancelling()));
    }

    private InboxClaim claimOf(EventEnvelope<?> event) {
        return inbox.claimOf(event, Topics.ORDER_EVENTS, OptionalInt.of(PaymentRepository.ORDER_LOCK_SPACE));
    }

    private Payment open() {
        Payment payment = Payment.forOrder(UUID.randomUUID(), TOTAL, "EUR", "tok_ok", "writes-" + UUID.randomUUID(),
                UUID.randomUUID(), now());
        QuarkusTransaction.requiringNew().run(() -> writes.write(payments.insertion(payment), () -> "open"));
        return payment;
    }

    /** As the column keeps it: microseconds. */
    private static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MICROS);
    }
}
