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
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Slows down the guessing of an operator's password over HTTP basic authentication. After a few wrong passwords for
 * one name from one address, every attempt for that name from there, right or wrong, is answered 429 until a delay
 * has passed that doubles with each further wrong one, and then only one attempt at a time is let through: a correct
 * guess within the delay is not told apart from a wrong one. A right password once the delay has passed starts the
 * count afresh. Attempts under way count as failures until they are answered, so that guesses sent all at once get
 * no more through than guesses sent one by one.
 *
 * <p>Counted per name and client address. Behind a proxy the address is the proxy's unless Quarkus is told to read
 * the forwarded one ({@code quarkus.http.proxy.*}), so there the count is the name's: someone who knows an operator's
 * name can make them wait, the most delay at a time (a minute by default), which is why it is kept short. Kept in each
 * replica's memory: an attacker spread over replicas gets a count in each, and a restart forgets it. A name whose
 * delay runs is never forgotten to make room; when every tracked one is, a new one is refused until one's delay has
 * passed (which takes a flood to bring about, and then refuses every operator's basic sign-in: it fails closed).
 * Bearer tokens are the identity provider's to guard and are not looked at.
 */
@ApplicationScoped
public class LoginThrottle {

    private static final Logger LOG = Logger.getLogger(LoginThrottle.class);
    private static final String BASIC = "Basic ";
    private static final int TOO_MANY_REQUESTS = 429;
    /**
     * Room for many more names and addresses than a service has operators (a few MB); the least recently seen go first.
     * Filled with names waiting out their delays, it takes some 1 700 wrong passwords a second to keep full.
     */
    static final int MAX_TRACKED = 100_000;
    /**
     * How many of the least recently seen names are looked at to make room: the oldest have mostly waited out their
     * delays, and a full table of waiting names is not walked whole for every new one (a flood keeps it so).
     */
    static final int ROOM_LOOKS = 1_000;
    /** An attempt under way longer than this is no longer counted: its end went unheard (a bug, not a client). */
    static final Duration STALE = Duration.ofMinutes(1);

    /** Before authentication, which answers wrong credentials itself and ends the request there. */
    static final int PRIORITY = SecurityHandlerPriorities.AUTHENTICATION + 10;

    @Inject
    ObjectMapper json;

    @ConfigProperty(name = "operator-login.free-failures", defaultValue = "5")
    int freeFailures;

    @ConfigProperty(name = "operator-login.first-delay", defaultValue = "1s")
    Duration firstDelay;

    @ConfigProperty(name = "operator-login.max-delay", defaultValue = "1m")
    Duration maxDelay;

    Clock clock = Clock.systemUTC();

    /** The failures of each name and address, the least recently seen first. */
    private final Map<String, Failures> failures = new LinkedHashMap<>(16, 0.75f, true);

    void register(@Observes Filters filters) {
        filters.register(this::check, PRIORITY);
    }

    private void check(RoutingContext context) {
        Optional<String> name = basicName(context.request().headers().getAll(HttpHeaders.AUTHORIZATION));
        if (name.isEmpty()) {
            context.next();
            return;
        }
        String key = key(name.get(), context.request().remoteAddress());
        Optional<Duration> wait = begin(key);
        if (wait.isPresent()) {
            refuse(context, name.get(), wait.get());
            return;
        }
        // called once the answer went out, or the connection closed before it did
        context.addEndHandler(ended -> {
            int status = context.response().getStatusCode();
            if (!context.response().headWritten() || status == 401) {
                // a closed connection's attempt counts: authentication may have been answered to no one
                failed(key, name.get(), context.request().remoteAddress());
            } else if (status < 500) {
                // the credentials were taken: 2xx, 3xx, or a 4xx about the request itself (403 included)
                succeeded(key);
            } else {
                ended(key);
            }
        });
        context.next();
    }

    /**
     * Lets an attempt of this name from this address through, counted as under way; or says how long it must wait
     * (at least a second while another is under way once the free failures are spent, or while every tracked name's
     * delay runs).
     */
    synchronized Optional<Duration> begin(String key) {
        Failures counted = failures.get(key);
        if (counted == null) {
            if (failures.size() >= MAX_TRACKED && !forgetOne()) {
                return Optional.of(Duration.ofSeconds(1));
            }
            counted = new Failures(0, 0, clock.instant(), clock.instant());
        } else if (counted.underWay() > 0 && counted.begun().plus(STALE).isBefore(clock.instant())) {
            counted = counted.forgetUnderWay();
        }
        Optional<Duration> wait = waitFor(counted);
        if (wait.isEmpty()) {
            failures.put(key, counted.begin(clock.instant()));
        }
        return wait;
    }

    private Optional<Duration> waitFor(Failures counted) {
        int spent = counted.count() + counted.underWay();
        if (spent < freeFailures) {
            return Optional.empty();
        }
        if (counted.underWay() > 0) {
            return Optional.of(Duration.ofSeconds(1));
        }
        Duration left = Duration.between(clock.instant(), counted.last().plus(delayAfter(counted.count())));
        return left.isNegative() || left.isZero() ? Optional.empty() : Optional.of(left);
    }

    /**
     * Makes room: the least recently seen name, of the first {@link #ROOM_LOOKS}, that is not waiting out a delay, nor
     * has an attempt under way.
     */
    private boolean forgetOne() {
        Iterator<Map.Entry<String, Failures>> entries = failures.entrySet().iterator();
        for (int looked = 0; looked < ROOM_LOOKS && entries.hasNext(); looked++) {
            Failures counted = entries.next().getValue();
            if (counted.underWay() == 0 && waitFor(counted).isEmpty()) {
                entries.remove();
                return true;
            }
        }
        return false;
    }

    synchronized void failed(String key, String name, SocketAddress from) {
        Failures counted = failures.get(key);
        Failures now = counted == null ? new Failures(1, 0, clock.instant(), clock.instant())
                : counted.failed(clock.instant());
        failures.put(key, now);
        if (now.count() >= freeFailures) {
            LOG.warnf("%d wrong passwords in a row for operator %s from %s: its next attempts from there wait %s",
                    now.count(), shown(name), from == null ? "an unknown address" : from.hostAddress(),
                    delayAfter(now.count()));
        }
    }

    synchronized void succeeded(String key) {
        failures.remove(key);
    }

    /** An attempt that ended neither way (the service failed): no longer under way, not counted. */
    synchronized void ended(String key) {
        Failures counted = failures.get(key);
        if (counted != null) {
            failures.put(key, counted.ended());
        }
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

    /**
     * The name of the basic credentials authentication takes, the first Authorization header that has some; empty for
     * other credentials, or ones that do not decode (authentication says).
     */
    static Optional<String> basicName(List<String> authorizations) {
        String authorization = authorizations.stream()
                .filter(header -> header.regionMatches(true, 0, BASIC, 0, BASIC.length()))
                .findFirst().orElse(null);
        if (authorization == null) {
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

    /**
     * @param count    wrong passwords in a row
     * @param underWay attempts let through and not answered yet
     * @param last     when the last wrong one was answered
     * @param begun    when the last attempt was let through
     */
    private record Failures(int count, int underWay, Instant last, Instant begun) {

        Failures begin(Instant at) {
            return new Failures(count, underWay + 1, last, at);
        }

        Failures ended() {
            return new Failures(count, Math.max(0, underWay - 1), last, begun);
        }

        Failures failed(Instant at) {
            return new Failures(count + 1, Math.max(0, underWay - 1), at, begun);
        }

        Failures forgetUnderWay() {
            return new Failures(count, 0, last, begun);
        }
    }
}
