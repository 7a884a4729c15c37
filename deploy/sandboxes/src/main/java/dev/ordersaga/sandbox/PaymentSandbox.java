package dev.ordersaga.sandbox;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The payment provider's sandbox: charges decided by the payment token (see the table in {@link CardToken}),
 * idempotent by the Idempotency-Key header, refunds, a status query, webhooks, a settlement report, and the switches tests need
 * (late settlement, a forgotten idempotency key, a provider that forgets every key, slow mode, the ledger).
 *
 * <pre>{@code
 * try (PaymentSandbox provider = PaymentSandbox.start(0, null)) {
 *     String url = provider.baseUrl(); // http://127.0.0.1:<port>
 * }
 * }</pre>
 */
public final class PaymentSandbox implements AutoCloseable {

    public static final Duration DEFAULT_TIMEOUT_DELAY = Duration.ofSeconds(3);
    public static final Duration DEFAULT_WEBHOOK_DELAY = Duration.ofMillis(500);
    private static final String NAME = "payment-sandbox";

    private final PaymentLedger ledger = new PaymentLedger();
    private final Duration timeoutDelay;
    private final WebhookSender webhooks;
    private final SandboxHttpServer server;

    private PaymentSandbox(Builder builder) {
        this.timeoutDelay = builder.timeoutDelay;
        this.server = SandboxHttpServer.bind(NAME, builder.host, builder.port, List.of(
                Route.post("/v1/charges", this::charge),
                Route.get("/v1/charges/{idempotencyKey}", this::chargeStatus),
                Route.post("/v1/refunds", this::refund),
                Route.get("/v1/reports/settlements", this::settlements),
                Route.post("/sandbox/charges/{chargeId}/settle-late", this::settleLate),
                Route.post("/sandbox/keys/{idempotencyKey}/forget", this::forgetKey),
                Route.post("/sandbox/forgetful", this::forgetful),
                Route.get("/sandbox/forgetful", request -> Response.json(200, ledger.forgetfulView())),
                Route.get("/sandbox/ledger", request -> Response.json(200, ledger.ledgerView()))));
        this.webhooks = builder.webhookUrl == null ? null
                : new WebhookSender(NAME + "-" + server.port() + "-webhook", builder.webhookUrl, builder.webhookSecret,
                        builder.webhookDelay);
        server.start();
    }

    /**
     * Starts the sandbox on 127.0.0.1.
     *
     * @param port       0 for any free port
     * @param webhookUrl where to POST charge.succeeded / charge.declined, or null for no webhooks
     */
    public static PaymentSandbox start(int port, URI webhookUrl) {
        return builder().port(port).webhookUrl(webhookUrl).start();
    }

    /** As {@link #start(int, URI)}, with the time the timeout tokens hold their answer back (default 3 s). */
    public static PaymentSandbox start(int port, URI webhookUrl, Duration timeoutDelay) {
        return builder().port(port).webhookUrl(webhookUrl).timeoutDelay(timeoutDelay).start();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code http://127.0.0.1:<port>}, without a trailing slash. */
    public String baseUrl() {
        return server.baseUrl();
    }

    /** Frees the port, abandons held-back answers and drops the webhooks not yet sent. Idempotent. */
    @Override
    public void close() {
        if (webhooks != null) {
            webhooks.close();
        }
        server.close();
    }

    private Response charge(Request request) {
        String key = request.idempotencyKey();
        PaymentLedger.Recorded recorded = ledger.charge(key, request.body(ChargeRequest.class).validated());
        Charge charge = recorded.charge();
        if (!recorded.isNew()) {
            // The charge is decided already: a repeated call learns it at once, like the status query.
            return charge.answer();
        }
        notifyShop(charge);
        return CardToken.of(charge.token()).answersLate() ? charge.answer().delayedBy(timeoutDelay) : charge.answer();
    }

    private Response chargeStatus(Request request) {
        String key = request.pathParam(0);
        return ledger.queryStatus(key)
                .map(charge -> Response.json(200, charge.statusView()))
                .orElseThrow(() -> ApiException.notFound("no charge with idempotency key " + key));
    }

    private Response refund(Request request) {
        String key = request.idempotencyKey();
        return ledger.refund(key, request.body(RefundRequest.class).validated()).answer();
    }

    /** The settlement report: every charge that succeeded, late settlements included ({@link Report}). */
    private Response settlements(Request request) {
        return Response.json(200, ledger.settlements(request));
    }

    private Response settleLate(Request request) {
        Charge settled = ledger.settleLate(request.pathParam(0));
        notifyShop(settled);
        return Response.json(200, settled.statusView());
    }

    /** As a real provider does after a day or so: a charge call under the key charges anew. */
    private Response forgetKey(Request request) {
        return Response.json(200, ledger.forgetKey(request.pathParam(0)).statusView());
    }

    /** {@code {"on": true}}: every charge's key is forgotten as soon as it is made, until {@code {"on": false}}. */
    private Response forgetful(Request request) {
        ForgetfulRequest body = request.body(ForgetfulRequest.class);
        if (body.on() == null) {
            throw ApiException.badRequest("on must be true or false");
        }
        ledger.forgetful(body.on());
        return Response.json(200, ledger.forgetfulView());
    }

    record ForgetfulRequest(Boolean on) {
    }

    private void notifyShop(Charge charge) {
        if (webhooks != null) {
            webhooks.send(charge.webhookPayload());
        }
    }

    /** For tests and the command line: every setting of the payment sandbox. */
    public static final class Builder {

        private String host = SandboxHttpServer.DEFAULT_HOST;
        private int port;
        private URI webhookUrl;
        private String webhookSecret;
        private Duration timeoutDelay = DEFAULT_TIMEOUT_DELAY;
        private Duration webhookDelay = DEFAULT_WEBHOOK_DELAY;

        private Builder() {
        }

        /** The address to listen on: 127.0.0.1 (the default), or 0.0.0.0 for every interface. */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** 0 (the default) for any free port. */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be 0..65535: " + port);
            }
            this.port = port;
            return this;
        }

        /** Null (the default) for no webhooks. */
        public Builder webhookUrl(URI webhookUrl) {
            this.webhookUrl = webhookUrl;
            return this;
        }

        /** The secret the webhooks are signed with, shared with the shop: required with a webhook URL. */
        public Builder webhookSecret(String webhookSecret) {
            this.webhookSecret = webhookSecret;
            return this;
        }

        /** How long tok_timeout_succeeds / tok_timeout_declined hold their first answer back (default 3 s). */
        public Builder timeoutDelay(Duration timeoutDelay) {
            this.timeoutDelay = nonNegative(timeoutDelay, "timeoutDelay");
            return this;
        }

        /** How long after a charge is decided its webhook goes out (default 500 ms). */
        public Builder webhookDelay(Duration webhookDelay) {
            this.webhookDelay = nonNegative(webhookDelay, "webhookDelay");
            return this;
        }

        public PaymentSandbox start() {
            if (webhookUrl != null && (webhookSecret == null || webhookSecret.isEmpty())) {
                throw new IllegalArgumentException("webhooks are signed: a webhook URL needs a webhook secret");
            }
            return new PaymentSandbox(this);
        }

        private static Duration nonNegative(Duration duration, String name) {
            Objects.requireNonNull(duration, name);
            if (duration.isNegative()) {
                throw new IllegalArgumentException(name + " must not be negative: " + duration);
            }
            return duration;
        }
    }
}
