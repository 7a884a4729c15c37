package dev.ordersaga.order.rest;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.http.NoControlCharacters;
import dev.ordersaga.http.QueryParameters;
import dev.ordersaga.order.application.OrderService;
import dev.ordersaga.order.application.StalledSagas;
import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.persistence.OperatorActionRepository;
import dev.ordersaga.order.persistence.OrderRepository;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Size;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

/** What a person does with orders the saga could not finish by itself. Every action is recorded with who and when. */
@Path("/operator/orders")
@Produces(MediaType.APPLICATION_JSON)
@RolesAllowed("operator")
@Tag(name = "operator", description = "Orders waiting for a person (role operator)")
public class OperatorResource {

    @Inject
    OrderService orders;

    @Inject
    OrderRepository orderRepository;

    @Inject
    OperatorActionRepository actions;

    @Inject
    StalledSagas stalledSagas;

    @Inject
    SecurityIdentity identity;

    /** {@code waitingFor}: whose step waits (SHIPPING: retry-shipping or cancel; PAYMENT: retry-payment or cancel). */
    public record WaitingOrder(UUID orderId, String status, String reason, Instant since, String correlationId,
                               String waitingFor) {
    }

    public record ActionView(String action, String operator, Instant at, String detail) {
    }

    public record CancelRequest(@Size(max = Order.MAX_REASON_LENGTH) @NoControlCharacters String reason) {
    }

    @GET
    @Operation(summary = "Orders waiting for a person (waiting=true, longest waiting first; since=<instant>: those "
            + "waiting since then or later; since and after=<orderId> of the last row: the next page), sagas that "
            + "heard nothing for longer than order.stalled-after (stalled=true, longest silent first; since and after "
            + "as for waiting), or the orders not finished yet, least recently changed or put on hold first (since and "
            + "after as for waiting)")
    public List<WaitingOrder> list(@QueryParam("waiting") String waitingParameter,
                                   @QueryParam("stalled") String stalledParameter,
                                   @QueryParam("since") String sinceParameter,
                                   @QueryParam("after") String afterParameter, @QueryParam("limit") String limit) {
        boolean waiting = QueryParameters.flag("waiting", waitingParameter);
        boolean stalled = QueryParameters.flag("stalled", stalledParameter);
        int atMost = QueryParameters.limit(limit, 100, 1000);
        Instant since = QueryParameters.instant("since", sinceParameter, Instant.EPOCH);
        UUID after = QueryParameters.uuid("after", afterParameter);
        // each refused rather than left unread: a script paging a list that ignores its cursor reads one page for ever
        if (waiting && stalled) {
            throw QueryParameters.invalid("waiting and stalled are two lists: ask for one at a time");
        }
        if (after != null && sinceParameter == null) {
            throw QueryParameters.invalid("after is the last row's orderId, given with its since");
        }
        if (stalled) {
            return stalledSagas.list(since, after, atMost).sagas().stream()
                    .map(s -> new WaitingOrder(s.orderId(), s.status().name(), "stalled: nothing heard since " + s.lastEvent(),
                            s.lastHeardAt(), s.correlationId(), null))
                    .toList();
        }
        return QuarkusTransaction.requiringNew().call(() -> (waiting
                ? orderRepository.waitingForOperator(since, after, atMost)
                : orderRepository.open(since, after, atMost))
                .stream()
                .map(o -> new WaitingOrder(o.id(), o.status().name(), o.waitingReason(),
                        o.waitingSince() != null ? o.waitingSince() : o.updatedAt(), o.correlationId(),
                        o.waitingFor() == null ? null : o.waitingFor().name()))
                .toList());
    }

    @POST
    @Path("/{id}/retry-shipping")
    @Operation(summary = "Ask shipping to try the carrier again for an order that waits for it")
    public Response retryShipping(@PathParam("id") UUID id) {
        return accepted(id, () -> orders.retryShipping(id, operator()));
    }

    @POST
    @Path("/{id}/retry-payment")
    @Operation(summary = "Ask payment to charge again an order whose payment was held, once the provider showed no "
            + "charge for it (the provider forgot the payment's key, so a charge sent now is a new one)")
    public Response retryPayment(@PathParam("id") UUID id) {
        return accepted(id, () -> orders.retryPayment(id, operator()));
    }

    @POST
    @Path("/{id}/cancel")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Cancel an order with full compensation: release the stock, refund, cancel the shipment")
    public Response cancel(@PathParam("id") UUID id, @Valid CancelRequest request) {
        return accepted(id, () -> orders.cancelByOperator(id, operator(), request == null ? null : request.reason()));
    }

    @POST
    @Path("/{id}/resend-cancellation")
    @Operation(summary = "Ask every participant again for its answer to the cancellation of an order that stays "
            + "COMPENSATING (an answer lost, a participant mended): each answers with where its compensation stands")
    public Response resendCancellation(@PathParam("id") UUID id) {
        return accepted(id, () -> orders.askForCompensationAgain(id, operator()));
    }

    @GET
    @Path("/{id}/actions")
    @Operation(summary = "What operators did to an order")
    public List<ActionView> actions(@PathParam("id") UUID id) {
        List<ActionView> done = QuarkusTransaction.requiringNew().call(() -> actions.forOrder(id).stream()
                .map(a -> new ActionView(a.action(), a.operator(), a.at(), a.detail())).toList());
        if (done.isEmpty() && orders.find(id).isEmpty()) {
            throw OrderResource.notFound(id);
        }
        return done;
    }

    /** An operator's action on an order, logged and published under the order's correlation id. */
    private Response accepted(UUID id, Supplier<Order> action) {
        Order order = orders.find(id).orElseThrow(() -> OrderResource.notFound(id));
        try (Correlation.Scope ignored = Correlation.open(order.correlationId(), null)) {
            return Response.accepted(OrderView.of(action.get())).build();
        }
    }

    private String operator() {
        return identity.getPrincipal().getName();
    }
}
