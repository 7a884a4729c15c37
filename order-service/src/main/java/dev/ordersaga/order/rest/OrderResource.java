package dev.ordersaga.order.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.http.NoControlCharacters;
import dev.ordersaga.http.ProblemException;
import dev.ordersaga.order.application.OrderService;
import dev.ordersaga.order.domain.Address;
import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.OrderItem;
import dev.ordersaga.order.persistence.SagaEventRepository;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.persistence.PersistenceException;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Currency;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "orders", description = "Place orders and follow their saga")
public class OrderResource {

    static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    static final int MAX_IDEMPOTENCY_KEY = 128;

    @Inject
    OrderService orders;

    @Inject
    SagaEventRepository timeline;

    @Inject
    ObjectMapper json;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Place an order", description = "Stores the order as PENDING and starts its saga. "
            + "The same Idempotency-Key with the same body returns the same order; with another body, 422.")
    @APIResponse(responseCode = "201", description = "Order placed (or, with a known Idempotency-Key, the order it placed)")
    @APIResponse(responseCode = "400", description = "Invalid request (problem+json)")
    @APIResponse(responseCode = "422", description = "Idempotency-Key reused with a different request (problem+json)")
    public Response place(@NotNull @Valid CreateOrderRequest request,
                          @Parameter(description = "correlation id of the saga; made when absent")
                          @HeaderParam(Correlation.HEADER) String correlationHeader,
                          @HeaderParam(IDEMPOTENCY_KEY) String idempotencyHeader,
                          @Context UriInfo uriInfo,
                          @Context HttpServerRequest httpRequest) {
        String correlationId = correlationHeader == null || correlationHeader.isBlank()
                ? Correlation.newId() : correlationHeader.strip();
        checkHeader(Correlation.HEADER, "Invalid correlation id", correlationId, EventCodec.MAX_CORRELATION_ID);
        // the header param is null for a header sent without a value, as for none: the request's own headers tell
        String sentKey = idempotencyHeader != null ? idempotencyHeader : httpRequest.headers().get(IDEMPOTENCY_KEY);
        Optional<String> idempotencyKey = Optional.ofNullable(sentKey).map(String::strip);
        if (idempotencyKey.isPresent()) {
            // a client that sends the header means to retry safely: taken as no key, its retry would place a second order
            if (idempotencyKey.get().isEmpty()) {
                throw new ProblemException(Response.Status.BAD_REQUEST, "Invalid idempotency key",
                        IDEMPOTENCY_KEY + " is empty: send a key, or no header for a request that is not to be repeated");
            }
            checkHeader(IDEMPOTENCY_KEY, "Invalid idempotency key", idempotencyKey.get(), MAX_IDEMPOTENCY_KEY);
        }
        checkAmountsIn(request);
        List<OrderItem> items = request.items().stream().map(i -> new OrderItem(i.sku(), i.quantity(), i.unitPrice())).toList();
        BigDecimal total = Order.totalOf(items);
        if (total.signum() <= 0) {
            // the payment step charges the provider, and a charge of nothing is refused there
            throw new ProblemException(Response.Status.BAD_REQUEST, "Invalid order total",
                    "the order's total must be above zero");
        }
        if (total.precision() - total.scale() > CreateOrderRequest.MAX_TOTAL_INTEGER_DIGITS) {
            throw new ProblemException(Response.Status.BAD_REQUEST, "Invalid order total",
                    "the order's total has more than " + CreateOrderRequest.MAX_TOTAL_INTEGER_DIGITS
                            + " digits before the decimal point");
        }
        var a = request.shippingAddress();
        OrderService.PlaceOrder command = new OrderService.PlaceOrder(request.customerId(),
                items, request.currency(), new Address(a.name(), a.line1(), a.line2(), a.city(), a.postalCode(), a.country()),
                request.paymentToken(), correlationId);
        Order order;
        try (Correlation.Scope ignored = Correlation.open(correlationId, null)) {
            // the hash (the request as JSON, then SHA-256) only where a key needs it
            order = orders.place(command, idempotencyKey, idempotencyKey.isPresent() ? hash(request) : null).order();
        } catch (PersistenceException raceOnTheSameKey) {
            // a concurrent request with the same key won: answer with its order (or 422 if its body differed)
            String hash = hash(request);
            order = idempotencyKey.flatMap(k -> orders.replay(k, hash)).orElseThrow(() -> raceOnTheSameKey);
        }
        return Response.created(uriInfo.getBaseUriBuilder().path("orders").path(order.id().toString()).build())
                .header(Correlation.HEADER, order.correlationId())
                .entity(new OrderCreatedResponse(order.id(), order.status().name(), order.correlationId()))
                .build();
    }

    /**
     * The provider charges in the currency's minor unit: a code it does not know, or a price finer than a cent (a yen),
     * would be declined or rounded after the stock was reserved, and a rounded charge would not match the order's total
     * or its refund.
     */
    private static void checkAmountsIn(CreateOrderRequest request) {
        int minorUnitDigits;
        try {
            minorUnitDigits = Currency.getInstance(request.currency()).getDefaultFractionDigits();
        } catch (IllegalArgumentException unknown) {
            minorUnitDigits = -1;
        }
        if (minorUnitDigits < 0) {
            throw new ProblemException(Response.Status.BAD_REQUEST, "Invalid currency",
                    "currency " + request.currency() + " is no ISO 4217 currency that money is charged in");
        }
        for (int i = 0; i < request.items().size(); i++) {
            BigDecimal price = request.items().get(i).unitPrice();
            if (price.stripTrailingZeros().scale() > minorUnitDigits) {
                throw new ProblemException(Response.Status.BAD_REQUEST, "Invalid unit price",
                        "items[" + i + "].unitPrice " + price.toPlainString() + " is finer than " + request.currency()
                                + "'s minor unit (" + minorUnitDigits + " decimal" + (minorUnitDigits == 1 ? "" : "s")
                                + ")");
            }
        }
    }

    /**
     * Both headers are kept with the order and travel with every event of its saga. The HTTP layer lets a tab (and
     * text past ASCII) through in a header; a control character would end up in every service's log lines for the saga.
     */
    private static void checkHeader(String header, String title, String value, int maxLength) {
        if (value.length() > maxLength) {
            throw new ProblemException(Response.Status.BAD_REQUEST, title,
                    header + " is longer than " + maxLength + " characters");
        }
        if (!NoControlCharacters.Validator.isFree(value)) {
            throw new ProblemException(Response.Status.BAD_REQUEST, title, header + " must not contain control characters");
        }
    }

    @GET
    @Path("/{id}")
    @Operation(summary = "An order: status, items, total, and why it was cancelled or why it waits")
    @APIResponse(responseCode = "404", description = "No such order (problem+json)")
    public OrderView get(@PathParam("id") UUID id) {
        return orders.find(id).map(OrderView::of).orElseThrow(() -> notFound(id));
    }

    @POST
    @Path("/{id}/cancel")
    @Operation(summary = "Cancel an order", description = "Accepted while PENDING, STOCK_RESERVED or PAID: the "
            + "compensation starts and the order ends CANCELLED. Later, 409.")
    @APIResponse(responseCode = "202", description = "Compensation started")
    @APIResponse(responseCode = "409", description = "The order can no longer be cancelled (problem+json)")
    public Response cancel(@PathParam("id") UUID id) {
        Order order = orders.find(id).orElseThrow(() -> notFound(id));
        try (Correlation.Scope ignored = Correlation.open(order.correlationId(), null)) {
            order = orders.cancelByCustomer(id);
        }
        return Response.accepted(OrderView.of(order)).build();
    }

    @GET
    @Path("/{id}/timeline")
    @Operation(summary = "Every saga event of the order, from all four services, in the order they happened")
    public List<TimelineEntry> timeline(@PathParam("id") UUID id) {
        orders.find(id).orElseThrow(() -> notFound(id));
        return timeline.timeline(id).stream().map(TimelineEntry::of).toList();
    }

    static ProblemException notFound(UUID id) {
        return new ProblemException(Response.Status.NOT_FOUND, "Order not found", "no order " + id);
    }

    private String hash(CreateOrderRequest request) {
        try {
            byte[] canonical = json.writeValueAsString(request).getBytes(StandardCharsets.UTF_8);
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical));
        } catch (JsonProcessingException | NoSuchAlgorithmException e) {
            throw new IllegalStateException("cannot hash the request", e);
        }
    }
}
