package dev.ordersaga.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.oidc.OIDCException;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.security.AuthenticationFailedException;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.HttpHeaders;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Optional;

/**
 * The errors Quarkus answers before any resource or exception mapper is reached, answered as every other error is:
 * problem+json. Its own answers have no body.
 * <ul>
 *     <li>Wrong operator credentials, with the challenge of the scheme they came in (basic, or a bearer token from the
 *     identity provider): Quarkus checks credentials as a request arrives (proactive authentication).</li>
 *     <li>A bearer token that could not be checked because the identity provider is out of reach (its discovery
 *     document and keys are read at start, or at the next token if it was away then): 503, to be tried again, where
 *     Quarkus answers 500.</li>
 *     <li>A request body whose declared length is over {@code quarkus.http.limits.max-body-size}: refused before any of
 *     it is read. A chunked one declares none; RESTEasy refuses it once it read past the limit, with its own bare 413,
 *     which no failure handler or exception mapper is given.</li>
 * </ul>
 */
@ApplicationScoped
public class RouterProblems {

    static final String BASIC = "basic";
    /** RFC 6750's answer to a token that is expired, forged, or not meant for these services. */
    static final String INVALID_TOKEN = "Bearer error=\"invalid_token\"";
    static final String DETAIL = "operator endpoints take HTTP basic authentication with an operator's credentials";
    static final String DETAIL_WITH_PROVIDER = "operator endpoints take a bearer token the identity provider issued"
            + " for these services to a person with the role " + OperatorAccounts.ROLE
            + ", or HTTP basic authentication with an operator's credentials";
    static final String TOKEN_REFUSED = "the bearer token was refused: it must be signed by the identity provider,"
            + " issued for these services, and unexpired";

    static final String PROVIDER_AWAY = "the identity provider that vouches for operators' bearer tokens is out of reach;"
            + " try again shortly (an operator account, where the service has one, signs in without it)";
    private static final String PROVIDER_RETRY_AFTER_SECONDS = "10";
    private static final Logger LOG = Logger.getLogger(RouterProblems.class);
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
        // added, not set: a response's one end handler runs what others added (LoginThrottle counts an attempt there)
        context.addEndHandler(ended -> context.request().connection().close());
        answer(context, new Problem("about:blank", "Request body too large", TOO_LARGE, "the request's body is "
                + length + " bytes, more than the " + limit + " this service takes", null), null);
    }

    private void onFailure(RoutingContext context) {
        if (context.response().headWritten()) {
            context.next();
            return;
        }
        if (context.failure() instanceof AuthenticationFailedException) {
            String credentials = context.request().getHeader(HttpHeaders.AUTHORIZATION);
            boolean token = credentials != null && credentials.regionMatches(true, 0, "Bearer ", 0, "Bearer ".length());
            answer(context, new Problem("about:blank", "Unauthorized", 401, token ? TOKEN_REFUSED : detail(), null),
                    token ? INVALID_TOKEN : BASIC);
        } else if (context.failure() instanceof OIDCException failure && providerOutOfReach(failure)) {
            LOG.warnf("An operator's bearer token could not be checked: %s", failure.getMessage());
            context.response().putHeader(HttpHeaders.RETRY_AFTER, PROVIDER_RETRY_AFTER_SECONDS);
            answer(context, new Problem("about:blank", "Identity provider unavailable", 503, PROVIDER_AWAY, null), null);
        } else {
            context.next();
        }
    }

    /**
     * Whether the provider could not be reached, which passes; not a configuration Quarkus refused, which does not and
     * is left to Quarkus' own 500. Quarkus says so in its message ("OIDC Server is not available") and, where the
     * connection failed, with the socket's exception as a cause.
     */
    static boolean providerOutOfReach(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof SocketException || cause instanceof UnknownHostException
                    || cause instanceof SocketTimeoutException
                    || (cause.getMessage() != null && cause.getMessage().contains("Server is not available"))) {
                return true;
            }
        }
        return false;
    }

    /** The schemes a request without credentials is told it may use: basic, and bearer where a provider signs in. */
    static List<String> challenges() {
        return OperatorAccounts.signInByIdentityProvider(ConfigProvider.getConfig())
                ? List.of("Bearer", BASIC) : List.of(BASIC);
    }

    static String detail() {
        return OperatorAccounts.signInByIdentityProvider(ConfigProvider.getConfig()) ? DETAIL_WITH_PROVIDER : DETAIL;
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
