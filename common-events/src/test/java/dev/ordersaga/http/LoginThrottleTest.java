package dev.ordersaga.http;

import io.vertx.core.net.SocketAddress;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

class LoginThrottleTest {

    private static final SocketAddress HERE = SocketAddress.inetSocketAddress(50000, "192.0.2.1");
    private static final SocketAddress ELSEWHERE = SocketAddress.inetSocketAddress(50000, "192.0.2.2");

    private final MovingClock clock = new MovingClock();
    private final LoginThrottle throttle = throttle(clock);

    @Test
    void theFirstWrongPasswordsAreFreeThenEachWaitsTwiceAsLongAsTheLastUpToTheMost() {
        String ada = LoginThrottle.key("ada", HERE);
        IntStream.range(0, 4).forEach(i -> throttle.failed(ada, "ada", HERE));
        assertThat(throttle.waitFor(ada)).as("four wrong: free").isEmpty();

        throttle.failed(ada, "ada", HERE);
        assertThat(throttle.waitFor(ada)).contains(Duration.ofSeconds(1));
        clock.pass(Duration.ofMillis(400));
        assertThat(throttle.waitFor(ada)).contains(Duration.ofMillis(600));
        clock.pass(Duration.ofMillis(600));
        assertThat(throttle.waitFor(ada)).as("waited out").isEmpty();

        throttle.failed(ada, "ada", HERE);
        assertThat(throttle.waitFor(ada)).contains(Duration.ofSeconds(2));
        throttle.failed(ada, "ada", HERE);
        assertThat(throttle.waitFor(ada)).contains(Duration.ofSeconds(4));
        IntStream.range(0, 40).forEach(i -> throttle.failed(ada, "ada", HERE));
        assertThat(throttle.waitFor(ada)).as("at most").contains(Duration.ofMinutes(15));
    }

    @Test
    void aRightPasswordStartsTheCountAfreshAndOtherNamesAndAddressesAreCountedApart() {
        String ada = LoginThrottle.key("ada", HERE);
        IntStream.range(0, 5).forEach(i -> throttle.failed(ada, "ada", HERE));
        assertThat(throttle.waitFor(ada)).isPresent();
        assertThat(throttle.waitFor(LoginThrottle.key("ada", ELSEWHERE))).as("the same name from elsewhere").isEmpty();
        assertThat(throttle.waitFor(LoginThrottle.key("bob", HERE))).as("another name from here").isEmpty();

        clock.pass(Duration.ofSeconds(1));
        throttle.succeeded(ada);
        throttle.failed(ada, "ada", HERE);
        assertThat(throttle.waitFor(ada)).as("one wrong since the right one").isEmpty();
    }

    @Test
    void theLeastRecentlySeenAreForgottenFirstBeyondTheMostTracked() {
        String first = LoginThrottle.key("first", HERE);
        IntStream.range(0, 5).forEach(i -> throttle.failed(first, "first", HERE));
        String recent = LoginThrottle.key("recent", HERE);
        IntStream.range(0, 5).forEach(i -> throttle.failed(recent, "recent", HERE));
        IntStream.range(0, LoginThrottle.MAX_TRACKED - 1).forEach(i -> {
            String name = "guess-" + i;
            throttle.failed(LoginThrottle.key(name, ELSEWHERE), name, ELSEWHERE);
        });
        assertThat(throttle.waitFor(first)).as("forgotten").isEmpty();
        assertThat(throttle.waitFor(recent)).isPresent();
    }

    @Test
    void onlyBasicCredentialsNameSomeone() {
        assertThat(LoginThrottle.basicName("Basic " + base64("ada:secret:with:colons"))).contains("ada");
        assertThat(LoginThrottle.basicName("basic " + base64("ada:"))).contains("ada");
        assertThat(LoginThrottle.basicName("Basic " + base64("no colon"))).isEmpty();
        assertThat(LoginThrottle.basicName("Basic not base64!")).isEmpty();
        assertThat(LoginThrottle.basicName("Bearer eyJhbGciOi")).isEmpty();
        assertThat(LoginThrottle.basicName(null)).isEmpty();
    }

    private static LoginThrottle throttle(Clock clock) {
        LoginThrottle throttle = new LoginThrottle();
        throttle.freeFailures = 5;
        throttle.firstDelay = Duration.ofSeconds(1);
        throttle.maxDelay = Duration.ofMinutes(15);
        throttle.clock = clock;
        return throttle;
    }

    private static String base64(String credentials) {
        return Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8));
    }

    private static final class MovingClock extends Clock {

        private Instant now = Instant.parse("2026-12-07T12:00:00Z");

        void pass(Duration time) {
            now = now.plus(time);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }
}
