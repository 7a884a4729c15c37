package dev.ordersaga.order.rest;

import dev.ordersaga.http.Problem;
import dev.ordersaga.order.application.IdempotencyKeyReusedException;
import dev.ordersaga.order.application.OrderNotFoundException;
import dev.ordersaga.order.domain.IllegalTransitionException;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** The order's own refusals, as problem+json. */
public class OrderProblemMappers {

    @ServerExceptionMapper
    public Response conflict(IllegalTransitionException e) {
        return problem(409, "Not possible in the order's state", e.getMessage());
    }

    @ServerExceptionMapper
    public Response notFound(OrderNotFoundException e) {
        return problem(404, "Order not found", e.getMessage());
    }

    @ServerExceptionMapper
    public Response reusedKey(IdempotencyKeyReusedException e) {
        return problem(422, "Idempotency-Key reused", e.getMessage());
    }

    private static Response problem(int status, String title, String detail) {
        return Response.status(status).type(Problem.MEDIA_TYPE)
                .entity(new Problem("about:blank", title, status, detail, null)).build();
    }
}
