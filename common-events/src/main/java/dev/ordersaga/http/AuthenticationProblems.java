package dev.ordersaga.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.security.AuthenticationFailedException;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.HttpHeaders;

/**
 * Wrong operator credentials, answered as every other error is: problem+json, with basic authentication's challenge.
 * Quarkus checks credentials as a request arrives (proactive authentication), before any resource or exception mapper
 * is reached, and its own answer is the challenge with no body.
 */
@ApplicationScoped
public class AuthenticationProblems {

    static final String CHALLENGE = "basic";
    static final String DETAIL = "operator endpoints take HTTP basic authentication with an operator's credentials";

    @Inject
    ObjectMapper json;

    void onRouter(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).failureHandler(this::onFailure);
    }

    private void onFailure(RoutingContext context) {
        if (!(context.failure() instanceof AuthenticationFailedException) || context.response().headWritten()) {
            context.next();
            return;
        }
        String body;
        try {
            body = json.writeValueAsString(new Problem("about:blank", "Unauthorized", 401, DETAIL, null));
        } catch (JsonProcessingException e) {
            context.next();
            return;
        }
        context.response()
                .setStatusCode(401)
                .putHeader(HttpHeaders.WWW_AUTHENTICATE, CHALLENGE)
                .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
                .end(body);
    }
}
