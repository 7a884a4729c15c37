package dev.ordersaga.shipping.rest;

import dev.ordersaga.http.ProblemException;
import dev.ordersaga.shipping.application.ShippingService;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.UUID;

/**
 * A shipment as the operators follow it. Not the customers' view of their order (its timeline is): the last error is
 * the carrier's own text or the transport's (internal host names among them) and may name an operator.
 */
@Path("/shipments")
@Produces(MediaType.APPLICATION_JSON)
@RolesAllowed("operator")
public class ShipmentResource {

    @Inject
    ShippingService shipping;

    /** The shipment of an order: its state and the carrier schedule (attempts, next attempt, last error). */
    @GET
    @Path("/{orderId}")
    public ShipmentView get(@PathParam("orderId") UUID orderId) {
        return shipping.find(orderId).map(ShipmentView::of)
                .orElseThrow(() -> new ProblemException(Response.Status.NOT_FOUND, "Shipment not found",
                        "no shipment for order " + orderId));
    }
}
