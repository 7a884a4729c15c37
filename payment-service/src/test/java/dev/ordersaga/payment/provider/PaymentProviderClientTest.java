package dev.ordersaga.payment.provider;

import dev.ordersaga.payment.provider.PaymentProviderClient.ChargeOutcome;
import dev.ordersaga.payment.provider.PaymentProviderClient.Charged;
import dev.ordersaga.payment.provider.PaymentProviderClient.Declined;
import dev.ordersaga.payment.provider.PaymentProviderClient.NotFound;
import dev.ordersaga.payment.provider.PaymentProviderClient.RefundFailed;
import dev.ordersaga.payment.provider.PaymentProviderClient.RefundOutcome;
import dev.ordersaga.payment.provider.PaymentProviderClient.Refunded;
import dev.ordersaga.payment.provider.PaymentProviderClient.Unresolved;
import dev.ordersaga.sandbox.PaymentSandbox;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The provider client against the sandbox, without the application: every answer becomes an outcome value. */
class PaymentProviderClientTest {

    private static final BigDecimal AMOUNT = new BigDecimal("21.00");

    private static PaymentSandbox sandbox;
    private static PaymentProviderClient client;

    @BeforeAll
    static void start() {
        sandbox = PaymentSandbox.start(0, null, Duration.ofMillis(1500));
        client = client(sandbox.baseUrl(), Duration.ofMillis(500));
    }

    @AfterAll
    static void stop() {
        sandbox.close();
    }

    @Test
    void goodCardIsCharged() {
        String key = UUID.randomUUID().toString();
        ChargeOutcome outcome = client.charge(key, AMOUNT, "EUR", "tok_ok", "order-1");
        assertThat(outcome).isInstanceOfSatisfying(Charged.class, c -> assertThat(c.chargeId()).startsWith("ch_"));
        assertThat(client.chargeStatus(key)).isEqualTo(outcome);
        assertThat(client.charge(key, AMOUNT, "EUR", "tok_ok", "order-1")).as("same key, same charge").isEqualTo(outcome);
    }

    @Test
    void declinedCardIsADeclineWithItsReason() {
        String key = UUID.randomUUID().toString();
        assertThat(client.charge(key, AMOUNT, "EUR", "tok_declined", "order-2")).isEqualTo(new Declined("card declined"));
        assertThat(client.chargeStatus(key)).isInstanceOf(Declined.class);
    }

    @Test
    void aRequestTheProviderRefusesAsItStandsIsADeclineAndNothingIsCharged() {
        String key = UUID.randomUUID().toString();
        assertThat(client.charge(key, BigDecimal.ZERO, "EUR", "tok_ok", "order-0")).isInstanceOfSatisfying(Declined.class,
                d -> assertThat(d.reason()).startsWith("the provider refused the charge request (400)").contains("amount"));
        assertThat(client.chargeStatus(key)).isInstanceOf(NotFound.class);
    }

    @Test
    void timeoutIsUnresolvedAndTheStatusQueryKnowsTheOutcome() {
        String key = UUID.randomUUID().toString();
        assertThat(client.charge(key, AMOUNT, "EUR", "tok_timeout_declined", "order-3"))
                .isInstanceOfSatisfying(Unresolved.class, u -> assertThat(u.reason()).contains("timeout"));
        assertThat(client.chargeStatus(key)).isInstanceOf(Declined.class);
    }

    @Test
    void chargeTheProviderNeverSawIsNotFound() {
        assertThat(client.chargeStatus(UUID.randomUUID().toString())).isInstanceOf(NotFound.class);
    }

    @Test
    void refundThatFailsIsAFailureUntilItSucceedsWithTheSameKey() {
        String key = UUID.randomUUID().toString();
        Charged charged = (Charged) client.charge(key, AMOUNT, "EUR", "tok_refund_fails_twice", "order-4");
        String refundKey = "refund-" + key;
        assertThat(client.refund(refundKey, charged.chargeId(), AMOUNT, "EUR", "order-4"))
                .isInstanceOfSatisfying(RefundFailed.class, f -> {
                    assertThat(f.reason()).contains("503");
                    assertThat(f.refused()).as("unavailable: no answer").isFalse();
                });
        assertThat(client.refund(refundKey, charged.chargeId(), AMOUNT, "EUR", "order-4")).isInstanceOf(RefundFailed.class);
        RefundOutcome refunded = client.refund(refundKey, charged.chargeId(), AMOUNT, "EUR", "order-4");
        assertThat(refunded).isInstanceOfSatisfying(Refunded.class, r -> assertThat(r.refundId()).startsWith("re_"));
        assertThat(client.refund(refundKey, charged.chargeId(), AMOUNT, "EUR", "order-4"))
                .as("same key, same refund").isEqualTo(refunded);
    }

    @Test
    void aRefundTheProviderRefusesIsARefusal() {
        String key = UUID.randomUUID().toString();
        Charged charged = (Charged) client.charge(key, AMOUNT, "EUR", "tok_refund_refused", "order-7");
        assertThat(client.refund("refund-" + key, charged.chargeId(), AMOUNT, "EUR", "order-7"))
                .isInstanceOfSatisfying(RefundFailed.class, f -> {
                    assertThat(f.reason()).contains("422", "disputed");
                    assertThat(f.refused()).isTrue();
                });
    }

    @Test
    void providerThatIsDownIsUnresolvedNeverADecline() throws IOException {
        int freePort;
        try (ServerSocket socket = new ServerSocket(0)) {
            freePort = socket.getLocalPort();
        }
        PaymentProviderClient down = client("http://127.0.0.1:" + freePort, Duration.ofMillis(500));
        assertThat(down.charge(UUID.randomUUID().toString(), AMOUNT, "EUR", "tok_ok", "order-5")).isInstanceOf(Unresolved.class);
        assertThat(down.chargeStatus(UUID.randomUUID().toString())).isInstanceOf(Unresolved.class);
        assertThat(down.refund("refund-x", "ch_x", AMOUNT, "EUR", "order-5"))
                .isInstanceOfSatisfying(RefundFailed.class, f -> assertThat(f.refused()).as("unanswered").isFalse());
    }

    /** Recorded, such an id would fail the payment's transaction on every attempt, the call made again each time. */
    @Test
    void aChargeOrRefundIdNoColumnHoldsIsNoAnswerNeverADecline() throws IOException {
        String tooLong = "ch_" + "9".repeat(300);
        HttpServer provider = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        provider.createContext("/v1/", exchange -> {
            byte[] body = ("{\"status\": \"succeeded\", \"chargeId\": \"" + tooLong + "\", \"refundId\": \""
                    + tooLong + "\"}").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders("POST".equals(exchange.getRequestMethod()) ? 201 : 200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        provider.start();
        try {
            PaymentProviderClient odd = client("http://127.0.0.1:" + provider.getAddress().getPort(),
                    Duration.ofMillis(500));
            assertThat(odd.charge(UUID.randomUUID().toString(), AMOUNT, "EUR", "tok_ok", "order-6"))
                    .isInstanceOfSatisfying(Unresolved.class, u -> assertThat(u.reason())
                            .isEqualTo("charge succeeded with an id of 303 characters (at most 255 are kept)"));
            assertThat(odd.chargeStatus(UUID.randomUUID().toString())).isInstanceOf(Unresolved.class);
            assertThat(odd.refund("refund-x", "ch_x", AMOUNT, "EUR", "order-6")).isInstanceOfSatisfying(
                    RefundFailed.class, f -> assertThat(f.refused()).as("made, its id unkept").isFalse());
        } finally {
            provider.stop(0);
        }
    }

    /**
     * Only a refusal lets an operator confirm a refund made another way: a 409 is a request under the same key still
     * under way at some providers, whose refund may yet be made, as are 408, 429 and a 5xx.
     */
    @Test
    void aRefundAnsweredWithAConflictIsNoRefusal() throws IOException {
        int[] status = new int[1];
        HttpServer provider = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        provider.createContext("/v1/refunds", exchange -> {
            exchange.sendResponseHeaders(status[0], -1);
            exchange.close();
        });
        provider.start();
        try {
            PaymentProviderClient client = client("http://127.0.0.1:" + provider.getAddress().getPort(),
                    Duration.ofMillis(500));
            for (int answered : new int[] {400, 402, 404, 422, 408, 409, 429, 500, 503}) {
                status[0] = answered;
                boolean refusal = answered < 500 && answered != 408 && answered != 409 && answered != 429;
                assertThat(client.refund("refund-x", "ch_x", AMOUNT, "EUR", "order-8")).as("answered %d", answered)
                        .isInstanceOfSatisfying(RefundFailed.class, f -> assertThat(f.refused()).isEqualTo(refusal));
            }
        } finally {
            provider.stop(0);
        }
    }

    /**
     * A refund the provider answers but did not make is answered alike under the same key for ever: only as a refusal
     * can an operator who settled it another way end its retries.
     */
    @Test
    void aRefundAnsweredAsNotMadeIsARefusal() throws IOException {
        String[] status = new String[1];
        HttpServer provider = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        provider.createContext("/v1/refunds", exchange -> {
            byte[] body = ("{\"status\": \"" + status[0] + "\", \"refundId\": \"re_1\"}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(201, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        provider.start();
        try {
            PaymentProviderClient client = client("http://127.0.0.1:" + provider.getAddress().getPort(),
                    Duration.ofMillis(500));
            for (String answered : new String[] {"failed", "canceled", "pending"}) {
                status[0] = answered;
                assertThat(client.refund("refund-x", "ch_x", AMOUNT, "EUR", "order-9")).as("answered %s", answered)
                        .isInstanceOfSatisfying(RefundFailed.class, f -> {
                            assertThat(f.refused()).isTrue();
                            assertThat(f.reason()).contains("201", answered);
                        });
            }
            status[0] = "succeeded";
            assertThat(client.refund("refund-x", "ch_x", AMOUNT, "EUR", "order-9")).isEqualTo(new Refunded("re_1"));
        } finally {
            provider.stop(0);
        }
    }

    private static PaymentProviderClient client(String url, Duration timeout) {
        PaymentProviderClient client = new PaymentProviderClient();
        client.baseUrl = url;
        client.timeout = timeout;
        client.init();
        return client;
    }
}
