package dev.ordersaga.sandbox;

import java.time.Duration;
import java.util.List;

/**
 * The carrier's sandbox: shipments created idempotently by the Idempotency-Key header, rejected for good when
 * address.line1 is "UNDELIVERABLE", cancelled on request (refused when it was "UNCANCELLABLE"), a report of the
 * shipments created; an outage switch and the slow mode for the retry tests, a forgotten idempotency key, a carrier
 * that forgets every key and answers late, and the ledger.
 *
 * <pre>{@code
 * try (CarrierSandbox carrier = CarrierSandbox.start(0)) {
 *     String url = carrier.baseUrl(); // http://127.0.0.1:<port>
 * }
 * }</pre>
 */
public final class CarrierSandbox implements AutoCloseable {

    private static final String NAME = "carrier-sandbox";

    private final CarrierLedger ledger = new CarrierLedger();
    private final SandboxHttpServer server;

    private CarrierSandbox(String host, int port) {
        this.server = SandboxHttpServer.bind(NAME, host, port, List.of(
                Route.post("/v1/shipments", this::createShipment),
                Route.get("/v1/reports/shipments", request -> Response.json(200, ledger.shipments(request))),
                Route.post("/v1/shipments/{shipmentId}/cancel", this::cancelShipment),
                Route.get("/v1/shipments/{idempotencyKey}", this::shipmentStatus),
                Route.post("/sandbox/carrier/outage", this::armOutage),
                Route.post("/sandbox/keys/{idempotencyKey}/forget", this::forgetKey),
                Route.post("/sandbox/forgetful", this::forgetful),
                Route.get("/sandbox/forgetful", request -> Response.json(200, ledger.forgetfulView())),
                Route.get("/sandbox/ledger", request -> Response.json(200, ledger.ledgerView()))));
        server.start();
    }

    /** Starts the sandbox on 127.0.0.1; {@code port} 0 for any free port. */
    public static CarrierSandbox start(int port) {
        return start(SandboxHttpServer.DEFAULT_HOST, port);
    }

    /** Starts the sandbox on the given address (0.0.0.0 for every interface); {@code port} 0 for any free port. */
    public static CarrierSandbox start(String host, int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0..65535: " + port);
        }
        return new CarrierSandbox(host, port);
    }

    /** {@code http://127.0.0.1:<port>}, without a trailing slash. */
    public String baseUrl() {
        return server.baseUrl();
    }

    /** Frees the port and abandons held-back answers. Idempotent. */
    @Override
    public void close() {
        server.close();
    }

    private Response createShipment(Request request) {
        // The outage comes first: a carrier that is down reads nothing, so even a bad call gets its 503.
        if (ledger.takeOutageFailure()) {
            throw ApiException.unavailable("carrier temporarily unavailable");
        }
        String key = request.idempotencyKey();
        ShipmentRequest shipment = request.body(ShipmentRequest.class).validated();
        if (ledger.takeOutageFailureOf(shipment.reference())) {
            throw ApiException.unavailable("carrier temporarily unavailable");
        }
        if (shipment.undeliverable()) {
            return Response.json(422, Json.object("status", "rejected", "reason", "address undeliverable"));
        }
        Duration late = ledger.createAnswerDelay();
        Shipment created = ledger.create(key, shipment.reference(), shipment.cancellable());
        return Response.json(201, Json.object("shipmentId", created.shipmentId(), "status", created.status()))
                .delayedBy(late);
    }

    /**
     * {@code {"on": true, "answerDelayMs": n}}: every shipment's key is forgotten as soon as it is created, and each
     * create answered n ms late, until {@code {"on": false}}.
     */
    private Response forgetful(Request request) {
        ForgetfulRequest body = request.body(ForgetfulRequest.class);
        if (body.on() == null || (body.on() && (body.answerDelayMs() == null || body.answerDelayMs() < 0))) {
            throw ApiException.badRequest("on must be true or false, and answerDelayMs a number >= 0 when on");
        }
        ledger.forgetful(body.on() ? Duration.ofMillis(body.answerDelayMs()) : null);
        return Response.json(200, ledger.forgetfulView());
    }

    record ForgetfulRequest(Boolean on, Long answerDelayMs) {
    }

    private Response cancelShipment(Request request) {
        Shipment cancelled = ledger.cancel(request.pathParam(0), request.idempotencyKey());
        return Response.json(200, Json.object("shipmentId", cancelled.shipmentId(), "status", cancelled.status()));
    }

    private Response shipmentStatus(Request request) {
        String key = request.pathParam(0);
        return ledger.queryStatus(key)
                .map(shipment -> Response.json(200, shipment.view()))
                .orElseThrow(() -> ApiException.notFound("no shipment with idempotency key " + key));
    }

    /** As a real carrier does after some days: a create call under the key creates anew. */
    private Response forgetKey(Request request) {
        return Response.json(200, ledger.forgetKey(request.pathParam(0)).view());
    }

    /**
     * {@code {"failures": n}}: the next n create calls answer 503, whatever they carry; {@code {"failures": n,
     * "reference": r}}: the next n create calls for reference r (an order), while others go through, so that a test
     * arms an outage for its own order beside the work of others. {@code {"failures": 0}} ends every outage.
     */
    private Response armOutage(Request request) {
        OutageRequest outage = request.body(OutageRequest.class).validated();
        if (outage.reference() == null) {
            ledger.armOutage(outage.failures());
            return Response.json(200, Json.object("failures", outage.failures()));
        }
        ledger.armOutage(outage.failures(), outage.reference());
        return Response.json(200, Json.object("failures", outage.failures(), "reference", outage.reference()));
    }

    record OutageRequest(Integer failures, String reference) {
        OutageRequest validated() {
            if (failures == null || failures < 0) {
                throw ApiException.badRequest("failures must be a number >= 0");
            }
            if (reference != null && reference.isBlank()) {
                throw ApiException.badRequest("reference must not be blank; leave it out for an outage of every call");
            }
            return this;
        }
    }
}
