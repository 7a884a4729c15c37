package dev.ordersaga.shipping.rest;

import dev.ordersaga.http.NoControlCharacters;
import dev.ordersaga.http.ProblemException;
import dev.ordersaga.shipping.application.ShippingService;
import dev.ordersaga.shipping.application.SurplusCancels;
import dev.ordersaga.work.Surpluses;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
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
 * What an operator settles with the carrier by hand. A compensation is retried until it succeeds, and alerts; where
 * the carrier's API keeps refusing a cancel (a 404 for a parcel it gave us), the person who settled it with the carrier
 * ends it here, and the order's compensation goes on. So too for the cancel of a second parcel the carrier made under
 * the shipment's key, which the saga does not wait for.
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
    public static final int MAX_CARRIER_ID_LENGTH = 128;

    @Inject
    ShippingService shipping;

    @Inject
    SurplusCancels surplusCancels;

    @Inject
    SecurityIdentity identity;

    /**
     * The parcel the operator settled with the carrier (as {@code GET /shipments/{orderId}} shows it; null or absent
     * where the shipment knows none), and why they hold it cancelled: what the carrier said, and through whom.
     */
    public record ConfirmRequest(@Size(max = MAX_CARRIER_ID_LENGTH) @NoControlCharacters String carrierShipmentId,
                                 @NotBlank @Size(max = MAX_REASON_LENGTH) @NoControlCharacters String reason) {
    }

    /** Why the operator holds a second parcel cancelled: what the carrier said, and through whom. */
    public record SurplusConfirmRequest(@NotBlank @Size(max = MAX_REASON_LENGTH) @NoControlCharacters String reason) {
    }

    @GET
    @Path("/{orderId}/surplus-parcels")
    @Operation(summary = "Second parcels the carrier created under the shipment's key, having forgotten it: each "
            + "cancelled on its own and retried until the carrier takes it; whether its last cancel call was refused")
    public List<Surpluses.Recorded> surplusParcels(@PathParam("orderId") UUID orderId) {
        List<Surpluses.Recorded> found = surplusCancels.ofOrder(orderId);
        // a mistyped id is told apart from a shipment with no second parcel
        if (found.isEmpty() && shipping.find(orderId).isEmpty()) {
            throw notFound(orderId);
        }
        return found;
    }

    @POST
    @Path("/{orderId}/surplus-parcels/{carrierShipmentId}/confirm-cancelled")
    @Operation(summary = "Record that the carrier confirmed, outside its API, that a second parcel whose cancel it "
            + "keeps refusing will not go out: the cancel's retries and alerts stop; the order is not touched")
    public Surpluses.Recorded confirmSurplusCancelled(@PathParam("orderId") UUID orderId,
                                                      @PathParam("carrierShipmentId") @Size(max = MAX_CARRIER_ID_LENGTH)
                                                      @NoControlCharacters String carrierShipmentId,
                                                      @Valid @NotNull SurplusConfirmRequest request) {
        try {
            return surplusCancels.confirmCancelledByHand(orderId, carrierShipmentId, identity.getPrincipal().getName(),
                            request.reason())
                    .orElseThrow(() -> new ProblemException(Response.Status.NOT_FOUND, "Surplus parcel not found",
                            "no second parcel " + carrierShipmentId + " found for order " + orderId));
        } catch (Surpluses.NotConfirmable e) {
            throw new ProblemException(Response.Status.CONFLICT, "Cancel not confirmable", e.getMessage());
        }
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
                    .orElseThrow(() -> notFound(orderId));
        } catch (ShippingService.NotConfirmable e) {
            throw new ProblemException(Response.Status.CONFLICT, "Shipment cancel not confirmable", e.getMessage());
        }
    }

    private static ProblemException notFound(UUID orderId) {
        return new ProblemException(Response.Status.NOT_FOUND, "Shipment not found", "no shipment for order " + orderId);
    }
}
