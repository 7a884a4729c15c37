package dev.ordersaga.shipping.rest;

import dev.ordersaga.http.NoControlCharacters;
import dev.ordersaga.http.ProblemException;
import dev.ordersaga.shipping.application.ShippingService;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import jakarta.ws.rs.Consumes;
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
@Consumes(MediaType.APPLICATION_JSON)
@RolesAllowed("operator")
@Tag(name = "operator", description = "Shipments an operator settles with the carrier (role operator)")
public class OperatorShipmentResource {

    /** As long as an order's cancel reason may be: the note is kept in the row and the order's timeline. */
    static final int MAX_REASON_LENGTH = 512;
    /** Longer than any id a carrier gives; the column holds what the carrier gave. */
    static final int MAX_CARRIER_ID_LENGTH = 128;

    @Inject
    ShippingService shipping;

    @Inject
    SecurityIdentity identity;

    /**
     * The parcel the operator settled with the carrier (as {@code GET /shipments/{orderId}} shows it; null or absent
     * where the shipment knows none), and why they hold it cancelled: what the carrier said, and through whom.
     */
    public record ConfirmRequest(@Size(max = MAX_CARRIER_ID_LENGTH) @NoControlCharacters String carrierShipmentId,
                                 @NotBlank @Size(max = MAX_REASON_LENGTH) @NoControlCharacters String reason) {
    }

    @POST
    @Path("/{orderId}/confirm-cancelled")
    @Operation(summary = "Record that the carrier confirmed, outside its API, that the parcel of a shipment whose "
            + "cancel it keeps refusing will not go out: the shipment is CANCELLED and the order's compensation goes "
            + "on")
    public ShipmentView confirmCancelled(@PathParam("orderId") UUID orderId, @Valid @NotNull ConfirmRequest request) {
        try {
            return shipping.confirmCancelledByHand(orderId, request.carrierShipmentId(),
                            identity.getPrincipal().getName(), request.reason())
                    .map(ShipmentView::of)
                    .orElseThrow(() -> new ProblemException(Response.Status.NOT_FOUND, "Shipment not found",
                            "no shipment for order " + orderId));
        } catch (ShippingService.NotConfirmable e) {
            throw new ProblemException(Response.Status.CONFLICT, "Shipment cancel not confirmable", e.getMessage());
        }
    }
}
