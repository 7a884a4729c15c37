package dev.ordersaga.shipping.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** The sandbox's own controls (outage, slow mode, a forgotten key) and its ledger, as a test drives and reads them. */
public final class CarrierSandboxApi implements AfterEachCallback {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** null for the application's sandbox until a test first drives it */
    private String baseUrl;

    public CarrierSandboxApi(String baseUrl) {
        this.baseUrl = baseUrl;
    }

    /**
     * The sandbox the application under test calls ({@link CarrierSandboxResource}), registered with
     * {@code @RegisterExtension static}. Its outage and slow mode are global: after each test they are put back to
     * normal, so that a test that failed with them armed does not leave them to the next.
     */
    public static CarrierSandboxApi ofTheApplication() {
        return new CarrierSandboxApi(null);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        // not read yet: no test of the class has driven the sandbox, there is nothing to put back
        if (baseUrl != null) {
            outage(0);
            slow(0);
        }
    }

    /**
     * A shipment in the carrier's books. {@code createCalls} and {@code statusQueries} count the calls under its key
     * that reached the books (the sandbox keeps one shipment per key however often it is called; a call refused by an
     * outage is not counted): what tells one create call from a repeated one.
     */
    public record LedgerShipment(String shipmentId, String idempotencyKey, String reference, String status,
                                 int createCalls, int statusQueries) {
    }

    /** The next {@code failures} create calls answer 503, whoever makes them (0 ends every outage). */
    public void outage(int failures) {
        post("/sandbox/carrier/outage", "{\"failures\": " + failures + "}");
    }

    /**
     * The next {@code failures} create calls for the order answer 503, while the service's other work (the backlog of
     * the shared topics, other tests' shipments) goes through and takes none of them.
     */
    public void outageOf(UUID orderId, int failures) {
        post("/sandbox/carrier/outage", "{\"failures\": " + failures + ", \"reference\": \"" + orderId + "\"}");
    }

    /** Every carrier answer is held back this long from now on (0 = off). */
    public void slow(long delayMs) {
        post("/sandbox/slow", "{\"delayMs\": " + delayMs + "}");
    }

    /** The carrier forgets the key, as real carriers do after some days: a create under it creates anew. */
    public void forgetKey(String idempotencyKey) {
        post("/sandbox/keys/" + idempotencyKey + "/forget", "");
    }

    /** The carrier's shipments for an order. */
    public List<LedgerShipment> shipmentsOf(UUID orderId) {
        JsonNode ledger;
        try {
            ledger = JSON.readTree(send(HttpRequest.newBuilder(URI.create(baseUrl() + "/sandbox/ledger")).GET()));
        } catch (IOException e) {
            throw new IllegalStateException("unreadable ledger", e);
        }
        List<LedgerShipment> shipments = new ArrayList<>();
        for (JsonNode s : ledger.path("shipments")) {
            if (orderId.toString().equals(s.path("reference").asText())) {
                shipments.add(new LedgerShipment(s.path("shipmentId").asText(), s.path("idempotencyKey").asText(),
                        s.path("reference").asText(), s.path("status").asText(), s.path("createCalls").asInt(),
                        s.path("statusQueries").asInt()));
            }
        }
        return shipments;
    }

    private void post(String path, String body) {
        send(HttpRequest.newBuilder(URI.create(baseUrl() + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    private String baseUrl() {
        if (baseUrl == null) {
            // read in the test, where the application's config is the current one
            baseUrl = ConfigProvider.getConfig().getValue("shipping.carrier.url", String.class);
        }
        return baseUrl;
    }

    private static String send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> response = HTTP.send(request.timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException("sandbox answered " + response.statusCode() + ": " + response.body());
            }
            return response.body();
        } catch (IOException e) {
            throw new IllegalStateException("sandbox unreachable", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
