package dev.ordersaga.payment.domain;

import dev.ordersaga.events.Ids;
import dev.ordersaga.events.PaymentEvent;
import dev.ordersaga.events.PaymentFailed;
import dev.ordersaga.events.PaymentOnHold;
import dev.ordersaga.events.Reasons;
import dev.ordersaga.events.PaymentRefunded;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.retry.Backoff;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Currency;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * The payment of one order and its state machine. Every transition is a method named after the fact it records;
 * it checks the current state with a switch and returns the events to publish, which the caller hands to the
 * outbox in the same transaction. No other class sets the status.
 *
 * <pre>
 * PENDING -> CHARGING -> SUCCEEDED | DECLINED
 * SUCCEEDED -> REFUNDING -> REFUNDED
 * PENDING -> CANCELLED
 * CHARGING -> CANCELLED               (cancelled while charging, and the provider has no charge: none is sent;
 *                                     watched for a late settlement, as DECLINED is)
 * DECLINED | CANCELLED -> REFUNDING   (a late settlement: the provider charged after all, refunded at once)
 * CHARGING, held                      (the provider has no charge under a key it may have forgotten: no call until
 *                                     the provider tells of the charge or the order is cancelled; PaymentOnHold)
 * REFUNDING -> REFUNDED, by hand      (the provider kept refusing the refund, and an operator who settled it outside
 *                                     the provider's API says so: confirmRefundedByHand)
 * </pre>
 *
 * <p>The charge needs two facts, OrderCreated (amount, token) and StockReserved, which come on different topics in
 * any order. A payment created by StockReserved is PENDING without an amount until OrderCreated fills it in.
 *
 * <p>While CHARGING or REFUNDING a call to the provider is owed; {@code nextAttemptAt} says when (persisted, so
 * that a restart neither loses nor resets the schedule) and {@link #nextCall()} says which. A charge whose answer
 * was recorded as missing is resolved by asking the provider for its status, never by a blind new charge; the payment
 * id is the charge's idempotency key. A first call whose worker died before recording anything is resolved the same
 * way: the first charge is always claimed by the transaction that made it due, so a later claim of it, once the lease
 * ran out, asks the provider ({@link #nextCallAfterAnotherClaim}), and a charge follows under the same key only if the
 * provider has none and the key is young enough to take that at its word ({@link RechargeWindow}).
 *
 * <p>A DECLINED payment is watched for a late settlement for a while ({@link SettlementWatch}): the provider is asked
 * for the charge's status a few times, so that a late settlement whose webhook was lost is refunded all the same. So is
 * a payment CANCELLED because the provider had no charge while the order was cancelling ({@link #chargeAbandoned}): a
 * call that got no answer may still reach the provider after it said so. A payment cancelled before it was charging
 * sent no call, and is not watched.
 */
@Entity
@Table(name = "payment")
public class Payment {

    /** The width of {@code decline_reason}: a provider's words are kept, shortened, never refused. */
    static final int MAX_DECLINE_REASON_LENGTH = 255;

    /** The width of {@code refund_confirmation}, an operator's word on a refund they settled by hand. */
    public static final int MAX_CONFIRMATION_LENGTH = 512;

    /** What the worker owes the provider for this payment now. */
    public enum ProviderCall {
        /** first attempt: POST the charge */
        CHARGE,
        /**
         * an earlier charge got no answer, its worker's claim ran out before it told (a crash), or the order is
         * cancelling: ask for its status (and, unless the order is cancelling, charge again with the same key if unknown)
         */
        CHARGE_STATUS,
        /** POST the refund (same idempotency key on every attempt) */
        REFUND,
        /**
         * the charge was declined, or abandoned for a cancelled order: ask for its status, in case the provider settled
         * it late after all
         */
        SETTLEMENT_STATUS,
        NONE
    }

    @Id
    private UUID id;

    @Column(name = "order_id", nullable = false, unique = true)
    private UUID orderId;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    private PaymentStatus status;

    /** null until OrderCreated is known */
    @Column(precision = 19, scale = 4)
    private BigDecimal amount;

    @Column(length = 3)
    private String currency;

    /** the provider's opaque token from OrderCreated, never card data */
    @Column(name = "payment_token")
    private String paymentToken;

    @Column(name = "stock_reserved", nullable = false)
    private boolean stockReserved;

    /**
     * OrderCancelling arrived while charging: no charge is sent from then on, and the cancellation is answered once the
     * provider said what became of the calls made before (refunded first if one succeeded)
     */
    @Column(name = "cancel_requested", nullable = false)
    private boolean cancelRequested;

    /** a PaymentRefunded has been emitted: the order's cancellation is answered */
    @Column(name = "refund_answered", nullable = false)
    private boolean refundAnswered;

    @Column(name = "provider_charge_id")
    private String providerChargeId;

    @Column(name = "provider_refund_id")
    private String providerRefundId;

    @Column(name = "decline_reason")
    private String declineReason;

    /**
     * provider calls of the current phase that got no usable answer (charging, refunding), or the looks made for a
     * late settlement (declined, or cancelled after the provider had no charge)
     */
    @Column(nullable = false)
    private int attempts;

    /**
     * when the worker owes the provider a call (or a declined or abandoned charge's next look); null when it owes
     * nothing
     */
    @Column(name = "next_attempt_at")
    private Instant nextAttemptAt;

    /**
     * the end of the last claim's lease: while {@code nextAttemptAt} is still that instant, no outcome was recorded
     * since the claim, and its call may be under way until then
     */
    @Column(name = "claimed_until")
    private Instant claimedUntil;

    /**
     * the provider's last answer to the refund was a refusal: no refund was made under its key (one would have been
     * answered), so an operator may return the money another way; false while none came, or none usable
     */
    @Column(name = "refund_refused", nullable = false)
    private boolean refundRefused;

    /** the operator who confirmed the refund by hand, and their word: null when the provider's API refunded it */
    @Column(name = "refund_confirmed_by")
    private String refundConfirmedBy;

    @Column(name = "refund_confirmation")
    private String refundConfirmation;

    /**
     * when the payment began charging: the first charge call went out after this. A provider's "no charge under this
     * key" is trusted only while the key is younger than the {@link RechargeWindow}.
     */
    @Column(name = "charging_since")
    private Instant chargingSince;

    @Column(name = "correlation_id", nullable = false)
    private String correlationId;

    /** the event that started the current step: the causation id of what the worker publishes */
    @Column(name = "caused_by_event_id", nullable = false)
    private UUID causedByEventId;

    @Column(name = "created_at", nullable = false)
    private Instant createdAt;

    @Column(name = "updated_at", nullable = false)
    private Instant updatedAt;

    @Version
    private long version;

    protected Payment() {
    }

    /** OrderCreated came first: PENDING, waiting for StockReserved. */
    public static Payment forOrder(UUID orderId, BigDecimal amount, String currency, String paymentToken,
                                   String correlationId, UUID eventId, Instant now) {
        Payment payment = new Payment(orderId, correlationId, eventId, now);
        payment.fillOrder(amount, currency, paymentToken);
        return payment;
    }

    /**
     * Another fact came before OrderCreated (StockReserved, or — tolerated, though OrderCreated precedes it on its
     * partition — OrderCancelling): PENDING without an amount. The caller then records that fact on it; nothing is
     * charged before OrderCreated fills in the amount.
     */
    public static Payment beforeOrderCreated(UUID orderId, String correlationId, UUID eventId, Instant now) {
        return new Payment(orderId, correlationId, eventId, now);
    }

    /**
     * A payment as its row stores it, read without Hibernate for an event to change (the repository's locked read sent
     * with the event's inbox claim): it is never managed, so Hibernate neither checks it for changes nor writes it,
     * and its change is written by the repository with the version it was read at.
     */
    public static Payment stored(UUID id, UUID orderId, String correlationId, Instant createdAt, Progress progress) {
        Payment payment = new Payment();
        payment.id = id;
        payment.orderId = orderId;
        payment.status = progress.status();
        payment.amount = progress.amount();
        payment.currency = progress.currency();
        payment.paymentToken = progress.paymentToken();
        payment.stockReserved = progress.stockReserved();
        payment.cancelRequested = progress.cancelRequested();
        payment.refundAnswered = progress.refundAnswered();
        payment.providerChargeId = progress.providerChargeId();
        payment.providerRefundId = progress.providerRefundId();
        payment.declineReason = progress.declineReason();
        payment.attempts = progress.attempts();
        payment.nextAttemptAt = progress.nextAttemptAt();
        payment.claimedUntil = progress.claimedUntil();
        payment.refundRefused = progress.refundRefused();
        payment.refundConfirmedBy = progress.refundConfirmedBy();
        payment.refundConfirmation = progress.refundConfirmation();
        payment.chargingSince = progress.chargingSince();
        payment.correlationId = correlationId;
        payment.causedByEventId = progress.causedByEventId();
        payment.createdAt = createdAt;
        payment.updatedAt = progress.updatedAt();
        payment.version = progress.version();
        return payment;
    }

    private Payment(UUID orderId, String correlationId, UUID eventId, Instant now) {
        this.id = Ids.timeOrdered();
        this.orderId = Objects.requireNonNull(orderId, "orderId");
        this.correlationId = Objects.requireNonNull(correlationId, "correlationId");
        this.causedByEventId = Objects.requireNonNull(eventId, "eventId");
        this.status = PaymentStatus.PENDING;
        this.createdAt = now;
        this.updatedAt = now;
    }

    /**
     * OrderCreated for a payment that StockReserved created: fills in what to charge and, the stock being
     * reserved, starts charging. A repeat of the fact (the order is known already) changes nothing.
     */
    public void noteOrderCreated(BigDecimal amount, String currency, String paymentToken, UUID eventId, Instant now) {
        if (orderKnown()) {
            return;
        }
        fillOrder(amount, currency, paymentToken);
        updatedAt = now;
        if (status == PaymentStatus.PENDING && stockReserved) {
            startCharging(eventId, now);
        }
    }

    /**
     * StockReserved: PENDING -> CHARGING once the order is known. A payment that was CANCELLED first never charges;
     * in any later state it is a repeat of the fact. Never refused: the stock is reserved, whatever we did.
     */
    public void noteStockReserved(UUID eventId, Instant now) {
        switch (status) {
            case PENDING -> {
                stockReserved = true;
                updatedAt = now;
                if (orderKnown()) {
                    startCharging(eventId, now);
                }
            }
            case CANCELLED -> {
                stockReserved = true;
                updatedAt = now;
            }
            case CHARGING, SUCCEEDED, DECLINED, REFUNDING, REFUNDED -> {
                // the stock was reserved before: a repeat of the fact
            }
        }
    }

    /**
     * OrderCancelling. Answers with PaymentRefunded: at once when nothing was charged (amount 0), after the refund when
     * something was, after the charge resolved when it is in flight.
     *
     * <p>An OrderCancelling after the cancellation was answered is an operator's re-send for an order stuck
     * compensating (its answer was lost on the way): a new event, answered again with the answer given, so that the
     * order hears it; nothing is undone twice. While the refund or the charge's status look is under way, that answers
     * it when done.
     */
    public List<PaymentEvent> requestCancellation(UUID eventId, Instant now) {
        List<PaymentEvent> events = new ArrayList<>();
        switch (status) {
            case PENDING -> {
                moveTo(PaymentStatus.CANCELLED, now);
                events.add(answerNothingToRefund());
            }
            case CHARGING -> {
                // a call may be under way, or have reached the provider unanswered: answered once the provider says
                // what became of it (refunded first if it succeeded); no charge is sent from now on (nextCall)
                cancelRequested = true;
                updatedAt = now;
                if (isHeld()) {
                    // nothing is scheduled for a held charge: a status look answers the cancellation
                    nextAttemptAt = now;
                }
            }
            case SUCCEEDED -> {
                cancelRequested = true;
                startRefunding(eventId, now);
            }
            case DECLINED -> {
                // nothing was charged, whether the cancellation is answered already or not: a late settlement would
                // have moved the payment on to REFUNDING
                cancelRequested = true;
                updatedAt = now;
                events.add(answerNothingToRefund());
            }
            case REFUNDING -> {
                // the refund under way answers it; after a late settlement the cancellation was answered with nothing
                // to refund, which no longer holds
                cancelRequested = true;
            }
            case REFUNDED -> {
                // the refund is the answer, also after a late settlement of a cancelled order: answered with nothing to
                // refund first, then with the refund
                cancelRequested = true;
                events.add(answerRefunded());
            }
            case CANCELLED -> {
                cancelRequested = true;
                events.add(answerNothingToRefund());
            }
        }
        return events;
    }

    /**
     * The provider says the charge succeeded (charge answer, status query or webhook): CHARGING -> SUCCEEDED, and on
     * to REFUNDING if the order is being cancelled. For a payment we took as DECLINED or CANCELLED this is a late
     * settlement: the money moved, so it is reported and refunded at once. A repeat changes nothing.
     */
    public List<PaymentEvent> chargeSucceeded(String chargeId, Instant now) {
        Objects.requireNonNull(chargeId, "chargeId");
        List<PaymentEvent> events = new ArrayList<>();
        switch (status) {
            case CHARGING -> {
                providerChargeId = chargeId;
                // a refusal kept while the provider's status was awaited (chargeRefusedAgain) was that request's only
                declineReason = null;
                moveTo(PaymentStatus.SUCCEEDED, now);
                events.add(new PaymentSucceeded(id.toString(), amount(), currency, chargeId, cancelRequested));
                if (cancelRequested) {
                    startRefunding(causedByEventId, now);
                }
            }
            case DECLINED, CANCELLED -> {
                providerChargeId = chargeId;
                // said in the event: shipping, which may hear it before the order's cancellation, ships nothing for it
                events.add(new PaymentSucceeded(id.toString(), amount(), currency, chargeId, true));
                startRefunding(causedByEventId, now);
            }
            case SUCCEEDED, REFUNDING, REFUNDED -> {
                // known already: the webhook and the status query may both report it
            }
            case PENDING -> throw new IllegalTransitionException(status, "chargeSucceeded");
        }
        return events;
    }

    /**
     * The provider declined the charge: CHARGING -> DECLINED with PaymentFailed, and the cancellation answered at once
     * if it was requested meanwhile; the watch for a late settlement begins. A decline after a success is stale (a
     * settled charge stays settled).
     */
    public List<PaymentEvent> chargeDeclined(String reason, Instant now, SettlementWatch watch) {
        List<PaymentEvent> events = new ArrayList<>();
        switch (status) {
            case CHARGING -> {
                declineReason = Reasons.fit(reason, MAX_DECLINE_REASON_LENGTH);
                moveTo(PaymentStatus.DECLINED, now);
                attempts = 0;
                nextAttemptAt = watch.nextLook(now, 0);
                events.add(new PaymentFailed(id.toString(), declineReason));
                if (cancelRequested) {
                    events.add(answerNothingToRefund());
                }
            }
            case SUCCEEDED, DECLINED, REFUNDING, REFUNDED, CANCELLED -> {
                // a repeat, or stale news of a charge that settled since
            }
            case PENDING -> throw new IllegalTransitionException(status, "chargeDeclined");
        }
        return events;
    }

    /**
     * A look for a late settlement found the charge not settled (declined, unknown, or no answer): the next look is
     * scheduled further off, or the watch ends. Settled meanwhile (REFUNDING, REFUNDED: the webhook came first),
     * there is nothing left to watch.
     */
    public void noteNoLateSettlement(Instant now, SettlementWatch watch) {
        switch (status) {
            case DECLINED, CANCELLED -> {
                if (nextAttemptAt == null) {
                    return;
                }
                attempts++;
                nextAttemptAt = watch.nextLook(now, attempts);
                updatedAt = now;
            }
            case REFUNDING, REFUNDED -> {
                // the late settlement was learned meanwhile, from the webhook
            }
            case PENDING, CHARGING, SUCCEEDED -> throw new IllegalTransitionException(status, "noteNoLateSettlement");
        }
    }

    /**
     * The order is cancelling and the provider has no charge under the payment's key: CHARGING -> CANCELLED, answered
     * with nothing to refund, and no charge is sent. A call that got no answer may still reach the provider after it
     * said so; such a charge is a late settlement ({@link #chargeSucceeded} on CANCELLED: reported and refunded), and
     * since its webhook can be lost, the payment is watched as a declined one is. A payment resolved meanwhile (the
     * webhook) keeps its state; one whose order is not cancelling must be charged.
     */
    public List<PaymentEvent> chargeAbandoned(Instant now, SettlementWatch watch) {
        List<PaymentEvent> events = new ArrayList<>();
        switch (status) {
            case CHARGING -> {
                if (!cancelRequested) {
                    throw new IllegalTransitionException(status, "chargeAbandoned");
                }
                moveTo(PaymentStatus.CANCELLED, now);
                declineReason = null;
                attempts = 0;
                nextAttemptAt = watch.nextLook(now, 0);
                events.add(answerNothingToRefund());
            }
            case SUCCEEDED, DECLINED, REFUNDING, REFUNDED, CANCELLED -> {
                // the provider's news came first (a webhook): the charge is settled, the cancellation answered by it
            }
            case PENDING -> throw new IllegalTransitionException(status, "chargeAbandoned");
        }
        return events;
    }

    /**
     * The charge call got no usable answer (timeout, 5xx, connection error). That is never a decline: the payment
     * stays CHARGING and the provider is asked for the charge's status after a backoff.
     *
     * @return the number of the attempt that failed; 0 if the charge was resolved meanwhile
     */
    public int chargeUnresolved(Instant now, Backoff backoff) {
        switch (status) {
            case CHARGING -> {
                if (isHeld()) {
                    // a stale call's outcome (its lease ran out while it waited): the hold stands
                    return 0;
                }
                return retryLater(now, backoff);
            }
            case SUCCEEDED, DECLINED, REFUNDING, REFUNDED, CANCELLED -> {
                return 0;
            }
            default -> throw new IllegalTransitionException(status, "chargeUnresolved");
        }
    }

    /**
     * A charge sent again (an earlier call went unanswered, and the provider had no charge under the key) was refused
     * as a request. It may be this request's refusal only: the earlier call, landing late, may have spent a single-use
     * token. So it is no decline yet: the refusal is kept ({@link #refusalAwaitingStatus}) and the provider asked for
     * the charge's status after a backoff, as for any call unanswered; if it has no charge then either, the refusal
     * stands (the worker declines), where sending again would be refused again until the recharge window ran out.
     *
     * @return the number of the attempt that failed; 0 if the charge was resolved meanwhile
     */
    public int chargeRefusedAgain(String reason, Instant now, Backoff backoff) {
        switch (status) {
            case CHARGING -> {
                if (isHeld()) {
                    return 0;
                }
                declineReason = Reasons.fit(reason, MAX_DECLINE_REASON_LENGTH);
                return retryLater(now, backoff);
            }
            case SUCCEEDED, DECLINED, REFUNDING, REFUNDED, CANCELLED -> {
                return 0;
            }
            default -> throw new IllegalTransitionException(status, "chargeRefusedAgain");
        }
    }

    /** The provider's refusal of a charge sent again, kept until its status says whether a charge is there. */
    public Optional<String> refusalAwaitingStatus() {
        return status == PaymentStatus.CHARGING ? Optional.ofNullable(declineReason) : Optional.empty();
    }

    /**
     * The provider has no charge under the payment's key, and the key is too old to take that at its word
     * ({@link RechargeWindow}): the payment stays CHARGING with no call scheduled, and PaymentOnHold puts the order in
     * front of an operator. It leaves the hold when the provider tells of the charge after all (its webhook, or the
     * settlement report: {@link #chargeSucceeded}, {@link #chargeDeclined}) or when the order is cancelled
     * ({@link #requestCancellation}: a status look, then {@link #chargeAbandoned}). Cancelling meanwhile, it is not held:
     * the provider is asked again at once, and the cancellation answered from that.
     *
     * @param chargingSinceOfTheCall the start of charging the call that found no charge was made for: another one
     *                               means an operator sent the payment back meanwhile ({@link #retryHeldCharge}), and
     *                               the stale call's answer is not the new charge's
     */
    public List<PaymentEvent> chargeHeld(String reason, Instant now, Instant chargingSinceOfTheCall) {
        List<PaymentEvent> events = new ArrayList<>();
        switch (status) {
            case CHARGING -> {
                if (!Objects.equals(chargingSince, chargingSinceOfTheCall)) {
                    return events;
                }
                if (cancelRequested) {
                    nextAttemptAt = now;
                } else if (!isHeld()) {
                    nextAttemptAt = null;
                    events.add(new PaymentOnHold(id.toString(), Reasons.fit(reason, MAX_DECLINE_REASON_LENGTH), attempts));
                }
                updatedAt = now;
            }
            case SUCCEEDED, DECLINED, REFUNDING, REFUNDED, CANCELLED -> {
                // the provider's news came first (a webhook): the charge is settled
            }
            case PENDING -> throw new IllegalTransitionException(status, "chargeHeld");
        }
        return events;
    }

    /**
     * PaymentRetryRequested: an operator found no charge at the provider for a held payment and sends it back. It is
     * charged as at first, under the same key (which the provider no longer knows), its recharge window starting
     * afresh. A payment not held (the provider's news resolved it meanwhile, or the order is cancelling) is left as it
     * is: a repeat or a stale request.
     */
    public void retryHeldCharge(UUID eventId, Instant now) {
        if (!isHeld() || cancelRequested) {
            return;
        }
        causedByEventId = eventId;
        attempts = 0;
        chargingSince = now;
        declineReason = null;
        nextAttemptAt = now;
        updatedAt = now;
    }

    /** Charging, and no call is owed until an operator or the provider's own news moves it ({@link #chargeHeld}). */
    public boolean isHeld() {
        return status == PaymentStatus.CHARGING && nextAttemptAt == null;
    }

    /** The provider refunded the charge: REFUNDING -> REFUNDED with PaymentRefunded. A repeat changes nothing. */
    public List<PaymentEvent> refundSucceeded(String refundId, Instant now) {
        Objects.requireNonNull(refundId, "refundId");
        List<PaymentEvent> events = new ArrayList<>();
        switch (status) {
            case REFUNDING -> {
                providerRefundId = refundId;
                moveTo(PaymentStatus.REFUNDED, now);
                events.add(answerRefunded());
            }
            case REFUNDED -> {
                // a repeat
            }
            default -> throw new IllegalTransitionException(status, "refundSucceeded");
        }
        return events;
    }

    /**
     * The refund failed: a failed compensation. It stays REFUNDING and is tried again after a backoff, forever.
     *
     * @param refused the provider refused it (no refund was made under its key), rather than leave it unanswered
     * @return the number of the attempt that failed; 0 if the refund succeeded meanwhile
     */
    public int refundFailed(Instant now, Backoff backoff, boolean refused) {
        switch (status) {
            case REFUNDING -> {
                refundRefused = refused;
                return retryLater(now, backoff);
            }
            case REFUNDED -> {
                return 0;
            }
            default -> throw new IllegalTransitionException(status, "refundFailed");
        }
    }

    /**
     * An operator settled the refund outside the provider's API (its dashboard, a chargeback that returned the money, a
     * transfer) where the API kept refusing it: REFUNDING -> REFUNDED with the answer the cancellation owed, which
     * names who said so. Only as {@link #whyNotConfirmable} allows: a call under way decides by the provider's word,
     * and the operator's word holds for the refund they named. Asked again once it holds, it changes nothing.
     *
     * @param refundId     the provider's id of the refund the operator made; null where none was made at the provider
     * @param operator     who confirmed it
     * @param confirmation what they gave as the reason the money is back with the customer
     * @return the answer, or nothing for a repeat
     */
    public List<PaymentEvent> confirmRefundedByHand(String refundId, String operator, String confirmation,
                                                    Instant now) {
        if (whyNotConfirmable(refundId, now).isPresent()) {
            throw new IllegalTransitionException(status, "confirmRefundedByHand");
        }
        if (status == PaymentStatus.REFUNDED) {
            return List.of();
        }
        providerRefundId = refundId;
        refundConfirmedBy = Objects.requireNonNull(operator, "operator");
        refundConfirmation = Reasons.fit(Objects.requireNonNull(confirmation, "confirmation"), MAX_CONFIRMATION_LENGTH);
        moveTo(PaymentStatus.REFUNDED, now);
        refundAnswered = true;
        return List.of(new PaymentRefunded(id.toString(), amount(), currency, providerRefundId, refundConfirmedBy,
                refundConfirmation));
    }

    /**
     * Why an operator's word cannot end this payment's refund now, if it cannot.
     *
     * @param refundId the refund the operator names (null: none made at the provider)
     */
    public Optional<String> whyNotConfirmable(String refundId, Instant now) {
        if (status == PaymentStatus.REFUNDED) {
            if (refundConfirmedBy == null) {
                return Optional.of("was refunded by the provider (" + providerRefundId + ")");
            }
            return Objects.equals(refundId, providerRefundId) ? Optional.empty()
                    : Optional.of("was confirmed refunded by hand as " + describe(providerRefundId) + ", not "
                    + describe(refundId));
        }
        if (status != PaymentStatus.REFUNDING) {
            return Optional.of("is " + status + ": only a refund the provider keeps refusing (REFUNDING) is confirmed "
                    + "by hand");
        }
        if (isInFlight(now)) {
            return Optional.of("has a call to the provider under way until " + claimedUntil + ", whose answer decides");
        }
        if (!refundRefused) {
            return Optional.of("has had no refund call refused by the provider yet (none answered, or none made: a "
                    + "refund may have been made): the provider is asked first");
        }
        return Optional.empty();
    }

    private static String describe(String refundId) {
        return refundId == null ? "made outside the provider" : "refund " + refundId;
    }

    /** A claim's call may still be under way: its lease runs, and no outcome was recorded since it was taken. */
    private boolean isInFlight(Instant now) {
        return claimedUntil != null && claimedUntil.equals(nextAttemptAt) && claimedUntil.isAfter(now);
    }

    /** Which provider call the worker owes now. */
    public ProviderCall nextCall() {
        return switch (status) {
            // once the order is cancelling no charge is sent: the provider is asked whether an earlier call charged
            case CHARGING -> attempts == 0 && !cancelRequested ? ProviderCall.CHARGE : ProviderCall.CHARGE_STATUS;
            case REFUNDING -> ProviderCall.REFUND;
            // only a watched payment has a next look: none for one cancelled before it charged, or whose watch is over
            case DECLINED, CANCELLED -> nextAttemptAt == null ? ProviderCall.NONE : ProviderCall.SETTLEMENT_STATUS;
            case PENDING, SUCCEEDED, REFUNDED -> ProviderCall.NONE;
        };
    }

    /**
     * The call owed by a claim that is not the one the payment was made due with. A first charge is claimed by the
     * transaction that makes it due ({@link #lease}, always: it is due at once), so a later claim of it means that the
     * first claim's lease ran out with nothing recorded: its worker may have died in the call, or after the commit before
     * it. The provider is asked before anything is charged, as after a timeout, not sent the charge again on the chance
     * that the key keeps it from counting twice.
     */
    public ProviderCall nextCallAfterAnotherClaim() {
        ProviderCall call = nextCall();
        return call == ProviderCall.CHARGE ? ProviderCall.CHARGE_STATUS : call;
    }

    /** A provider call is owed and its time has come. */
    public boolean isDue(Instant now) {
        return nextCall() != ProviderCall.NONE && nextAttemptAt != null && !nextAttemptAt.isAfter(now);
    }

    /**
     * Whether the claim whose lease ends at {@code claimedUntil} still holds the row: a claim is its lease's end in
     * {@code next_attempt_at}, and a later claim (after it ran out) or any recorded outcome moves that on.
     */
    public boolean isClaimedUntil(Instant claimedUntil) {
        return nextAttemptAt != null && nextAttemptAt.equals(claimedUntil);
    }

    /**
     * A worker takes the due call: no other worker takes it before {@code until}, unless its outcome is recorded
     * first (which reschedules it or ends the need for a call).
     */
    public void lease(Instant now, Instant until) {
        if (!isDue(now)) {
            throw new IllegalTransitionException(status, "lease");
        }
        nextAttemptAt = until;
        claimedUntil = until;
        // the call now made may refund, whatever the last one was answered
        refundRefused = false;
    }

    private void startCharging(UUID eventId, Instant now) {
        causedByEventId = eventId;
        attempts = 0;
        nextAttemptAt = now;
        chargingSince = now;
        moveTo(PaymentStatus.CHARGING, now);
    }

    private void startRefunding(UUID eventId, Instant now) {
        causedByEventId = eventId;
        attempts = 0;
        refundRefused = false;
        nextAttemptAt = now;
        moveTo(PaymentStatus.REFUNDING, now);
    }

    private int retryLater(Instant now, Backoff backoff) {
        attempts++;
        nextAttemptAt = now.plus(backoff.delayAfter(attempts));
        updatedAt = now;
        return attempts;
    }

    /**
     * The refund made, from what the payment recorded of it: the same answer however often it is given. Who confirmed a
     * refund by hand is told once, by the confirm's own answer: a repeat is no act of theirs.
     */
    private PaymentRefunded answerRefunded() {
        refundAnswered = true;
        return new PaymentRefunded(id.toString(), amount(), currency, providerRefundId);
    }

    private PaymentRefunded answerNothingToRefund() {
        refundAnswered = true;
        return new PaymentRefunded(id.toString(), BigDecimal.ZERO.setScale(2), currency, null);
    }

    private void fillOrder(BigDecimal amount, String currency, String paymentToken) {
        this.amount = Objects.requireNonNull(amount, "amount");
        this.currency = Objects.requireNonNull(currency, "currency");
        // a payment cancelled before its order was heard of never charges: its token is not kept
        this.paymentToken = status.mayCharge() ? paymentToken : null;
    }

    private void moveTo(PaymentStatus next, Instant now) {
        status = next;
        if (!next.awaitsProvider()) {
            nextAttemptAt = null;
        }
        if (!next.mayCharge()) {
            // the token lets whoever holds it charge the customer: kept only while a charge may still be sent
            paymentToken = null;
        }
        updatedAt = now;
    }

    /**
     * An amount as the provider is sent it: in the currency's minor unit (two decimals for EUR, none for JPY; two for a
     * code this JVM does not know), the column's four decimals stripped. An amount finer than that (order-service
     * refuses such prices) keeps its decimals rather than be rounded.
     */
    public static BigDecimal money(BigDecimal value, String currency) {
        if (value == null) {
            return null;
        }
        int digits = 2;
        try {
            digits = currency == null ? 2 : Math.max(0, Currency.getInstance(currency).getDefaultFractionDigits());
        } catch (IllegalArgumentException unknown) {
            // kept at two
        }
        BigDecimal stripped = value.stripTrailingZeros();
        return stripped.scale() <= digits ? stripped.setScale(digits) : stripped;
    }

    public UUID id() {
        return id;
    }

    /** The charge's idempotency key at the provider. */
    public String idempotencyKey() {
        return id.toString();
    }

    /** The refund's idempotency key at the provider: the same on every attempt. */
    public String refundIdempotencyKey() {
        return "refund-" + id;
    }

    public UUID orderId() {
        return orderId;
    }

    public PaymentStatus status() {
        return status;
    }

    public boolean orderKnown() {
        return amount != null;
    }

    public BigDecimal amount() {
        return money(amount, currency);
    }

    public String currency() {
        return currency;
    }

    public String paymentToken() {
        return paymentToken;
    }

    public boolean stockReserved() {
        return stockReserved;
    }

    public boolean cancelRequested() {
        return cancelRequested;
    }

    public boolean refundAnswered() {
        return refundAnswered;
    }

    public String providerChargeId() {
        return providerChargeId;
    }

    public String providerRefundId() {
        return providerRefundId;
    }

    public String declineReason() {
        return declineReason;
    }

    public int attempts() {
        return attempts;
    }

    public Instant nextAttemptAt() {
        return nextAttemptAt;
    }

    public boolean refundRefused() {
        return refundRefused;
    }

    /** The operator who confirmed the refund by hand; null when the provider's API made it. */
    public String refundConfirmedBy() {
        return refundConfirmedBy;
    }

    public String refundConfirmation() {
        return refundConfirmation;
    }

    public Instant chargingSince() {
        return chargingSince;
    }

    public String correlationId() {
        return correlationId;
    }

    public UUID causedByEventId() {
        return causedByEventId;
    }

    public Instant createdAt() {
        return createdAt;
    }

    public Instant updatedAt() {
        return updatedAt;
    }

    /**
     * What a transition may change, and the version the row was read at: compared before and after a handler ran,
     * it tells whether there is anything to write (the repository writes it with plain SQL, in the round trip of the
     * event the transition caused).
     */
    public record Progress(PaymentStatus status, BigDecimal amount, String currency, String paymentToken,
                           boolean stockReserved, boolean cancelRequested, boolean refundAnswered,
                           String providerChargeId, String providerRefundId, String declineReason, int attempts,
                           Instant nextAttemptAt, Instant claimedUntil, boolean refundRefused, String refundConfirmedBy,
                           String refundConfirmation, Instant chargingSince, UUID causedByEventId, Instant updatedAt,
                           long version) {
    }

    public Progress progress() {
        return new Progress(status, amount, currency, paymentToken, stockReserved, cancelRequested, refundAnswered,
                providerChargeId, providerRefundId, declineReason, attempts, nextAttemptAt, claimedUntil, refundRefused,
                refundConfirmedBy, refundConfirmation, chargingSince, causedByEventId, updatedAt, version);
    }
}
