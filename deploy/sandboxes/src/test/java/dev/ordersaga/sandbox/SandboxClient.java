package dev.ordersaga.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** The tests' view of a sandbox: plain java.net.http calls, as the services make them. */
final class SandboxClient {

    static final Duration NORMAL_TIMEOUT = Duration.ofSeconds(10);
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final String baseUrl;

    SandboxClient(String baseUrl) {
        this.baseUrl = baseUrl;
    }

    /** {@code raw} is the body as sent, for what a JsonNode does not keep (the scale of 21.00). */
    record Answer(int status, JsonNode body, String raw) {
    }

    Answer post(String path, String idempotencyKey, String json) {
        return post(path, idempotencyKey, json, NORMAL_TIMEOUT);
    }

    Answer post(String path, String idempotencyKey, String json, Duration timeout) {
        try {
            return send(postRequest(path, idempotencyKey, json, timeout));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** For the tests that expect the call to time out: the exception is what they assert on. */
    Answer postOrThrow(String path, String idempotencyKey, String json, Duration timeout) throws IOException {
        return send(postRequest(path, idempotencyKey, json, timeout));
    }

    CompletableFuture<HttpResponse<String>> postAsync(String path, String idempotencyKey, String json) {
        return CLIENT.sendAsync(postRequest(path, idempotencyKey, json, NORMAL_TIMEOUT),
                HttpResponse.BodyHandlers.ofString());
    }

    Answer get(String path) {
        try {
            return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(NORMAL_TIMEOUT).GET().build());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Answer getOrThrow(String path, Duration timeout) throws IOException {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(timeout).GET().build());
    }

    JsonNode ledger() {
        return get("/sandbox/ledger").body();
    }

    /** Sets the provider answers' delay; returns how many answers were held back by one so far. */
    long slow(long delayMs) {
        return post("/sandbox/slow", null, "{\"delayMs\": " + delayMs + "}").body().get("slowedAnswers").asLong();
    }

    long slowedAnswers() {
        return get("/sandbox/slow").body().get("slowedAnswers").asLong();
    }

    private HttpRequest postRequest(String path, String idempotencyKey, String json, Duration timeout) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + path))
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (idempotencyKey != null) {
            request.header("Idempotency-Key", idempotencyKey);
        }
        return request.build();
    }

    private static Answer send(HttpRequest request) throws IOException {
        try {
            HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
            assertJson(response);
            return new Answer(response.statusCode(), MAPPER.readTree(response.body()), response.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void assertJson(HttpResponse<String> response) {
        String type = response.headers().firstValue("Content-Type").orElse("");
        if (!type.startsWith("application/json")) {
            throw new AssertionError("not a JSON answer: " + type + " " + response.body());
        }
    }
}
