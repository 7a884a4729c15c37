package dev.ordersaga.inventory.rest;

import dev.ordersaga.http.NoControlCharacters;
import dev.ordersaga.http.ProblemException;
import dev.ordersaga.inventory.application.InventoryService;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

@Path("/stock")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class StockResource {

    @Inject
    InventoryService inventory;

    /**
     * Sets the available units of a SKU, creating it; reserved and shipped units stay as they are. An operator's (or
     * the shop's back office, under that role): every order is reserved against this count, and anyone who could set it
     * could fail every order, or sell stock there is none of.
     */
    @PUT
    @Path("/{sku}")
    @RolesAllowed("operator")
    public StockView set(@PathParam("sku") @NotBlank @Size(max = 64) @NoControlCharacters String sku,
                         @NotNull @Valid SetStockRequest request) {
        return StockView.of(inventory.setAvailable(sku, request.quantity()));
    }

    @GET
    @Path("/{sku}")
    public StockView get(@PathParam("sku") @NoControlCharacters String sku) {
        return inventory.findStock(sku).map(StockView::of)
                .orElseThrow(() -> new ProblemException(Response.Status.NOT_FOUND, "Stock not found", "no stock for SKU " + sku));
    }
}
