package dev.ordersaga.systemtest;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** How the fault run reads the audit's report for its claim that the relays published every event twice. */
class FaultInjectionReportTest {

    private static final String TOPICS = "topics: 9279 record(s) read (order.events 3513, inventory.events 2229, "
            + "payment.events 1898, shipping.events 1639), 3788 of orders in scope\n";

    @Test
    void everyEventTwiceWhenAllDistinctEventsCameMoreThanOnce() {
        assertThat(FaultInjectionIT.everyEventCameTwice(TOPICS + "duplicates on topics (info, at-least-once): 1884 "
                + "event(s) delivered more than once, 1904 extra copies (inventory.events 410, order.events 722)\n"))
                .isTrue();
    }

    /** Kills and restarts alone make a relay publish some events again: duplicates, but not every event's. */
    @Test
    void notEveryEventTwiceWhenSomeCameOnce() {
        assertThat(FaultInjectionIT.everyEventCameTwice(TOPICS + "duplicates on topics (info, at-least-once): 12 "
                + "event(s) delivered more than once, 12 extra copies (order.events 12)\n")).isFalse();
    }

    @Test
    void aReportWithoutTheCountsFailsTheRun() {
        assertThatThrownBy(() -> FaultInjectionIT.everyEventCameTwice("violations: 0\n"))
                .isInstanceOf(AssertionError.class);
    }
}
