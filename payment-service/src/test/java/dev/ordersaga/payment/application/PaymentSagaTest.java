package dev.ordersaga.payment.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.PaymentFailed;
import dev.ordersaga.events.PaymentOnHold;
import dev.ordersaga.events.PaymentRefunded;
import dev.ordersaga.events.PaymentRetryRequested;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.domain.PaymentStatus;
import dev.ordersaga.payment.persistence.PaymentRepository;
import dev.ordersaga.payment.provider.PaymentProviderClient;
import dev.ordersaga.payment.testing.PaymentFixtures;
import dev.ordersaga.payment.testing.OrderSaga;
import dev.ordersaga.payment.testing.OrderSagas;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.payment.testing.ProviderLedger;
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

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import static dev.ordersaga.payment.testing.PaymentFixtures.orderCancelling;
import static dev.ordersaga.payment.testing.PaymentFixtures.orderCreated;
import static dev.ordersaga.payment.testing.PaymentFixtures.stockReserved;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static io.restassured.RestAssured.given;

/**
 * payment-service on the real stack against the provider sandbox: facts go in on order.events and inventory.events,
 * outcomes are the payment row, what landed on payment.events, and the provider's ledger.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(PaymentSandboxResource.class)
class PaymentSagaTest {

    /** generous: the first run of a fresh consumer group reads the topics' backlog first */
    private static final Duration PATIENCE = Duration.ofSeconds(90);

    @RegisterExtension
    static final OrderSagas sagas = new OrderSagas();

    @Inject
    PaymentService payments;

    @Inject
    OutboxWriter outbox;

    @Inject
    MeterRegistry meters;

    @Inject
    PaymentWorker worker;

    @Inject
    PaymentRepository repository;

    @Inject
    SettlementReconciliation reconciliation;

    @Inject
    SurplusRefunds surplusRefunds;

    @Inject
    PaymentProviderClient provider;

    @ConfigProperty(name = "payment.provider.url")
    String providerUrl;

    @Test
    void goodCardIsChargedAndPaymentSucceededPublished() {
        OrderSaga saga = saga("ok");
        saga.publish(orderCreated("tok_ok"));
        EventEnvelope<StockReserved> reserved = saga.publish(stockReserved());

        EventEnvelope<PaymentSucceeded> succeeded = awaitOne(saga, PaymentSucceeded.class);

        Payment payment = payment(saga);
        assertThat(payment.status()).isEqualTo(PaymentStatus.SUCCEEDED);
        assertThat(payment.paymentToken()).as("charged: the stored row keeps no token").isNull();
        assertThat(succeeded.payload().paymentId()).isEqualTo(payment.id().toString());
        assertThat(succeeded.payload().amount()).isEqualByComparingTo("21.00");
        assertThat(succeeded.payload().currency()).isEqualTo("EUR");
        assertThat(succeeded.correlationId()).isEqualTo(saga.correlationId());
        assertThat(succeeded.causationId()).as("caused by StockReserved").isEqualTo(reserved.eventId());
        ProviderLedger ledger = ledger(saga);
        assertThat(ledger.charges()).singleElement().satisfies(charge -> {
            assertThat(charge.idempotencyKey()).isEqualTo(payment.id().toString());
            assertThat(charge.amount()).isEqualByComparingTo("21.00");
            assertThat(charge.status()).isEqualTo("succeeded");
            assertThat(succeeded.payload().providerChargeId()).isEqualTo(charge.chargeId());
            assertThat(charge.chargeCalls()).as("answered at once: no call is sent again").isEqualTo(1);
        });
    }

    @Test
    void declinedCardPublishesPaymentFailed() {
        OrderSaga saga = saga("declined");
        saga.publish(orderCreated("tok_declined"));
        saga.publish(stockReserved());

        EventEnvelope<PaymentFailed> failed = awaitOne(saga, PaymentFailed.class);

        assertThat(failed.payload().reason()).isEqualTo("card declined");
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.DECLINED);
        assertThat(saga.published(PaymentSucceeded.class)).isEmpty();
    }

    @Test
    void timeoutOfAChargeThatSucceededIsResolvedByTheStatusQueryWithOneCharge() {
        OrderSaga saga = saga("timeout-ok");
        saga.publish(orderCreated("tok_timeout_succeeds"));
        saga.publish(stockReserved());

        awaitOne(saga, PaymentSucceeded.class);

        assertThat(saga.published(PaymentFailed.class)).as("a timeout is never a decline").isEmpty();
        // the sandbox books one charge per key however often it is called: the calls it counts tell a status query
        // from a charge sent again
        assertThat(ledger(saga).charges()).as("asked, never charged again").singleElement().satisfies(charge -> {
            assertThat(charge.chargeCalls()).isEqualTo(1);
            assertThat(charge.statusQueries()).isGreaterThanOrEqualTo(1);
        });
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);
        assertThat(payment(saga).attempts()).as("the timed-out charge call").isGreaterThanOrEqualTo(1);
    }

    @Test
    void timeoutOfAChargeThatWasDeclinedPublishesPaymentFailed() {
        OrderSaga saga = saga("timeout-declined");
        saga.publish(orderCreated("tok_timeout_declined"));
        saga.publish(stockReserved());

        EventEnvelope<PaymentFailed> failed = awaitOne(saga, PaymentFailed.class);

        assertThat(failed.payload().reason()).isNotBlank();
        assertThat(saga.published(PaymentSucceeded.class)).isEmpty();
        assertThat(ledger(saga).charges()).as("asked, never charged again").singleElement().satisfies(charge -> {
            assertThat(charge.chargeCalls()).isEqualTo(1);
            assertThat(charge.statusQueries()).isGreaterThanOrEqualTo(1);
        });
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.DECLINED);
    }

    @Test
    void failingRefundIsRetriedWithAnAlertPerFailureUntilItSucceeds() {
        OrderSaga saga = saga("refund-fails");
        double failuresBefore = compensationFailures("refund");
        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            saga.publish(orderCreated("tok_refund_fails_twice"));
            saga.publish(stockReserved());
            awaitOne(saga, PaymentSucceeded.class);

            saga.publish(orderCancelling());
            EventEnvelope<PaymentRefunded> refunded = awaitOne(saga, PaymentRefunded.class);

            assertThat(refunded.payload().amount()).isEqualByComparingTo("21.00");
            assertThat(refunded.payload().providerRefundId()).startsWith("re_");
            // the counter is the service's: a refund of an older run's payment may fail meanwhile (the sandbox of this
            // run does not know its charge); exactly two alerts carry this order's id
            assertThat(compensationFailures("refund") - failuresBefore).isGreaterThanOrEqualTo(2.0);
            List<LogCapture.Line> alerts = log.matching(l -> l.message().contains("ALERT")
                    && l.message().contains(saga.orderId().toString()));
            assertThat(alerts).hasSize(2).allSatisfy(alert -> {
                assertThat(alert.level()).isEqualTo(org.jboss.logmanager.Level.ERROR);
                assertThat(alert.correlationId()).isEqualTo(saga.correlationId());
            });
            assertThat(alerts.get(0).message()).contains("refund of order " + saga.orderId() + " attempt 1");
            assertThat(alerts.get(1).message()).contains("attempt 2");
        }
        ProviderLedger ledger = ledger(saga);
        assertThat(ledger.charges()).hasSize(1);
        assertThat(ledger.refunds()).singleElement()
                .satisfies(refund -> assertThat(refund.amount()).isEqualByComparingTo("21.00"));
        assertThat(ledger.net()).as("the customer is whole").isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.REFUNDED);
    }

    /**
     * A refund the provider refuses for good (a disputed charge) is retried with an alert until an operator, who
     * returned the money another way, confirms it: then the cancellation is answered with who said so, and the
     * provider is called no more. The row is moved by hand between the confirms so that no worker's call is under way
     * unless the test says so.
     */
    @Test
    void aRefundTheProviderKeepsRefusingIsEndedByAnOperatorsConfirm() {
        OrderSaga saga = saga("refund-refused");
        saga.publish(orderCreated("tok_refund_refused"));
        saga.publish(stockReserved());
        awaitOne(saga, PaymentSucceeded.class);
        String confirm = "/operator/payments/{orderId}/confirm-refunded";
        String body = "{\"reason\": \"returned by the card's chargeback\"}";
        operator().body(body).post(confirm, saga.orderId()).then().statusCode(409)
                .contentType("application/problem+json").body("detail", containsString("is SUCCEEDED"));

        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            saga.publish(orderCancelling());
            await().atMost(PATIENCE).until(() -> log.containing("ALERT compensation failed: refund of order "
                    + saga.orderId() + " attempt 2").size() == 1);
        }
        // taken from the workers between two calls, its last answer a refusal (a claim clears refund_refused), as if a
        // call were under way for an hour: no worker takes it meanwhile
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(20)).until(() -> update(saga, """
                next_attempt_at = now() + interval '1 hour', claimed_until = now() + interval '1 hour'
                WHERE order_id = ?1 AND refund_refused AND next_attempt_at IS DISTINCT FROM claimed_until""") == 1);
        int refused = payment(saga).attempts();
        operator().body(body).post(confirm, saga.orderId()).then().statusCode(409)
                .body("detail", containsString("under way"));
        alter(saga, "claimed_until = NULL");
        given().contentType(ContentType.JSON).body(body).post(confirm, saga.orderId()).then().statusCode(401);
        operator().body("{\"reason\": \" \"}").post(confirm, saga.orderId()).then().statusCode(400);
        operator().body("{\"providerRefundId\": \" \", \"reason\": \"by hand\"}").post(confirm, saga.orderId()).then()
                .statusCode(400).body("violations[0].field", containsString("providerRefundId"));
        operator().get("/operator/payments/{orderId}", saga.orderId()).then().statusCode(200)
                .body("status", equalTo("REFUNDING")).body("refundRefused", equalTo(true));
        operator().body(body).post(confirm, UUID.randomUUID()).then().statusCode(404)
                .contentType("application/problem+json");
        saga.awaitCommittedSoFar(outbox, PATIENCE);
        assertThat(saga.publishedTypes()).as("nothing answered before the operator's word")
                .containsExactly("PaymentSucceeded");

        try (LogCapture log = LogCapture.of(PaymentService.class)) {
            operator().body(body).post(confirm, saga.orderId()).then().statusCode(200)
                    .body("status", equalTo("REFUNDED")).body("refundConfirmedBy", equalTo("operator"))
                    .body("providerRefundId", nullValue()).body("nextAttemptAt", nullValue());
            assertThat(log.containing("Refund of order " + saga.orderId())).singleElement().satisfies(line -> {
                assertThat(line.level()).isEqualTo(org.jboss.logmanager.Level.WARN);
                assertThat(line.message()).contains("confirmed by operator operator after " + refused + " refused "
                        + "attempt(s), as settled outside the provider: returned by the card's chargeback");
                assertThat(line.correlationId()).isEqualTo(saga.correlationId());
            });
        }
        EventEnvelope<PaymentRefunded> answered = awaitOne(saga, PaymentRefunded.class);
        Payment payment = payment(saga);
        assertThat(answered.payload()).isEqualTo(new PaymentRefunded(payment.id().toString(), new BigDecimal("21.00"),
                "EUR", null, "operator", "returned by the card's chargeback"));
        assertThat(answered.correlationId()).isEqualTo(saga.correlationId());
        assertThat(payment.status()).isEqualTo(PaymentStatus.REFUNDED);
        assertThat(payment.nextAttemptAt()).as("no more refund calls").isNull();
        assertThat(ledger(saga).refunds()).as("the provider refunded nothing").isEmpty();

        // asked again (its answer lost), it holds and changes nothing; for another refund it is refused
        operator().body(body).post(confirm, saga.orderId()).then().statusCode(200).body("status", equalTo("REFUNDED"));
        operator().body("{\"providerRefundId\": \"re_other\", \"reason\": \"by hand\"}")
                .post(confirm, saga.orderId()).then().statusCode(409)
                .body("detail", containsString("made outside the provider, not refund re_other"));
        assertThat(payment(saga).updatedAt()).isEqualTo(payment.updatedAt());
        operator().get("/operator/payments/{orderId}", saga.orderId()).then().statusCode(200)
                .body("status", equalTo("REFUNDED")).body("refundConfirmation",
                        equalTo("returned by the card's chargeback")).body("$", not(hasKey("paymentToken")));
    }

    private static RequestSpecification operator() {
        return given().auth().preemptive().basic("operator", "operator").contentType(ContentType.JSON);
    }

    private void alter(OrderSaga saga, String assignments) {
        assertThat(update(saga, assignments + " WHERE order_id = ?1")).isEqualTo(1);
    }

    /** A surplus_charge row of the saga's payment, as the report's read records one; times as SQL expressions. */
    private void recordSurplus(OrderSaga saga, String chargeId, int attempts, String nextAttemptAt, String foundAt) {
        Payment payment = payment(saga);
        QuarkusTransaction.requiringNew().run(() -> repository.getEntityManager().createNativeQuery("""
                        INSERT INTO surplus_charge (id, provider_ref, owner_id, order_id, correlation_id, attempts,
                                                    next_attempt_at, found_at)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, %s, %s)""".formatted(nextAttemptAt, foundAt))
                .setParameter(1, UUID.randomUUID()).setParameter(2, chargeId).setParameter(3, payment.id())
                .setParameter(4, saga.orderId()).setParameter(5, saga.correlationId()).setParameter(6, attempts)
                .executeUpdate());
    }

    /** @param change what follows {@code UPDATE surplus_charge SET}, ?1 the order's id */
    private int updateSurplus(OrderSaga saga, String change) {
        return QuarkusTransaction.requiringNew().call(() -> repository.getEntityManager()
                .createNativeQuery("UPDATE surplus_charge SET " + change)
                .setParameter(1, saga.orderId())
                .executeUpdate());
    }

    /** @param change what follows {@code UPDATE payment SET}, ?1 the order's id */
    private int update(OrderSaga saga, String change) {
        return QuarkusTransaction.requiringNew().call(() -> repository.getEntityManager()
                .createNativeQuery("UPDATE payment SET " + change)
                .setParameter(1, saga.orderId())
                .executeUpdate());
    }

    /**
     * An operator re-sends OrderCancelling for an order stuck compensating, its PaymentRefunded lost on the way: a new
     * event, answered again with the refund made, and nothing refunded twice.
     */
    @Test
    void aCancellationSentAgainIsAnsweredAgainWithTheSameRefundAndRefundsNothingMore() {
        OrderSaga saga = saga("cancel-sent-again");
        saga.publish(orderCreated("tok_ok"));
        saga.publish(stockReserved());
        awaitOne(saga, PaymentSucceeded.class);
        saga.publish(orderCancelling());
        EventEnvelope<PaymentRefunded> first = awaitOne(saga, PaymentRefunded.class);
        assertThat(first.payload().amount()).isEqualByComparingTo("21.00");

        try (LogCapture log = LogCapture.of(PaymentService.class)) {
            EventEnvelope<OrderCancelling> again = saga.publish(orderCancelling());

            List<EventEnvelope<PaymentRefunded>> answers = awaitTwo(saga, PaymentRefunded.class);

            EventEnvelope<PaymentRefunded> second = answers.get(1);
            assertThat(answers.get(0).eventId()).isEqualTo(first.eventId());
            assertThat(second.eventId()).as("a new event").isNotEqualTo(first.eventId());
            assertThat(second.payload()).as("the same answer: amount, currency, refund id").isEqualTo(first.payload());
            assertThat(second.causationId()).isEqualTo(again.eventId());
            assertThat(second.correlationId()).isEqualTo(saga.correlationId());
            assertThat(log.containing("Order " + saga.orderId() + " cancelling again")).singleElement()
                    .satisfies(line -> {
                        assertThat(line.level()).isEqualTo(org.jboss.logmanager.Level.INFO);
                        assertThat(line.message()).contains(first.payload().providerRefundId());
                        assertThat(line.correlationId()).isEqualTo(saga.correlationId());
                    });
        }
        assertThat(saga.publishedTypes()).containsExactly("PaymentSucceeded", "PaymentRefunded", "PaymentRefunded");
        ProviderLedger ledger = ledger(saga);
        assertThat(ledger.refunds()).as("refunded once").singleElement().satisfies(refund -> {
            assertThat(refund.refundId()).isEqualTo(first.payload().providerRefundId());
            assertThat(refund.amount()).isEqualByComparingTo("21.00");
        });
        assertThat(ledger.net()).isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.REFUNDED);
    }

    /**
     * A cancelling order's charge whose first call got no answer: the cancellation is answered once the provider says
     * what became of the charge. While it does not answer, the compensation is stuck, and that alerts.
     */
    @Test
    void aCancellingOrdersChargeWhoseStatusGoesUnansweredAlertsAsAFailedCompensation() {
        OrderSaga saga = saga("cancel-status-unanswered");
        PaymentTask claimed = chargeClaimedFor(saga);
        saga.publish(orderCancelling());
        await().atMost(PATIENCE).until(() -> payment(saga).cancelRequested());
        double failuresBefore = compensationFailures("charge-status");
        String alert = "ALERT compensation failed: charge status of order " + saga.orderId();
        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            // longer than the client's timeout (1 s, the whole exchange 2 s): the status queries get no answer
            ProviderLedger.slow(providerUrl, Duration.ofSeconds(4));
            try {
                // the first call comes back unanswered: the worker asks for the charge's status after a backoff
                assertThat(payments.recordChargeUnresolved(claimed.paymentId(), claimed.claimedUntil())).isEqualTo(1);
                await().atMost(PATIENCE).until(() -> !log.containing(alert).isEmpty());
            } finally {
                ProviderLedger.slow(providerUrl, Duration.ZERO);
            }
            assertThat(log.containing(alert)).first().satisfies(line -> {
                assertThat(line.level()).isEqualTo(org.jboss.logmanager.Level.ERROR);
                assertThat(line.correlationId()).isEqualTo(saga.correlationId());
            });
        }
        assertThat(compensationFailures("charge-status")).isGreaterThan(failuresBefore);

        // answered again: the provider has no charge, and the cancellation is answered with nothing to refund
        EventEnvelope<PaymentRefunded> refunded = awaitOne(saga, PaymentRefunded.class);
        assertThat(refunded.payload().amount()).isEqualByComparingTo("0");
        assertThat(ledger(saga).charges()).isEmpty();
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.CANCELLED);
    }

    @Test
    void cancelBeforeStockReservedAnswersNothingToRefundAndNeverCharges() {
        OrderSaga saga = saga("cancel-first");
        saga.publish(orderCreated("tok_ok"));
        saga.publish(orderCancelling());

        EventEnvelope<PaymentRefunded> refunded = awaitOne(saga, PaymentRefunded.class);
        assertThat(refunded.payload().amount()).isEqualByComparingTo("0");
        assertThat(refunded.payload().providerRefundId()).isNull();

        saga.publish(stockReserved());
        await().atMost(PATIENCE).until(() -> payment(saga).stockReserved());

        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.CANCELLED);
        assertThat(payment(saga).nextAttemptAt()).isNull();
        assertThat(ledger(saga).charges()).isEmpty();
        assertThat(saga.publishedTypes()).containsExactly("PaymentRefunded");
    }

    @Test
    void cancelForAnOrderPaymentNeverHeardOfIsAnsweredWithNothingToRefund() {
        OrderSaga saga = saga("cancel-unknown");
        saga.publish(orderCancelling());

        EventEnvelope<PaymentRefunded> refunded = awaitOne(saga, PaymentRefunded.class);

        assertThat(refunded.payload().amount()).isEqualByComparingTo("0");
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.CANCELLED);
    }

    @Test
    void stockReservedBeforeOrderCreatedChargesOnceBothAreIn() {
        OrderSaga saga = saga("stock-first");
        saga.publish(stockReserved());
        await().atMost(PATIENCE).until(() -> findPayment(saga).isPresent());
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.PENDING);
        assertThat(payment(saga).orderKnown()).isFalse();

        saga.publish(orderCreated("tok_ok"));

        awaitOne(saga, PaymentSucceeded.class);
        assertThat(ledger(saga).charges()).singleElement()
                .satisfies(charge -> assertThat(charge.chargeCalls()).isEqualTo(1));
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);
    }

    @Test
    void cancelWhileTheChargeIsInFlightIsAnsweredAfterItByARefund() {
        OrderSaga saga = saga("cancel-in-flight");
        saga.publish(orderCreated("tok_timeout_succeeds"));
        saga.publish(stockReserved());
        await().atMost(PATIENCE).until(() -> findPayment(saga).map(p -> p.status() == PaymentStatus.CHARGING).orElse(false));

        saga.publish(orderCancelling());

        EventEnvelope<PaymentRefunded> refunded = awaitOne(saga, PaymentRefunded.class);
        assertThat(refunded.payload().amount()).isEqualByComparingTo("21.00");
        assertThat(saga.publishedTypes()).containsExactly("PaymentSucceeded", "PaymentRefunded");
        assertThat(ledger(saga).net()).isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.REFUNDED);
    }

    @Test
    void aChargeClaimedBeforeTheOrderWasCancelledIsNeverSent() {
        OrderSaga saga = saga("claimed-then-cancelled");
        // StockReserved's transaction claimed the charge for this worker; the cancellation commits before it runs
        PaymentTask claimed = chargeClaimedFor(saga);
        assertThat(claimed.call()).isEqualTo(Payment.ProviderCall.CHARGE);
        saga.publish(orderCancelling());
        await().atMost(PATIENCE).until(() -> payment(saga).cancelRequested());

        worker.work(claimed);

        EventEnvelope<PaymentRefunded> refunded = awaitOne(saga, PaymentRefunded.class);
        assertThat(refunded.payload().amount()).isEqualByComparingTo("0");
        assertThat(refunded.payload().providerRefundId()).isNull();
        assertThat(saga.publishedTypes()).containsExactly("PaymentRefunded");
        assertThat(ledger(saga).charges()).as("no charge for an order cancelled before any money moved").isEmpty();
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.CANCELLED);
    }

    /**
     * The charge was claimed (an operator sent a held payment back), and while it waited for a thread the provider's
     * webhook told of an earlier call's charge under the key. Sent now, it could be a second charge, had the provider
     * forgotten the key: it is not sent.
     */
    @Test
    void aChargeClaimedBeforeTheProviderToldOfAnEarlierOneIsNeverSent() {
        OrderSaga saga = saga("claimed-then-settled");
        PaymentTask claimed = chargeClaimedFor(saga);
        try (Correlation.Scope ignored = Correlation.open(claimed.correlationId(), claimed.causedByEventId())) {
            payments.recordChargeSucceeded(claimed.paymentId(), "ch_of_an_earlier_call");
        }
        awaitOne(saga, PaymentSucceeded.class);

        worker.work(claimed);

        assertThat(ledger(saga).charges()).as("no charge sent under the key").isEmpty();
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);
        assertThat(payment(saga).providerChargeId()).isEqualTo("ch_of_an_earlier_call");
        assertThat(saga.publishedTypes()).containsExactly("PaymentSucceeded");
    }

    @Test
    void aChargeThatNeverReachedTheProviderIsNotSentOnceTheOrderIsCancelling() {
        OrderSaga saga = saga("unreached-then-cancelled");
        PaymentTask claimed = chargeClaimedFor(saga);
        saga.publish(orderCancelling());
        await().atMost(PATIENCE).until(() -> payment(saga).cancelRequested());

        // the claimed call found the provider unreachable (no connection: nothing sent), and is asked about after a
        // backoff, by the application's worker, of a provider that is back and has no charge under the key
        assertThat(payments.recordChargeUnresolved(claimed.paymentId(), claimed.claimedUntil())).isEqualTo(1);

        EventEnvelope<PaymentRefunded> refunded = awaitOne(saga, PaymentRefunded.class);
        assertThat(refunded.payload().amount()).isEqualByComparingTo("0");
        assertThat(saga.publishedTypes()).containsExactly("PaymentRefunded");
        assertThat(ledger(saga).charges()).isEmpty();
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.CANCELLED);
    }

    @Test
    void aChargeThatLandsAfterTheProviderHadNoneForTheCancellationIsRefundedWithoutTheWebhook() {
        OrderSaga saga = saga("straggler-after-cancel");
        PaymentTask claimed = chargeClaimedFor(saga);
        saga.publish(orderCancelling());
        await().atMost(PATIENCE).until(() -> payment(saga).cancelRequested());

        // the claimed call timed out while the provider was still at it; asked about after a backoff, by the
        // application's worker, the provider has no charge yet, and the cancellation is answered with nothing to refund
        assertThat(payments.recordChargeUnresolved(claimed.paymentId(), claimed.claimedUntil())).isEqualTo(1);
        EventEnvelope<PaymentRefunded> nothing = awaitOne(saga, PaymentRefunded.class);
        assertThat(nothing.payload().amount()).isEqualByComparingTo("0");
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.CANCELLED);

        // then the call lands, and its webhook is lost (the sandbox here sends none)
        ProviderLedger.charge(providerUrl, claimed.chargeIdempotencyKey(), claimed.amount(), claimed.currency(),
                claimed.paymentToken(), saga.orderId().toString());
        assertThat(ledger(saga).net()).isEqualByComparingTo("21.00");

        await().atMost(PATIENCE).until(() -> ledger(saga).net().signum() == 0 && !ledger(saga).refunds().isEmpty());
        await().atMost(PATIENCE).until(() -> saga.published(PaymentRefunded.class).size() == 2);
        assertThat(saga.publishedTypes()).containsExactly("PaymentRefunded", "PaymentSucceeded", "PaymentRefunded");
        assertThat(ledger(saga).charges()).hasSize(1);
        assertThat(ledger(saga).refunds()).singleElement()
                .satisfies(refund -> assertThat(refund.amount()).isEqualByComparingTo("21.00"));
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.REFUNDED);
    }

    @Test
    void lateSettlementOfADeclinedPaymentIsFoundAndRefundedWithoutTheWebhook() {
        OrderSaga saga = saga("late-settlement-unannounced");
        saga.publish(orderCreated("tok_declined"));
        saga.publish(stockReserved());
        awaitOne(saga, PaymentFailed.class);
        saga.publish(orderCancelling());
        awaitOne(saga, PaymentRefunded.class);

        // the provider settles after all, and its webhook is lost (the sandbox here sends none)
        ProviderLedger.Charge declined = ledger(saga).charges().get(0);
        assertThat(declined.status()).isEqualTo("declined");
        ProviderLedger.settleLate(providerUrl, declined.chargeId());

        await().atMost(PATIENCE).until(() -> ledger(saga).net().signum() == 0 && !ledger(saga).refunds().isEmpty());
        await().atMost(PATIENCE).until(() -> saga.published(PaymentRefunded.class).size() == 2);
        assertThat(saga.publishedTypes())
                .containsExactly("PaymentFailed", "PaymentRefunded", "PaymentSucceeded", "PaymentRefunded");
        assertThat(ledger(saga).refunds()).singleElement()
                .satisfies(refund -> assertThat(refund.amount()).isEqualByComparingTo("21.00"));
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.REFUNDED);
    }

    @Test
    void aLateSettlementAfterTheWatchWhoseWebhookIsLostIsFoundInTheSettlementReportAndRefunded() {
        OrderSaga saga = saga("late-settlement-reported");
        saga.publish(orderCreated("tok_declined"));
        saga.publish(stockReserved());
        awaitOne(saga, PaymentFailed.class);
        saga.publish(orderCancelling());
        awaitOne(saga, PaymentRefunded.class);
        // the settlement watch's last look has been and gone
        QuarkusTransaction.requiringNew().run(() -> repository.getEntityManager()
                .createNativeQuery("UPDATE payment SET next_attempt_at = NULL WHERE order_id = ?1")
                .setParameter(1, saga.orderId()).executeUpdate());
        reconciliation.reconcile();

        // the provider settles after all, and its webhook is lost (the sandbox here sends none)
        ProviderLedger.settleLate(providerUrl, ledger(saga).charges().get(0).chargeId());
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.DECLINED);
        assertThat(payment(saga).nextCall()).isEqualTo(Payment.ProviderCall.NONE);

        UUID paymentId = payment(saga).id();
        assertThat(reconciliation.reconcile()).as("late settlements applied").containsOnlyOnce(paymentId);
        await().atMost(PATIENCE).until(() -> ledger(saga).net().signum() == 0 && !ledger(saga).refunds().isEmpty());
        await().atMost(PATIENCE).until(() -> saga.published(PaymentRefunded.class).size() == 2);
        assertThat(saga.publishedTypes())
                .containsExactly("PaymentFailed", "PaymentRefunded", "PaymentSucceeded", "PaymentRefunded");
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.REFUNDED);
        assertThat(reconciliation.reconcile()).as("not applied again").doesNotContain(paymentId);
    }

    /**
     * The provider forgot the payment's key and was charged under it again (an operator's retry-payment a day later):
     * the settlement report shows a second charge, which is refunded on its own, once, under a key of its own, retried
     * through the provider's refusals with an alert each; the payment and its saga are not touched.
     */
    @Test
    void aSecondChargeUnderAPaymentsKeyIsRefundedOnItsOwnWithAnAlert() {
        OrderSaga saga = saga("second-charge-refunded");
        String first = paidWith(saga, "tok_refund_fails_twice");
        String second = chargedAgainUnderAForgottenKey(saga, "tok_refund_fails_twice");
        double unmatchedBefore = counter("saga.payment.settlements.unmatched");
        double refundedBefore = counter("saga.payment.surplus.refunds");
        double failuresBefore = compensationFailures("surplus-refund");

        try (LogCapture found = LogCapture.of(SettlementReconciliation.class);
             LogCapture refunds = LogCapture.of(Surpluses.class)) {
            reconciliation.reconcile();
            await().atMost(PATIENCE).until(() -> !ledger(saga).refunds().isEmpty());
            reconciliation.reconcile();

            assertThat(found.containing("ALERT settlement of another charge").stream()
                    .filter(line -> line.message().contains(saga.orderId().toString())))
                    .as("once, however often it is read").singleElement().satisfies(line -> {
                        assertThat(line.message()).contains(first).contains(second)
                                .contains("refunded");
                        assertThat(line.correlationId()).isEqualTo(saga.correlationId());
                    });
            List<LogCapture.Line> alerts = refunds.containing("ALERT compensation failed: refund of surplus charge " + second);
            assertThat(alerts).hasSize(2).allSatisfy(alert -> {
                assertThat(alert.level()).isEqualTo(org.jboss.logmanager.Level.ERROR);
                assertThat(alert.correlationId()).isEqualTo(saga.correlationId());
            });
            assertThat(alerts.get(0).message()).contains("attempt 1");
            assertThat(alerts.get(1).message()).contains("attempt 2");
        }
        ProviderLedger ledger = ledger(saga);
        assertThat(ledger.refunds()).singleElement().satisfies(refund -> {
            assertThat(refund.chargeId()).isEqualTo(second);
            assertThat(refund.idempotencyKey()).isEqualTo("refund-surplus-" + second);
            assertThat(refund.amount()).isEqualByComparingTo("21.00");
        });
        assertThat(ledger.net()).as("the customer pays once").isEqualByComparingTo("21.00");
        assertThat(counter("saga.payment.settlements.unmatched") - unmatchedBefore).isEqualTo(1.0);
        assertThat(counter("saga.payment.surplus.refunds") - refundedBefore).isEqualTo(1.0);
        assertThat(compensationFailures("surplus-refund") - failuresBefore).isGreaterThanOrEqualTo(2.0);
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);
        assertThat(payment(saga).providerChargeId()).isEqualTo(first);
        saga.awaitCommittedSoFar(outbox, PATIENCE);
        assertThat(saga.publishedTypes()).as("the saga hears nothing of it").containsExactly("PaymentSucceeded");
    }

    /**
     * A second charge whose refund the provider refuses for good (a disputed charge) is retried with an alert until an
     * operator, who returned the money another way, confirms it: then the provider is called no more, and the payment
     * and its saga are not touched. The row is held from the workers by hand between the confirms, as in the
     * payment's own refund's test.
     */
    @Test
    void aSecondChargesRefundTheProviderKeepsRefusingIsEndedByAnOperatorsConfirm() {
        OrderSaga saga = saga("second-charge-refund-refused");
        paidWith(saga, "tok_refund_refused");
        String second = chargedAgainUnderAForgottenKey(saga, "tok_refund_refused");
        String surplusCharges = "/operator/payments/{orderId}/surplus-charges";
        String confirm = surplusCharges + "/{chargeId}/confirm-refunded";
        String body = "{\"reason\": \"returned by bank transfer TX-9\"}";

        try (LogCapture refunds = LogCapture.of(Surpluses.class)) {
            reconciliation.reconcile();
            String alert = "ALERT compensation failed: refund of surplus charge " + second + " of order "
                    + saga.orderId();
            await().atMost(PATIENCE).until(() -> refunds.containing(alert + " attempt 2").size() == 1);
            assertThat(refunds.containing(alert + " attempt 1")).singleElement().satisfies(line -> assertThat(
                    line.message()).endsWith("or an operator confirms it settled with the provider by hand"));
        }
        // taken from the workers between two calls, its last answer a refusal (a claim clears undo_refused), as if a
        // call were under way for an hour: no worker takes it meanwhile
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(20)).until(() -> updateSurplus(saga, """
                next_attempt_at = now() + interval '1 hour', claimed_until = now() + interval '1 hour'
                WHERE order_id = ?1 AND undo_refused AND next_attempt_at IS DISTINCT FROM claimed_until""") == 1);
        operator().body(body).post(confirm, saga.orderId(), second).then().statusCode(409)
                .contentType("application/problem+json").body("detail", containsString("under way"));
        assertThat(updateSurplus(saga, "claimed_until = NULL WHERE order_id = ?1")).isEqualTo(1);
        operator().get(surplusCharges, saga.orderId()).then().statusCode(200).body("size()", equalTo(1))
                .body("[0].providerRef", equalTo(second)).body("[0].undoRefused", equalTo(true))
                .body("[0].attempts", greaterThanOrEqualTo(2)).body("[0].undoneAt", nullValue());
        given().contentType(ContentType.JSON).body(body).post(confirm, saga.orderId(), second).then().statusCode(401);
        operator().body("{\"reason\": \" \"}").post(confirm, saga.orderId(), second).then().statusCode(400);
        operator().body(body).post(confirm, saga.orderId(), "ch_unknown").then().statusCode(404)
                .contentType("application/problem+json").body("detail", containsString("ch_unknown"));
        operator().get(surplusCharges, UUID.randomUUID()).then().statusCode(404)
                .contentType("application/problem+json").body("title", equalTo("Payment not found"));
        // PostgreSQL refuses a NUL in a string parameter; the id is checked as the body's text is
        operator().urlEncodingEnabled(false).body(body)
                .post("/operator/payments/" + saga.orderId() + "/surplus-charges/ch%00x/confirm-refunded")
                .then().statusCode(400).contentType("application/problem+json");
        operator().body(body).post(confirm, saga.orderId(), "c".repeat(PaymentProviderClient.ID_WIDTH + 1))
                .then().statusCode(400).contentType("application/problem+json");

        try (LogCapture log = LogCapture.of(Surpluses.class)) {
            operator().body(body).post(confirm, saga.orderId(), second).then().statusCode(200)
                    .body("undoneBy", equalTo("operator")).body("undoRef", nullValue())
                    .body("undoConfirmation", equalTo("returned by bank transfer TX-9"))
                    .body("nextAttemptAt", nullValue()).body("undoneAt", notNullValue());
            assertThat(log.containing("Done by hand: refund of surplus charge " + second)).singleElement()
                    .satisfies(line -> {
                        assertThat(line.level()).isEqualTo(org.jboss.logmanager.Level.WARN);
                        assertThat(line.message()).contains("confirmed by operator operator after")
                                .endsWith("as settled outside the provider: returned by bank transfer TX-9");
                        assertThat(line.correlationId()).isEqualTo(saga.correlationId());
                    });
        }
        assertThat(ledger(saga).refunds()).as("the provider refunded nothing").isEmpty();
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);

        // asked again (its answer lost), it holds and changes nothing; for a refund at the provider it is refused
        operator().body(body).post(confirm, saga.orderId(), second).then().statusCode(200)
                .body("undoneBy", equalTo("operator"));
        operator().body("{\"providerRefundId\": \"re_other\", \"reason\": \"by hand\"}")
                .post(confirm, saga.orderId(), second).then().statusCode(409)
                .body("detail", containsString("settled outside the provider, not re_other"));
        saga.awaitCommittedSoFar(outbox, PATIENCE);
        assertThat(saga.publishedTypes()).as("the saga hears nothing of it").containsExactly("PaymentSucceeded");
    }

    /**
     * A second charge whose refund call went unanswered may have been refunded: an operator's word cannot end it until
     * the provider refused a call.
     */
    @Test
    void aSecondChargeWhoseRefundWasNotRefusedIsNotConfirmable() {
        OrderSaga saga = saga("second-charge-not-refused");
        paidWith(saga, "tok_ok");
        String second = chargedAgainUnderAForgottenKey(saga, "tok_ok");
        // recorded as the report's read does, due in an hour: no worker takes it
        recordSurplus(saga, second, 3, "now() + interval '1 hour'", "now()");

        try {
            operator().body("{\"reason\": \"by hand\"}")
                    .post("/operator/payments/{orderId}/surplus-charges/{chargeId}/confirm-refunded", saga.orderId(),
                            second)
                    .then().statusCode(409).contentType("application/problem+json")
                    .body("detail", containsString("no call refused by the provider yet"));
            operator().get("/operator/payments/{orderId}/surplus-charges", saga.orderId()).then().statusCode(200)
                    .body("[0].undoRefused", equalTo(false)).body("[0].undoneBy", nullValue());
        } finally {
            // not left owed in the database the next runs share, whose sandbox knows no such charge
            updateSurplus(saga,
                    "undone_at = now(), next_attempt_at = NULL, undone_by = 'the test' WHERE order_id = ?1");
        }
    }

    /**
     * A charge call whose answer was lost, made again under a key the provider had forgotten meanwhile: two settled
     * charges under one key, neither heard of. One read of the report records one and refunds the other as a second
     * charge (the read kept only one of them, and the other waited for the entry's second look).
     */
    @Test
    void twoChargesUnderTheKeyOfAPaymentThatHeardOfNeitherAreSortedOutInOneRead() {
        OrderSaga saga = saga("two-charges-unheard");
        PaymentTask claimed = chargeClaimedFor(saga);
        reconciliation.reconcile();
        for (int call = 1; call <= 2; call++) {
            ProviderLedger.charge(providerUrl, claimed.chargeIdempotencyKey(), claimed.amount(), claimed.currency(),
                    claimed.paymentToken(), saga.orderId().toString());
            if (call == 1) {
                ProviderLedger.forgetKey(providerUrl, claimed.chargeIdempotencyKey());
            }
        }
        assertThat(ledger(saga).charges()).hasSize(2);

        try (LogCapture found = LogCapture.of(SettlementReconciliation.class)) {
            assertThat(reconciliation.reconcile()).as("settlements applied").containsOnlyOnce(claimed.paymentId());
            assertThat(found.containing("ALERT settlement of another charge").stream()
                    .filter(line -> line.message().contains(saga.orderId().toString()))).singleElement();
        }
        String recorded = payment(saga).providerChargeId();
        String other = ledger(saga).charges().stream().map(ProviderLedger.Charge::chargeId)
                .filter(id -> !id.equals(recorded)).findFirst().orElseThrow();
        await().atMost(PATIENCE).until(() -> !ledger(saga).refunds().isEmpty());
        assertThat(ledger(saga).refunds()).singleElement().satisfies(refund -> {
            assertThat(refund.chargeId()).isEqualTo(other);
            assertThat(refund.idempotencyKey()).isEqualTo("refund-surplus-" + other);
        });
        assertThat(ledger(saga).net()).as("the customer pays once").isEqualByComparingTo(claimed.amount());
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);
        assertThat(awaitOne(saga, PaymentSucceeded.class).payload().providerChargeId()).isEqualTo(recorded);
        assertThat(saga.publishedTypes()).containsExactly("PaymentSucceeded");
    }

    /**
     * A surplus charge recorded by a service that stopped before it refunded: the sweep claims it and refunds it, and
     * records that nothing is owed any more.
     */
    @Test
    void aSurplusChargeLeftUnrefundedIsRefundedByTheSweep() {
        OrderSaga saga = saga("second-charge-swept");
        paidWith(saga, "tok_ok");
        String second = chargedAgainUnderAForgottenKey(saga, "tok_ok");
        Payment payment = payment(saga);
        // recorded as the report's read does, its wake-up lost (the service stopped): due since a minute ago
        recordSurplus(saga, second, 0, "now() - interval '1 minute'", "now() - interval '1 minute'");
        assertThat(surplusRefunds.found(repository.chargeState(payment.id()).orElseThrow(), second))
                .as("known: not recorded again").isFalse();

        surplusRefunds.sweep();

        await().atMost(PATIENCE).until(() -> !ledger(saga).refunds().isEmpty());
        assertThat(ledger(saga).refunds()).singleElement().satisfies(refund -> {
            assertThat(refund.chargeId()).isEqualTo(second);
            assertThat(refund.idempotencyKey()).isEqualTo("refund-surplus-" + second);
        });
        await().atMost(PATIENCE).until(() -> QuarkusTransaction.requiringNew().call(() -> repository.getEntityManager()
                .createNativeQuery("SELECT count(*) FROM surplus_charge WHERE provider_ref = ?1 AND undo_ref LIKE 're_%' "
                        + "AND next_attempt_at IS NULL").setParameter(1, second).getSingleResult()).equals(1L));
        assertThat(ledger(saga).net()).isEqualByComparingTo("21.00");
    }

    @Test
    void aChargeTheProviderNeverSawIsSentAgainUnderItsKeyWhileTheKeyIsYoung() {
        OrderSaga saga = saga("unreached-recharged");
        PaymentTask claimed = chargeClaimedFor(saga);

        // the claimed call found the provider unreachable (nothing sent); the application's worker asks after a
        // backoff, hears of no charge under the key, and charges under the same key
        assertThat(payments.recordChargeUnresolved(claimed.paymentId(), claimed.claimedUntil())).isEqualTo(1);

        EventEnvelope<PaymentSucceeded> succeeded = awaitOne(saga, PaymentSucceeded.class);
        assertThat(ledger(saga).charges()).singleElement().satisfies(charge -> {
            assertThat(charge.idempotencyKey()).isEqualTo(claimed.chargeIdempotencyKey());
            assertThat(charge.chargeId()).isEqualTo(succeeded.payload().providerChargeId());
            assertThat(charge.statusQueries()).as("asked before it charged again").isGreaterThanOrEqualTo(1);
            assertThat(charge.chargeCalls()).as("the claimed call never reached the provider").isEqualTo(1);
        });
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);
    }

    @Test
    void aChargeTheProviderNoLongerKnowsIsHeldForAnOperatorAndItsSettlementReportEndsTheHold() {
        OrderSaga saga = saga("held-then-settled");
        double heldBefore = chargesHeld();
        PaymentTask claimed;
        EventEnvelope<PaymentOnHold> onHold;
        try (LogCapture log = LogCapture.of(PaymentWorker.class)) {
            claimed = heldChargeOf(saga);
            // the worker tells once the hold committed (the counter before the line)
            String alert = "ALERT charge held for an operator: order " + saga.orderId();
            await().atMost(PATIENCE).until(() -> !log.containing(alert).isEmpty());
            onHold = awaitOne(saga, PaymentOnHold.class);
            assertThat(log.containing(alert)).as("once, as the hold was published once").hasSize(1);
        }
        assertThat(onHold.payload().paymentId()).isEqualTo(claimed.paymentId().toString());
        assertThat(onHold.payload().reason()).contains(claimed.chargeIdempotencyKey()).contains("forgotten");
        assertThat(onHold.payload().attempts()).isEqualTo(1);
        assertThat(chargesHeld()).isGreaterThanOrEqualTo(heldBefore + 1);
        assertThat(ledger(saga).charges()).as("no charge sent again under a key the provider may have forgotten").isEmpty();
        assertThat(payment(saga).isHeld()).isTrue();
        assertThat(payment(saga).isDue(Instant.now().plus(Duration.ofDays(1)))).isFalse();

        // the first call had reached the provider after all, and its answer and webhook were lost: the report shows it
        ProviderLedger.charge(providerUrl, claimed.chargeIdempotencyKey(), claimed.amount(), claimed.currency(),
                claimed.paymentToken(), saga.orderId().toString());
        assertThat(reconciliation.reconcile()).as("settlements applied").containsOnlyOnce(claimed.paymentId());

        EventEnvelope<PaymentSucceeded> succeeded = awaitOne(saga, PaymentSucceeded.class);
        assertThat(succeeded.payload().providerChargeId()).isEqualTo(ledger(saga).charges().get(0).chargeId());
        assertThat(saga.publishedTypes()).containsExactly("PaymentOnHold", "PaymentSucceeded");
        assertThat(ledger(saga).charges()).hasSize(1);
        assertThat(ledger(saga).refunds()).isEmpty();
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);
    }

    @Test
    void aChargeLeftUnresolvedThatTheSettlementReportShowsSucceedsFromTheReport() {
        OrderSaga saga = saga("unresolved-reported");
        // the call is under way (claimed for an hour): it landed, and its answer and webhook are lost
        PaymentTask claimed = chargeClaimedFor(saga);
        ProviderLedger.charge(providerUrl, claimed.chargeIdempotencyKey(), claimed.amount(), claimed.currency(),
                claimed.paymentToken(), saga.orderId().toString());

        assertThat(reconciliation.reconcile()).as("settlements applied").containsOnlyOnce(claimed.paymentId());

        EventEnvelope<PaymentSucceeded> succeeded = awaitOne(saga, PaymentSucceeded.class);
        assertThat(succeeded.payload().providerChargeId()).isEqualTo(ledger(saga).charges().get(0).chargeId());
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);
        assertThat(payments.recordChargeUnresolved(claimed.paymentId(), claimed.claimedUntil())).as("the call's late outcome").isZero();
        assertThat(ledger(saga).charges()).hasSize(1);
    }

    /**
     * A worker that paused past its lease (a long GC, a record transaction that waited) comes back with its call's
     * failure after the sweep gave the row to a second worker. Recorded, it would move the second claim's lease to a
     * short backoff, and the sweep would hand the row to a third worker while the second's call is under way.
     */
    /**
     * A charge went unanswered, the provider had no charge under its key, and the charge sent again was refused as it
     * stood (as a provider may refuse a single-use token the first call, landing late, had spent). No decline at once:
     * the refusal is kept and the provider asked for the charge's status after a backoff (the service's own worker);
     * with no charge there then either, the refusal was the request's, and the payment is declined with it. Before, the
     * charge was sent again, and refused again, every few seconds until the recharge window (12 h) put it on hold.
     */
    @Test
    void aChargeSentAgainThatTheProviderRefusesIsDeclinedOnceTheProviderStillHasNone() {
        OrderSaga saga = saga("resend-refused");
        PaymentTask first = chargeClaimedFor(saga);
        PaymentTask second = claimAfterTheLeaseRanOut(first.paymentId(), Duration.ofHours(1));
        // the status asked first, as after any call unanswered; an amount the sandbox refuses (400), for the request
        // sent again to be refused
        PaymentTask refusedAgain = statusQueryOf(second, BigDecimal.ZERO, second.claimedUntil());

        worker.work(refusedAgain);

        EventEnvelope<PaymentFailed> failed = awaitOne(saga, PaymentFailed.class);
        assertThat(failed.payload().reason()).contains("refused the charge request (400)");
        Payment declined = payment(saga);
        assertThat(declined.status()).isEqualTo(PaymentStatus.DECLINED);
        assertThat(declined.declineReason()).contains("refused the charge request (400)");
        assertThat(ledger(saga).charges()).as("nothing charged: the request was never sent with the real amount")
                .isEmpty();
        saga.awaitCommittedSoFar(outbox, PATIENCE);
        assertThat(saga.published(PaymentFailed.class)).hasSize(1);
    }

    /**
     * The provider had no charge under the key, and so little of the claim's lease is left (the status query or a
     * read waited) that a charge sent now could outlast it, and another worker charge beside it: none is sent now.
     */
    @Test
    void noChargeIsSentAgainWhenTheClaimCannotOutlastIt() {
        OrderSaga saga = saga("resend-too-late");
        PaymentTask first = chargeClaimedFor(saga);
        // the row stays claimed for an hour, so that the service's own worker, which would charge, leaves it alone;
        // the call believes its claim ends in 2 s (its outcome, recorded under a claim the row does not hold, is not)
        PaymentTask statusFirst = statusQueryOf(first, first.amount(), Instant.now().plusSeconds(2));

        worker.work(statusFirst);

        assertThat(ledger(saga).charges()).as("the provider's 3 s for an exchange do not fit in 2 s").isEmpty();
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.CHARGING);
    }

    @Test
    void aFailureRecordedUnderAClaimThatRanOutLeavesTheClaimThatReplacedIt() {
        OrderSaga saga = saga("stale-claim");
        PaymentTask first = chargeClaimedFor(saga);
        PaymentTask second = claimAfterTheLeaseRanOut(first.paymentId(), Duration.ofHours(2));

        assertThat(payments.recordChargeUnresolved(first.paymentId(), first.claimedUntil()))
                .as("the first call's late failure").isZero();
        assertThat(payment(saga).nextAttemptAt()).as("the second claim stands").isEqualTo(second.claimedUntil());
        assertThat(payment(saga).attempts()).isZero();

        assertThat(payments.recordChargeUnresolved(second.paymentId(), second.claimedUntil())).isEqualTo(1);
        assertThat(payment(saga).nextAttemptAt()).as("rescheduled by the claim that holds the row")
                .isBefore(second.claimedUntil());
    }

    /**
     * As above, for a "no charge" answer that would hold the payment: for a cancelling order the hold makes the row
     * due at once, and the sweep would hand it to a third worker.
     */
    @Test
    void aHoldRecordedUnderAClaimThatRanOutLeavesTheClaimThatReplacedIt() {
        OrderSaga saga = saga("stale-hold");
        PaymentTask first = chargeClaimedFor(saga);
        PaymentTask second = claimAfterTheLeaseRanOut(first.paymentId(), Duration.ofHours(2));

        assertThat(payments.recordChargeHeld(first.paymentId(), "no charge", first.chargingSince(), first.claimedUntil()))
                .as("the first call's late answer").isFalse();
        assertThat(payment(saga).isHeld()).isFalse();
        assertThat(payment(saga).nextAttemptAt()).as("the second claim stands").isEqualTo(second.claimedUntil());

        try (Correlation.Scope ignored = Correlation.open(second.correlationId(), second.causedByEventId())) {
            assertThat(payments.recordChargeHeld(second.paymentId(), "no charge", second.chargingSince(),
                    second.claimedUntil())).isTrue();
        }
        assertThat(payment(saga).isHeld()).isTrue();
        awaitOne(saga, PaymentOnHold.class);
    }

    /**
     * As above, for a look for a late settlement that found none: recorded, each stale look would count as one of the
     * watch's, and the watch would end before its looks were made.
     */
    @Test
    void aLookForALateSettlementRecordedUnderAClaimThatRanOutIsNotCounted() {
        OrderSaga saga = saga("stale-look");
        saga.publish(orderCreated("tok_declined"));
        saga.publish(stockReserved());
        awaitOne(saga, PaymentFailed.class);
        UUID paymentId = payment(saga).id();
        PaymentTask first = claimAfterTheLeaseRanOut(paymentId, Duration.ofHours(1));
        PaymentTask second = claimAfterTheLeaseRanOut(paymentId, Duration.ofHours(2));
        assertThat(first.call()).isEqualTo(Payment.ProviderCall.SETTLEMENT_STATUS);
        int looks = payment(saga).attempts();

        payments.recordNoLateSettlement(paymentId, first.claimedUntil());
        assertThat(payment(saga).attempts()).as("the first look's late answer").isEqualTo(looks);
        assertThat(payment(saga).nextAttemptAt()).as("the second claim stands").isEqualTo(second.claimedUntil());

        payments.recordNoLateSettlement(paymentId, second.claimedUntil());
        assertThat(payment(saga).attempts()).isEqualTo(looks + 1);
        assertThat(payment(saga).nextAttemptAt()).as("the next look").isBefore(second.claimedUntil());
    }

    /**
     * DESIGN: a crash between a provider call and its commit is recovered by asking the provider, not by calling again.
     * The worker that claimed the first charge died after the provider took it: the claim taken when its lease ran out
     * finds the charge with a status query and sends none.
     */
    @Test
    void aChargeWhoseWorkerDiedAfterTheProviderTookItIsFoundByAskingNotSentAgain() {
        OrderSaga saga = saga("died-after-the-call");
        PaymentTask first = chargeClaimedFor(saga);
        // the dead worker's call, as the provider received it
        assertThat(provider.charge(first.chargeIdempotencyKey(), first.amount(), first.currency(), first.paymentToken(),
                first.orderId().toString())).isInstanceOf(PaymentProviderClient.Charged.class);

        PaymentTask recovery = claimedByTheServiceAfterTheLeaseRanOut(first.paymentId());
        assertThat(recovery.call()).isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
        worker.work(recovery);

        EventEnvelope<PaymentSucceeded> succeeded = awaitOne(saga, PaymentSucceeded.class);
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);
        assertThat(ledger(saga).charges()).singleElement().satisfies(charge -> {
            assertThat(charge.chargeId()).isEqualTo(succeeded.payload().providerChargeId());
            assertThat(charge.statusQueries()).as("asked").isGreaterThanOrEqualTo(1);
            assertThat(charge.chargeCalls()).as("only the dead worker's call").isEqualTo(1);
        });
    }

    /** As above, the worker having died before its call reached the provider: asked first, then charged under the key. */
    @Test
    void aChargeWhoseWorkerDiedBeforeItsCallIsAskedAboutThenSentUnderItsKey() {
        OrderSaga saga = saga("died-before-the-call");
        PaymentTask first = chargeClaimedFor(saga);

        PaymentTask recovery = claimedByTheServiceAfterTheLeaseRanOut(first.paymentId());
        assertThat(recovery.call()).isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
        worker.work(recovery);

        EventEnvelope<PaymentSucceeded> succeeded = awaitOne(saga, PaymentSucceeded.class);
        assertThat(ledger(saga).charges()).singleElement().satisfies(charge -> {
            assertThat(charge.idempotencyKey()).isEqualTo(first.chargeIdempotencyKey());
            assertThat(charge.chargeId()).isEqualTo(succeeded.payload().providerChargeId());
            assertThat(charge.statusQueries()).as("asked before it charged").isGreaterThanOrEqualTo(1);
            assertThat(charge.chargeCalls()).isEqualTo(1);
        });
    }

    /**
     * As above, with the service away for longer than the recharge window: the provider's "no charge under this key"
     * is no longer taken at its word, so the payment is held for an operator rather than charged.
     */
    @Test
    void aChargeWhoseWorkerDiedLongerAgoThanTheWindowIsAskedAboutAndHeld() {
        OrderSaga saga = saga("died-long-ago");
        PaymentTask first = chargeClaimedFor(saga);
        QuarkusTransaction.requiringNew().run(() -> repository.getEntityManager()
                .createNativeQuery("UPDATE payment SET charging_since = charging_since - interval '13 hours' WHERE id = ?1")
                .setParameter(1, first.paymentId()).executeUpdate());

        PaymentTask recovery = claimedByTheServiceAfterTheLeaseRanOut(first.paymentId());
        assertThat(recovery.call()).isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
        worker.work(recovery);

        assertThat(payment(saga).isHeld()).isTrue();
        awaitOne(saga, PaymentOnHold.class);
        assertThat(ledger(saga).charges()).as("no charge sent").isEmpty();
    }

    @Test
    void aHeldChargeAnOperatorSendsBackIsChargedOnce() {
        OrderSaga saga = saga("held-then-retried");
        PaymentTask claimed = heldChargeOf(saga);
        awaitOne(saga, PaymentOnHold.class);

        // the operator found no charge at the provider; order-service publishes the request on order.events
        EventEnvelope<PaymentRetryRequested> retry = saga.publish(new PaymentRetryRequested("operator:alice"));

        EventEnvelope<PaymentSucceeded> succeeded = awaitOne(saga, PaymentSucceeded.class);
        assertThat(succeeded.causationId()).isEqualTo(retry.eventId());
        assertThat(ledger(saga).charges()).singleElement().satisfies(charge -> {
            assertThat(charge.idempotencyKey()).isEqualTo(claimed.chargeIdempotencyKey());
            assertThat(charge.chargeId()).isEqualTo(succeeded.payload().providerChargeId());
            assertThat(charge.chargeCalls()).isEqualTo(1);
        });
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.SUCCEEDED);

        saga.publish(new PaymentRetryRequested("operator:alice"));
        saga.publish(orderCancelling());
        awaitOne(saga, PaymentRefunded.class);
        assertThat(ledger(saga).charges()).as("a repeated request charges nothing more").singleElement()
                .satisfies(charge -> assertThat(charge.chargeCalls()).isEqualTo(1));
    }

    @Test
    void cancellingAHeldChargeIsAnsweredWithNothingToRefundAndSendsNoCharge() {
        OrderSaga saga = saga("held-then-cancelled");
        heldChargeOf(saga);
        awaitOne(saga, PaymentOnHold.class);

        saga.publish(orderCancelling());

        EventEnvelope<PaymentRefunded> refunded = awaitOne(saga, PaymentRefunded.class);
        assertThat(refunded.payload().amount()).isEqualByComparingTo("0");
        assertThat(saga.publishedTypes()).containsExactly("PaymentOnHold", "PaymentRefunded");
        assertThat(ledger(saga).charges()).isEmpty();
        assertThat(payment(saga).status()).isEqualTo(PaymentStatus.CANCELLED);
        assertThat(payment(saga).nextCall()).as("watched for a late settlement")
                .isEqualTo(Payment.ProviderCall.SETTLEMENT_STATUS);
    }

    /**
     * A charge whose first call got no answer, begun longer ago than the recharge window: the application's worker
     * asks the provider, which has no charge under the key, and holds the payment. Returns once it is held.
     */
    private PaymentTask heldChargeOf(OrderSaga saga) {
        PaymentTask claimed = chargeClaimedFor(saga);
        QuarkusTransaction.requiringNew().run(() -> repository.getEntityManager()
                .createNativeQuery("UPDATE payment SET charging_since = charging_since - interval '13 hours' WHERE id = ?1")
                .setParameter(1, claimed.paymentId()).executeUpdate());
        assertThat(payments.recordChargeUnresolved(claimed.paymentId(), claimed.claimedUntil())).isEqualTo(1);
        await().atMost(PATIENCE).until(() -> payment(saga).isHeld());
        return claimed;
    }

    private double compensationFailures(String step) {
        Counter counter = meters.find("saga.compensation.failures").tag("step", step).counter();
        return counter == null ? 0 : counter.count();
    }

    /** The saga's payment charged and succeeded; its charge's id. */
    private String paidWith(OrderSaga saga, String token) {
        saga.publish(orderCreated(token));
        saga.publish(stockReserved());
        return awaitOne(saga, PaymentSucceeded.class).payload().providerChargeId();
    }

    /**
     * The provider forgets the payment's key and is charged under it again, as an operator's retry-payment would
     * charge; the second charge's id.
     */
    private String chargedAgainUnderAForgottenKey(OrderSaga saga, String token) {
        Payment payment = payment(saga);
        ProviderLedger.forgetKey(providerUrl, payment.idempotencyKey());
        ProviderLedger.charge(providerUrl, payment.idempotencyKey(), payment.amount(), payment.currency(), token,
                saga.orderId().toString());
        return ledger(saga).charges().stream().map(ProviderLedger.Charge::chargeId)
                .filter(id -> !id.equals(payment.providerChargeId())).findFirst().orElseThrow();
    }

    private double counter(String name) {
        Counter counter = meters.find(name).counter();
        return counter == null ? 0 : counter.count();
    }

    private double chargesHeld() {
        Counter counter = meters.find("saga.payment.charges.held").counter();
        return counter == null ? 0 : counter.count();
    }

    /**
     * A CHARGING payment of the saga's order whose first charge call is claimed, for an hour, by the task returned: the
     * application's own worker leaves it alone until the test records the call's outcome.
     */
    private PaymentTask chargeClaimedFor(OrderSaga saga) {
        return QuarkusTransaction.requiringNew().call(() -> {
            Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            Payment payment = Payment.forOrder(saga.orderId(), PaymentFixtures.TOTAL, "EUR", "tok_ok",
                    saga.correlationId(), UUID.randomUUID(), now);
            payment.noteStockReserved(UUID.randomUUID(), now);
            repository.persist(payment);
            repository.flush();
            Instant until = now.plus(Duration.ofHours(1));
            assertThat(repository.claimIfDue(payment.id(), now, until)).isPresent();
            return PaymentTask.of(payment, until);
        });
    }

    /**
     * A claim's call as the status query that asks first after a call went unanswered, charging {@code amount} if
     * the provider has no charge, under a claim that ends at {@code until}.
     */
    private static PaymentTask statusQueryOf(PaymentTask claim, BigDecimal amount, Instant until) {
        return new PaymentTask(claim.paymentId(), claim.orderId(), Payment.ProviderCall.CHARGE_STATUS, amount,
                claim.currency(), claim.paymentToken(), claim.chargeId(), claim.chargeIdempotencyKey(),
                claim.refundIdempotencyKey(), claim.correlationId(), claim.causedByEventId(), claim.cancelRequested(),
                claim.chargingSince(), until);
    }

    /**
     * The row's lease ran out and another worker claimed it, in one transaction: the service's own sweep, which would
     * find the row due in between, skips it while it is locked.
     */
    private PaymentTask claimAfterTheLeaseRanOut(UUID paymentId, Duration lease) {
        return QuarkusTransaction.requiringNew().call(() -> {
            Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            repository.getEntityManager().createNativeQuery("UPDATE payment SET next_attempt_at = ?2 WHERE id = ?1")
                    .setParameter(1, paymentId).setParameter(2, now.minusSeconds(1)).executeUpdate();
            Instant until = now.plus(lease);
            assertThat(repository.claimIfDue(paymentId, now, until)).isPresent();
            return PaymentTask.of(repository.findById(paymentId), until);
        });
    }

    /**
     * The service's own claim of the row once the first claim's lease ran out (a dead worker), in one transaction with
     * the lease's end: the service's sweep, which would find the row due in between, skips it while it is locked.
     */
    private PaymentTask claimedByTheServiceAfterTheLeaseRanOut(UUID paymentId) {
        return QuarkusTransaction.requiringNew().call(() -> {
            repository.getEntityManager().createNativeQuery("UPDATE payment SET next_attempt_at = ?2 WHERE id = ?1")
                    .setParameter(1, paymentId).setParameter(2, Instant.now().minusSeconds(1)).executeUpdate();
            return payments.claim(paymentId).orElseThrow();
        });
    }

    private OrderSaga saga(String name) {
        return sagas.saga("payment-" + name);
    }

    /**
     * Waits for the event, then counts what the service committed by then (a marker after it): a second copy committed
     * with or after the first is counted, not missed because the count was read as the first arrived.
     */
    private <E extends dev.ordersaga.events.SagaEvent> EventEnvelope<E> awaitOne(OrderSaga saga, Class<E> type) {
        return awaitCount(saga, type, 1).get(0);
    }

    /** As {@link #awaitOne}, for an event the service publishes twice. */
    private <E extends dev.ordersaga.events.SagaEvent> List<EventEnvelope<E>> awaitTwo(OrderSaga saga, Class<E> type) {
        return awaitCount(saga, type, 2);
    }

    private <E extends dev.ordersaga.events.SagaEvent> List<EventEnvelope<E>> awaitCount(OrderSaga saga, Class<E> type,
                                                                                            int count) {
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
                .until(() -> saga.published(type), list -> list.size() >= count);
        saga.awaitCommittedSoFar(outbox, PATIENCE);
        List<EventEnvelope<E>> events = saga.published(type);
        assertThat(events).as("exactly " + count + " " + type.getSimpleName()).hasSize(count);
        return events;
    }

    private Optional<Payment> findPayment(OrderSaga saga) {
        return payments.findByOrderId(saga.orderId());
    }

    private Payment payment(OrderSaga saga) {
        return findPayment(saga).orElseThrow();
    }

    private ProviderLedger ledger(OrderSaga saga) {
        return ProviderLedger.of(providerUrl, saga.orderId());
    }
}
