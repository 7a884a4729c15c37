package dev.ordersaga.payment.rest;

import dev.ordersaga.http.NoControlCharacters;
import dev.ordersaga.http.ProblemException;
import dev.ordersaga.payment.application.PaymentService;
import dev.ordersaga.payment.application.SurplusRefunds;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.provider.PaymentProviderClient;
import dev.ordersaga.work.Surpluses;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.util.List;
import java.util.UUID;

/**
 * What an operator follows and settles with the payment provider by hand. A compensation is retried until it
 * succeeds, and alerts; where the provider's API keeps refusing a refund (a disputed charge, a closed account), the
 * person who returned the money another way ends it here, and the order's compensation goes on. So too for the
 * refund of a second charge the provider made under the payment's key, which the saga does not wait for.
 */
@Path("/operator/payments")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
@RolesAllowed("operator")
@Tag(name = "operator", description = "Payments an operator follows and settles with the provider (role operator)")
public class OperatorPaymentResource {

    @Inject
    PaymentService payments;

    @Inject
    SurplusRefunds surplusRefunds;

    @Inject
    SecurityIdentity identity;

    /**
     * The refund the operator made at the provider (its dashboard), as the provider names it; null or absent where the
     * money went back another way (a chargeback, a transfer). And why they hold the order refunded.
     */
    public record ConfirmRequest(
            @Size(max = PaymentProviderClient.ID_WIDTH) @NoControlCharacters
            @Pattern(regexp = "\\S(.*\\S)?", message = "must be the provider's id, no blanks around it, or left out")
            String providerRefundId,
            @NotBlank @Size(max = Payment.MAX_CONFIRMATION_LENGTH) @NoControlCharacters String reason) {
    }

    @GET
    @Path("/{orderId}")
    @Operation(summary = "The payment of an order: its state, the provider's ids and its schedule (calls that got no "
            + "usable answer, the next one)")
    public PaymentView get(@PathParam("orderId") UUID orderId) {
        return payments.findByOrderId(orderId).map(PaymentView::of).orElseThrow(() -> notFound(orderId));
    }

    @POST
    @Path("/{orderId}/confirm-refunded")
    @Operation(summary = "Record that the customer has the money back, settled outside the provider's API after it "
            + "kept refusing the refund: the payment is REFUNDED and the order's compensation goes on")
    public PaymentView confirmRefunded(@PathParam("orderId") UUID orderId, @Valid @NotNull ConfirmRequest request) {
        try {
            return payments.confirmRefundedByHand(orderId, request.providerRefundId(),
                            identity.getPrincipal().getName(), request.reason())
                    .map(PaymentView::of)
                    .orElseThrow(() -> notFound(orderId));
        } catch (PaymentService.NotConfirmable e) {
            throw new ProblemException(Response.Status.CONFLICT, "Refund not confirmable", e.getMessage());
        }
    }

    @GET
    @Path("/{orderId}/surplus-charges")
    @Operation(summary = "Second charges the provider made under the payment's key, having forgotten it: each refunded "
            + "on its own and retried until the provider takes it; whether its last refund call was refused")
    public List<Surpluses.Recorded> surplusCharges(@PathParam("orderId") UUID orderId) {
        List<Surpluses.Recorded> found = surplusRefunds.ofOrder(orderId);
        // a mistyped id is told apart from a payment with no second charge
        if (found.isEmpty() && payments.findByOrderId(orderId).isEmpty()) {
            throw notFound(orderId);
        }
        return found;
    }

    @POST
    @Path("/{orderId}/surplus-charges/{chargeId}/confirm-refunded")
    @Operation(summary = "Record that the customer has a second charge back, settled outside the provider's API after "
            + "it kept refusing its refund: the refund's retries and alerts stop; the order is not touched")
    public Surpluses.Recorded confirmSurplusRefunded(@PathParam("orderId") UUID orderId,
                                                     @PathParam("chargeId") @Size(max = PaymentProviderClient.ID_WIDTH)
                                                     @NoControlCharacters String chargeId,
                                                     @Valid @NotNull ConfirmRequest request) {
        try {
            return surplusRefunds.confirmRefundedByHand(orderId, chargeId, request.providerRefundId(),
                            identity.getPrincipal().getName(), request.reason())
                    .orElseThrow(() -> new ProblemException(Response.Status.NOT_FOUND, "Surplus charge not found",
                            "no second charge " + chargeId + " found for order " + orderId));
        } catch (Surpluses.NotConfirmable e) {
            throw new ProblemException(Response.Status.CONFLICT, "Refund not confirmable", e.getMessage());
        }
    }

    private static ProblemException notFound(UUID orderId) {
        return new ProblemException(Response.Status.NOT_FOUND, "Payment not found", "no payment for order " + orderId);
    }
}
