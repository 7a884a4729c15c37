package dev.ordersaga.sandbox;

import static dev.ordersaga.sandbox.PaymentSandboxTest.charge;
import static dev.ordersaga.sandbox.PaymentSandboxTest.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class SandboxLifecycleTest {

    static int port(String baseUrl) {
        return URI.create(baseUrl).getPort();
    }

    static boolean threadsLeft(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(thread -> thread.isAlive() && thread.getName().startsWith(prefix));
    }

    @Test
    void paymentSandboxFreesItsPortOnClose() {
        PaymentSandbox first = PaymentSandbox.start(0, null);
        int port = port(first.baseUrl());
        new SandboxClient(first.baseUrl()).post("/v1/charges", key(), charge("tok_ok"));
        first.close();

        try (PaymentSandbox second = PaymentSandbox.start(port, null)) {
            assertThat(port(second.baseUrl())).isEqualTo(port);
            // A new sandbox on the same port starts with empty books.
            assertThat(new SandboxClient(second.baseUrl()).ledger().get("charges")).isEmpty();
        }
    }

    @Test
    void carrierSandboxFreesItsPortOnClose() {
        CarrierSandbox first = CarrierSandbox.start(0);
        int port = port(first.baseUrl());
        first.close();

        try (CarrierSandbox second = CarrierSandbox.start(port)) {
            assertThat(port(second.baseUrl())).isEqualTo(port);
        }
    }

    @Test
    void closeStopsTheHttpAndWebhookThreads() throws Exception {
        try (WebhookReceiver shop = WebhookReceiver.accepting()) {
            PaymentSandbox sandbox = PaymentSandbox.builder().webhookUrl(shop.uri()).webhookSecret(PaymentWebhookTest.SECRET)
                    .webhookDelay(Duration.ofSeconds(30)).start();
            String prefix = "payment-sandbox-" + port(sandbox.baseUrl()) + "-";
            new SandboxClient(sandbox.baseUrl()).post("/v1/charges", key(), charge("tok_ok"));
            assertThat(threadsLeft(prefix + "http")).isTrue();
            assertThat(threadsLeft(prefix + "webhook")).isTrue();

            sandbox.close();

            // the webhook held back for 30 s has no thread left to go out on
            await().atMost(Duration.ofSeconds(5)).until(() -> !threadsLeft(prefix));
        }
    }

    @Test
    void closeDoesNotWaitForAHeldBackAnswer() {
        PaymentSandbox sandbox = PaymentSandbox.start(0, null, Duration.ofSeconds(60));
        SandboxClient client = new SandboxClient(sandbox.baseUrl());
        CompletableFuture<HttpResponse<String>> late = client.postAsync("/v1/charges", key(),
                charge("tok_timeout_succeeds"));
        await().atMost(Duration.ofSeconds(2)).until(() -> client.ledger().get("charges").size() == 1);

        long started = System.nanoTime();
        sandbox.close();

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
        assertThatThrownBy(late::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(IOException.class);
    }

    @Test
    void closeTwiceIsHarmless() {
        PaymentSandbox payment = PaymentSandbox.start(0, null);
        CarrierSandbox carrier = CarrierSandbox.start(0);

        payment.close();
        payment.close();
        carrier.close();
        carrier.close();
    }

    @Test
    void aNegativeTimeoutDelayOrPortIsRefused() {
        assertThatThrownBy(() -> PaymentSandbox.start(0, null, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CarrierSandbox.start(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
