package dev.ordersaga.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** The shop's webhook endpoint, as small as a test needs: it keeps what it was sent and can refuse at first. */
final class WebhookReceiver implements AutoCloseable {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final HttpServer server;
    private final List<JsonNode> received = new CopyOnWriteArrayList<>();
    private final List<Signed> signed = new CopyOnWriteArrayList<>();
    private final AtomicInteger refusalsLeft;
    private final AtomicInteger calls = new AtomicInteger();

    private WebhookReceiver(int refusals) throws IOException {
        this.refusalsLeft = new AtomicInteger(refusals);
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 0);
        server.createContext("/webhooks/payment-provider", this::handle);
        server.start();
    }

    static WebhookReceiver accepting() throws IOException {
        return new WebhookReceiver(0);
    }

    /** Answers 500 to the first {@code refusals} calls. */
    static WebhookReceiver refusingFirst(int refusals) throws IOException {
        return new WebhookReceiver(refusals);
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/webhooks/payment-provider");
    }

    List<JsonNode> received() {
        return List.copyOf(received);
    }

    /** Every accepted webhook's raw body with its signature header (null if it had none), in arrival order. */
    List<Signed> signed() {
        return List.copyOf(signed);
    }

    record Signed(byte[] body, String signature) {
    }

    int calls() {
        return calls.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private void handle(HttpExchange exchange) throws IOException {
        calls.incrementAndGet();
        byte[] raw = exchange.getRequestBody().readAllBytes();
        JsonNode body = MAPPER.readTree(raw);
        if (refusalsLeft.getAndDecrement() > 0) {
            exchange.sendResponseHeaders(500, -1);
        } else {
            received.add(body);
            signed.add(new Signed(raw, exchange.getRequestHeaders().getFirst("Provider-Signature")));
            exchange.sendResponseHeaders(204, -1);
        }
        exchange.close();
    }
}
