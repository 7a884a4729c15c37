package dev.ordersaga.shipping.domain;

import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.ShipmentCreated;
import dev.ordersaga.events.ShipmentFailed;
import dev.ordersaga.events.ShipmentOnHold;
import dev.ordersaga.events.ShippingEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** The shipment state machine as a table: every transition from every situation, allowed or refused. */
class ShipmentTest {

    private static final Instant NOW = Instant.parse("2030-01-01T12:00:00Z");
    private static final Duration LEASE = Duration.ofSeconds(30);
    /** The create call's claim has run out without an answer: it may still land at the carrier. */
    private static final Instant AFTER_LEASE = NOW.plus(LEASE).plusSeconds(1);
    /** A claim made then has run out by NOW. */
    private static final Instant LEASE_AGO = NOW.minus(LEASE).minusSeconds(1);
    private static final RetryPolicy POLICY = new RetryPolicy(5, Duration.ofMillis(200), Duration.ofSeconds(5));
    private static final UUID EVENT = UUID.fromString("00000000-0000-0000-0000-0000000000e1");

    /**
     * The situations a shipment can be in: every status, and the variants of a status that answer differently.
     * Each is reached by the machine's own transitions (see {@link #in(Situation)}).
     */
    enum Situation {
        PENDING_NEW, PENDING_ORDERED, PENDING_PAID, REQUESTED, REQUESTED_IN_FLIGHT, REQUESTED_CANCEL_REQUESTED,
        /** Cancel requested while a create call was claimed, and the claim ran out unanswered. */
        REQUESTED_CANCEL_LAPSED,
        CREATED, REJECTED, ON_HOLD, CANCELLING, CANCELLING_LOOKUP, CANCELLED, CANCELLED_AFTER_LOOKUP,
        CANCELLED_BEFORE_ORDER
    }

    /** Situation x transition: the status the transition leads to, or "-" where it is refused. */
    private static final String TABLE = """
            situation                  noteOrderCreated notePaid  startAttempt noteCreated noteRejected noteCarrierUnavailable requestRetry cancel     noteCancelled noteCancelFailed withdrawClaim confirmCancelledByHand
            PENDING_NEW                PENDING          PENDING   -            -           -            -                      -            CANCELLED  -             -                -             -
            PENDING_ORDERED            -                REQUESTED -            -           -            -                      -            CANCELLED  -             -                -             -
            PENDING_PAID               REQUESTED        -         -            -           -            -                      -            CANCELLED  -             -                -             -
            REQUESTED                  -                -         REQUESTED    CREATED     REJECTED     REQUESTED              -            CANCELLED  -             -                -             -
            REQUESTED_IN_FLIGHT        -                -         -            CREATED     REJECTED     REQUESTED              -            REQUESTED  -             -                REQUESTED     -
            REQUESTED_CANCEL_REQUESTED -                -         -            CANCELLING  CANCELLED    CANCELLED              -            -          -             -                -             -
            REQUESTED_CANCEL_LAPSED    -                -         CANCELLING   CANCELLING  CANCELLED    CANCELLED              -            -          -             -                -             -
            CREATED                    -                -         -            -           -            -                      -            CANCELLING -             -                -             -
            REJECTED                   -                -         -            -           -            -                      -            CANCELLED  -             -                -             -
            ON_HOLD                    -                -         -            CREATED     -            -                      REQUESTED    CANCELLED  -             -                -             -
            CANCELLING                 -                -         CANCELLING   -           -            -                      -            -          CANCELLED     CANCELLING       -             -
            CANCELLING_LOOKUP          -                -         CANCELLING   CANCELLING  -            -                      -            -          CANCELLED     CANCELLING       -             -
            CANCELLED                  -                CANCELLED -            -           -            -                      -            -          -             -                -             -
            CANCELLED_AFTER_LOOKUP     -                -         -            CANCELLING  -            -                      -            -          -             -                -             -
            CANCELLED_BEFORE_ORDER     CANCELLED        CANCELLED -            -           -            -                      -            -          -             -                -             -
            """;

    private static final Map<String, Consumer<Shipment>> TRANSITIONS = new LinkedHashMap<>();

    static {
        TRANSITIONS.put("noteOrderCreated", s -> s.noteOrderCreated(address(), EVENT, NOW));
        TRANSITIONS.put("notePaid", s -> s.notePaid(EVENT, NOW));
        TRANSITIONS.put("startAttempt", s -> s.startAttempt(NOW, LEASE));
        TRANSITIONS.put("noteCreated", s -> s.noteCreated("shp_1", NOW));
        // a failure as the call of the row's claim reports it
        TRANSITIONS.put("noteRejected", s -> s.noteRejected(s.claimedUntil(), "address undeliverable", NOW));
        TRANSITIONS.put("noteCarrierUnavailable", s -> s.noteCarrierUnavailable(s.claimedUntil(), "carrier answered 503",
                false, NOW, POLICY));
        TRANSITIONS.put("requestRetry", s -> s.requestRetry(EVENT, NOW));
        TRANSITIONS.put("cancel", s -> s.cancel(EVENT, NOW));
        // the worker's answer: the id it cancelled, or none when it looked the shipment up and the carrier had none
        TRANSITIONS.put("noteCancelled", s -> s.noteCancelled(s.carrierShipmentId(), NOW));
        TRANSITIONS.put("noteCancelFailed", s -> s.noteCancelFailed(s.claimedUntil(), "carrier answered 503", NOW,
                POLICY));
        TRANSITIONS.put("withdrawClaim", s -> s.withdrawClaim(s.claimedUntil(), NOW));
        // an operator's word on the parcel the row names: refused until a cancel call of it has been refused
        TRANSITIONS.put("confirmCancelledByHand", s -> s.confirmCancelledByHand(s.carrierShipmentId(), "ada",
                "the carrier's desk, by phone", NOW));
    }

    static Stream<Arguments> everyTransitionFromEverySituation() {
        Map<Situation, Map<String, String>> table = parse();
        assertThat(table.keySet()).as("the table covers every situation").containsExactlyInAnyOrder(Situation.values());
        return table.entrySet().stream().flatMap(row -> {
            assertThat(row.getValue().keySet()).as("the table covers every transition").containsExactlyElementsOf(TRANSITIONS.keySet());
            return row.getValue().entrySet().stream().map(cell -> arguments(row.getKey(), cell.getKey(), cell.getValue()));
        });
    }

    @ParameterizedTest(name = "{1} from {0} -> {2}")
    @MethodSource("everyTransitionFromEverySituation")
    void transitionIsAllowedExactlyWhereTheMachineHasIt(Situation situation, String transition, String expected) {
        Shipment shipment = in(situation);
        ShipmentStatus from = shipment.status();
        if (expected.equals("-")) {
            assertThatThrownBy(() -> TRANSITIONS.get(transition).accept(shipment))
                    .isInstanceOfSatisfying(IllegalTransitionException.class, e -> {
                        assertThat(e.from()).isEqualTo(from);
                        assertThat(e.transition()).isEqualTo(transition);
                    });
            assertThat(shipment.status()).as("a refused transition changes nothing").isEqualTo(from);
        } else {
            TRANSITIONS.get(transition).accept(shipment);
            assertThat(shipment.status()).isEqualTo(ShipmentStatus.valueOf(expected));
        }
    }

    /**
     * An operator's word ends a cancellation the carrier has refused, for the parcel they name, once no call is under
     * way: before any refusal the carrier is asked first, and a call under way decides by the carrier's word.
     */
    @Test
    void aCancelTheCarrierRefusedIsConfirmedByHandForItsParcelOnly() {
        Shipment shipment = in(Situation.CANCELLING);
        assertThat(shipment.whyNotConfirmable("shp_1", NOW)).hasValueSatisfying(why -> assertThat(why)
                .contains("no cancel call refused by the carrier yet"));
        shipment.startAttempt(NOW, LEASE);
        assertThat(shipment.whyNotConfirmable("shp_1", NOW)).hasValueSatisfying(why -> assertThat(why)
                .contains("under way"));
        // a call left unanswered (a timeout, a 5xx) may yet cancel: the carrier is asked again first
        shipment.noteCancelFailed(shipment.claimedUntil(), "shp_1", "timed out", false, NOW, POLICY);
        assertThat(shipment.cancelRefused()).isFalse();
        assertThat(shipment.whyNotConfirmable("shp_1", NOW)).hasValueSatisfying(why -> assertThat(why)
                .contains("no cancel call refused by the carrier yet"));
        shipment.startAttempt(NOW, LEASE);
        shipment.noteCancelFailed(shipment.claimedUntil(), "shp_1", "the carrier does not know shipment shp_1", true,
                NOW, POLICY);
        assertThat(shipment.cancelRefused()).isTrue();
        assertThat(shipment.whyNotConfirmable("shp_2", NOW)).hasValueSatisfying(why -> assertThat(why)
                .contains("is parcel shp_1, not shp_2"));
        assertThatThrownBy(() -> shipment.confirmCancelledByHand("shp_2", "ada", "by phone", NOW))
                .isInstanceOf(IllegalTransitionException.class);
        assertThat(shipment.whyNotConfirmable("shp_1", NOW)).isEmpty();

        ShipmentCancelled answer = shipment.confirmCancelledByHand("shp_1", "ada", "by phone", NOW);
        assertThat(answer).isEqualTo(new ShipmentCancelled(shipment.id().toString(), "ada", "by phone"));
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(shipment.lastError()).isEqualTo("confirmed cancelled at the carrier by operator ada: by phone");
        assertThat(shipment.nextAttemptAt()).isNull();
        assertThat(shipment.whyNotConfirmable("shp_1", NOW)).as("asked again, it holds").isEmpty();
    }

    /** Every claim may cancel, or find the parcel: the last refusal stands only until the next call is made. */
    @Test
    void aClaimClearsTheRefusal() {
        Shipment shipment = in(Situation.CANCELLING);
        shipment.startAttempt(NOW, LEASE);
        shipment.noteCancelFailed(shipment.claimedUntil(), "shp_1", "carrier answered 409", true, NOW, POLICY);
        assertThat(shipment.cancelRefused()).isTrue();
        shipment.startAttempt(NOW.plus(Duration.ofHours(1)), LEASE);
        assertThat(shipment.cancelRefused()).isFalse();
    }

    /**
     * A parcel a lookup by key found is kept when its cancel fails: cancelled by its id from then on, so that a later
     * lookup that finds none (a carrier's lagging replica) cannot end the cancellation while the parcel may go out.
     */
    @Test
    void aParcelALookupFoundIsKeptWhenItsCancelFails() {
        Shipment shipment = in(Situation.CANCELLING_LOOKUP);
        assertThat(shipment.carrierShipmentId()).isNull();
        shipment.startAttempt(NOW, LEASE);
        shipment.noteCancelFailed(shipment.claimedUntil(), "shp_found", "carrier answered 503", false, NOW, POLICY);
        assertThat(shipment.carrierShipmentId()).isEqualTo("shp_found");
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);

        // a lookup's "none" afterwards ends nothing: the parcel seen is cancelled next, by its id
        shipment.startAttempt(NOW.plus(Duration.ofHours(1)), LEASE);
        assertThat(shipment.noteCancelled(null, NOW.plus(Duration.ofHours(1)))).isEmpty();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
        assertThat(shipment.carrierShipmentId()).isEqualTo("shp_found");

        // a refusal of a lookup says nothing of the parcel the row knows
        shipment.startAttempt(NOW.plus(Duration.ofHours(2)), LEASE);
        shipment.noteCancelFailed(shipment.claimedUntil(), null, "carrier answered 400", true, NOW, POLICY);
        assertThat(shipment.cancelRefused()).isFalse();
    }

    @Test
    void everyStatusIsReachable() {
        assertThat(Arrays.stream(Situation.values()).map(s -> in(s).status()))
                .containsAll(List.of(ShipmentStatus.values()));
    }

    // ---- the forward step

    @Test
    void orderThenPaymentRequestsTheShipmentAtOnce() {
        Shipment shipment = in(Situation.PENDING_ORDERED);
        UUID payment = UUID.randomUUID();
        shipment.notePaid(payment, NOW);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(shipment.attempts()).isZero();
        assertThat(shipment.nextAttemptAt()).isEqualTo(NOW);
        assertThat(shipment.isDue(NOW)).isTrue();
        assertThat(shipment.causedByEventId()).isEqualTo(payment);
    }

    @Test
    void paymentBeforeOrderWaitsForTheAddressAndThenRequests() {
        Shipment shipment = in(Situation.PENDING_PAID);
        assertThat(shipment.isPaid()).isTrue();
        assertThat(shipment.knowsOrder()).isFalse();
        assertThat(shipment.isDue(NOW)).as("nothing to call without an address").isFalse();

        UUID orderCreated = UUID.randomUUID();
        shipment.noteOrderCreated(address(), orderCreated, NOW);

        assertThat(shipment.status()).isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(shipment.address().line1()).isEqualTo("12 St James Square");
        assertThat(shipment.causedByEventId()).isEqualTo(orderCreated);
        assertThat(shipment.isDue(NOW)).isTrue();
    }

    @Test
    void paymentForACancelledShipmentIsOnlyRecorded() {
        Shipment shipment = in(Situation.CANCELLED);
        shipment.notePaid(EVENT, NOW);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(shipment.isPaid()).isTrue();
        assertThat(shipment.nextAttemptAt()).isNull();
    }

    @Test
    void orderHeardAfterItsCancellationNeverStartsTheForwardStep() {
        Shipment shipment = in(Situation.CANCELLED_BEFORE_ORDER);
        shipment.noteOrderCreated(address(), EVENT, NOW);
        shipment.notePaid(EVENT, NOW);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(shipment.isDue(NOW)).isFalse();
    }

    @Test
    void theSameFactTwiceIsRefused() {
        assertThatThrownBy(() -> in(Situation.PENDING_PAID).notePaid(EVENT, NOW)).isInstanceOf(IllegalTransitionException.class);
        assertThatThrownBy(() -> in(Situation.PENDING_ORDERED).noteOrderCreated(address(), EVENT, NOW))
                .isInstanceOf(IllegalTransitionException.class)
                .hasMessage("shipment in PENDING cannot noteOrderCreated");
    }

    @Test
    void aClaimedShipmentIsInFlightUntilItsLeaseRunsOut() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        assertThat(shipment.isInFlight(NOW)).isTrue();
        assertThat(shipment.isDue(NOW)).isFalse();
        assertThatThrownBy(() -> shipment.startAttempt(NOW.plusSeconds(1), LEASE)).isInstanceOf(IllegalTransitionException.class);

        Instant afterLease = NOW.plus(LEASE).plusMillis(1);
        assertThat(shipment.isInFlight(afterLease)).isFalse();
        assertThat(shipment.isDue(afterLease)).isTrue();
    }

    @Test
    void aClaimThatRanOutWithoutAnAnswerMakesTheCreationUncertain() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        assertThat(shipment.isCreationUncertain()).isFalse();
        shipment.startAttempt(NOW.plus(LEASE).plusSeconds(1), LEASE);
        assertThat(shipment.isCreationUncertain()).as("the first caller may have reached the carrier").isTrue();
    }

    @Test
    void createdCarriesTheCarrierIdAndEndsTheSchedule() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        ShipmentCreated created = shipment.noteCreated("shp_42", NOW);
        assertThat(created).isEqualTo(new ShipmentCreated(shipment.id().toString(), "shp_42"));
        assertThat(shipment.carrierShipmentId()).isEqualTo("shp_42");
        assertThat(shipment.nextAttemptAt()).isNull();
        assertThat(shipment.isInFlight(NOW)).isFalse();
    }

    @Test
    void rejectionFailsTheStep() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        List<ShippingEvent> events = shipment.noteRejected(shipment.claimedUntil(), "address undeliverable", NOW);
        assertThat(events).containsExactly(new ShipmentFailed(shipment.id().toString(), "address undeliverable"));
        assertThat(shipment.lastError()).isEqualTo("address undeliverable");
        assertThat(shipment.nextAttemptAt()).isNull();
    }

    /** The carrier's free text whole could outgrow what the outbox takes, and the rejection never be recorded. */
    @Test
    void aRejectionsReasonIsShortenedInItsEventAsInTheRow() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        List<ShippingEvent> events = shipment.noteRejected(shipment.claimedUntil(), "x".repeat(1_000_000), NOW);
        assertThat(shipment.lastError()).hasSize(1000);
        assertThat(events).containsExactly(new ShipmentFailed(shipment.id().toString(), shipment.lastError()));
    }

    @Test
    void carrierUnavailableSchedulesTheNextAttemptWithExponentialBackoff() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        List<Duration> delays = new java.util.ArrayList<>();
        for (int attempt = 1; attempt <= 4; attempt++) {
            Instant failedAt = NOW.plusSeconds(attempt * 10L);
            assertThat(shipment.noteCarrierUnavailable(shipment.claimedUntil(), "carrier answered 503", false, failedAt,
                    POLICY)).isEmpty();
            assertThat(shipment.attempts()).isEqualTo(attempt);
            delays.add(Duration.between(failedAt, shipment.nextAttemptAt()));
            assertThat(shipment.isInFlight(failedAt)).isFalse();
        }
        assertThat(delays).containsExactly(Duration.ofMillis(200), Duration.ofMillis(400), Duration.ofMillis(800),
                Duration.ofMillis(1600));
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(shipment.lastError()).isEqualTo("carrier answered 503");
    }

    @Test
    void afterTheLastAttemptTheShipmentWaitsForAnOperatorAndNothingIsUndone() {
        RetryPolicy three = new RetryPolicy(3, Duration.ofMillis(200), Duration.ofSeconds(5));
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        shipment.noteCarrierUnavailable(shipment.claimedUntil(), "503", false, NOW, three);
        shipment.noteCarrierUnavailable(shipment.claimedUntil(), "503", false, NOW, three);
        List<ShippingEvent> events = shipment.noteCarrierUnavailable(shipment.claimedUntil(), "503", false, NOW, three);

        assertThat(events).containsExactly(
                new ShipmentOnHold(shipment.id().toString(), "carrier unavailable after 3 attempts", 3));
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.ON_HOLD);
        assertThat(shipment.nextAttemptAt()).isNull();
        assertThat(shipment.isDue(NOW.plusSeconds(3600))).isFalse();
    }

    @Test
    void operatorRetryResetsTheAttemptsAndTriesAtOnce() {
        Shipment shipment = in(Situation.ON_HOLD);
        assertThat(shipment.attempts()).isEqualTo(1);
        UUID retry = UUID.randomUUID();
        Instant later = NOW.plusSeconds(600);
        shipment.requestRetry(retry, later);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(shipment.attempts()).isZero();
        assertThat(shipment.nextAttemptAt()).isEqualTo(later);
        assertThat(shipment.causedByEventId()).isEqualTo(retry);
    }

    // ---- the compensation

    @Test
    void cancelWhereNothingExistsAtTheCarrierIsAnsweredAtOnce() {
        for (Situation situation : List.of(Situation.PENDING_NEW, Situation.PENDING_ORDERED, Situation.PENDING_PAID,
                Situation.REQUESTED, Situation.REJECTED, Situation.ON_HOLD)) {
            Shipment shipment = in(situation);
            Optional<ShipmentCancelled> answer = shipment.cancel(EVENT, NOW);
            assertThat(answer).as(situation.name()).contains(new ShipmentCancelled(shipment.id().toString()));
            assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
            assertThat(shipment.cancelCausedByEventId()).isEqualTo(EVENT);
            assertThat(shipment.isCancellationUnderway()).isTrue();
        }
    }

    @Test
    void cancelOfACreatedShipmentCancelsAtTheCarrier() {
        Shipment shipment = in(Situation.CREATED);
        assertThat(shipment.cancel(EVENT, NOW)).isEmpty();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
        assertThat(shipment.isDue(NOW)).isTrue();
        assertThat(shipment.cancelAttempts()).isZero();

        Optional<ShipmentCancelled> cancelled = shipment.noteCancelled("shp_1", NOW);
        assertThat(cancelled).contains(new ShipmentCancelled(shipment.id().toString()));
        assertThat(shipment.carrierShipmentId()).isEqualTo("shp_1");
        assertThat(shipment.nextAttemptAt()).isNull();
    }

    @Test
    void cancelDuringACreateCallIsAnsweredAfterTheCall() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        UUID cancelling = UUID.randomUUID();
        assertThat(shipment.cancel(cancelling, NOW)).isEmpty();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(shipment.isCancelRequested()).isTrue();
        assertThat(shipment.isCancellationUnderway()).isTrue();

        ShipmentCreated created = shipment.noteCreated("shp_7", NOW);

        assertThat(created.carrierShipmentId()).isEqualTo("shp_7");
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
        assertThat(shipment.isDue(NOW)).isTrue();
        assertThat(shipment.cancelCausedByEventId()).isEqualTo(cancelling);
    }

    @Test
    void rejectionDuringACancelAnswersBoth() {
        Shipment shipment = in(Situation.REQUESTED_CANCEL_REQUESTED);
        List<ShippingEvent> events = shipment.noteRejected(shipment.claimedUntil(), "address undeliverable", NOW);
        assertThat(events).containsExactly(new ShipmentFailed(shipment.id().toString(), "address undeliverable"),
                new ShipmentCancelled(shipment.id().toString()));
    }

    @Test
    void aFailedCallDuringACancelIsNotRetriedButAnswered() {
        Shipment shipment = in(Situation.REQUESTED_CANCEL_REQUESTED);
        List<ShippingEvent> events = shipment.noteCarrierUnavailable(shipment.claimedUntil(), "carrier answered 503",
                false, NOW, POLICY);
        assertThat(events).containsExactly(new ShipmentCancelled(shipment.id().toString()));
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
    }

    @Test
    void aTimedOutCallDuringACancelIsCheckedAtTheCarrier() {
        Shipment shipment = in(Situation.REQUESTED_CANCEL_REQUESTED);
        List<ShippingEvent> events = shipment.noteCarrierUnavailable(shipment.claimedUntil(), "no answer within 2000 ms",
                true, NOW, POLICY);
        assertThat(events).isEmpty();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
        assertThat(shipment.carrierShipmentId()).isNull();
        assertThat(shipment.isDue(NOW)).isTrue();
    }

    @Test
    void aShipmentOnHoldAfterTimeoutsIsCheckedAtTheCarrierBeforeItIsCancelled() {
        RetryPolicy one = new RetryPolicy(1, Duration.ofMillis(200), Duration.ofSeconds(5));
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        shipment.noteCarrierUnavailable(shipment.claimedUntil(), "no answer within 2000 ms", true, NOW, one);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.ON_HOLD);

        assertThat(shipment.cancel(EVENT, NOW)).isEmpty();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
    }

    @Test
    void aClaimThatRanOutIsCheckedAtTheCarrierBeforeItIsCancelled() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        assertThat(shipment.cancel(EVENT, NOW.plus(LEASE).plusSeconds(1))).isEmpty();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
        // a shipment the look-up finds was created without a ShipmentCreated (the audit expects none then)
        assertThat(shipment.isCreationUncertain()).isTrue();
    }

    /**
     * The create call claimed when the cancellation came never went out (its caller stopped or crashed, or the claim
     * waited too long for a thread): once the claim has run out, the row is claimed for the cancellation, never for a
     * create call made for an order cancelled a lease earlier. The claimed call may have reached the carrier, so the
     * shipment is looked up by its key.
     */
    @Test
    void aCancellationThatWaitedForAClaimThatRanOutIsLookedUpNotCreated() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        assertThat(shipment.cancel(EVENT, NOW)).isEmpty();
        assertThat(shipment.isDue(AFTER_LEASE)).isTrue();

        shipment.startAttempt(AFTER_LEASE, LEASE);

        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
        assertThat(shipment.isInFlight(AFTER_LEASE)).as("claimed for the look-up").isTrue();
        assertThat(shipment.carrierShipmentId()).as("nothing known: looked up by the key").isNull();
        assertThat(shipment.isCreationUncertain()).isTrue();
        assertThat(shipment.attempts()).as("no create attempt counted").isZero();
        assertThat(shipment.noteCancelled(null, AFTER_LEASE)).contains(new ShipmentCancelled(shipment.id().toString()));
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
    }

    /** A claim taken back by the transaction that made it (it was never handed to a caller) leaves nothing to look up. */
    @Test
    void aCancellationOfAClaimNeverHandedOutIsAnsweredAtOnce() {
        Shipment shipment = in(Situation.REQUESTED);
        shipment.startAttempt(NOW, LEASE);

        shipment.withdrawClaim(shipment.claimedUntil(), NOW);

        assertThat(shipment.isInFlight(NOW)).isFalse();
        assertThat(shipment.cancel(EVENT, NOW)).contains(new ShipmentCancelled(shipment.id().toString()));
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(shipment.isCreationUncertain()).isFalse();
    }

    @Test
    void aWithdrawnClaimKeepsWhatAnEarlierClaimLeftUncertain() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        shipment.startAttempt(AFTER_LEASE, LEASE);

        shipment.withdrawClaim(shipment.claimedUntil(), AFTER_LEASE);

        assertThat(shipment.cancel(EVENT, AFTER_LEASE)).as("the first claim's call may have gone out").isEmpty();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
    }

    @Test
    void onlyTheRowsOwnClaimIsWithdrawn() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        assertThatThrownBy(() -> shipment.withdrawClaim(NOW, NOW)).isInstanceOf(IllegalTransitionException.class);
        assertThat(shipment.isInFlight(NOW)).isTrue();
    }

    @Test
    void aFailingCancelIsRetriedWithBackoffForEver() {
        Shipment shipment = in(Situation.CANCELLING);
        for (int attempt = 1; attempt <= 50; attempt++) {
            shipment.startAttempt(NOW, LEASE);
            shipment.noteCancelFailed(shipment.claimedUntil(), "carrier answered 503", NOW, POLICY);
            assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
            assertThat(shipment.cancelAttempts()).isEqualTo(attempt);
            assertThat(Duration.between(NOW, shipment.nextAttemptAt())).isEqualTo(POLICY.delayAfter(attempt));
            assertThat(shipment.isInFlight(NOW)).isFalse();
        }
        assertThat(Duration.between(NOW, shipment.nextAttemptAt())).isEqualTo(Duration.ofSeconds(5));
        assertThat(shipment.attempts()).as("create attempts are kept apart").isZero();
    }

    @Test
    void aLookedUpCarrierIdIsRecordedWithTheCancellation() {
        Shipment shipment = in(Situation.REQUESTED_CANCEL_REQUESTED);
        shipment.noteCarrierUnavailable(shipment.claimedUntil(), "no answer", true, NOW, POLICY);
        shipment.noteCancelled("shp_found", NOW);
        assertThat(shipment.carrierShipmentId()).isEqualTo("shp_found");
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
    }

    @Test
    void aCreateThatLandsAfterTheLookupFoundNothingIsCancelledToo() {
        Shipment shipment = in(Situation.CANCELLED_AFTER_LOOKUP);

        ShipmentCreated created = shipment.noteCreated("shp_late", AFTER_LEASE);

        assertThat(created.carrierShipmentId()).isEqualTo("shp_late");
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
        assertThat(shipment.isDue(AFTER_LEASE)).as("cancelled at once").isTrue();
        shipment.startAttempt(AFTER_LEASE, LEASE);
        assertThat(shipment.noteCancelled("shp_late", AFTER_LEASE)).isPresent();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(shipment.carrierShipmentId()).isEqualTo("shp_late");
        assertThatThrownBy(() -> shipment.noteCreated("shp_late", AFTER_LEASE))
                .as("the same answer twice (a second worker's)").isInstanceOf(IllegalTransitionException.class);
    }

    @Test
    void aCreateThatLandsDuringTheLookupKeepsTheCancellationGoing() {
        Shipment shipment = in(Situation.CANCELLING_LOOKUP);
        shipment.startAttempt(AFTER_LEASE, LEASE);

        shipment.noteCreated("shp_late", AFTER_LEASE);
        Optional<ShipmentCancelled> answer = shipment.noteCancelled(null, AFTER_LEASE);

        assertThat(answer).as("the lookup's 'none' is out of date").isEmpty();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
        assertThat(shipment.carrierShipmentId()).isEqualTo("shp_late");
        assertThat(shipment.isDue(AFTER_LEASE)).isTrue();
    }

    /** A carrier that forgot the key finds, by it, the last parcel it made under it: not necessarily the one recorded. */
    @Test
    void aLookupThatFindsAnotherShipmentThanTheOneRecordedMeanwhileKeepsTheCancellationGoing() {
        Shipment shipment = in(Situation.CANCELLING_LOOKUP);
        shipment.startAttempt(AFTER_LEASE, LEASE);

        shipment.noteCreated("shp_reported", AFTER_LEASE);
        Optional<ShipmentCancelled> answer = shipment.noteCancelled("shp_found", AFTER_LEASE);

        assertThat(answer).as("shp_reported is still live").isEmpty();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLING);
        assertThat(shipment.carrierShipmentId()).isEqualTo("shp_reported");
        assertThat(shipment.isDue(AFTER_LEASE)).isTrue();
        shipment.startAttempt(AFTER_LEASE, LEASE);
        assertThat(shipment.noteCancelled("shp_reported", AFTER_LEASE)).isPresent();
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
    }

    @Test
    void aCancelledShipmentThatNeverAskedTheCarrierTakesNoCreate() {
        for (Situation situation : List.of(Situation.CANCELLED, Situation.CANCELLED_BEFORE_ORDER, Situation.CANCELLING)) {
            Shipment shipment = in(situation);
            assertThatThrownBy(() -> shipment.noteCreated("shp_2", NOW)).as(situation.name())
                    .isInstanceOf(IllegalTransitionException.class);
        }
    }

    @Test
    void aSecondCancellationIsRefused() {
        for (Situation situation : List.of(Situation.REQUESTED_CANCEL_REQUESTED, Situation.CANCELLING, Situation.CANCELLED)) {
            Shipment shipment = in(situation);
            assertThat(shipment.isCancellationUnderway()).as(situation.name()).isTrue();
            assertThatThrownBy(() -> shipment.cancel(EVENT, NOW)).isInstanceOf(IllegalTransitionException.class);
        }
    }

    // ---- an OrderCancelling heard again (re-sent under a new event id)

    /** The situations that have answered their cancellation: only these give the answer again. */
    private static final Set<Situation> CANCELLATION_ANSWERED = EnumSet.of(Situation.CANCELLED,
            Situation.CANCELLED_AFTER_LOOKUP, Situation.CANCELLED_BEFORE_ORDER);

    @ParameterizedTest(name = "{0}")
    @EnumSource(Situation.class)
    void aCancellationHeardAgainIsAnsweredAgainOnlyOnceItWasAnswered(Situation situation) {
        Shipment shipment = in(situation);
        Shipment.Progress before = shipment.progress();

        Optional<ShipmentCancelled> again = shipment.repeatCancellationAnswer();

        if (CANCELLATION_ANSWERED.contains(situation)) {
            assertThat(again).contains(new ShipmentCancelled(shipment.id().toString()));
        } else {
            assertThat(again).as("owed still (answered when the cancellation ends), or never asked").isEmpty();
        }
        assertThat(shipment.progress()).as("nothing changes").isEqualTo(before);
    }

    @Test
    void theAnswerGivenAgainIsTheFirstAnswer() {
        Shipment shipment = in(Situation.CREATED);
        shipment.cancel(EVENT, NOW);
        assertThat(shipment.repeatCancellationAnswer()).as("the carrier is still being asked").isEmpty();
        ShipmentCancelled first = shipment.noteCancelled("shp_1", NOW).orElseThrow();

        assertThat(shipment.repeatCancellationAnswer()).contains(first);
        assertThat(shipment.repeatCancellationAnswer()).as("as often as it is asked").contains(first);
        assertThat(shipment.cancelCausedByEventId()).as("still the first OrderCancelling's").isEqualTo(EVENT);
    }

    @Test
    void aCancellationAnsweredWithARejectionIsAnsweredAgain() {
        Shipment shipment = in(Situation.REQUESTED_CANCEL_REQUESTED);
        assertThat(shipment.repeatCancellationAnswer()).as("waits for the create call").isEmpty();
        List<ShippingEvent> events = shipment.noteRejected(shipment.claimedUntil(), "address undeliverable", NOW);

        assertThat(shipment.isCancelRequested()).isTrue();
        assertThat(shipment.repeatCancellationAnswer()).contains((ShipmentCancelled) events.get(1));
    }

    @Test
    void aCancellationReopenedByALateCreateOwesItsAnswerAgain() {
        Shipment shipment = in(Situation.CANCELLED_AFTER_LOOKUP);
        assertThat(shipment.repeatCancellationAnswer()).isPresent();

        shipment.noteCreated("shp_late", AFTER_LEASE);

        assertThat(shipment.repeatCancellationAnswer()).as("the next answer comes once shp_late is cancelled").isEmpty();
        shipment.startAttempt(AFTER_LEASE, LEASE);
        ShipmentCancelled answer = shipment.noteCancelled("shp_late", AFTER_LEASE).orElseThrow();
        assertThat(shipment.repeatCancellationAnswer()).contains(answer);
    }

    // ---- claims: an outcome belongs to the claim its call was made under

    /**
     * Caller A's claim runs out while it is stalled; B claims the row again and calls with the same key. A's failure,
     * reported late, must neither free the row from B's call nor count an attempt: at max - 1 it would put the row on
     * hold while B's call may be creating the shipment.
     */
    @Test
    void aFailureOfAClaimThatWasReplacedIsIgnored() {
        Shipment shipment = withFailedAttempts(POLICY.maxAttempts() - 1);
        Instant first = NOW.plusSeconds(3600);
        shipment.startAttempt(first, LEASE);
        Instant claimA = shipment.claimedUntil();
        Instant second = first.plus(LEASE).plusSeconds(1);
        shipment.startAttempt(second, LEASE);
        Instant claimB = shipment.claimedUntil();
        Shipment.Progress claimedByB = shipment.progress();

        assertThat(shipment.noteCarrierUnavailable(claimA, "no answer within 2000 ms", true, second, POLICY)).isEmpty();
        assertThat(shipment.noteRejected(claimA, "address undeliverable", second)).isEmpty();

        assertThat(shipment.progress()).as("nothing of A's outcomes recorded").isEqualTo(claimedByB);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.REQUESTED);
        assertThat(shipment.attempts()).isEqualTo(POLICY.maxAttempts() - 1);
        assertThat(shipment.claimedUntil()).isEqualTo(claimB);
        assertThat(shipment.isInFlight(second)).isTrue();

        List<ShippingEvent> events = shipment.noteCarrierUnavailable(claimB, "carrier answered 503", false, second, POLICY);
        assertThat(events).as("B's own failure counts").singleElement().isInstanceOf(ShipmentOnHold.class);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.ON_HOLD);
    }

    @Test
    void aCancelFailureOfAClaimThatWasReplacedIsIgnored() {
        Shipment shipment = in(Situation.CANCELLING);
        shipment.startAttempt(NOW, LEASE);
        Instant claimA = shipment.claimedUntil();
        shipment.startAttempt(AFTER_LEASE, LEASE);
        Shipment.Progress claimedByB = shipment.progress();

        shipment.noteCancelFailed(claimA, "carrier answered 503", AFTER_LEASE, POLICY);

        assertThat(shipment.progress()).isEqualTo(claimedByB);
        assertThat(shipment.cancelAttempts()).isZero();
    }

    /** With one idempotency key the carrier holds one shipment: whichever claim's call brings its id, it is recorded. */
    @Test
    void aSuccessOfAClaimThatWasReplacedIsRecorded() {
        Shipment claimedAgain = in(Situation.REQUESTED_IN_FLIGHT);
        claimedAgain.startAttempt(AFTER_LEASE, LEASE);
        assertThat(claimedAgain.noteCreated("shp_a", AFTER_LEASE).carrierShipmentId()).isEqualTo("shp_a");
        assertThat(claimedAgain.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(claimedAgain.isInFlight(AFTER_LEASE)).isFalse();

        // the later claims' calls all failed, the earlier one's landed: the shipment exists, no operator is needed
        Shipment onHold = in(Situation.ON_HOLD);
        ShipmentCreated created = onHold.noteCreated("shp_a", NOW);
        assertThat(created).isEqualTo(new ShipmentCreated(onHold.id().toString(), "shp_a"));
        assertThat(onHold.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(onHold.nextAttemptAt()).isNull();
    }

    @Test
    void aClaimIsKeptAsTheColumnKeepsIt() {
        Shipment shipment = in(Situation.REQUESTED);
        shipment.startAttempt(NOW.plusNanos(123_456_789), LEASE);
        assertThat(shipment.claimedUntil()).isEqualTo(NOW.plus(LEASE).plusNanos(123_456_000));
    }

    @Test
    void longErrorsAreCut() {
        Shipment shipment = in(Situation.REQUESTED_IN_FLIGHT);
        shipment.noteCarrierUnavailable(shipment.claimedUntil(), "x".repeat(5000), false, NOW, POLICY);
        assertThat(shipment.lastError()).hasSize(1000);
    }

    // ---- fixtures

    private static Address address() {
        return new Address("Ada Lovelace", "12 St James Square", null, "London", "SW1Y 4JH", "GB");
    }

    /** Walks a new shipment along the machine's own transitions to the given situation. */
    static Shipment in(Situation situation) {
        Shipment s = Shipment.open(UUID.randomUUID(), "corr-1", NOW);
        RetryPolicy onHoldAtOnce = new RetryPolicy(1, Duration.ofMillis(200), Duration.ofSeconds(5));
        switch (situation) {
            case PENDING_NEW -> {
            }
            case PENDING_ORDERED -> s.noteOrderCreated(address(), EVENT, NOW);
            case PENDING_PAID -> s.notePaid(EVENT, NOW);
            case REQUESTED -> requested(s);
            case REQUESTED_IN_FLIGHT -> inFlight(s);
            case REQUESTED_CANCEL_REQUESTED -> inFlight(s).cancel(EVENT, NOW);
            case REQUESTED_CANCEL_LAPSED -> {
                requested(s).startAttempt(LEASE_AGO, LEASE);
                s.cancel(EVENT, LEASE_AGO);
            }
            case CREATED -> inFlight(s).noteCreated("shp_1", NOW);
            case REJECTED -> inFlight(s).noteRejected(s.claimedUntil(), "address undeliverable", NOW);
            case ON_HOLD -> inFlight(s).noteCarrierUnavailable(s.claimedUntil(), "carrier answered 503", false, NOW,
                    onHoldAtOnce);
            case CANCELLING -> {
                inFlight(s).noteCreated("shp_1", NOW);
                s.cancel(EVENT, NOW);
            }
            case CANCELLING_LOOKUP -> inFlight(s).cancel(EVENT, AFTER_LEASE);
            case CANCELLED -> {
                s.noteOrderCreated(address(), EVENT, NOW);
                s.cancel(EVENT, NOW);
            }
            case CANCELLED_AFTER_LOOKUP -> {
                inFlight(s).cancel(EVENT, AFTER_LEASE);
                s.noteCancelled(null, AFTER_LEASE);
            }
            case CANCELLED_BEFORE_ORDER -> s.cancel(EVENT, NOW);
        }
        return s;
    }

    /** REQUESTED and not claimed after so many failed create attempts (a claim and a failure each, a minute apart). */
    private static Shipment withFailedAttempts(int failed) {
        Shipment s = requested(Shipment.open(UUID.randomUUID(), "corr-1", NOW));
        for (int i = 0; i < failed; i++) {
            Instant at = NOW.plusSeconds(60L * i);
            s.startAttempt(at, LEASE);
            s.noteCarrierUnavailable(s.claimedUntil(), "carrier answered 503", false, at, POLICY);
        }
        return s;
    }

    private static Shipment requested(Shipment s) {
        s.noteOrderCreated(address(), EVENT, NOW);
        s.notePaid(EVENT, NOW);
        return s;
    }

    private static Shipment inFlight(Shipment s) {
        requested(s).startAttempt(NOW, LEASE);
        return s;
    }

    private static Map<Situation, Map<String, String>> parse() {
        List<String[]> rows = TABLE.lines().map(String::strip).filter(l -> !l.isEmpty()).map(l -> l.split("\\s+")).toList();
        String[] header = rows.get(0);
        Map<Situation, Map<String, String>> table = new HashMap<>();
        for (String[] row : rows.subList(1, rows.size())) {
            assertThat(row).as("row " + row[0]).hasSameSizeAs(header);
            Map<String, String> cells = new LinkedHashMap<>();
            for (int i = 1; i < header.length; i++) {
                cells.put(header[i], row[i]);
            }
            table.put(Situation.valueOf(row[0]), cells);
        }
        return table;
    }
}
