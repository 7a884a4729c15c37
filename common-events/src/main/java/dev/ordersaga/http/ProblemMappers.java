package dev.ordersaga.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import dev.ordersaga.eventing.DeadLetters;
import dev.ordersaga.eventing.EventStoreException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import jakarta.persistence.PersistenceException;
import jakarta.validation.ConstraintViolationException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import java.sql.SQLException;
import java.util.Comparator;
import java.util.List;

/**
 * Every error of every service leaves as problem+json: the client learns what was wrong, nothing was half-done.
 * Shared here so that the four services answer errors alike.
 */
public class ProblemMappers {

    private static final Logger LOG = Logger.getLogger(ProblemMappers.class);
    private static final String AGROAL_POOL = "io.agroal.pool.";

    @ServerExceptionMapper
    public Response problem(ProblemException e) {
        return respond(e.status().getStatusCode(), e.title(), e.getMessage(), null);
    }

    @ServerExceptionMapper
    public Response invalid(ConstraintViolationException e) {
        List<Problem.Violation> violations = e.getConstraintViolations().stream()
                .map(v -> new Problem.Violation(field(v.getPropertyPath().toString()), v.getMessage()))
                .sorted(Comparator.comparing(Problem.Violation::field))
                .toList();
        return respond(400, "Invalid request", violations.size() + " field(s) are invalid", violations);
    }

    /**
     * JSON that does not parse: Jackson's message says where. JSON that parses but does not bind (a value of another
     * shape than its field's) is answered by the field alone, as {@link #mismatched}: Jackson's message for it names
     * the Java types it was binding to, which are none of the client's business.
     */
    @ServerExceptionMapper
    public Response unreadable(JsonProcessingException e) {
        if (e instanceof JsonMappingException mapping) {
            return notBound(mapping.getPath());
        }
        return respond(400, "Malformed JSON", e.getOriginalMessage(), null);
    }

    /** A JSON value of the wrong shape, e.g. {"items": "x"}: Quarkus maps this one itself unless told. */
    @ServerExceptionMapper
    public Response mismatched(MismatchedInputException e) {
        return notBound(e.getPath());
    }

    private static Response notBound(List<JsonMappingException.Reference> path) {
        String field = field(path);
        if (field.isEmpty()) {
            return respond(400, "Malformed JSON", "the body is not the JSON object this endpoint takes", null);
        }
        return respond(400, "Invalid request", "1 field(s) are invalid",
                List.of(new Problem.Violation(field, "is not of the field's type")));
    }

    /**
     * A JSON value that is not of its field's type ({@code "quantity": 2.9}, {@code "unitPrice": "cheap"}): answered
     * as the field's constraints are, with the field named as the client wrote it, which Jackson's message leaves out.
     */
    @ServerExceptionMapper
    public Response wrongType(InvalidFormatException e) {
        Problem.Violation violation = new Problem.Violation(field(e.getPath()), expected(e.getTargetType()));
        return respond(400, "Invalid request", "1 field(s) are invalid", List.of(violation));
    }

    /** [items, 0, quantity] -> "items[0].quantity". */
    private static String field(List<JsonMappingException.Reference> path) {
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

    /**
     * An operator endpoint asked without credentials: the challenge of each way in (basic, as Quarkus sends it, and
     * bearer where the identity provider signs operators in), and a body that says what is missing. Wrong credentials fail before the resource ({@link RouterProblems}).
     */
    @ServerExceptionMapper
    public Response unauthenticated(UnauthorizedException e) {
        Response.ResponseBuilder response = Response.fromResponse(respond(401, "Unauthorized", RouterProblems.detail(), null));
        RouterProblems.challenges().forEach(challenge -> response.header(HttpHeaders.WWW_AUTHENTICATE, challenge));
        return response.build();
    }

    @ServerExceptionMapper
    public Response forbidden(ForbiddenException e) {
        return respond(403, "Forbidden", "the caller's role may not use this endpoint", null);
    }

    @ServerExceptionMapper
    public Response notFound(NotFoundException e) {
        return respond(404, "Not found", e.getMessage(), null);
    }

    @ServerExceptionMapper
    public Response web(WebApplicationException e) {
        int status = e.getResponse().getStatus();
        if (status >= 500) {
            LOG.error("Request failed", e);
        }
        return respond(status, e.getResponse().getStatusInfo().getReasonPhrase(), e.getMessage(), null);
    }

    /** An operator's read or replay of parked messages that Kafka did not answer in time: try again. */
    @ServerExceptionMapper
    public Response kafkaAway(DeadLetters.KafkaAway e) {
        LOG.warnf("Request refused: %s", e.getMessage());
        return Response.fromResponse(respond(503, "Kafka unavailable",
                e.getMessage() + "; nothing was changed, try again", null)).header("Retry-After", "5").build();
    }

    /**
     * Whatever no other mapper knows is the service's fault: a 500 in problem+json as every other error, its cause in
     * the log rather than in the answer.
     */
    @ServerExceptionMapper
    public Response unexpected(RuntimeException e) {
        LOG.error("Request failed", e);
        return respond(500, "Internal Server Error", "the request failed; the service's log says why", null);
    }

    @ServerExceptionMapper
    public Response storeFailed(EventStoreException e) {
        return databaseFailed(e);
    }

    @ServerExceptionMapper
    public Response persistenceFailed(PersistenceException e) {
        return databaseFailed(e);
    }

    /**
     * A request that found every database connection in use for longer than the pool waits (a burst beyond what the
     * service handles at once, or a cold start) is answered 503 with Retry-After: the service is busy, not broken, and
     * nothing was written, since the transaction's first statement never had a connection. Any other failure of the
     * database is the service's fault, a 500.
     */
    private static Response databaseFailed(RuntimeException e) {
        if (!noConnectionFree(e)) {
            LOG.error("Request failed", e);
            return respond(500, "Internal Server Error", "the database refused the request; the service's log says why", null);
        }
        LOG.warnf("Request refused: no database connection was free (%s)", e.getMessage());
        return Response.fromResponse(respond(503, "Service busy",
                "no database connection was free in time; nothing was changed, try again", null))
                .header("Retry-After", "1").build();
    }

    /**
     * The pool's own timeout, anywhere in the chain. Agroal throws a plain SQLException with no SQL state for it (with
     * one of two messages, neither a contract); what the database itself refuses comes as the driver's subclass.
     */
    static boolean noConnectionFree(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getClass() == SQLException.class && t.getStackTrace().length > 0
                    && t.getStackTrace()[0].getClassName().startsWith(AGROAL_POOL)) {
                return true;
            }
        }
        return false;
    }

    /** "place.request.items[0].sku" -> "items[0].sku": the field as the client wrote it. */
    private static String field(String path) {
        String[] parts = path.split("\\.", 3);
        return parts.length == 3 ? parts[2] : path;
    }

    private static Response respond(int status, String title, String detail, List<Problem.Violation> violations) {
        return Response.status(status)
                .type(Problem.MEDIA_TYPE)
                .entity(new Problem("about:blank", title, status, detail, violations))
                .build();
    }
}
