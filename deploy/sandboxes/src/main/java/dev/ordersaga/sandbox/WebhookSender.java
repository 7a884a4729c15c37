package dev.ordersaga.sandbox;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Tells the shop about decided charges, as a provider's webhook does: later than the answer, off the caller's
 * thread, a few more times if the shop does not take it, and signed, so that the shop can tell the provider's
 * webhooks from anyone else's POST. The signature is the scheme real providers use: {@value #SIGNATURE_HEADER}
 * {@code t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the shared secret>}, made anew for each attempt
 * so that the shop may refuse an old one.
 */
final class WebhookSender implements AutoCloseable {

    private static final String HMAC = "HmacSHA256";
    private static final int MAX_ATTEMPTS = 5;
    private static final Duration FIRST_RETRY = Duration.ofMillis(200);
    private static final int CALL_TIMEOUT_MILLIS = 2000;
    static final String SIGNATURE_HEADER = "Provider-Signature";

    private final String name;
    private final URI url;
    private final SecretKeySpec secret;
    private final Duration delay;
    private final ScheduledExecutorService scheduler;

    WebhookSender(String name, URI url, String secret, Duration delay) {
        this.name = name;
        this.url = url;
        this.secret = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), HMAC);
        this.delay = delay;
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(2, SandboxHttpServer.threads(name));
        scheduler.setRemoveOnCancelPolicy(true);
        this.scheduler = scheduler;
    }

    void send(Map<String, Object> payload) {
        schedule(Json.write(payload), payload.get("type") + " " + payload.get("chargeId"), 1, delay);
    }

    /** Drops the deliveries still to come and interrupts those under way. */
    @Override
    public void close() {
        scheduler.shutdownNow();
    }

    private void schedule(byte[] body, String what, int attempt, Duration after) {
        try {
            scheduler.schedule(() -> deliver(body, what, attempt), after.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            // The sandbox is closing: a provider that went away sends no more webhooks.
        }
    }

    private void deliver(byte[] body, String what, int attempt) {
        String outcome;
        try {
            int status = post(body);
            if (status / 100 == 2) {
                System.out.println("[" + name + "] " + what + " -> " + status + " (attempt " + attempt + ")");
                return;
            }
            outcome = "HTTP " + status;
        } catch (IOException e) {
            outcome = e.toString();
        }
        if (Thread.currentThread().isInterrupted()) {
            return;
        }
        if (attempt == MAX_ATTEMPTS) {
            System.out.println("[" + name + "] " + what + " -> " + outcome + ", given up after " + attempt + " attempts");
            return;
        }
        System.out.println("[" + name + "] " + what + " -> " + outcome + " (attempt " + attempt + "), will retry");
        schedule(body, what, attempt + 1, FIRST_RETRY.multipliedBy(1L << (attempt - 1)));
    }

    String signature(long epochSecond, byte[] body) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(secret);
            mac.update((epochSecond + ".").getBytes(StandardCharsets.UTF_8));
            return "t=" + epochSecond + ",v1=" + HexFormat.of().formatHex(mac.doFinal(body));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no " + HMAC + " in this JDK", e);
        }
    }

    /**
     * One blocking exchange on the scheduler's thread, over a kept-alive connection. The JDK's asynchronous
     * HttpClient handed every webhook between its selector and executor threads: in the benchmark the payment
     * sandbox, which sends one webhook a charge, took 2.7 times the CPU of the carrier sandbox, which sends none.
     */
    private int post(byte[] body) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) url.toURL().openConnection(Proxy.NO_PROXY);
        boolean answered = false;
        try {
            connection.setRequestMethod("POST");
            connection.setConnectTimeout(CALL_TIMEOUT_MILLIS);
            connection.setReadTimeout(CALL_TIMEOUT_MILLIS);
            connection.setUseCaches(false);
            connection.setRequestProperty("Content-Type", "application/json");
            connection.setRequestProperty(SIGNATURE_HEADER, signature(Instant.now().getEpochSecond(), body));
            connection.setDoOutput(true);
            // buffered, not streamed: a kept-alive connection the shop had closed is replaced and the webhook sent again
            try (OutputStream out = connection.getOutputStream()) {
                out.write(body);
            }
            int status = connection.getResponseCode();
            try (InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream()) {
                // read to the end: only then does the connection go back to the keep-alive cache
                if (in != null) {
                    in.readAllBytes();
                }
            }
            answered = true;
            return status;
        } finally {
            if (!answered) {
                connection.disconnect();
            }
        }
    }
}
