package dev.ordersaga.sandbox;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Tells the shop about decided charges, as a provider's webhook does: later than the answer, off the caller's
 * thread, and a few more times if the shop does not take it.
 */
final class WebhookSender implements AutoCloseable {

    private static final int MAX_ATTEMPTS = 5;
    private static final Duration FIRST_RETRY = Duration.ofMillis(200);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
    // Shared by all sandboxes of a JVM: a client per sandbox would leave a selector thread behind each one.
    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CALL_TIMEOUT)
            .build();

    private final String name;
    private final URI url;
    private final Duration delay;
    private final ScheduledExecutorService scheduler;

    WebhookSender(String name, URI url, Duration delay) {
        this.name = name;
        this.url = url;
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
        HttpRequest request = HttpRequest.newBuilder(url)
                .timeout(CALL_TIMEOUT)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        String outcome;
        try {
            int status = CLIENT.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
            if (status / 100 == 2) {
                System.out.println("[" + name + "] " + what + " -> " + status + " (attempt " + attempt + ")");
                return;
            }
            outcome = "HTTP " + status;
        } catch (IOException e) {
            outcome = e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (attempt == MAX_ATTEMPTS) {
            System.out.println("[" + name + "] " + what + " -> " + outcome + ", given up after " + attempt + " attempts");
            return;
        }
        System.out.println("[" + name + "] " + what + " -> " + outcome + " (attempt " + attempt + "), will retry");
        schedule(body, what, attempt + 1, FIRST_RETRY.multipliedBy(1L << (attempt - 1)));
    }
}
