package dev.ordersaga.payment.persistence;

import dev.ordersaga.eventing.EventStoreException;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.domain.PaymentStatus;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;

import static dev.ordersaga.payment.testing.PaymentFixtures.TOTAL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * On the event path a payment is written with plain SQL in the round trip of its event, not by Hibernate's flush:
 * what is written is the whole payment, with its version moved on, and never over a row that moved on meanwhile.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(PaymentSandboxResource.class)
class PaymentWritesTest {

    @Inject
    PaymentRepository payments;

    @Inject
    TransactionalWrites writes;

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
            Payment payment = payments.findForChange(opened.id()).orElseThrow();
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
        Payment stale = QuarkusTransaction.requiringNew().call(() -> payments.findForChange(opened.id()).orElseThrow());
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
