package dev.ordersaga.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.quarkus.vertx.http.runtime.security.SecurityHandlerPriorities;
import io.vertx.core.net.SocketAddress;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.HttpHeaders;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Slows down the guessing of an operator's password over HTTP basic authentication. After a few wrong passwords for
 * one name from one address, every attempt for that name from there, right or wrong, is answered 429 until a delay
 * has passed that doubles with each further wrong one: a correct guess within the delay is not told apart from a wrong
 * one. A right password once the delay has passed starts the count afresh.
 *
 * <p>Counted per name and client address, so that someone who knows an operator's name cannot lock them out from
 * elsewhere; behind a proxy the address is the proxy's unless Quarkus is told to read the forwarded one
 * ({@code quarkus.http.proxy.*}). Kept in each replica's memory: an attacker spread over replicas gets a count in each,
 * and a restart forgets it, which the doubling delay makes cheap to accept. Bearer tokens are the identity provider's
 * to guard and are not looked at.
 */
@ApplicationScoped
public class LoginThrottle {

    private static final Logger LOG = Logger.getLogger(LoginThrottle.class);
    private static final String BASIC = "Basic ";
    private static final int TOO_MANY_REQUESTS = 429;
    /** Room for many more names and addresses than a service has operators; the least recently seen go first. */
    static final int MAX_TRACKED = 10_000;

    /** Before authentication, which answers wrong credentials itself and ends the request there. */
    static final int PRIORITY = SecurityHandlerPriorities.AUTHENTICATION + 10;

    @Inject
    ObjectMapper json;

    @ConfigProperty(name = "operator-login.free-failures", defaultValue = "5")
    int freeFailures;

    @ConfigProperty(name = "operator-login.first-delay", defaultValue = "1s")
    Duration firstDelay;

    @ConfigProperty(name = "operator-login.max-delay", defaultValue = "15m")
    Duration maxDelay;

    Clock clock = Clock.systemUTC();

    /** The failures of each name and address, the least recently seen first. */
    private final Map<String, Failures> failures = new LinkedHashMap<>(16, 0.75f, true);

    void register(@Observes Filters filters) {
        filters.register(this::check, PRIORITY);
    }

    private void check(RoutingContext context) {
        Optional<String> name = basicName(context.request().getHeader(HttpHeaders.AUTHORIZATION));
        if (name.isEmpty()) {
            context.next();
            return;
        }
        String key = key(name.get(), context.request().remoteAddress());
        Optional<Duration> wait = waitFor(key);
        if (wait.isPresent()) {
            refuse(context, name.get(), wait.get());
            return;
        }
        context.addHeadersEndHandler(ended -> {
            int status = context.response().getStatusCode();
            if (status == 401) {
                failed(key, name.get(), context.request().remoteAddress());
            } else if (status < 500) {
                // the credentials were taken: 2xx, 3xx, or a 4xx about the request itself (403 included)
                succeeded(key);
            }
        });
        context.next();
    }

    /** How long attempts of this name from this address are refused still; empty if they are not. */
    synchronized Optional<Duration> waitFor(String key) {
        Failures counted = failures.get(key);
        if (counted == null || counted.count() < freeFailures) {
            return Optional.empty();
        }
        Duration left = Duration.between(clock.instant(), counted.last().plus(delayAfter(counted.count())));
        return left.isNegative() || left.isZero() ? Optional.empty() : Optional.of(left);
    }

    synchronized void failed(String key, String name, SocketAddress from) {
        Failures counted = failures.getOrDefault(key, new Failures(0, clock.instant()));
        Failures now = new Failures(counted.count() + 1, clock.instant());
        failures.put(key, now);
        if (failures.size() > MAX_TRACKED) {
            failures.remove(failures.keySet().iterator().next());
        }
        if (now.count() >= freeFailures) {
            LOG.warnf("%d wrong passwords in a row for operator %s from %s: its next attempts from there wait %s",
                    now.count(), shown(name), from == null ? "an unknown address" : from.hostAddress(),
                    delayAfter(now.count()));
        }
    }

    synchronized void succeeded(String key) {
        failures.remove(key);
    }

    /** The first delay once the free failures are spent, doubled by each wrong password after, at most the most. */
    Duration delayAfter(int count) {
        int doublings = Math.min(count - freeFailures, 30);
        Duration delay = firstDelay.multipliedBy(1L << doublings);
        return delay.compareTo(maxDelay) > 0 ? maxDelay : delay;
    }

    private void refuse(RoutingContext context, String name, Duration wait) {
        long seconds = Math.max(1, (wait.toMillis() + 999) / 1000);
        Problem problem = new Problem("about:blank", "Too many failed sign-ins", TOO_MANY_REQUESTS,
                "too many wrong passwords for this operator from this address: try again in " + seconds + " s", null);
        String body;
        try {
            body = json.writeValueAsString(problem);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        LOG.debugf("Sign-in of operator %s refused for %d s more", shown(name), seconds);
        context.response()
                .setStatusCode(TOO_MANY_REQUESTS)
                .putHeader(HttpHeaders.RETRY_AFTER, Long.toString(seconds))
                .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
                .end(body);
    }

    /** The name of basic credentials; empty for other credentials, or ones that do not decode (authentication says). */
    static Optional<String> basicName(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, BASIC, 0, BASIC.length())) {
            return Optional.empty();
        }
        try {
            String decoded = new String(Base64.getDecoder().decode(authorization.substring(BASIC.length()).strip()),
                    StandardCharsets.UTF_8);
            int colon = decoded.indexOf(':');
            return colon < 0 ? Optional.empty() : Optional.of(decoded.substring(0, colon));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    static String key(String name, SocketAddress from) {
        return (from == null ? "?" : from.hostAddress()) + " " + name;
    }

    /** A name as the log may take it: whoever sent it chose it. */
    private static String shown(String name) {
        String cut = name.length() > 100 ? name.substring(0, 100) + "..." : name;
        return cut.replaceAll("\\p{Cntrl}", "?");
    }

    private record Failures(int count, Instant last) {
    }
}
