package dev.ordersaga.shipping.rest;

import dev.ordersaga.http.ProblemException;
import dev.ordersaga.shipping.application.ShippingService;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.UUID;

@Path("/shipments")
@Produces(MediaType.APPLICATION_JSON)
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
