package dev.ordersaga.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import jakarta.validation.ConstraintViolationException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import java.util.Comparator;
import java.util.List;

/**
 * Every error of every service leaves as problem+json: the client learns what was wrong, nothing was half-done.
 * Shared here so that the four services answer errors alike.
 */
public class ProblemMappers {

    private static final Logger LOG = Logger.getLogger(ProblemMappers.class);

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

    @ServerExceptionMapper
    public Response unreadable(JsonProcessingException e) {
        return respond(400, "Malformed JSON", e.getOriginalMessage(), null);
    }

    /** A JSON value of the wrong type, e.g. {"quantity": "many"}: Quarkus maps this one itself unless told. */
    @ServerExceptionMapper
    public Response mismatched(MismatchedInputException e) {
        return respond(400, "Malformed JSON", e.getOriginalMessage(), null);
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
