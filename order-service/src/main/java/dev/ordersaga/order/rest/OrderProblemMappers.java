package dev.ordersaga.order.rest;

import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import dev.ordersaga.http.Problem;
import dev.ordersaga.order.application.IdempotencyKeyReusedException;
import dev.ordersaga.order.application.OrderNotFoundException;
import dev.ordersaga.order.domain.IllegalTransitionException;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import java.util.List;

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

    /**
     * A JSON value that is not of its field's type ({@code "quantity": 2.9}, {@code "unitPrice": "cheap"}): answered
     * as the field's constraints are, with the field named as the client wrote it, which Jackson's message leaves out.
     */
    @ServerExceptionMapper
    public Response wrongType(InvalidFormatException e) {
        Problem.Violation violation = new Problem.Violation(field(e.getPath()), expected(e.getTargetType()));
        return Response.status(400).type(Problem.MEDIA_TYPE)
                .entity(new Problem("about:blank", "Invalid request", 400, "1 field(s) are invalid", List.of(violation)))
                .build();
    }

    /** [items, 0, quantity] -> "items[0].quantity". */
    static String field(List<JsonMappingException.Reference> path) {
        StringBuilder field = new StringBuilder();
        for (JsonMappingException.Reference step : path) {
            if (step.getFieldName() != null) {
                field.append(field.isEmpty() ? "" : ".").append(step.getFieldName());
            } else if (step.getIndex() >= 0) {
                field.append('[').append(step.getIndex()).append(']');
            }
        }
        return field.toString();
    }

    private static String expected(Class<?> type) {
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            return "must be a whole number";
        }
        if (type != null && Number.class.isAssignableFrom(type)) {
            return "must be a number";
        }
        return "is not of the field's type";
    }

    private static Response problem(int status, String title, String detail) {
        return Response.status(status).type(Problem.MEDIA_TYPE)
                .entity(new Problem("about:blank", title, status, detail, null)).build();
    }
}
