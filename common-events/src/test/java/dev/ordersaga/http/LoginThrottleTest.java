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
import java.util.List;
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
        IntStream.range(0, 5).forEach(i -> wrong(ada));
        assertThat(throttle.begin(ada)).contains(Duration.ofSeconds(1));
        clock.pass(Duration.ofMillis(400));
        assertThat(throttle.begin(ada)).contains(Duration.ofMillis(600));
        clock.pass(Duration.ofMillis(600));

        wrong(ada);
        assertThat(throttle.begin(ada)).contains(Duration.ofSeconds(2));
        clock.pass(Duration.ofSeconds(2));
        wrong(ada);
        assertThat(throttle.begin(ada)).contains(Duration.ofSeconds(4));
        for (int i = 0; i < 20; i++) {
            clock.pass(Duration.ofMinutes(15));
            wrong(ada);
        }
        assertThat(throttle.begin(ada)).as("at most").contains(Duration.ofMinutes(15));
    }

    @Test
    void attemptsUnderWayCountSoThatGuessesSentAtOnceGetNoMoreThrough() {
        String ada = LoginThrottle.key("ada", HERE);
        IntStream.range(0, 5).forEach(i -> assertThat(throttle.begin(ada)).as("attempt " + i).isEmpty());
        assertThat(throttle.begin(ada)).as("five under way: the free ones spent").contains(Duration.ofSeconds(1));
        IntStream.range(0, 5).forEach(i -> throttle.failed(ada, "ada", HERE));
        assertThat(throttle.begin(ada)).contains(Duration.ofSeconds(1));

        clock.pass(Duration.ofSeconds(1));
        assertThat(throttle.begin(ada)).as("the delay passed: one through").isEmpty();
        assertThat(throttle.begin(ada)).as("and only one at a time").contains(Duration.ofSeconds(1));
        throttle.ended(ada);
        assertThat(throttle.begin(ada)).as("one that ended neither way is not counted").isEmpty();
    }

    @Test
    void anAttemptWhoseEndWentUnheardStopsCountingAfterAWhile() {
        String ada = LoginThrottle.key("ada", HERE);
        IntStream.range(0, 5).forEach(i -> assertThat(throttle.begin(ada)).isEmpty());
        assertThat(throttle.begin(ada)).isPresent();
        clock.pass(LoginThrottle.STALE.plusSeconds(1));
        assertThat(throttle.begin(ada)).as("not refused for ever").isEmpty();
    }

    @Test
    void aRightPasswordStartsTheCountAfreshAndOtherNamesAndAddressesAreCountedApart() {
        String ada = LoginThrottle.key("ada", HERE);
        IntStream.range(0, 5).forEach(i -> wrong(ada));
        assertThat(throttle.begin(ada)).isPresent();
        assertThat(throttle.begin(LoginThrottle.key("ada", ELSEWHERE))).as("the same name from elsewhere").isEmpty();
        assertThat(throttle.begin(LoginThrottle.key("bob", HERE))).as("another name from here").isEmpty();

        clock.pass(Duration.ofSeconds(1));
        assertThat(throttle.begin(ada)).isEmpty();
        throttle.succeeded(ada);
        wrong(ada);
        assertThat(throttle.begin(ada)).as("one wrong since the right one").isEmpty();
    }

    @Test
    void aNameWaitingOutItsDelayIsNeverForgottenToMakeRoom() {
        String ada = LoginThrottle.key("ada", HERE);
        IntStream.range(0, 5).forEach(i -> wrong(ada));
        IntStream.range(0, LoginThrottle.MAX_TRACKED).forEach(i -> wrong(LoginThrottle.key("guess-" + i, ELSEWHERE)));
        assertThat(throttle.begin(ada)).as("still waiting, where names with a wrong password each made room")
                .isPresent();

        // every tracked name waiting out its delay: a new one is refused rather than let through uncounted
        IntStream.range(0, LoginThrottle.MAX_TRACKED - 1).forEach(i -> IntStream.range(0, 5)
                .forEach(j -> wrong(LoginThrottle.key("waiting-" + i, ELSEWHERE))));
        assertThat(throttle.begin(LoginThrottle.key("new", ELSEWHERE))).contains(Duration.ofSeconds(1));
        clock.pass(Duration.ofSeconds(1));
        assertThat(throttle.begin(LoginThrottle.key("new", ELSEWHERE))).as("room once a delay passed").isEmpty();
    }

    @Test
    void theBasicCredentialsAuthenticationTakesNameSomeone() {
        assertThat(LoginThrottle.basicName(List.of("Basic " + base64("ada:secret:with:colons")))).contains("ada");
        assertThat(LoginThrottle.basicName(List.of("basic " + base64("ada:")))).contains("ada");
        assertThat(LoginThrottle.basicName(List.of("X y", "Basic " + base64("ada:guess")))).as("the first basic one")
                .contains("ada");
        assertThat(LoginThrottle.basicName(List.of("Basic " + base64("no colon")))).isEmpty();
        assertThat(LoginThrottle.basicName(List.of("Basic not base64!"))).isEmpty();
        assertThat(LoginThrottle.basicName(List.of("Bearer eyJhbGciOi"))).isEmpty();
        assertThat(LoginThrottle.basicName(List.of())).isEmpty();
    }

    /** An attempt let through and answered 401. */
    private void wrong(String key) {
        assertThat(throttle.begin(key)).as(key + " let through").isEmpty();
        throttle.failed(key, key, HERE);
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
