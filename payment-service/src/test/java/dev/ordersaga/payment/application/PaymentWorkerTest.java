package dev.ordersaga.payment.application;

import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.persistence.PaymentRepository;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.StackTestResource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/** Claims: two workers (of one replica or two) never act on the same payment at once. */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(PaymentSandboxResource.class)
class PaymentWorkerTest {

    @Inject
    PaymentService payments;

    @Inject
    PaymentRepository repository;

    @Inject
    PaymentWorker worker;

    @Inject
    MeterRegistry meters;

    @Test
    void twoWorkersClaimingAtOnceNeverGetTheSamePayment() throws Exception {
        // more due payments than one sweep batch (20): the application's own sweep cannot take them all
        Set<UUID> ours = duePaymentsBeforeAnyOther(30);
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService workers = Executors.newFixedThreadPool(2);
        try {
            List<Future<List<PaymentTask>>> claims = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                claims.add(workers.submit(() -> {
                    go.await();
                    return payments.claimDue(20);
                }));
            }
            go.countDown();
            // the claims take other due payments too (an earlier test's, the service's own work): ours are shown
            List<UUID> first = ofOurs(claims.get(0).get(30, TimeUnit.SECONDS), ours);
            List<UUID> second = ofOurs(claims.get(1).get(30, TimeUnit.SECONDS), ours);

            assertThat(first).as("each of ours claimed by one of the two only").doesNotContainAnyElementsOf(second)
                    .doesNotHaveDuplicates();
            assertThat(second).doesNotHaveDuplicates();
            Set<UUID> claimedOfOurs = new HashSet<>(first);
            claimedOfOurs.addAll(second);
            assertThat(claimedOfOurs).as("the two claimants took some of the due payments").isNotEmpty();

            UUID claimed = claimedOfOurs.iterator().next();
            assertThat(payments.claim(claimed)).as("leased: no other worker takes it until its outcome is in").isEmpty();
        } finally {
            workers.shutdownNow();
        }
    }

    @Test
    void aRefundThatFailsForACauseOfOursAlertsToo() {
        // a payment the service has no row of: whatever the provider answers cannot be recorded
        UUID paymentId = UUID.randomUUID();
        PaymentTask refund = new PaymentTask(paymentId, UUID.randomUUID(), Payment.ProviderCall.REFUND,
                new BigDecimal("21.00"), "EUR", "tok_ok", "ch_" + paymentId, paymentId.toString(), "refund-" + paymentId,
                "cid-" + paymentId, UUID.randomUUID(), true, null, null);
        double before = refundFailures();
        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            worker.work(refund);
            assertThat(log.containing("ALERT compensation failed: refund of order " + refund.orderId())).hasSize(1);
        }
        // the service's counter: a refund of an older run's payment may fail meanwhile (this run's sandbox does not
        // know its charge); the alert above is this one's
        assertThat(refundFailures()).isGreaterThanOrEqualTo(before + 1);
    }

    @Test
    void aCancellingOrdersChargeStatusThatFailsForACauseOfOursAlertsToo() {
        // a payment the service has no row of: the provider's "no charge" cannot be recorded
        UUID paymentId = UUID.randomUUID();
        PaymentTask status = new PaymentTask(paymentId, UUID.randomUUID(), Payment.ProviderCall.CHARGE_STATUS,
                new BigDecimal("21.00"), "EUR", "tok_ok", null, paymentId.toString(), "refund-" + paymentId,
                "cid-" + paymentId, UUID.randomUUID(), true, null, null);
        double before = compensationFailures("charge-status");
        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            worker.work(status);
            assertThat(log.containing("ALERT compensation failed: charge status of order " + status.orderId())).hasSize(1);
        }
        assertThat(compensationFailures("charge-status")).isGreaterThanOrEqualTo(before + 1);
    }

    @Test
    void aChargeMadeAtTheProviderThatCannotBeRecordedAlertsAndIsCounted() {
        // a payment the service has no row of: the provider charges it, and the charge cannot be recorded
        UUID paymentId = UUID.randomUUID();
        PaymentTask charge = new PaymentTask(paymentId, UUID.randomUUID(), Payment.ProviderCall.CHARGE,
                new BigDecimal("21.00"), "EUR", "tok_ok", null, paymentId.toString(), "refund-" + paymentId,
                "cid-" + paymentId, UUID.randomUUID(), false, Instant.now(), null);
        double before = unrecorded();
        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            worker.work(charge);
            assertThat(log.containing("ALERT charge ")).singleElement().satisfies(line -> {
                assertThat(line.message()).contains("of order " + charge.orderId() + " was made at the provider and "
                        + "could not be recorded");
                assertThat(line.level()).isEqualTo(org.jboss.logmanager.Level.ERROR);
            });
        }
        assertThat(unrecorded()).isEqualTo(before + 1);
    }

    private double unrecorded() {
        return meters.find("saga.provider.outcomes.unrecorded").tag("outcome", "charge").counter().count();
    }

    private double refundFailures() {
        return compensationFailures("refund");
    }

    private double compensationFailures(String step) {
        Counter counter = meters.find("saga.compensation.failures").tag("step", step).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void aClaimedTaskCarriesWhatTheCallNeeds() {
        // claimed in the transaction that writes the row: the application's own sweep cannot see it before
        PaymentTask task = QuarkusTransaction.requiringNew().call(() -> {
            UUID written = duePayment();
            repository.flush();
            return payments.claim(written).orElseThrow();
        });
        UUID id = task.paymentId();
        // a first charge not claimed by the transaction that made it due, as every one is (a dead worker's): asked about
        assertThat(task.call()).isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
        assertThat(task.amount()).isEqualByComparingTo("21.00");
        assertThat(task.chargeIdempotencyKey()).isEqualTo(id.toString());
        assertThat(task.correlationId()).startsWith("claim-");
        assertThat(task.causedByEventId()).isNotNull();
        assertThat(payments.claim(id)).as("leased: claimed once").isEmpty();
    }

    /**
     * CHARGING payments written directly (no wake-up), so that only sweeps find them, and due before any other payment:
     * a claim takes the longest due first, and other due payments (an earlier run's) would otherwise fill both claims.
     * A payment falls due later than this, never earlier: a claim leases it into the future, an outcome reschedules it
     * from now.
     */
    private Set<UUID> duePaymentsBeforeAnyOther(int n) {
        return QuarkusTransaction.requiringNew().call(() -> {
            Set<UUID> ids = new HashSet<>();
            IntStream.range(0, n).forEach(i -> ids.add(duePayment()));
            repository.flush();
            repository.getEntityManager().createNativeQuery("""
                            UPDATE payment SET next_attempt_at = LEAST(
                                (SELECT min(next_attempt_at) FROM payment WHERE id NOT IN (?1)), next_attempt_at)
                                - interval '1 millisecond'
                            WHERE id IN (?1)""")
                    .setParameter(1, ids)
                    .executeUpdate();
            return ids;
        });
    }

    /** A CHARGING payment due a second ago, persisted in the caller's transaction. */
    private UUID duePayment() {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS).minusSeconds(1);
        UUID orderId = UUID.randomUUID();
        Payment payment = Payment.forOrder(orderId, new BigDecimal("21.00"), "EUR", "tok_ok",
                "claim-" + orderId, UUID.randomUUID(), now);
        payment.noteStockReserved(UUID.randomUUID(), now);
        repository.persist(payment);
        return payment.id();
    }

    private static List<UUID> ofOurs(List<PaymentTask> tasks, Set<UUID> ours) {
        return tasks.stream().map(PaymentTask::paymentId).filter(ours::contains).toList();
    }
}
