package dev.ordersaga.sandbox;

import static dev.ordersaga.sandbox.PaymentSandboxTest.charge;
import static dev.ordersaga.sandbox.PaymentSandboxTest.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ordersaga.sandbox.SandboxClient.Answer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PaymentWebhookTest {

    static final Duration WEBHOOK_DELAY = Duration.ofMillis(50);
    static final String SECRET = "test-only-webhook-secret";

    static PaymentSandbox sandboxCalling(WebhookReceiver shop) {
        return PaymentSandbox.builder().webhookUrl(shop.uri()).webhookSecret(SECRET).webhookDelay(WEBHOOK_DELAY)
                .timeoutDelay(Duration.ofMillis(1500)).start();
    }

    static Optional<JsonNode> webhookFor(WebhookReceiver shop, String idempotencyKey, String type) {
        return shop.received().stream()
                .filter(w -> w.get("idempotencyKey").asText().equals(idempotencyKey))
                .filter(w -> w.get("type").asText().equals(type))
                .findFirst();
    }

    @Test
    void succeededChargeIsToldToTheShop() throws Exception {
        try (WebhookReceiver shop = WebhookReceiver.accepting(); PaymentSandbox sandbox = sandboxCalling(shop)) {
            String key = key();
            Answer answer = new SandboxClient(sandbox.baseUrl())
                    .post("/v1/charges", key, charge("tok_ok", "21.00", "order-5"));

            await().atMost(Duration.ofSeconds(5)).until(() -> webhookFor(shop, key, "charge.succeeded").isPresent());
            JsonNode webhook = webhookFor(shop, key, "charge.succeeded").orElseThrow();
            assertThat(webhook.get("chargeId").asText()).isEqualTo(answer.body().get("chargeId").asText());
            assertThat(webhook.get("reference").asText()).isEqualTo("order-5");
            assertThat(webhook.get("amount").decimalValue()).isEqualByComparingTo("21.00");
            assertThat(webhook.get("currency").asText()).isEqualTo("EUR");
            assertThat(webhook.has("reason")).isTrue();
            assertThat(webhook.get("reason").isNull()).isTrue();
        }
    }

    @Test
    void everyWebhookIsSignedWithTheSharedSecretAndTheTimeItWasSent() throws Exception {
        try (WebhookReceiver shop = WebhookReceiver.accepting(); PaymentSandbox sandbox = sandboxCalling(shop)) {
            long before = Instant.now().getEpochSecond();
            new SandboxClient(sandbox.baseUrl()).post("/v1/charges", key(), charge("tok_ok"));

            await().atMost(Duration.ofSeconds(5)).until(() -> !shop.signed().isEmpty());
            WebhookReceiver.Signed webhook = shop.signed().get(0);
            Matcher signature = Pattern.compile("t=(\\d+),v1=([0-9a-f]{64})").matcher(webhook.signature());
            assertThat(signature.matches()).as(webhook.signature()).isTrue();
            long sent = Long.parseLong(signature.group(1));
            assertThat(sent).isBetween(before, Instant.now().getEpochSecond());
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update((sent + ".").getBytes(StandardCharsets.UTF_8));
            assertThat(signature.group(2)).isEqualTo(HexFormat.of().formatHex(mac.doFinal(webhook.body())));
        }
    }

    @Test
    void webhooksWithoutASecretAreRefused() {
        assertThatThrownBy(() -> PaymentSandbox.builder().webhookUrl(URI.create("http://127.0.0.1:1/webhooks")).start())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("webhook secret");
    }

    @Test
    void declinedChargeIsToldToTheShopWithTheReason() throws Exception {
        try (WebhookReceiver shop = WebhookReceiver.accepting(); PaymentSandbox sandbox = sandboxCalling(shop)) {
            String key = key();
            new SandboxClient(sandbox.baseUrl()).post("/v1/charges", key, charge("tok_declined"));

            await().atMost(Duration.ofSeconds(5)).until(() -> webhookFor(shop, key, "charge.declined").isPresent());
            assertThat(webhookFor(shop, key, "charge.declined").orElseThrow().get("reason").asText())
                    .isEqualTo("card declined");
        }
    }

    @Test
    void aTimedOutChargeIsToldToTheShopBeforeItsAnswer() throws Exception {
        try (WebhookReceiver shop = WebhookReceiver.accepting(); PaymentSandbox sandbox = sandboxCalling(shop)) {
            String key = key();
            var late = new SandboxClient(sandbox.baseUrl()).postAsync("/v1/charges", key, charge("tok_timeout_succeeds"));

            await().atMost(Duration.ofSeconds(5)).until(() -> webhookFor(shop, key, "charge.succeeded").isPresent());
            assertThat(late).isNotDone();
        }
    }

    @Test
    void repeatedChargeWithTheSameKeySendsNoSecondWebhook() throws Exception {
        try (WebhookReceiver shop = WebhookReceiver.accepting(); PaymentSandbox sandbox = sandboxCalling(shop)) {
            SandboxClient client = new SandboxClient(sandbox.baseUrl());
            String key = key();
            client.post("/v1/charges", key, charge("tok_ok"));
            client.post("/v1/charges", key, charge("tok_ok"));
            String other = key();
            client.post("/v1/charges", other, charge("tok_ok"));

            // Webhooks go out in order of the charges: once the later charge's is in, the first key's count is final.
            await().atMost(Duration.ofSeconds(5)).until(() -> webhookFor(shop, other, "charge.succeeded").isPresent());
            assertThat(shop.received().stream().filter(w -> w.get("idempotencyKey").asText().equals(key)))
                    .hasSize(1);
        }
    }

    @Test
    void aRefusedWebhookIsSentAgain() throws Exception {
        try (WebhookReceiver shop = WebhookReceiver.refusingFirst(2); PaymentSandbox sandbox = sandboxCalling(shop)) {
            String key = key();
            new SandboxClient(sandbox.baseUrl()).post("/v1/charges", key, charge("tok_ok"));

            await().atMost(Duration.ofSeconds(5)).until(() -> webhookFor(shop, key, "charge.succeeded").isPresent());
            assertThat(shop.calls()).isEqualTo(3);
        }
    }

    @Test
    void lateSettlementFlipsADeclinedChargeAndTellsTheShop() throws Exception {
        try (WebhookReceiver shop = WebhookReceiver.accepting(); PaymentSandbox sandbox = sandboxCalling(shop)) {
            SandboxClient client = new SandboxClient(sandbox.baseUrl());
            String key = key();
            assertThat(client.post("/v1/charges", key, charge("tok_declined")).status()).isEqualTo(402);
            await().atMost(Duration.ofSeconds(5)).until(() -> webhookFor(shop, key, "charge.declined").isPresent());
            String chargeId = client.get("/v1/charges/" + key).body().get("chargeId").asText();

            Answer settled = client.post("/sandbox/charges/" + chargeId + "/settle-late", null, "");

            assertThat(settled.status()).isEqualTo(200);
            assertThat(settled.body().get("status").asText()).isEqualTo("succeeded");
            await().atMost(Duration.ofSeconds(5)).until(() -> webhookFor(shop, key, "charge.succeeded").isPresent());
            assertThat(webhookFor(shop, key, "charge.succeeded").orElseThrow().get("chargeId").asText())
                    .isEqualTo(chargeId);
            assertThat(client.get("/v1/charges/" + key).body().get("status").asText()).isEqualTo("succeeded");
            JsonNode ledgerCharge = client.ledger().get("charges").get(0);
            assertThat(ledgerCharge.get("status").asText()).isEqualTo("succeeded");
            // Now that it succeeded, it can be refunded.
            assertThat(client.post("/v1/refunds", key(), PaymentSandboxTest.refund(chargeId, "21.00")).status())
                    .isEqualTo(201);
        }
    }

    @Test
    void withoutAWebhookUrlNoWebhookIsScheduled() {
        try (PaymentSandbox sandbox = PaymentSandbox.start(0, null)) {
            String prefix = "payment-sandbox-" + SandboxLifecycleTest.port(sandbox.baseUrl()) + "-";

            Answer answer = new SandboxClient(sandbox.baseUrl()).post("/v1/charges", key(), charge("tok_ok"));

            assertThat(answer.status()).isEqualTo(201);
            // No receiver can show that nothing was sent when the sandbox was never told where to send; the sender's
            // thread, which a charge starts as soon as there is a webhook to schedule, can.
            assertThat(SandboxLifecycleTest.threadsLeft(prefix + "http")).as("the prefix names this sandbox").isTrue();
            assertThat(SandboxLifecycleTest.threadsLeft(prefix + "webhook")).isFalse();
        }
    }
}
