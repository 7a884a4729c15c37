package dev.ordersaga.payment.domain;

import dev.ordersaga.events.PaymentEvent;
import dev.ordersaga.events.PaymentFailed;
import dev.ordersaga.events.PaymentOnHold;
import dev.ordersaga.events.PaymentRefunded;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.retry.Backoff;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** The payment state machine as a table: every transition from every state, allowed, tolerated or refused. */
class PaymentTest {

    private static final Instant NOW = Instant.parse("2025-01-01T12:00:00Z");
    private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(10));
    private static final SettlementWatch WATCH = new SettlementWatch(Duration.ofSeconds(2), 3);

    /**
     * transition, from -> to (or "refused": IllegalTransitionException, nothing changes), and the events it emits.
     * A row that stays in its state is a repeat or stale fact: tolerated, recorded at most, never acted on twice. An
     * OrderCancelling in a state whose compensation is done is answered again (an operator's re-send: a new event).
     */
    private static final String TABLE = """
            noteOrderCreated     PENDING   -> PENDING
            noteOrderCreated     CHARGING  -> CHARGING
            noteOrderCreated     SUCCEEDED -> SUCCEEDED
            noteOrderCreated     DECLINED  -> DECLINED
            noteOrderCreated     REFUNDING -> REFUNDING
            noteOrderCreated     REFUNDED  -> REFUNDED
            noteOrderCreated     CANCELLED -> CANCELLED

            noteStockReserved    PENDING   -> CHARGING
            noteStockReserved    CHARGING  -> CHARGING
            noteStockReserved    SUCCEEDED -> SUCCEEDED
            noteStockReserved    DECLINED  -> DECLINED
            noteStockReserved    REFUNDING -> REFUNDING
            noteStockReserved    REFUNDED  -> REFUNDED
            noteStockReserved    CANCELLED -> CANCELLED

            requestCancellation  PENDING   -> CANCELLED  PaymentRefunded
            requestCancellation  CHARGING  -> CHARGING
            requestCancellation  SUCCEEDED -> REFUNDING
            requestCancellation  DECLINED  -> DECLINED   PaymentRefunded
            requestCancellation  REFUNDING -> REFUNDING
            requestCancellation  REFUNDED  -> REFUNDED   PaymentRefunded
            requestCancellation  CANCELLED -> CANCELLED  PaymentRefunded

            chargeSucceeded      PENDING   -> refused
            chargeSucceeded      CHARGING  -> SUCCEEDED  PaymentSucceeded
            chargeSucceeded      SUCCEEDED -> SUCCEEDED
            chargeSucceeded      DECLINED  -> REFUNDING  PaymentSucceeded
            chargeSucceeded      REFUNDING -> REFUNDING
            chargeSucceeded      REFUNDED  -> REFUNDED
            chargeSucceeded      CANCELLED -> REFUNDING  PaymentSucceeded

            chargeDeclined       PENDING   -> refused
            chargeDeclined       CHARGING  -> DECLINED   PaymentFailed
            chargeDeclined       SUCCEEDED -> SUCCEEDED
            chargeDeclined       DECLINED  -> DECLINED
            chargeDeclined       REFUNDING -> REFUNDING
            chargeDeclined       REFUNDED  -> REFUNDED
            chargeDeclined       CANCELLED -> CANCELLED

            chargeAbandoned      PENDING   -> refused
            chargeAbandoned      CHARGING  -> refused
            chargeAbandoned      SUCCEEDED -> SUCCEEDED
            chargeAbandoned      DECLINED  -> DECLINED
            chargeAbandoned      REFUNDING -> REFUNDING
            chargeAbandoned      REFUNDED  -> REFUNDED
            chargeAbandoned      CANCELLED -> CANCELLED

            noteNoLateSettlement PENDING   -> refused
            noteNoLateSettlement CHARGING  -> refused
            noteNoLateSettlement SUCCEEDED -> refused
            noteNoLateSettlement DECLINED  -> DECLINED
            noteNoLateSettlement REFUNDING -> REFUNDING
            noteNoLateSettlement REFUNDED  -> REFUNDED
            noteNoLateSettlement CANCELLED -> CANCELLED

            chargeHeld           PENDING   -> refused
            chargeHeld           CHARGING  -> CHARGING   PaymentOnHold
            chargeHeld           SUCCEEDED -> SUCCEEDED
            chargeHeld           DECLINED  -> DECLINED
            chargeHeld           REFUNDING -> REFUNDING
            chargeHeld           REFUNDED  -> REFUNDED
            chargeHeld           CANCELLED -> CANCELLED

            chargeUnresolved     PENDING   -> refused
            chargeUnresolved     CHARGING  -> CHARGING
            chargeUnresolved     SUCCEEDED -> SUCCEEDED
            chargeUnresolved     DECLINED  -> DECLINED
            chargeUnresolved     REFUNDING -> REFUNDING
            chargeUnresolved     REFUNDED  -> REFUNDED
            chargeUnresolved     CANCELLED -> CANCELLED

            chargeRefusedAgain   PENDING   -> refused
            chargeRefusedAgain   CHARGING  -> CHARGING
            chargeRefusedAgain   SUCCEEDED -> SUCCEEDED
            chargeRefusedAgain   DECLINED  -> DECLINED
            chargeRefusedAgain   REFUNDING -> REFUNDING
            chargeRefusedAgain   REFUNDED  -> REFUNDED
            chargeRefusedAgain   CANCELLED -> CANCELLED

            refundSucceeded      PENDING   -> refused
            refundSucceeded      CHARGING  -> refused
            refundSucceeded      SUCCEEDED -> refused
            refundSucceeded      DECLINED  -> refused
            refundSucceeded      REFUNDING -> REFUNDED   PaymentRefunded
            refundSucceeded      REFUNDED  -> REFUNDED
            refundSucceeded      CANCELLED -> refused

            refundFailed         PENDING   -> refused
            refundFailed         CHARGING  -> refused
            refundFailed         SUCCEEDED -> refused
            refundFailed         DECLINED  -> refused
            refundFailed         REFUNDING -> REFUNDING
            refundFailed         REFUNDED  -> REFUNDED
            refundFailed         CANCELLED -> refused

            confirmRefundedByHand PENDING   -> refused
            confirmRefundedByHand CHARGING  -> refused
            confirmRefundedByHand SUCCEEDED -> refused
            confirmRefundedByHand DECLINED  -> refused
            confirmRefundedByHand REFUNDING -> REFUNDED   PaymentRefunded
            confirmRefundedByHand REFUNDED  -> refused
            confirmRefundedByHand CANCELLED -> refused
            """;

    private static final Map<String, Function<Payment, List<PaymentEvent>>> TRANSITIONS = new LinkedHashMap<>();

    static {
        TRANSITIONS.put("noteOrderCreated", p -> {
            p.noteOrderCreated(new BigDecimal("21.00"), "EUR", "tok_ok", UUID.randomUUID(), NOW);
            return List.of();
        });
        TRANSITIONS.put("noteStockReserved", p -> {
            p.noteStockReserved(UUID.randomUUID(), NOW);
            return List.of();
        });
        TRANSITIONS.put("requestCancellation", p -> p.requestCancellation(UUID.randomUUID(), NOW));
        TRANSITIONS.put("chargeSucceeded", p -> p.chargeSucceeded("ch_table", NOW));
        TRANSITIONS.put("chargeDeclined", p -> p.chargeDeclined("card declined", NOW, WATCH));
        // from CHARGING only while the order is cancelling: the table's CHARGING is not (see the tests below)
        TRANSITIONS.put("chargeAbandoned", p -> p.chargeAbandoned(NOW, WATCH));
        TRANSITIONS.put("noteNoLateSettlement", p -> {
            p.noteNoLateSettlement(NOW, WATCH);
            return List.of();
        });
        TRANSITIONS.put("chargeHeld", p -> p.chargeHeld("the provider may have forgotten the key", NOW, NOW));
        TRANSITIONS.put("chargeUnresolved", p -> {
            p.chargeUnresolved(NOW, BACKOFF);
            return List.of();
        });
        TRANSITIONS.put("chargeRefusedAgain", p -> {
            p.chargeRefusedAgain("the provider refused the charge request (400): token spent", NOW, BACKOFF);
            return List.of();
        });
        TRANSITIONS.put("refundSucceeded", p -> p.refundSucceeded("re_table", NOW));
        TRANSITIONS.put("refundFailed", p -> {
            p.refundFailed(NOW, BACKOFF, false);
            return List.of();
        });
        // an operator confirms only a refund the provider refused (see the tests below): the table's REFUNDING has had
        // that refusal; its REFUNDED was refunded by the provider, which no operator's word changes
        TRANSITIONS.put("confirmRefundedByHand", p -> {
            if (p.status() == PaymentStatus.REFUNDING) {
                p.refundFailed(NOW, BACKOFF, true);
            }
            return p.confirmRefundedByHand("re_by_hand", "ada", "refunded at the provider's dashboard", NOW);
        });
    }

    private record Row(String transition, PaymentStatus from, PaymentStatus to, List<String> events) {

        boolean refused() {
            return to == null;
        }
    }

    private static List<Row> rows() {
        return TABLE.lines().map(String::trim).filter(line -> !line.isEmpty()).map(line -> {
            String[] cells = line.split("\\s+");
            PaymentStatus to = cells[3].equals("refused") ? null : PaymentStatus.valueOf(cells[3]);
            return new Row(cells[0], PaymentStatus.valueOf(cells[1]), to, List.of(cells).subList(4, cells.length));
        }).toList();
    }

    static Stream<Arguments> table() {
        return rows().stream().map(row -> arguments(row.transition(), row.from(), row));
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("table")
    void transitionDoesWhatTheTableSays(String transition, PaymentStatus from, Row row) {
        Payment payment = paymentIn(from);
        Function<Payment, List<PaymentEvent>> step = TRANSITIONS.get(transition);
        if (row.refused()) {
            assertThatThrownBy(() -> step.apply(payment))
                    .isInstanceOfSatisfying(IllegalTransitionException.class, e -> {
                        assertThat(e.from()).isEqualTo(from);
                        assertThat(e.transition()).isEqualTo(transition);
                    });
            assertThat(payment.status()).as("a refused transition changes nothing").isEqualTo(from);
        } else {
            List<PaymentEvent> events = step.apply(payment);
            assertThat(payment.status()).isEqualTo(row.to());
            assertThat(events).extracting(e -> e.getClass().getSimpleName()).containsExactlyElementsOf(row.events());
        }
    }

    @Test
    void theTableHasEveryTransitionFromEveryStateOnce() {
        Map<String, Long> cells = rows().stream()
                .collect(Collectors.groupingBy(r -> r.transition() + " " + r.from(), Collectors.counting()));
        List<String> expected = TRANSITIONS.keySet().stream()
                .flatMap(t -> Arrays.stream(PaymentStatus.values()).map(s -> t + " " + s)).toList();
        assertThat(cells.keySet()).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(cells.values()).allMatch(n -> n == 1);
    }

    @Test
    void orderCreatedAloneWaitsForTheStock() {
        Payment payment = pending();
        assertThat(payment.status()).isEqualTo(PaymentStatus.PENDING);
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.NONE);
        assertThat(payment.isDue(NOW)).isFalse();
    }

    @Test
    void stockReservedChargesAtOnce() {
        Payment payment = pending();
        UUID stockReserved = UUID.randomUUID();
        payment.noteStockReserved(stockReserved, NOW);
        assertThat(payment.status()).isEqualTo(PaymentStatus.CHARGING);
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.CHARGE);
        assertThat(payment.isDue(NOW)).isTrue();
        assertThat(payment.causedByEventId()).as("the charge is caused by StockReserved").isEqualTo(stockReserved);
    }

    @Test
    void aLeasedCallIsNotDueUntilTheLeaseEnds() {
        Payment payment = pending();
        payment.noteStockReserved(UUID.randomUUID(), NOW);
        payment.lease(NOW, NOW.plusSeconds(30));
        assertThat(payment.isDue(NOW.plusSeconds(29))).as("another worker must not take it").isFalse();
        assertThat(payment.isDue(NOW.plusSeconds(30))).as("the holder died: the sweep takes it").isTrue();
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.CHARGE);
        assertThat(payment.nextCallAfterAnotherClaim()).as("the dead holder's call may have charged: ask, never charge "
                + "blindly").isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
        assertThatThrownBy(() -> payment.lease(NOW, NOW.plusSeconds(60))).as("leased twice")
                .isInstanceOf(IllegalTransitionException.class);
        assertThatThrownBy(() -> pending().lease(NOW, NOW.plusSeconds(30))).as("nothing owed")
                .isInstanceOf(IllegalTransitionException.class);
    }

    @Test
    void stockReservedBeforeOrderCreatedChargesOnceTheOrderIsKnown() {
        UUID stockReserved = UUID.randomUUID();
        Payment payment = Payment.beforeOrderCreated(UUID.randomUUID(), "corr-early", stockReserved, NOW);
        payment.noteStockReserved(stockReserved, NOW);
        assertThat(payment.status()).isEqualTo(PaymentStatus.PENDING);
        assertThat(payment.stockReserved()).isTrue();
        assertThat(payment.orderKnown()).isFalse();
        assertThat(payment.nextCall()).as("nothing to charge without an amount").isEqualTo(Payment.ProviderCall.NONE);

        UUID orderCreated = UUID.randomUUID();
        payment.noteOrderCreated(new BigDecimal("21.00"), "EUR", "tok_ok", orderCreated, NOW);

        assertThat(payment.status()).isEqualTo(PaymentStatus.CHARGING);
        assertThat(payment.amount()).isEqualByComparingTo("21.00");
        assertThat(payment.paymentToken()).isEqualTo("tok_ok");
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.CHARGE);
        assertThat(payment.causedByEventId()).isEqualTo(orderCreated);
    }

    @Test
    void cancelBeforeStockReservedAnswersZeroAndNeverCharges() {
        Payment payment = pending();
        List<PaymentEvent> events = payment.requestCancellation(UUID.randomUUID(), NOW);
        assertThat(events).singleElement().isInstanceOfSatisfying(PaymentRefunded.class, refunded -> {
            assertThat(refunded.amount()).isEqualByComparingTo("0");
            assertThat(refunded.providerRefundId()).isNull();
            assertThat(refunded.paymentId()).isEqualTo(payment.id().toString());
        });

        payment.noteStockReserved(UUID.randomUUID(), NOW);
        assertThat(payment.status()).isEqualTo(PaymentStatus.CANCELLED);
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.NONE);
        assertThat(payment.isDue(NOW)).isFalse();
    }

    @Test
    void cancelBeforeOrderCreatedIsAnsweredAtOnceAndNothingIsChargedAfterwards() {
        Payment payment = Payment.beforeOrderCreated(UUID.randomUUID(), "corr-odd", UUID.randomUUID(), NOW);
        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).singleElement()
                .isInstanceOfSatisfying(PaymentRefunded.class, r -> assertThat(r.amount()).isEqualByComparingTo("0"));

        payment.noteOrderCreated(new BigDecimal("21.00"), "EUR", "tok_ok", UUID.randomUUID(), NOW);
        payment.noteStockReserved(UUID.randomUUID(), NOW);

        assertThat(payment.status()).isEqualTo(PaymentStatus.CANCELLED);
        assertThat(payment.amount()).isEqualByComparingTo("21.00");
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.NONE);
        assertThat(payment.paymentToken()).as("never charges: the token is not kept").isNull();
    }

    /** The token lets whoever holds it charge the customer: kept only while a charge may still be sent. */
    @ParameterizedTest
    @EnumSource(PaymentStatus.class)
    void thePaymentTokenIsKeptOnlyWhileAChargeCanBeSent(PaymentStatus status) {
        Payment payment = paymentIn(status);
        if (status == PaymentStatus.PENDING || status == PaymentStatus.CHARGING) {
            assertThat(payment.paymentToken()).isEqualTo("tok_ok");
        } else {
            assertThat(payment.paymentToken()).isNull();
        }
    }

    @Test
    void successCarriesTheAmountAndTheProvidersChargeId() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        List<PaymentEvent> events = payment.chargeSucceeded("ch_42", NOW);
        assertThat(events).singleElement().isEqualTo(
                new PaymentSucceeded(payment.id().toString(), new BigDecimal("21.00"), "EUR", "ch_42"));
        assertThat(payment.providerChargeId()).isEqualTo("ch_42");
        assertThat(payment.nextAttemptAt()).as("nothing owed to the provider").isNull();
    }

    @Test
    void declineCarriesTheReason() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        List<PaymentEvent> events = payment.chargeDeclined("card declined", NOW, WATCH);
        assertThat(events).containsExactly(new PaymentFailed(payment.id().toString(), "card declined"));
        assertThat(payment.declineReason()).isEqualTo("card declined");
    }

    @Test
    void aProvidersReasonLongerThanThePaymentKeepsIsShortenedNotRefused() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        String told = "declined: " + "the issuer says no. ".repeat(40);
        List<PaymentEvent> events = payment.chargeDeclined(told, NOW, WATCH);
        assertThat(payment.declineReason()).hasSize(Payment.MAX_DECLINE_REASON_LENGTH).startsWith("declined: the issuer");
        assertThat(events).containsExactly(new PaymentFailed(payment.id().toString(), payment.declineReason()));
    }

    @Test
    void aProvidersReasonWithANulIsKeptWithoutItForTheDatabaseTakesNone() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        List<PaymentEvent> events = payment.chargeDeclined("do not\u0000honour", NOW, WATCH);
        assertThat(payment.declineReason()).isEqualTo("do not\uFFFDhonour");
        assertThat(events).containsExactly(new PaymentFailed(payment.id().toString(), "do not\uFFFDhonour"));
    }

    @Test
    void timeoutIsNeverADeclineButAStatusQueryAfterABackoff() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        int attempt = payment.chargeUnresolved(NOW, BACKOFF);
        assertThat(attempt).isEqualTo(1);
        assertThat(payment.status()).isEqualTo(PaymentStatus.CHARGING);
        assertThat(payment.nextCall()).as("ask, never charge blindly").isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
        assertThat(payment.nextCallAfterAnotherClaim()).isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
        assertThat(payment.nextAttemptAt()).isEqualTo(NOW.plusMillis(200));
        assertThat(payment.isDue(NOW)).isFalse();
        assertThat(payment.isDue(NOW.plusMillis(200))).isTrue();

        assertThat(payment.chargeUnresolved(NOW, BACKOFF)).isEqualTo(2);
        assertThat(payment.nextAttemptAt()).isEqualTo(NOW.plusMillis(400));
    }

    /**
     * A charge sent again and refused as a request is no decline yet: the refusal is kept while the provider is asked
     * for the charge's status, and a charge found then clears it.
     */
    @Test
    void aRefusalOfAChargeSentAgainIsKeptUntilTheStatusDecides() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeUnresolved(NOW, BACKOFF);
        assertThat(payment.chargeRefusedAgain("the provider refused the charge request (400): token spent", NOW,
                BACKOFF)).isEqualTo(2);
        assertThat(payment.status()).isEqualTo(PaymentStatus.CHARGING);
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
        assertThat(payment.refusalAwaitingStatus())
                .contains("the provider refused the charge request (400): token spent");
        assertThat(payment.chargeUnresolved(NOW, BACKOFF)).as("the status query unanswered").isEqualTo(3);
        assertThat(payment.refusalAwaitingStatus()).as("kept").isPresent();

        payment.chargeSucceeded("ch_late", NOW);
        assertThat(payment.refusalAwaitingStatus()).isEmpty();
        assertThat(payment.declineReason()).as("no decline").isNull();
    }

    @Test
    void aHeldChargeOwesTheProviderNoCallAndIsAnnouncedOnce() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeUnresolved(NOW, BACKOFF);

        List<PaymentEvent> events = payment.chargeHeld("the provider may have forgotten the key", NOW, NOW);

        assertThat(events).containsExactly(new PaymentOnHold(payment.id().toString(),
                "the provider may have forgotten the key", 1));
        assertThat(payment.isHeld()).isTrue();
        assertThat(payment.status()).isEqualTo(PaymentStatus.CHARGING);
        assertThat(payment.nextAttemptAt()).isNull();
        assertThat(payment.isDue(NOW.plus(Duration.ofDays(365)))).as("no call, ever, on its own").isFalse();
        assertThat(payment.chargeHeld("again", NOW, NOW)).as("held once").isEmpty();
        assertThat(payment.chargeUnresolved(NOW, BACKOFF)).as("a stale call's outcome").isZero();
        assertThat(payment.isHeld()).isTrue();
    }

    @Test
    void aHeldChargeTheProviderTellsOfAfterAllEndsTheHold() {
        Payment succeeded = heldPayment();
        assertThat(succeeded.chargeSucceeded("ch_found", NOW)).singleElement().isInstanceOf(PaymentSucceeded.class);
        assertThat(succeeded.status()).isEqualTo(PaymentStatus.SUCCEEDED);
        assertThat(succeeded.isHeld()).isFalse();

        Payment declined = heldPayment();
        assertThat(declined.chargeDeclined("card declined", NOW, WATCH)).singleElement().isInstanceOf(PaymentFailed.class);
        assertThat(declined.status()).isEqualTo(PaymentStatus.DECLINED);
    }

    @Test
    void anOperatorsRetryChargesAHeldPaymentAsAtFirstWithItsWindowAfresh() {
        Payment payment = heldPayment();
        UUID retry = UUID.randomUUID();
        Instant later = NOW.plus(Duration.ofHours(13));

        payment.retryHeldCharge(retry, later);

        assertThat(payment.isHeld()).isFalse();
        assertThat(payment.isDue(later)).isTrue();
        assertThat(payment.nextCall()).as("a charge, not a look").isEqualTo(Payment.ProviderCall.CHARGE);
        assertThat(payment.chargingSince()).isEqualTo(later);
        assertThat(payment.causedByEventId()).isEqualTo(retry);
        assertThat(payment.chargeHeld("a status query made before the retry", later, NOW))
                .as("a call from before the retry is not the new charge's").isEmpty();
        assertThat(payment.isHeld()).isFalse();

        Payment notHeld = paymentIn(PaymentStatus.CHARGING);
        Payment.Progress before = notHeld.progress();
        notHeld.retryHeldCharge(UUID.randomUUID(), later);
        assertThat(notHeld.progress()).as("a stale or repeated request changes nothing").isEqualTo(before);
        Payment succeeded = paymentIn(PaymentStatus.SUCCEEDED);
        Payment.Progress settled = succeeded.progress();
        succeeded.retryHeldCharge(UUID.randomUUID(), later);
        assertThat(succeeded.progress()).isEqualTo(settled);
    }

    @Test
    void cancellingAHeldChargeAsksTheProviderOnceMoreAndSendsNoCharge() {
        Payment payment = heldPayment();

        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).as("answered after the look").isEmpty();

        assertThat(payment.isHeld()).isFalse();
        assertThat(payment.isDue(NOW)).isTrue();
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
        assertThat(payment.chargeAbandoned(NOW, WATCH)).singleElement().isInstanceOf(PaymentRefunded.class);
        assertThat(payment.status()).isEqualTo(PaymentStatus.CANCELLED);
        assertThat(payment.nextCall()).as("watched, as any abandoned charge")
                .isEqualTo(Payment.ProviderCall.SETTLEMENT_STATUS);
    }

    @Test
    void aChargeWhoseOrderIsCancellingIsNotHeldButAskedAboutAtOnce() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeUnresolved(NOW, BACKOFF);
        payment.requestCancellation(UUID.randomUUID(), NOW);

        assertThat(payment.chargeHeld("the provider may have forgotten the key", NOW, NOW)).isEmpty();

        assertThat(payment.isHeld()).isFalse();
        assertThat(payment.isDue(NOW)).isTrue();
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
    }

    @Test
    void theRechargeWindowTrustsTheProvidersNoChargeOnlyWhileTheKeyIsYoung() {
        RechargeWindow window = new RechargeWindow(Duration.ofHours(12));
        assertThat(window.allowsChargeAgain(NOW, NOW.plus(Duration.ofHours(12)).minusMillis(1))).isTrue();
        assertThat(window.allowsChargeAgain(NOW, NOW.plus(Duration.ofHours(12)))).isFalse();
        assertThat(window.allowsChargeAgain(null, NOW)).as("unknown start: too old").isFalse();
        assertThat(paymentIn(PaymentStatus.CHARGING).chargingSince()).isEqualTo(NOW);
        assertThat(paymentIn(PaymentStatus.PENDING).chargingSince()).isNull();
    }

    @Test
    void cancelWhileChargingIsAnsweredByARefundOnceTheChargeSucceeds() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).as("answered later").isEmpty();
        assertThat(payment.cancelRequested()).isTrue();

        List<PaymentEvent> events = payment.chargeSucceeded("ch_1", NOW);
        assertThat(events).singleElement().isInstanceOfSatisfying(PaymentSucceeded.class,
                succeeded -> assertThat(succeeded.refundedAtOnce()).as("nothing to ship for it").isTrue());
        assertThat(payment.status()).isEqualTo(PaymentStatus.REFUNDING);
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.REFUND);
        assertThat(payment.isDue(NOW)).isTrue();

        assertThat(payment.refundSucceeded("re_1", NOW)).containsExactly(
                new PaymentRefunded(payment.id().toString(), new BigDecimal("21.00"), "EUR", "re_1"));
        assertThat(payment.refundAnswered()).isTrue();
    }

    @Test
    void cancelWhileChargingIsAnsweredWithNothingToRefundWhenTheChargeIsDeclined() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.requestCancellation(UUID.randomUUID(), NOW);
        List<PaymentEvent> events = payment.chargeDeclined("card declined", NOW, WATCH);
        assertThat(events).extracting(e -> e.getClass().getSimpleName())
                .containsExactly("PaymentFailed", "PaymentRefunded");
        assertThat(((PaymentRefunded) events.get(1)).amount()).isEqualByComparingTo("0");
        assertThat(payment.status()).isEqualTo(PaymentStatus.DECLINED);
    }

    @Test
    void cancelWhileChargingSendsNoChargeButAsksTheProvider() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.requestCancellation(UUID.randomUUID(), NOW);
        assertThat(payment.nextCall()).as("the first call too").isEqualTo(Payment.ProviderCall.CHARGE_STATUS);

        Payment unanswered = paymentIn(PaymentStatus.CHARGING);
        unanswered.chargeUnresolved(NOW, BACKOFF);
        unanswered.requestCancellation(UUID.randomUUID(), NOW);
        assertThat(unanswered.nextCall()).isEqualTo(Payment.ProviderCall.CHARGE_STATUS);
    }

    @Test
    void cancelWhileChargingEndsWithNothingToRefundWhenTheProviderHasNoCharge() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeUnresolved(NOW, BACKOFF);
        payment.requestCancellation(UUID.randomUUID(), NOW);

        List<PaymentEvent> events = payment.chargeAbandoned(NOW, WATCH);

        assertThat(events).singleElement().isInstanceOfSatisfying(PaymentRefunded.class, refunded -> {
            assertThat(refunded.amount()).isEqualByComparingTo("0");
            assertThat(refunded.providerRefundId()).isNull();
        });
        assertThat(payment.status()).isEqualTo(PaymentStatus.CANCELLED);
        assertThat(payment.refundAnswered()).isTrue();
        assertThat(payment.nextCall()).as("no charge: only looks").isEqualTo(Payment.ProviderCall.SETTLEMENT_STATUS);
        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).as("a re-send, answered again")
                .containsExactlyElementsOf(events);
    }

    @Test
    void aChargeAbandonedAfterAnUnansweredCallIsWatchedForALateSettlementAsADeclinedOneIs() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeUnresolved(NOW, BACKOFF);
        payment.requestCancellation(UUID.randomUUID(), NOW);
        payment.chargeAbandoned(NOW, WATCH);

        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.SETTLEMENT_STATUS);
        assertThat(payment.attempts()).as("the watch counts its own looks").isZero();
        assertLookedAtThreeTimesFurtherApart(payment);
        assertThat(payment.status()).isEqualTo(PaymentStatus.CANCELLED);
        Payment.Progress watched = payment.progress();
        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).as("a re-send, answered again").singleElement()
                .isInstanceOfSatisfying(PaymentRefunded.class, r -> assertThat(r.amount()).isEqualByComparingTo("0"));
        assertThat(payment.progress()).as("the watch goes on as it was").isEqualTo(watched);
    }

    @Test
    void aStragglerALookFindsAfterTheChargeWasAbandonedIsRefundedAndEndsTheWatch() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeUnresolved(NOW, BACKOFF);
        payment.requestCancellation(UUID.randomUUID(), NOW);
        payment.chargeAbandoned(NOW, WATCH);
        payment.noteNoLateSettlement(NOW, WATCH);

        assertALookThatFindsTheChargeRefundsItAndEndsTheWatch(payment, "ch_straggler");
    }

    @Test
    void aPaymentCancelledBeforeItChargedIsNotWatched() {
        Payment payment = paymentIn(PaymentStatus.CANCELLED);
        payment.noteStockReserved(UUID.randomUUID(), NOW);
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.NONE);
        assertThat(payment.isDue(NOW.plusSeconds(3600))).isFalse();

        Payment.Progress cancelled = payment.progress();
        payment.noteNoLateSettlement(NOW, WATCH);
        assertThat(payment.progress()).as("no watch to go on with").isEqualTo(cancelled);
    }

    @Test
    void aChargeThatLandsAfterItWasAbandonedIsReportedAndRefunded() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeUnresolved(NOW, BACKOFF);
        payment.requestCancellation(UUID.randomUUID(), NOW);
        payment.chargeAbandoned(NOW, WATCH);

        List<PaymentEvent> events = payment.chargeSucceeded("ch_straggler", NOW);

        assertThat(events).singleElement().isInstanceOf(PaymentSucceeded.class);
        assertThat(payment.status()).isEqualTo(PaymentStatus.REFUNDING);
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.REFUND);
        assertThat(payment.refundSucceeded("re_straggler", NOW)).singleElement()
                .isInstanceOfSatisfying(PaymentRefunded.class, r -> assertThat(r.amount()).isEqualByComparingTo("21.00"));
    }

    @Test
    void aDeclinedPaymentAnswersEveryCancellationWithNothingToRefund() {
        Payment payment = paymentIn(PaymentStatus.DECLINED);
        List<PaymentEvent> first = payment.requestCancellation(UUID.randomUUID(), NOW);
        assertThat(first).containsExactly(nothingToRefund(payment));
        assertThat(payment.refundAnswered()).isTrue();
        Payment.Progress answered = payment.progress();

        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).as("a re-send, answered again")
                .containsExactlyElementsOf(first);
        assertThat(payment.progress()).isEqualTo(answered);

        // cancelled while charging, answered by the decline: a re-send gets the same answer
        Payment cancelledFirst = paymentIn(PaymentStatus.CHARGING);
        cancelledFirst.requestCancellation(UUID.randomUUID(), NOW);
        cancelledFirst.chargeDeclined("card declined", NOW, WATCH);
        assertThat(cancelledFirst.requestCancellation(UUID.randomUUID(), NOW))
                .containsExactly(nothingToRefund(cancelledFirst));
    }

    @Test
    void aRefundedPaymentAnswersACancellationSentAgainWithTheSameRefund() {
        Payment payment = paymentIn(PaymentStatus.SUCCEEDED);
        payment.requestCancellation(UUID.randomUUID(), NOW);
        List<PaymentEvent> first = payment.refundSucceeded("re_1", NOW);
        Payment.Progress refunded = payment.progress();

        List<PaymentEvent> again = payment.requestCancellation(UUID.randomUUID(), NOW);

        assertThat(again).containsExactlyElementsOf(first).containsExactly(
                new PaymentRefunded(payment.id().toString(), new BigDecimal("21.00"), "EUR", "re_1"));
        assertThat(payment.progress()).as("nothing refunded again, nothing owed the provider").isEqualTo(refunded);
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.NONE);
        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).as("and as often as it is sent")
                .containsExactlyElementsOf(first);
    }

    @Test
    void aCancelledPaymentAnswersACancellationSentAgainWithNothingToRefund() {
        Payment payment = pending();
        List<PaymentEvent> first = payment.requestCancellation(UUID.randomUUID(), NOW);
        Payment.Progress cancelled = payment.progress();

        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).containsExactlyElementsOf(first)
                .containsExactly(nothingToRefund(payment));
        // cancelRequested, which a cancellation before charging never set, is recorded on the repeat, as it always was
        assertThat(payment.progress()).usingRecursiveComparison().ignoringFields("cancelRequested").isEqualTo(cancelled);
        assertThat(payment.nextCall()).as("still never charged").isEqualTo(Payment.ProviderCall.NONE);
    }

    @Test
    void aRefundUnderWayAnswersACancellationSentAgainOnlyWhenItIsDone() {
        Payment payment = paymentIn(PaymentStatus.SUCCEEDED);
        payment.requestCancellation(UUID.randomUUID(), NOW);
        Payment.Progress refunding = payment.progress();

        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).isEmpty();

        assertThat(payment.progress()).as("the refund goes on as it was").isEqualTo(refunding);
        assertThat(payment.refundSucceeded("re_1", NOW)).as("answered once, by the refund").singleElement()
                .isInstanceOf(PaymentRefunded.class);
    }

    @Test
    void aChargeStillResolvingAnswersACancellationSentAgainOnlyWhenItResolves() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeUnresolved(NOW, BACKOFF);
        payment.requestCancellation(UUID.randomUUID(), NOW);
        Payment.Progress resolving = payment.progress();

        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).isEmpty();

        assertThat(payment.progress()).isEqualTo(resolving);
        assertThat(payment.chargeAbandoned(NOW, WATCH)).containsExactly(nothingToRefund(payment));
    }

    /**
     * A late settlement of a cancelled order: answered with nothing to refund first, which no longer holds once the
     * money moved. A re-send gets nothing while the refund is under way (refundAnswered is already true then), and the
     * refund once it is done.
     */
    @Test
    void aLateSettlementRefundedAfterTheCancellationIsTheAnswerToACancellationSentAgain() {
        Payment declined = paymentIn(PaymentStatus.DECLINED);
        declined.requestCancellation(UUID.randomUUID(), NOW);
        assertLateSettlementRefundIsTheAnswerAgain(declined);

        Payment abandoned = paymentIn(PaymentStatus.CHARGING);
        abandoned.chargeUnresolved(NOW, BACKOFF);
        abandoned.requestCancellation(UUID.randomUUID(), NOW);
        abandoned.chargeAbandoned(NOW, WATCH);
        assertLateSettlementRefundIsTheAnswerAgain(abandoned);
    }

    private static void assertLateSettlementRefundIsTheAnswerAgain(Payment payment) {
        assertThat(payment.refundAnswered()).as("answered with nothing to refund").isTrue();
        payment.chargeSucceeded("ch_late", NOW);
        assertThat(payment.status()).isEqualTo(PaymentStatus.REFUNDING);

        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).as("the refund under way answers it").isEmpty();

        List<PaymentEvent> refund = payment.refundSucceeded("re_late", NOW);
        assertThat(refund).containsExactly(
                new PaymentRefunded(payment.id().toString(), new BigDecimal("21.00"), "EUR", "re_late"));
        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).as("the refund, not nothing to refund")
                .containsExactlyElementsOf(refund);
    }

    @Test
    void lateSettlementOfADeclinedPaymentIsReportedAndRefunded() {
        Payment payment = paymentIn(PaymentStatus.DECLINED);
        payment.requestCancellation(UUID.randomUUID(), NOW);

        List<PaymentEvent> events = payment.chargeSucceeded("ch_late", NOW);

        assertThat(events).as("refunded at once: nothing to ship for it").containsExactly(
                new PaymentSucceeded(payment.id().toString(), new BigDecimal("21.00"), "EUR", "ch_late", true));
        assertThat(payment.status()).isEqualTo(PaymentStatus.REFUNDING);
        assertThat(payment.providerChargeId()).isEqualTo("ch_late");
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.REFUND);
        assertThat(payment.refundSucceeded("re_late", NOW)).singleElement().isInstanceOfSatisfying(PaymentRefunded.class,
                refunded -> assertThat(refunded.amount()).isEqualByComparingTo("21.00"));
    }

    @Test
    void aDeclinedChargeIsLookedAtForALateSettlementAFewTimesFurtherApart() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeDeclined("card declined", NOW, WATCH);
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.SETTLEMENT_STATUS);
        assertLookedAtThreeTimesFurtherApart(payment);
        assertThat(payment.status()).isEqualTo(PaymentStatus.DECLINED);
        assertThat(WATCH.window()).isEqualTo(Duration.ofSeconds(14));
    }

    @Test
    void aLateSettlementALookFindsIsRefundedAndEndsTheWatch() {
        Payment payment = paymentIn(PaymentStatus.DECLINED);
        payment.requestCancellation(UUID.randomUUID(), NOW);
        payment.noteNoLateSettlement(NOW, WATCH);

        assertALookThatFindsTheChargeRefundsItAndEndsTheWatch(payment, "ch_late");
    }

    @Test
    void aFailedRefundStaysRefundingAndBacksOffExponentiallyUpToTheCap() {
        Payment payment = paymentIn(PaymentStatus.REFUNDING);
        long[] expectedMillis = {200, 400, 800, 1600, 3200, 6400, 10_000, 10_000};
        for (int i = 0; i < expectedMillis.length; i++) {
            assertThat(payment.refundFailed(NOW, BACKOFF, false)).isEqualTo(i + 1);
            assertThat(payment.status()).isEqualTo(PaymentStatus.REFUNDING);
            assertThat(payment.nextAttemptAt()).isEqualTo(NOW.plusMillis(expectedMillis[i]));
            assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.REFUND);
        }
    }

    @Test
    void refundingStartsItsAttemptsAfresh() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeUnresolved(NOW, BACKOFF);
        payment.chargeUnresolved(NOW, BACKOFF);
        payment.chargeSucceeded("ch_1", NOW);
        payment.requestCancellation(UUID.randomUUID(), NOW);
        assertThat(payment.attempts()).isZero();
        assertThat(payment.refundFailed(NOW, BACKOFF, false)).isEqualTo(1);
    }

    @Test
    void nextCallFollowsTheState() {
        Map<PaymentStatus, Payment.ProviderCall> expected = Map.of(
                PaymentStatus.PENDING, Payment.ProviderCall.NONE,
                PaymentStatus.CHARGING, Payment.ProviderCall.CHARGE,
                PaymentStatus.SUCCEEDED, Payment.ProviderCall.NONE,
                PaymentStatus.DECLINED, Payment.ProviderCall.SETTLEMENT_STATUS,
                PaymentStatus.REFUNDING, Payment.ProviderCall.REFUND,
                PaymentStatus.REFUNDED, Payment.ProviderCall.NONE,
                PaymentStatus.CANCELLED, Payment.ProviderCall.NONE);
        expected.forEach((status, call) -> assertThat(paymentIn(status).nextCall()).as(status.name()).isEqualTo(call));
    }

    @Test
    void moneyKeepsItsCentsWhateverScaleTheColumnHas() {
        Payment payment = Payment.forOrder(UUID.randomUUID(), new BigDecimal("21.0000"), "EUR", "tok_ok", "c",
                UUID.randomUUID(), NOW);
        assertThat(payment.amount()).hasToString("21.00");
        Payment odd = Payment.forOrder(UUID.randomUUID(), new BigDecimal("20"), "EUR", "tok_ok", "c", UUID.randomUUID(), NOW);
        assertThat(odd.amount()).hasToString("20.00");
    }

    /** Sent in the currency's minor unit: a provider may refuse 1050.00 JPY or 10.5000 EUR. */
    @Test
    void moneyIsInItsCurrencysMinorUnit() {
        assertThat(Payment.money(new BigDecimal("1050.0000"), "JPY")).hasToString("1050");
        assertThat(Payment.money(new BigDecimal("10.5000"), "EUR")).hasToString("10.50");
        assertThat(Payment.money(new BigDecimal("1.2340"), "BHD")).hasToString("1.234");
        assertThat(Payment.money(new BigDecimal("10.5000"), "ZZZ")).as("a code the JVM does not know")
                .hasToString("10.50");
        assertThat(Payment.money(new BigDecimal("10.0050"), "EUR")).as("finer: kept, never rounded")
                .hasToString("10.005");
    }

    @Test
    void theIdempotencyKeysAreThePaymentId() {
        Payment payment = pending();
        assertThat(payment.idempotencyKey()).isEqualTo(payment.id().toString());
        assertThat(payment.refundIdempotencyKey()).isEqualTo("refund-" + payment.id());
    }

    /**
     * The webhook answers a provider's repeat from an unlocked read when the status says the news is known: that must
     * hold in the status read and in every status a concurrent transaction can move the payment to.
     */
    @ParameterizedTest
    @EnumSource(PaymentStatus.class)
    void newsAStatusSaysIsKnownChangesNothingThereOrInAnyStatusReachableFromIt(PaymentStatus status) {
        for (PaymentStatus reachable : reachableFrom(status)) {
            if (status.hasChargeSucceeded()) {
                Payment payment = paymentIn(reachable);
                Payment.Progress before = payment.progress();
                assertThat(payment.chargeSucceeded("ch_fixture", NOW)).as("charge.succeeded in %s", reachable).isEmpty();
                assertThat(payment.progress()).isEqualTo(before);
            }
            if (status.ignoresChargeDeclined()) {
                Payment payment = paymentIn(reachable);
                Payment.Progress before = payment.progress();
                assertThat(payment.chargeDeclined("card declined", NOW, WATCH)).as("charge.declined in %s", reachable)
                        .isEmpty();
                assertThat(payment.progress()).isEqualTo(before);
            }
        }
        // and news the status does not claim to know does change something there
        if (!status.hasChargeSucceeded() && status != PaymentStatus.PENDING) {
            assertThat(paymentIn(status).chargeSucceeded("ch_fixture", NOW)).isNotEmpty();
        }
        if (!status.ignoresChargeDeclined() && status != PaymentStatus.PENDING) {
            assertThat(paymentIn(status).chargeDeclined("card declined", NOW, WATCH)).isNotEmpty();
        }
        if (status == PaymentStatus.PENDING) {
            // nothing was charged yet: news of a charge is refused, never taken as known
            assertThat(status.hasChargeSucceeded() || status.ignoresChargeDeclined()).isFalse();
            assertThatThrownBy(() -> paymentIn(status).chargeSucceeded("ch_fixture", NOW))
                    .isInstanceOf(IllegalTransitionException.class);
            assertThatThrownBy(() -> paymentIn(status).chargeDeclined("card declined", NOW, WATCH))
                    .isInstanceOf(IllegalTransitionException.class);
        }
    }

    /** The states the transition table lets a payment reach from {@code status}, itself included. */
    private static Set<PaymentStatus> reachableFrom(PaymentStatus status) {
        Set<PaymentStatus> reached = EnumSet.of(status);
        boolean grew = true;
        while (grew) {
            grew = false;
            for (Row row : rows()) {
                if (reached.contains(row.from()) && row.to() != null && reached.add(row.to())) {
                    grew = true;
                }
            }
        }
        return reached;
    }

    private static PaymentRefunded nothingToRefund(Payment payment) {
        return new PaymentRefunded(payment.id().toString(), new BigDecimal("0.00"), "EUR", null);
    }

    private static Payment pending() {
        return Payment.forOrder(UUID.randomUUID(), new BigDecimal("21.00"), "EUR", "tok_ok", "corr-1", UUID.randomUUID(), NOW);
    }

    @Test
    void aRefundIsConfirmedByHandOnlyOnceTheProviderRefusedItAndNoCallIsUnderWay() {
        Payment payment = paymentIn(PaymentStatus.REFUNDING);
        assertThat(payment.whyNotConfirmable("re_by_hand", NOW)).as("not called yet").hasValueSatisfying(why ->
                assertThat(why).contains("no refund call refused by the provider yet"));
        payment.refundFailed(NOW, BACKOFF, false);
        assertThat(payment.whyNotConfirmable("re_by_hand", NOW)).as("unanswered: it may have refunded")
                .hasValueSatisfying(why -> assertThat(why).contains("no refund call refused by the provider yet"));

        Instant due = payment.nextAttemptAt();
        payment.lease(due, due.plusSeconds(30));
        payment.refundFailed(due.plusSeconds(1), BACKOFF, true);
        assertThat(payment.whyNotConfirmable("re_by_hand", due.plusSeconds(1))).as("refused, in its backoff")
                .isEmpty();

        Instant claimed = payment.nextAttemptAt();
        payment.lease(claimed, claimed.plusSeconds(30));
        assertThat(payment.whyNotConfirmable("re_by_hand", claimed.plusSeconds(29))).as("a call under way decides")
                .hasValueSatisfying(why -> assertThat(why).contains("under way until " + claimed.plusSeconds(30)));
        assertThatThrownBy(() -> payment.confirmRefundedByHand("re_by_hand", "ada", "by hand", claimed))
                .isInstanceOf(IllegalTransitionException.class);
        assertThat(payment.status()).isEqualTo(PaymentStatus.REFUNDING);
        assertThat(payment.whyNotConfirmable("re_by_hand", claimed.plusSeconds(30)))
                .as("its lease ran out unanswered (its worker died): it may have refunded")
                .hasValueSatisfying(why -> assertThat(why).contains("no refund call refused by the provider yet"));
        Instant again = claimed.plusSeconds(30);
        payment.lease(again, again.plusSeconds(30));
        payment.refundFailed(again.plusSeconds(1), BACKOFF, true);
        assertThat(payment.whyNotConfirmable("re_by_hand", again.plusSeconds(1))).as("refused again").isEmpty();
    }

    @Test
    void aRefundConfirmedByHandAnswersTheCancellationWithWhoSaidSoAndHoldsForThatRefundOnly() {
        Payment payment = paymentIn(PaymentStatus.REFUNDING);
        payment.refundFailed(NOW, BACKOFF, true);

        List<PaymentEvent> events = payment.confirmRefundedByHand(null, "ada", "returned by the chargeback", NOW);

        assertThat(events).singleElement().isInstanceOfSatisfying(PaymentRefunded.class, refunded -> {
            assertThat(refunded.amount()).isEqualByComparingTo("21.00");
            assertThat(refunded.providerRefundId()).as("made outside the provider").isNull();
            assertThat(refunded.confirmedBy()).isEqualTo("ada");
            assertThat(refunded.confirmation()).isEqualTo("returned by the chargeback");
        });
        assertThat(payment.status()).isEqualTo(PaymentStatus.REFUNDED);
        assertThat(payment.isDue(NOW.plusSeconds(3600))).as("no more refund calls").isFalse();
        assertThat(payment.confirmRefundedByHand(null, "bob", "asked again", NOW)).as("a repeat").isEmpty();
        assertThat(payment.refundConfirmedBy()).isEqualTo("ada");
        assertThat(payment.whyNotConfirmable("re_other", NOW)).hasValueSatisfying(why -> assertThat(why)
                .contains("made outside the provider", "not refund re_other"));
        assertThat(payment.requestCancellation(UUID.randomUUID(), NOW)).as("a re-sent cancellation's answer: no act "
                + "of the operator's").singleElement().isEqualTo(new PaymentRefunded(payment.id().toString(),
                new BigDecimal("21.00"), "EUR", null));
        assertThat(payment.refundSucceeded("re_late", NOW)).as("the provider's late word changes nothing").isEmpty();
        assertThat(payment.providerRefundId()).isNull();
    }

    @Test
    void aConfirmationLongerThanItsColumnIsShortened() {
        Payment payment = paymentIn(PaymentStatus.REFUNDING);
        payment.refundFailed(NOW, BACKOFF, true);
        payment.confirmRefundedByHand("re_by_hand", "ada", "x".repeat(Payment.MAX_CONFIRMATION_LENGTH + 1), NOW);
        assertThat(payment.refundConfirmation()).hasSizeLessThanOrEqualTo(Payment.MAX_CONFIRMATION_LENGTH);
    }

    /** Walks a new payment along the machine's own transitions to the given state. */
    static Payment paymentIn(PaymentStatus target) {
        Payment payment = pending();
        List<Function<Payment, ?>> path = switch (target) {
            case PENDING -> List.of();
            case CHARGING -> List.of(stockReserved());
            case SUCCEEDED -> List.of(stockReserved(), p -> p.chargeSucceeded("ch_fixture", NOW));
            case DECLINED -> List.of(stockReserved(), p -> p.chargeDeclined("card declined", NOW, WATCH));
            case REFUNDING -> List.of(stockReserved(), p -> p.chargeSucceeded("ch_fixture", NOW), cancelled());
            case REFUNDED -> List.of(stockReserved(), p -> p.chargeSucceeded("ch_fixture", NOW), cancelled(),
                    p -> p.refundSucceeded("re_fixture", NOW));
            case CANCELLED -> List.of(cancelled());
        };
        path.forEach(step -> step.apply(payment));
        assertThat(payment.status()).isEqualTo(target);
        return payment;
    }

    private static Function<Payment, ?> stockReserved() {
        return p -> {
            p.noteStockReserved(UUID.randomUUID(), NOW);
            return null;
        };
    }

    private static Function<Payment, ?> cancelled() {
        return p -> p.requestCancellation(UUID.randomUUID(), NOW);
    }

    /** Charging, a call unanswered, and the provider's "no charge" not trusted: held. */
    private static Payment heldPayment() {
        Payment payment = paymentIn(PaymentStatus.CHARGING);
        payment.chargeUnresolved(NOW, BACKOFF);
        payment.chargeHeld("the provider may have forgotten the key", NOW, NOW);
        assertThat(payment.isHeld()).isTrue();
        return payment;
    }

    /** WATCH's schedule: looks 2, 4 and 8 s after the decision, each due only from its time, then none. */
    private static void assertLookedAtThreeTimesFurtherApart(Payment payment) {
        assertThat(payment.nextAttemptAt()).isEqualTo(NOW.plusSeconds(2));
        assertThat(payment.isDue(NOW.plusSeconds(1))).isFalse();
        assertThat(payment.isDue(NOW.plusSeconds(2))).isTrue();

        payment.noteNoLateSettlement(NOW, WATCH);
        assertThat(payment.nextAttemptAt()).isEqualTo(NOW.plusSeconds(4));
        payment.noteNoLateSettlement(NOW, WATCH);
        assertThat(payment.nextAttemptAt()).isEqualTo(NOW.plusSeconds(8));
        payment.noteNoLateSettlement(NOW, WATCH);

        assertThat(payment.nextAttemptAt()).as("three looks, then the watch is over").isNull();
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.NONE);
        assertThat(payment.isDue(NOW.plusSeconds(3600))).isFalse();
    }

    /** A charge a look finds is refunded at once (the late-settlement path), and no look after it changes anything. */
    private static void assertALookThatFindsTheChargeRefundsItAndEndsTheWatch(Payment payment, String chargeId) {
        assertThat(payment.chargeSucceeded(chargeId, NOW)).singleElement().isInstanceOf(PaymentSucceeded.class);
        assertThat(payment.status()).isEqualTo(PaymentStatus.REFUNDING);
        assertThat(payment.nextCall()).isEqualTo(Payment.ProviderCall.REFUND);
        assertThat(payment.attempts()).as("the refund's attempts start afresh").isZero();
        Payment.Progress refunding = payment.progress();
        payment.noteNoLateSettlement(NOW, WATCH);
        assertThat(payment.progress()).as("a look that comes after changes nothing").isEqualTo(refunding);
    }
}
