package dev.ordersaga.payment.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.PaymentRefunded;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.payment.application.PaymentService;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.domain.PaymentStatus;
import dev.ordersaga.payment.persistence.PaymentRepository;
import dev.ordersaga.payment.testing.OrderSaga;
import dev.ordersaga.payment.testing.OrderSagas;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.payment.testing.ProviderLedger;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.ordersaga.payment.testing.PaymentFixtures.orderCancelling;
import static dev.ordersaga.payment.testing.PaymentFixtures.orderCreated;
import static dev.ordersaga.payment.testing.PaymentFixtures.stockReserved;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

/**
 * The provider's webhook, posted by the test as the provider would (the sandbox has no webhook URL: the
 * application's port is not known when it starts).
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(PaymentSandboxResource.class)
class ProviderWebhookResourceTest {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    /** The test profile's payment.provider.webhook-secret. */
    private static final String SECRET = "test-only-webhook-secret";
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final OrderSagas sagas = new OrderSagas();

    @Inject
    PaymentRepository repository;

    @Inject
    PaymentService payments;

    @Inject
    OutboxWriter outbox;

    @ConfigProperty(name = "payment.provider.url")
    String providerUrl;

    @Test
    void webhookResolvesAChargeWhoseCallIsStillInFlightOnce() {
        OrderSaga saga = sagas.saga("payment-webhook");
        Payment payment = chargeInFlight(saga);
        String chargeId = "ch_webhook_" + UUID.randomUUID();

        postWebhook(webhook("charge.succeeded", chargeId, payment.id().toString(), saga.orderId())).statusCode(204);
        // the provider repeats itself, and stale news of a decline comes late: neither changes anything
        postWebhook(webhook("charge.succeeded", chargeId, payment.id().toString(), saga.orderId())).statusCode(204);
        postWebhook(webhook("charge.declined", null, payment.id().toString(), saga.orderId())).statusCode(204);
        UUID marker = saga.publishMarker(outbox);

        // by its id: the marker is a PaymentFailed, the very type a wrongly taken decline would publish
        await().atMost(PATIENCE).until(() -> saga.published().stream().anyMatch(e -> e.eventId().equals(marker)));
        List<EventEnvelope<SagaEvent>> published = saga.published();
        assertThat(published).extracting(EventEnvelope::type).containsExactly("PaymentSucceeded", "PaymentFailed");
        assertThat(published.get(1).eventId()).as("the marker, and nothing between").isEqualTo(marker);
        PaymentSucceeded succeeded = (PaymentSucceeded) published.get(0).payload();
        assertThat(succeeded.providerChargeId()).isEqualTo(chargeId);
        assertThat(succeeded.amount()).isEqualByComparingTo("21.00");
        assertThat(published.get(0).correlationId()).isEqualTo(saga.correlationId());
        Payment resolved = payments.findByOrderId(saga.orderId()).orElseThrow();
        assertThat(resolved.status()).isEqualTo(PaymentStatus.SUCCEEDED);
        assertThat(resolved.providerChargeId()).isEqualTo(chargeId);
    }

    @Test
    void newsKnownAlreadyIsAnsweredWithoutTakingThePaymentsLock() throws Exception {
        OrderSaga saga = sagas.saga("payment-webhook-known");
        Payment payment = chargeInFlight(saga);
        String chargeId = "ch_known_" + UUID.randomUUID();
        postWebhook(webhook("charge.succeeded", chargeId, payment.id().toString(), saga.orderId())).statusCode(204);

        // another transaction holds the payment's row lock until the repeats are answered, or for 20 s at most
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch answered = new CountDownLatch(1);
        CompletableFuture<Boolean> releasedInTime = CompletableFuture.supplyAsync(() ->
                QuarkusTransaction.requiringNew().call(() -> {
                    assertThat(repository.lockForChange(payment.id())).isPresent();
                    locked.countDown();
                    return answered.await(20, TimeUnit.SECONDS);
                }));
        assertThat(locked.await(20, TimeUnit.SECONDS)).isTrue();
        postWebhook(webhook("charge.succeeded", chargeId, payment.id().toString(), saga.orderId())).statusCode(204);
        postWebhook(webhook("charge.declined", null, payment.id().toString(), saga.orderId())).statusCode(204);
        answered.countDown();

        assertThat(releasedInTime.get(30, TimeUnit.SECONDS)).as("both repeats answered while the lock was held").isTrue();
        assertThat(payments.findByOrderId(saga.orderId()).orElseThrow().status()).isEqualTo(PaymentStatus.SUCCEEDED);
    }

    @Test
    void theChargeAWebhookIsAboutIsReadAsCommittedOutsideAnyTransaction() {
        OrderSaga saga = sagas.saga("payment-webhook-committed");
        Payment payment = chargeInFlight(saga);

        // a change the caller's transaction made and has not committed: a read in that transaction would see it
        PaymentStatus seen;
        QuarkusTransaction.begin();
        try {
            assertThat(repository.getEntityManager()
                    .createNativeQuery("UPDATE payment SET status = 'SUCCEEDED' WHERE id = ?1")
                    .setParameter(1, payment.id()).executeUpdate()).isEqualTo(1);
            seen = payments.findCharge(payment.id().toString()).orElseThrow().status();
        } finally {
            QuarkusTransaction.rollback();
        }

        assertThat(seen).isEqualTo(PaymentStatus.CHARGING);
        assertThat(payments.findCharge(payment.id().toString()).orElseThrow().status()).isEqualTo(PaymentStatus.CHARGING);
    }

    @Test
    void lateSettlementOfADeclinedPaymentIsReportedAndRefundedAtOnce() {
        OrderSaga saga = sagas.saga("payment-late-settlement");
        saga.publish(orderCreated("tok_declined"));
        saga.publish(stockReserved());
        await().atMost(PATIENCE).until(() -> saga.publishedTypes().contains("PaymentFailed"));
        saga.publish(orderCancelling());
        await().atMost(PATIENCE).until(() -> saga.publishedTypes().contains("PaymentRefunded"));

        ProviderLedger.Charge declined = ProviderLedger.of(providerUrl, saga.orderId()).charges().get(0);
        assertThat(declined.status()).isEqualTo("declined");
        ProviderLedger.settleLate(providerUrl, declined.chargeId());
        postWebhook(webhook("charge.succeeded", declined.chargeId(), declined.idempotencyKey(), saga.orderId()))
                .statusCode(204);
        // decided by the webhook's own transaction, not by a later look of the settlement watch
        assertThat(payments.findByOrderId(saga.orderId()).orElseThrow().status())
                .isIn(PaymentStatus.REFUNDING, PaymentStatus.REFUNDED);

        await().atMost(PATIENCE).until(() -> saga.published(PaymentRefunded.class).size() == 2);
        assertThat(saga.publishedTypes())
                .containsExactly("PaymentFailed", "PaymentRefunded", "PaymentSucceeded", "PaymentRefunded");
        List<EventEnvelope<PaymentRefunded>> refunds = saga.published(PaymentRefunded.class);
        assertThat(refunds.get(0).payload().amount()).as("nothing to refund then").isEqualByComparingTo("0");
        assertThat(refunds.get(1).payload().amount()).as("the late charge, refunded").isEqualByComparingTo("21.00");
        assertThat(ProviderLedger.of(providerUrl, saga.orderId()).net()).isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(payments.findByOrderId(saga.orderId()).orElseThrow().status()).isEqualTo(PaymentStatus.REFUNDED);
    }

    @Test
    void unknownIdempotencyKeyIsNotFoundAsProblemJson() {
        postWebhook(webhook("charge.succeeded", "ch_nobody", UUID.randomUUID().toString(), UUID.randomUUID()))
                .statusCode(404)
                .contentType("application/problem+json")
                .body("status", equalTo(404))
                .body("title", equalTo("Unknown charge"));
        postWebhook(webhook("charge.succeeded", "ch_nobody", "not-a-payment-id", UUID.randomUUID()))
                .statusCode(404)
                .contentType("application/problem+json");
    }

    /** Recorded, an id the column does not hold would fail every delivery of the webhook with a 500. */
    @Test
    void aChargeIdThePaymentCannotKeepIsABadRequestAndChangesNothing() {
        OrderSaga saga = sagas.saga("payment-webhook-long-id");
        Payment payment = chargeInFlight(saga);

        postWebhook(webhook("charge.succeeded", "ch_" + "9".repeat(300), payment.id().toString(), saga.orderId()))
                .statusCode(400)
                .contentType("application/problem+json")
                .body("detail", org.hamcrest.Matchers.endsWith("not an id of 303 characters (at most 255 are kept)"));
        assertThat(payments.findByOrderId(saga.orderId()).orElseThrow().status()).isEqualTo(PaymentStatus.CHARGING);
    }

    @Test
    void webhookWithoutTypeOrKeyIsABadRequest() {
        postSigned("{\"chargeId\": \"ch_1\"}")
                .statusCode(400)
                .contentType("application/problem+json")
                .body("violations.field", org.hamcrest.Matchers.hasItems("idempotencyKey", "type"));
        postSigned("{not json")
                .statusCode(400)
                .contentType("application/problem+json");
        postSigned("null")
                .statusCode(400)
                .contentType("application/problem+json");
    }

    @Test
    void aWebhookTheProviderDidNotSignChangesNothing() throws Exception {
        OrderSaga saga = sagas.saga("payment-webhook-unsigned");
        Payment payment = chargeInFlight(saga);
        byte[] body = JSON.writeValueAsBytes(webhook("charge.succeeded", "ch_forged", payment.id().toString(), saga.orderId()));
        long now = Instant.now().getEpochSecond();

        for (String signature : new String[] {
                null,
                "t=" + now,
                WebhookSignatures.sign("not-the-secret", now, body),
                WebhookSignatures.sign(SECRET, now - 3600, body),
                WebhookSignatures.sign(SECRET, now, "{}".getBytes(StandardCharsets.UTF_8)),
                "t=" + now + ",v1=zz",
                "t=99999999999999999," + WebhookSignatures.sign(SECRET, now, body).split(",")[1],
                "t=-9223372036854775808," + WebhookSignatures.sign(SECRET, now, body).split(",")[1]}) {
            var request = given().contentType(ContentType.JSON).body(body);
            if (signature != null) {
                request.header(WebhookSignatures.HEADER, signature);
            }
            request.when().post("/webhooks/payment-provider")
                    .then().statusCode(401)
                    .contentType("application/problem+json")
                    .body("title", equalTo("Webhook not signed by the provider"));
        }

        assertThat(payments.findCharge(payment.id().toString()).orElseThrow().status()).isEqualTo(PaymentStatus.CHARGING);
        // the same news, signed, is taken: the refusals were for the signature alone
        postWebhook(webhook("charge.succeeded", "ch_signed", payment.id().toString(), saga.orderId())).statusCode(204);
        assertThat(payments.findCharge(payment.id().toString()).orElseThrow().status()).isEqualTo(PaymentStatus.SUCCEEDED);
    }

    @Test
    void aSignatureUnderAnyConfiguredSecretIsTaken() {
        WebhookSignatures rotating = new WebhookSignatures(List.of("new-secret", "old-secret"), Duration.ofMinutes(5));
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        Instant now = Instant.now();

        assertThat(rotating.refusal(WebhookSignatures.sign("old-secret", now.getEpochSecond(), body), body, now)).isEmpty();
        assertThat(rotating.refusal(WebhookSignatures.sign("new-secret", now.getEpochSecond(), body), body, now)).isEmpty();
        assertThat(rotating.refusal("t=" + now.getEpochSecond() + ",v1=00,"
                + WebhookSignatures.sign("new-secret", now.getEpochSecond(), body).split(",")[1], body, now)).isEmpty();
        assertThat(rotating.refusal(WebhookSignatures.sign("other", now.getEpochSecond(), body), body, now)).isPresent();
    }

    /** A rotation written "old, new" (the blank after the comma kept by the configuration's list) still takes both. */
    @Test
    void secretsAreTakenWithoutTheBlanksAroundThemAndNoneIsRefusedAtStart() {
        WebhookSignatures rotating = new WebhookSignatures(List.of("old-secret", " new-secret "),
                Duration.ofMinutes(5));
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        Instant now = Instant.now();
        assertThat(rotating.refusal(WebhookSignatures.sign("new-secret", now.getEpochSecond(), body), body, now))
                .isEmpty();
        assertThatThrownBy(() -> new WebhookSignatures(List.of(" "), Duration.ofMinutes(5)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("names no secret");
    }

    /**
     * A CHARGING payment whose worker has claimed it and is stuck in its call (the lease keeps every other worker
     * off it for an hour): only the webhook can resolve it.
     */
    private Payment chargeInFlight(OrderSaga saga) {
        return QuarkusTransaction.requiringNew().call(() -> {
            Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            Payment payment = Payment.forOrder(saga.orderId(), new BigDecimal("21.00"), "EUR", "tok_ok",
                    saga.correlationId(), UUID.randomUUID(), now);
            payment.noteStockReserved(UUID.randomUUID(), now);
            repository.persist(payment);
            repository.flush();
            assertThat(repository.claimIfDue(payment.id(), now, now.plus(Duration.ofHours(1)))).isPresent();
            return payment;
        });
    }

    private static Map<String, Object> webhook(String type, String chargeId, String idempotencyKey, UUID orderId) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", type);
        body.put("chargeId", chargeId);
        body.put("idempotencyKey", idempotencyKey);
        body.put("reference", orderId.toString());
        body.put("amount", new BigDecimal("21.00"));
        body.put("currency", "EUR");
        body.put("reason", type.endsWith("declined") ? "card declined" : null);
        return body;
    }

    /** As the provider posts it: signed with the secret the test profile shares with it. */
    private static io.restassured.response.ValidatableResponse postWebhook(Map<String, Object> body) {
        try {
            return postSigned(JSON.writeValueAsString(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static io.restassured.response.ValidatableResponse postSigned(String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        return given().contentType(ContentType.JSON).body(bytes)
                .header(WebhookSignatures.HEADER, WebhookSignatures.sign(SECRET, Instant.now().getEpochSecond(), bytes))
                .when().post("/webhooks/payment-provider")
                .then();
    }
}
