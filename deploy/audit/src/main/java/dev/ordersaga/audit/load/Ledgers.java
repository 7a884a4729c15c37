package dev.ordersaga.audit.load;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.ordersaga.audit.Snapshot.CarrierShipment;
import dev.ordersaga.audit.Snapshot.ProviderCharge;
import dev.ordersaga.audit.Snapshot.ProviderRefund;
import dev.ordersaga.audit.Snapshot.UnmatchedEntry;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The providers' books: GET {@code <base>/sandbox/ledger} of the payment provider ({@code {"charges": [...],
 * "refunds": [...]}}) and of the carrier ({@code {"shipments": [...]}}). The sandboxes keep them in memory, so they
 * are only there while the sandboxes that served the orders run; an unreachable ledger is an error, never an empty
 * ledger.
 */
public final class Ledgers {

    private static final ObjectMapper JSON = JsonMapper.builder()
            // amounts stay as the provider wrote them: 21.00, not 21 or a double
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            .build();

    /** The payment provider's entries whose reference is an order in scope, and the others. */
    public record PaymentLedger(List<ProviderCharge> charges, List<ProviderRefund> refunds,
                                List<UnmatchedEntry> unmatched) {
    }

    /** The carrier's shipments whose reference is an order in scope, and the others. */
    public record CarrierLedger(List<CarrierShipment> shipments, List<UnmatchedEntry> unmatched) {
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    public PaymentLedger paymentLedger(URI base, Set<String> references) {
        return parsePaymentLedger(get("payment provider", base), references);
    }

    public CarrierLedger carrierLedger(URI base, Set<String> references) {
        return parseCarrierLedger(get("carrier", base), references);
    }

    private String get(String who, URI base) {
        URI ledger = URI.create(base + "/sandbox/ledger");
        String hint = " (the ledgers live in the sandboxes' memory: run the audit while the sandboxes that served"
                + " these orders are up, and point --payment-provider / --carrier at them)";
        HttpResponse<String> response;
        try {
            response = http.send(HttpRequest.newBuilder(ledger).timeout(Duration.ofSeconds(30)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException | HttpConnectTimeoutException e) {
            throw new LoadException("the " + who + "'s ledger at " + ledger + " is unreachable ("
                    + (e.getMessage() == null ? "connection refused" : e.getMessage()) + ")" + hint, e);
        } catch (HttpTimeoutException e) {
            throw new LoadException("the " + who + "'s ledger at " + ledger + " did not answer in time" + hint, e);
        } catch (IOException e) {
            throw new LoadException("the " + who + "'s ledger at " + ledger + " could not be read: " + e + hint, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LoadException("interrupted while reading " + ledger, e);
        }
        if (response.statusCode() != 200) {
            throw new LoadException("the " + who + "'s ledger at " + ledger + " answered HTTP " + response.statusCode()
                    + ": is that a sandbox?" + hint);
        }
        return response.body();
    }

    static PaymentLedger parsePaymentLedger(String body, Set<String> references) {
        JsonNode root = tree(body, "payment provider", "charges", "refunds");
        List<ProviderCharge> charges = new ArrayList<>();
        List<UnmatchedEntry> unmatched = new ArrayList<>();
        for (JsonNode c : root.path("charges")) {
            String reference = text(c, "reference");
            if (inScope(references, reference)) {
                charges.add(new ProviderCharge(text(c, "chargeId"), text(c, "idempotencyKey"), reference,
                        amount(c), text(c, "currency"), text(c, "status")));
            } else {
                String what = amount(c).toPlainString() + " " + text(c, "currency") + ", " + text(c, "status");
                unmatched.add(new UnmatchedEntry("payment provider charge " + text(c, "chargeId"), reference, null,
                        what, false));
            }
        }
        List<ProviderRefund> refunds = new ArrayList<>();
        for (JsonNode r : root.path("refunds")) {
            String reference = text(r, "reference");
            if (inScope(references, reference)) {
                refunds.add(new ProviderRefund(text(r, "refundId"), text(r, "idempotencyKey"), text(r, "chargeId"),
                        reference, amount(r), text(r, "currency")));
            } else {
                String chargeId = text(r, "chargeId");
                String what = amount(r).toPlainString() + " " + text(r, "currency") + " of charge " + chargeId;
                unmatched.add(new UnmatchedEntry("payment provider refund " + text(r, "refundId"), reference, chargeId,
                        what, false));
            }
        }
        return new PaymentLedger(charges, refunds, unmatched);
    }

    static CarrierLedger parseCarrierLedger(String body, Set<String> references) {
        JsonNode root = tree(body, "carrier", "shipments");
        List<CarrierShipment> shipments = new ArrayList<>();
        List<UnmatchedEntry> unmatched = new ArrayList<>();
        for (JsonNode s : root.path("shipments")) {
            String reference = text(s, "reference");
            if (inScope(references, reference)) {
                shipments.add(new CarrierShipment(text(s, "shipmentId"), text(s, "idempotencyKey"), reference,
                        text(s, "status")));
            } else {
                unmatched.add(new UnmatchedEntry("carrier shipment " + text(s, "shipmentId"), reference, null,
                        text(s, "status"), false));
            }
        }
        return new CarrierLedger(shipments, unmatched);
    }

    private static JsonNode tree(String body, String who, String... arrays) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (JsonProcessingException e) {
            throw new LoadException("the " + who + "'s ledger is not JSON: " + e.getOriginalMessage(), e);
        }
        for (String array : arrays) {
            if (root == null || !root.path(array).isArray()) {
                throw new LoadException("the " + who + "'s ledger has no \"" + array + "\" array: is that a sandbox?");
            }
        }
        return root;
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

    private static BigDecimal amount(JsonNode node) {
        JsonNode value = node.get("amount");
        if (value == null || !value.isNumber()) {
            throw new LoadException("a ledger entry has no numeric amount: " + node);
        }
        return value.decimalValue();
    }

    /** Set.of throws on contains(null), and an entry without a reference names no order anyway. */
    private static boolean inScope(Set<String> references, String reference) {
        return reference != null && references.contains(reference);
    }
}
