package dev.ordersaga.payment.rest;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.http.ProblemException;
import dev.ordersaga.payment.application.PaymentService;
import dev.ordersaga.payment.persistence.PaymentRepository.ChargeState;
import dev.ordersaga.payment.domain.IllegalTransitionException;
import dev.ordersaga.payment.provider.PaymentProviderClient;
import dev.ordersaga.work.ProviderIds;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.inject.Inject;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.Validator;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.time.Instant;
import java.util.Set;

/**
 * The provider tells us how a charge ended. Resolves a CHARGING payment like the status query does, in the saga's
 * correlation scope; idempotent (a repeat, or news the status query brought first, changes nothing). Only a webhook
 * the provider signed is read ({@link WebhookSignatures}); any other is refused with 401 before its body is parsed.
 */
@Path("/webhooks/payment-provider")
public class ProviderWebhookResource {

    private static final Logger LOG = Logger.getLogger(ProviderWebhookResource.class);

    @Inject
    PaymentService payments;

    @Inject
    WebhookSignatures signatures;

    @Inject
    ObjectMapper json;

    @Inject
    Validator validator;

    /**
     * Every charge brings a webhook, and it is mostly news the worker recorded already: that is answered from one read
     * outside any transaction, with no row lock, no write and no commit. News that changes something goes through the
     * state machine in a transaction of its own, under the row's lock, which decides again on what it reads there.
     */
    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Response receive(@HeaderParam(WebhookSignatures.HEADER) String signature, byte[] body) throws IOException {
        signatures.refusal(signature, body, Instant.now()).ifPresent(refusal -> {
            LOG.warnf("Provider webhook refused: %s", refusal);
            throw new ProblemException(Response.Status.UNAUTHORIZED, "Webhook not signed by the provider", refusal);
        });
        ProviderWebhook webhook = json.readValue(body, ProviderWebhook.class);
        if (webhook == null) {
            throw new ProblemException(Response.Status.BAD_REQUEST, "Invalid request", "the body is JSON null");
        }
        Set<ConstraintViolation<ProviderWebhook>> violations = validator.validate(webhook);
        if (!violations.isEmpty()) {
            throw new ConstraintViolationException(violations);
        }
        ChargeState charge = payments.findCharge(webhook.idempotencyKey())
                .orElseThrow(() -> new ProblemException(Response.Status.NOT_FOUND, "Unknown charge",
                        "no payment has the idempotency key '" + webhook.idempotencyKey() + "'"));
        if (ProviderWebhook.CHARGE_SUCCEEDED.equals(webhook.type())
                && !ProviderIds.keepable(webhook.chargeId(), PaymentProviderClient.ID_WIDTH)) {
            // the worker's status query tells the charge, or alerts that its id cannot be recorded
            throw new ProblemException(Response.Status.BAD_REQUEST, "Invalid request",
                    "a charge.succeeded webhook names the charge (chargeId) with an id we can keep, not "
                            + ProviderIds.whyNotKept(webhook.chargeId(), PaymentProviderClient.ID_WIDTH));
        }
        try (Correlation.Scope ignored = Correlation.open(charge.correlationId(), charge.causedByEventId())) {
            // PaymentService logs what the news changed, if anything
            LOG.debugf("Provider webhook %s for charge %s of order %s", webhook.type(), webhook.chargeId(), charge.orderId());
            if (knownAlready(webhook, charge)) {
                LOG.debugf("Provider webhook %s for order %s: known already (payment is %s)", webhook.type(),
                        charge.orderId(), charge.status());
                return Response.noContent().build();
            }
            switch (webhook.type()) {
                case ProviderWebhook.CHARGE_SUCCEEDED ->
                        payments.recordChargeSucceeded(charge.paymentId(), webhook.chargeId());
                case ProviderWebhook.CHARGE_DECLINED -> payments.recordChargeDeclined(charge.paymentId(),
                        webhook.reason() == null ? "declined by the provider" : webhook.reason());
                default -> LOG.infof("Provider webhook of unknown type '%s' ignored", webhook.type());
            }
        } catch (IllegalTransitionException e) {
            throw new ProblemException(Response.Status.CONFLICT, "Charge cannot be resolved", e.getMessage());
        }
        return Response.noContent().build();
    }

    private static boolean knownAlready(ProviderWebhook webhook, ChargeState charge) {
        return switch (webhook.type()) {
            case ProviderWebhook.CHARGE_SUCCEEDED -> charge.status().hasChargeSucceeded();
            case ProviderWebhook.CHARGE_DECLINED -> charge.status().ignoresChargeDeclined();
            default -> false;
        };
    }
}
