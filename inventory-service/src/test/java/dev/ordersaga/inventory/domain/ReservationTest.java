package dev.ordersaga.inventory.domain;

import dev.ordersaga.events.OrderLine;
import dev.ordersaga.events.StockItem;
import dev.ordersaga.events.StockReleased;
import dev.ordersaga.events.StockReservationFailed;
import dev.ordersaga.events.StockReserved;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** The reservation state machine as a table: every transition from every state, allowed or refused. */
class ReservationTest {

    /** transition -> the states it is allowed from, and the state it leads to */
    private static final Map<String, Allowed> TABLE = Map.of(
            "release", new Allowed(EnumSet.of(ReservationStatus.RESERVED, ReservationStatus.FAILED), ReservationStatus.RELEASED),
            "consume", new Allowed(EnumSet.of(ReservationStatus.RESERVED), ReservationStatus.CONSUMED));

    private static final Map<String, BiConsumer<Reservation, Map<String, Stock>>> TRANSITIONS = Map.of(
            "release", Reservation::release,
            "consume", Reservation::consume);

    private record Allowed(Set<ReservationStatus> from, ReservationStatus to) {
    }

    static Stream<Arguments> everyTransitionFromEveryState() {
        return TRANSITIONS.keySet().stream().sorted()
                .flatMap(t -> Arrays.stream(ReservationStatus.values()).map(s -> arguments(t, s)));
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("everyTransitionFromEveryState")
    void transitionIsAllowedExactlyWhereTheMachineHasIt(String transition, ReservationStatus from) {
        Map<String, Stock> stock = stock("SKU-A", 10, "SKU-B", 10);
        Reservation reservation = reservationIn(from, stock);
        Allowed allowed = TABLE.get(transition);
        if (allowed.from().contains(from)) {
            TRANSITIONS.get(transition).accept(reservation, stock);
            assertThat(reservation.status()).isEqualTo(allowed.to());
        } else {
            String before = counts(stock);
            assertThatThrownBy(() -> TRANSITIONS.get(transition).accept(reservation, stock))
                    .isInstanceOfSatisfying(IllegalTransitionException.class, e -> {
                        assertThat(e.from()).isEqualTo(from);
                        assertThat(e.transition()).isEqualTo(transition);
                    });
            assertThat(reservation.status()).as("a refused transition changes nothing").isEqualTo(from);
            assertThat(counts(stock)).as("a refused transition moves no stock").isEqualTo(before);
        }
    }

    @Test
    void everyLineIsReservedWhenAllAreAvailable() {
        Map<String, Stock> stock = stock("SKU-A", 5, "SKU-B", 3);
        Reservation.Outcome outcome = Reservation.reserve(UUID.randomUUID(),
                List.of(line("SKU-B", 3), line("SKU-A", 2)), stock, "corr-1");

        assertThat(outcome.reservation().status()).isEqualTo(ReservationStatus.RESERVED);
        StockReserved reserved = (StockReserved) outcome.event();
        assertThat(reserved.reservationId()).isEqualTo(outcome.reservation().reservationId().toString());
        assertThat(reserved.items()).containsExactly(new StockItem("SKU-A", 2), new StockItem("SKU-B", 3));
        assertThat(counts(stock)).isEqualTo("SKU-A=3/2/0 SKU-B=0/3/0");
    }

    @Test
    void oneShortLineReservesNothing() {
        Map<String, Stock> stock = stock("SKU-A", 5, "SKU-B", 2);
        Reservation.Outcome outcome = Reservation.reserve(UUID.randomUUID(),
                List.of(line("SKU-A", 2), line("SKU-B", 3)), stock, "corr-1");

        assertThat(outcome.reservation().status()).isEqualTo(ReservationStatus.FAILED);
        assertThat(outcome.reservation().items()).isEmpty();
        StockReservationFailed failed = (StockReservationFailed) outcome.event();
        assertThat(failed.reason()).isEqualTo("insufficient stock");
        assertThat(failed.unavailableSkus()).containsExactly("SKU-B");
        assertThat(counts(stock)).as("all or nothing").isEqualTo("SKU-A=5/0/0 SKU-B=2/0/0");
    }

    @Test
    void unknownSkuCountsAsNothingAvailable() {
        Map<String, Stock> stock = stock("SKU-A", 5, "SKU-B", 5);
        Reservation.Outcome outcome = Reservation.reserve(UUID.randomUUID(),
                List.of(line("SKU-A", 1), line("SKU-NOPE", 1)), stock, "corr-1");

        assertThat(((StockReservationFailed) outcome.event()).unavailableSkus()).containsExactly("SKU-NOPE");
        assertThat(counts(stock)).isEqualTo("SKU-A=5/0/0 SKU-B=5/0/0");
    }

    @Test
    void linesOfTheSameSkuCountTogether() {
        Map<String, Stock> stock = stock("SKU-A", 10, "SKU-B", 0);
        Reservation.Outcome failed = Reservation.reserve(UUID.randomUUID(),
                List.of(line("SKU-A", 6), line("SKU-A", 6)), stock, "corr-1");
        assertThat(failed.reservation().status()).isEqualTo(ReservationStatus.FAILED);

        Reservation.Outcome reserved = Reservation.reserve(UUID.randomUUID(),
                List.of(line("SKU-A", 4), line("SKU-A", 6)), stock, "corr-1");
        assertThat(((StockReserved) reserved.event()).items()).containsExactly(new StockItem("SKU-A", 10));
        assertThat(counts(stock)).isEqualTo("SKU-A=0/10/0 SKU-B=0/0/0");
    }

    @Test
    void anInvalidLineFailsTheReservation() {
        Map<String, Stock> stock = stock("SKU-A", 10, "SKU-B", 10);
        Reservation.Outcome outcome = Reservation.reserve(UUID.randomUUID(),
                List.of(line("SKU-A", 1), line("SKU-B", 0)), stock, "corr-1");
        assertThat(outcome.reservation().status()).isEqualTo(ReservationStatus.FAILED);
        assertThat(((StockReservationFailed) outcome.event()).unavailableSkus()).containsExactly("SKU-B");
        assertThat(counts(stock)).isEqualTo("SKU-A=10/0/0 SKU-B=10/0/0");
    }

    @Test
    void releaseGivesTheUnitsBackAndNamesThem() {
        Map<String, Stock> stock = stock("SKU-A", 5, "SKU-B", 5);
        Reservation reservation = Reservation.reserve(UUID.randomUUID(),
                List.of(line("SKU-A", 2), line("SKU-B", 1)), stock, "corr-1").reservation();

        StockReleased released = reservation.release(stock);

        assertThat(released.reservationId()).isEqualTo(reservation.reservationId().toString());
        assertThat(released.items()).containsExactly(new StockItem("SKU-A", 2), new StockItem("SKU-B", 1));
        assertThat(counts(stock)).isEqualTo("SKU-A=5/0/0 SKU-B=5/0/0");
    }

    @Test
    void releaseAfterAFailedReservationReleasesNothing() {
        Map<String, Stock> stock = stock("SKU-A", 1, "SKU-B", 1);
        Reservation reservation = Reservation.reserve(UUID.randomUUID(), List.of(line("SKU-A", 2)), stock, "corr-1")
                .reservation();

        StockReleased released = reservation.release(stock);

        assertThat(released.reservationId()).isEqualTo(reservation.reservationId().toString());
        assertThat(released.items()).isEmpty();
        assertThat(counts(stock)).isEqualTo("SKU-A=1/0/0 SKU-B=1/0/0");
    }

    @Test
    void consumeShipsTheReservedUnits() {
        Map<String, Stock> stock = stock("SKU-A", 5, "SKU-B", 5);
        Reservation reservation = Reservation.reserve(UUID.randomUUID(),
                List.of(line("SKU-A", 2), line("SKU-B", 5)), stock, "corr-1").reservation();

        reservation.consume(stock);

        assertThat(counts(stock)).isEqualTo("SKU-A=3/0/2 SKU-B=0/0/5");
    }

    @Test
    void cancelBeforeReservingIsAnsweredWithNothingReleasedAndEndsTheReservation() {
        UUID orderId = UUID.randomUUID();
        Reservation.Outcome outcome = Reservation.cancelledBeforeReserving(orderId, "corr-1");

        assertThat(outcome.reservation().orderId()).isEqualTo(orderId);
        assertThat(outcome.reservation().status()).isEqualTo(ReservationStatus.RELEASED);
        StockReleased released = (StockReleased) outcome.event();
        assertThat(released.reservationId()).isEqualTo(outcome.reservation().reservationId().toString());
        assertThat(released.items()).isEmpty();
    }

    /** Answering a cancel again is no transition: only a released reservation has an answer to repeat. */
    @ParameterizedTest(name = "answerAgain from {0}")
    @EnumSource(ReservationStatus.class)
    void answerAgainIsAllowedFromReleasedOnlyAndChangesNothing(ReservationStatus from) {
        Map<String, Stock> stock = stock("SKU-A", 10, "SKU-B", 10);
        Reservation reservation = reservationIn(from, stock);
        String before = counts(stock);
        Instant updatedAt = reservation.updatedAt();

        if (from == ReservationStatus.RELEASED) {
            assertThat(reservation.answerAgain().reservationId()).isEqualTo(reservation.reservationId().toString());
        } else {
            assertThatThrownBy(reservation::answerAgain)
                    .isInstanceOfSatisfying(IllegalTransitionException.class, e -> {
                        assertThat(e.from()).isEqualTo(from);
                        assertThat(e.transition()).isEqualTo("answerAgain");
                    });
        }
        assertThat(reservation.status()).isEqualTo(from);
        assertThat(reservation.updatedAt()).isEqualTo(updatedAt);
        assertThat(counts(stock)).as("answering moves no stock").isEqualTo(before);
    }

    @Test
    void answeringAgainRepeatsTheReleaseWithoutGivingTheUnitsBackTwice() {
        Map<String, Stock> stock = stock("SKU-A", 5, "SKU-B", 5);
        Reservation reservation = Reservation.reserve(UUID.randomUUID(),
                List.of(line("SKU-A", 2), line("SKU-B", 1)), stock, "corr-1").reservation();
        StockReleased first = reservation.release(stock);

        StockReleased again = reservation.answerAgain();
        StockReleased andAgain = reservation.answerAgain();

        assertThat(again).isEqualTo(first);
        assertThat(andAgain).isEqualTo(first);
        assertThat(again.items()).containsExactly(new StockItem("SKU-A", 2), new StockItem("SKU-B", 1));
        assertThat(counts(stock)).as("released once").isEqualTo("SKU-A=5/0/0 SKU-B=5/0/0");
    }

    @Test
    void answeringAgainAfterAFailedReservationReleasesNothingAgain() {
        Map<String, Stock> stock = stock("SKU-A", 1, "SKU-B", 1);
        Reservation reservation = Reservation.reserve(UUID.randomUUID(), List.of(line("SKU-A", 2)), stock, "corr-1")
                .reservation();
        StockReleased first = reservation.release(stock);

        StockReleased again = reservation.answerAgain();

        assertThat(again).isEqualTo(first);
        assertThat(again.items()).isEmpty();
        assertThat(counts(stock)).isEqualTo("SKU-A=1/0/0 SKU-B=1/0/0");
    }

    @Test
    void answeringAgainACancelBeforeReservingReleasesNothingAgain() {
        Reservation.Outcome outcome = Reservation.cancelledBeforeReserving(UUID.randomUUID(), "corr-1");

        StockReleased again = outcome.reservation().answerAgain();

        assertThat(again).isEqualTo(outcome.event());
        assertThat(again.items()).isEmpty();
    }

    @Test
    void finalStatesAreReleasedAndConsumedOnly() {
        assertThat(Arrays.stream(ReservationStatus.values()).filter(ReservationStatus::isFinal))
                .containsExactlyInAnyOrder(ReservationStatus.RELEASED, ReservationStatus.CONSUMED);
    }

    /** Reaches the given state along the machine's own transitions. */
    static Reservation reservationIn(ReservationStatus target, Map<String, Stock> stock) {
        List<OrderLine> lines = target == ReservationStatus.FAILED
                ? List.of(line("SKU-A", 1), line("SKU-B", 1_000))
                : List.of(line("SKU-A", 2), line("SKU-B", 1));
        Reservation reservation = Reservation.reserve(UUID.randomUUID(), lines, stock, "corr-1").reservation();
        switch (target) {
            case RESERVED, FAILED -> {
            }
            case RELEASED -> reservation.release(stock);
            case CONSUMED -> reservation.consume(stock);
        }
        assertThat(reservation.status()).isEqualTo(target);
        return reservation;
    }

    private static OrderLine line(String sku, int quantity) {
        return new OrderLine(sku, quantity, new BigDecimal("1.00"));
    }

    private static Map<String, Stock> stock(String sku1, int available1, String sku2, int available2) {
        Map<String, Stock> stock = new TreeMap<>();
        stock.put(sku1, new Stock(sku1));
        stock.get(sku1).adjustAvailableTo(available1);
        stock.put(sku2, new Stock(sku2));
        stock.get(sku2).adjustAvailableTo(available2);
        return stock;
    }

    /** "SKU=available/reserved/shipped ..." */
    private static String counts(Map<String, Stock> stock) {
        return String.join(" ", stock.values().stream()
                .map(s -> s.sku() + "=" + s.available() + "/" + s.reserved() + "/" + s.shipped()).toList());
    }
}
