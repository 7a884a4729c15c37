package dev.ordersaga.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.security.AuthenticationFailedException;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.HttpHeaders;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.util.Optional;

/**
 * The errors Quarkus answers before any resource or exception mapper is reached, answered as every other error is:
 * problem+json. Its own answers have no body.
 * <ul>
 *     <li>Wrong operator credentials, with basic authentication's challenge: Quarkus checks credentials as a request
 *     arrives (proactive authentication).</li>
 *     <li>A request body whose declared length is over {@code quarkus.http.limits.max-body-size}: refused before any of
 *     it is read. A chunked one declares none; RESTEasy refuses it once it read past the limit, with its own bare 413,
 *     which no failure handler or exception mapper is given.</li>
 * </ul>
 */
@ApplicationScoped
public class RouterProblems {

    static final String CHALLENGE = "basic";
    static final String DETAIL = "operator endpoints take HTTP basic authentication with an operator's credentials";

    private static final int TOO_LARGE = 413;

    /** Just before Quarkus' own check of a declared length against the limit, which answers with no body. */
    private static final int BEFORE_QUARKUS_LIMIT = -3;

    @Inject
    ObjectMapper json;

    @ConfigProperty(name = "quarkus.http.limits.max-body-size")
    Optional<MemorySize> maxBodySize;

    void onRouter(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).failureHandler(this::onFailure);
        maxBodySize.ifPresent(limit -> router.route().order(BEFORE_QUARKUS_LIMIT)
                .handler(context -> refuseIfDeclaredTooLarge(context, limit.asLongValue())));
    }

    /** A body whose declared length is over the limit, refused before any of it is read. */
    private void refuseIfDeclaredTooLarge(RoutingContext context, long limit) {
        String declared = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
        long length;
        try {
            length = declared == null ? -1 : Long.parseLong(declared.trim());
        } catch (NumberFormatException e) {
            length = -1; // Quarkus and Vert.x answer a malformed length
        }
        if (length <= limit) {
            context.next();
            return;
        }
        // the body is left unread, so the connection cannot carry another request
        context.response().putHeader("Connection", "close");
        context.response().endHandler(ended -> context.request().connection().close());
        answer(context, new Problem("about:blank", "Request body too large", TOO_LARGE, "the request's body is "
                + length + " bytes, more than the " + limit + " this service takes", null), null);
    }

    private void onFailure(RoutingContext context) {
        if (context.response().headWritten()) {
            context.next();
            return;
        }
        if (context.failure() instanceof AuthenticationFailedException) {
            answer(context, new Problem("about:blank", "Unauthorized", 401, DETAIL, null), CHALLENGE);
        } else {
            context.next();
        }
    }

    private void answer(RoutingContext context, Problem problem, String challenge) {
        String body;
        try {
            body = json.writeValueAsString(problem);
        } catch (JsonProcessingException e) {
            context.next();
            return;
        }
        if (challenge != null) {
            context.response().putHeader(HttpHeaders.WWW_AUTHENTICATE, challenge);
        }
        context.response()
                .setStatusCode(problem.status())
                .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
                .end(body);
    }
}
