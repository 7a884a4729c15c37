package dev.ordersaga.shipping.rest;

import dev.ordersaga.http.NoControlCharacters;
import dev.ordersaga.http.ProblemException;
import dev.ordersaga.shipping.application.ShippingService;
import dev.ordersaga.shipping.domain.IllegalTransitionException;
import dev.ordersaga.shipping.domain.ShipmentStatus;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.util.UUID;

/**
 * What an operator settles with the carrier by hand. A compensation is retried until it succeeds, and alerts; where
 * the carrier's API keeps refusing a cancel (a 404 for a parcel it gave us), the person who settled it with the carrier
 * ends it here, and the order's compensation goes on.
 */
@Path("/operator/shipments")
@Produces(MediaType.APPLICATION_JSON)
@RolesAllowed("operator")
@Tag(name = "operator", description = "Shipments an operator settles with the carrier (role operator)")
public class OperatorShipmentResource {

    /** As long as an order's cancel reason may be: the note is kept in the row and logged. */
    static final int MAX_REASON_LENGTH = 512;

    @Inject
    ShippingService shipping;

    @Inject
    SecurityIdentity identity;

    /** Why the operator holds the shipment cancelled: what the carrier said, and through whom. */
    public record ConfirmRequest(@NotBlank @Size(max = MAX_REASON_LENGTH) @NoControlCharacters String reason) {
    }

    @POST
    @Path("/{orderId}/confirm-cancelled")
    @Operation(summary = "Record that the carrier confirmed, outside its API, that nothing of a CANCELLING shipment will "
            + "go out: the shipment is CANCELLED and the order's compensation goes on")
    public ShipmentView confirmCancelled(@PathParam("orderId") UUID orderId, @Valid @NotNull ConfirmRequest request) {
        try {
            return shipping.confirmCancelledByHand(orderId, identity.getPrincipal().getName(), request.reason())
                    .map(ShipmentView::of)
                    .orElseThrow(() -> new ProblemException(Response.Status.NOT_FOUND, "Shipment not found",
                            "no shipment for order " + orderId));
        } catch (IllegalTransitionException e) {
            throw new ProblemException(Response.Status.CONFLICT, "Shipment not awaiting a cancel", "the shipment of order "
                    + orderId + " is " + e.from() + (e.from() == ShipmentStatus.CANCELLING
                    ? " with a call to the carrier under way, whose answer decides; ask again once it is answered"
                    : ": only a shipment whose cancellation the carrier keeps refusing (CANCELLING) can be confirmed"));
        }
    }
}
