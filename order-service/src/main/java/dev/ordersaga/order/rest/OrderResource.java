package dev.ordersaga.order.rest;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.order.application.OrderService;
import dev.ordersaga.order.domain.Address;
import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.OrderItem;
import dev.ordersaga.http.ProblemException;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import jakarta.ws.rs.core.Context;

import java.util.UUID;

@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class OrderResource {

    @Inject
    OrderService orders;

    @POST
    public Response place(@NotNull @Valid CreateOrderRequest request,
                          @HeaderParam(Correlation.HEADER) String correlationHeader,
                          @Context UriInfo uriInfo) {
        String correlationId = correlationHeader == null || correlationHeader.isBlank()
                ? Correlation.newId() : correlationHeader.strip();
        if (correlationId.length() > 128) {
            throw new ProblemException(Response.Status.BAD_REQUEST, "Invalid correlation id",
                    Correlation.HEADER + " is longer than 128 characters");
        }
        try (Correlation.Scope ignored = Correlation.open(correlationId, null)) {
            var a = request.shippingAddress();
            Order order = orders.place(new OrderService.PlaceOrder(request.customerId(),
                    request.items().stream().map(i -> new OrderItem(i.sku(), i.quantity(), i.unitPrice())).toList(),
                    request.currency(), new Address(a.name(), a.line1(), a.line2(), a.city(), a.postalCode(), a.country()),
                    request.paymentToken(), correlationId));
            return Response.created(uriInfo.getBaseUriBuilder().path("orders").path(order.id().toString()).build())
                    .header(Correlation.HEADER, correlationId)
                    .entity(new OrderCreatedResponse(order.id(), order.status().name(), correlationId))
                    .build();
        }
    }

    @GET
    @Path("/{id}")
    public OrderView get(@PathParam("id") UUID id) {
        return orders.find(id).map(OrderView::of)
                .orElseThrow(() -> new ProblemException(Response.Status.NOT_FOUND, "Order not found", "no order " + id));
    }
}
