package dev.ordersaga.shipping.domain;

import dev.ordersaga.events.Ids;
import dev.ordersaga.events.Reasons;
import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.ShipmentCreated;
import dev.ordersaga.events.ShipmentFailed;
import dev.ordersaga.events.ShipmentOnHold;
import dev.ordersaga.events.ShippingEvent;
import jakarta.persistence.Column;
import jakarta.persistence.Embedded;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * The shipment of one order and its state machine. Every transition is a method named after the fact it records;
 * it checks the current state and returns the events to publish, which the caller hands to the outbox in the same
 * transaction. No other class sets the status.
 *
 * <pre>
 * PENDING -> REQUESTED -> CREATED | REJECTED | ON_HOLD
 * ON_HOLD -> REQUESTED                       (operator retry, attempts reset)
 * ON_HOLD -> CREATED                         (a create call of an earlier claim landed after all)
 * REQUESTED | ON_HOLD -> CANCELLING          (cancelled while a shipment may exist at the carrier: a create call
 *                                             timed out or its claim ran out unanswered; looked up by its key)
 * CREATED -> CANCELLING -> CANCELLED            (the carrier's word, or an operator's who settled it with the carrier)
 * PENDING | REQUESTED | ON_HOLD | REJECTED -> CANCELLED   (cancelled where nothing can exist at the carrier)
 * CANCELLED -> CANCELLING                    (a create call that landed after the cancellation found nothing)
 * </pre>
 *
 * <p>The carrier is called outside any transaction. While a call is under way the row is <em>claimed</em>
 * ({@code claimedUntil}, a lease that a crashed caller cannot hold for ever); a cancellation that arrives meanwhile is
 * recorded ({@code cancelRequested}) and answered once the call resolved, or, should the claim run out unanswered, by
 * looking the shipment up at the carrier. The schedule of the next attempt ({@code attempts}, {@code nextAttemptAt})
 * lives in the row, so a restart neither loses nor resets it.
 *
 * <p>A claim's {@code claimedUntil} also names it: a caller reports a failure with the claim it called under, and a
 * failure of a claim that is no longer the row's (its lease ran out and another caller took the row, or recorded an
 * outcome) is ignored, so that it cannot end or count the call that replaced it. A success is recorded whichever claim
 * it came from: the carrier holds what it created either way.
 *
 * <p>Whether a shipment may exist at the carrier without us knowing its id ({@code creationUncertain}: a create call
 * timed out, or a caller died before recording the answer) decides how a cancellation ends: if it may, the shipment
 * is looked up by its idempotency key and cancelled (CANCELLING); if it cannot, the answer is immediate.
 */
@Entity
@Table(name = "shipment")
public class Shipment {

    private static final int MAX_ERROR_LENGTH = 1000;

    /** Also the idempotency key of the create call at the carrier. */
    @Id
    private UUID id;

    @Column(name = "order_id", nullable = false, unique = true)
    private UUID orderId;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    private ShipmentStatus status;

    /** Null until OrderCreated was heard. */
    @Embedded
    private Address address;

    @Column(nullable = false)
    private boolean paid;

    @Column(name = "cancel_requested", nullable = false)
    private boolean cancelRequested;

    @Column(name = "creation_uncertain", nullable = false)
    private boolean creationUncertain;

    /** Failed create attempts since the step (re)started. */
    @Column(nullable = false)
    private int attempts;

    /** Failed cancel attempts of the compensation. */
    @Column(name = "cancel_attempts", nullable = false)
    private int cancelAttempts;

    /**
     * The carrier's last answer to the cancellation was a refusal (a 4xx, the 404 of a parcel it gave us), not a call
     * left unanswered: only then may an operator's word end it. Cleared by every claim.
     */
    @Column(name = "cancel_refused", nullable = false)
    private boolean cancelRefused;

    /** When the carrier is to be called next; null when there is nothing to call. */
    @Column(name = "next_attempt_at")
    private Instant nextAttemptAt;

    /** Set while a carrier call is under way: the lease of the caller. */
    @Column(name = "claimed_until")
    private Instant claimedUntil;

    @Column(name = "carrier_shipment_id")
    private String carrierShipmentId;

    @Column(name = "last_error")
    private String lastError;

    @Column(name = "correlation_id", nullable = false)
    private String correlationId;

    /** The event that started the forward step (PaymentSucceeded, OrderCreated or ShipmentRetryRequested). */
    @Column(name = "caused_by_event_id")
    private UUID causedByEventId;

    /** The OrderCancelling this shipment answers. */
    @Column(name = "cancel_caused_by_event_id")
    private UUID cancelCausedByEventId;

    @Column(name = "created_at", nullable = false)
    private Instant createdAt;

    @Column(name = "updated_at", nullable = false)
    private Instant updatedAt;

    @Version
    private long version;

    protected Shipment() {
    }

    /** The first fact about an order, whichever it is: a PENDING shipment that knows nothing yet. */
    public static Shipment open(UUID orderId, String correlationId, Instant now) {
        Shipment shipment = new Shipment();
        shipment.id = Ids.timeOrdered();
        shipment.orderId = Objects.requireNonNull(orderId, "orderId");
        shipment.correlationId = Objects.requireNonNull(correlationId, "correlationId");
        shipment.status = ShipmentStatus.PENDING;
        shipment.createdAt = now;
        shipment.updatedAt = now;
        return shipment;
    }

    /**
     * A shipment as its row stores it, read without Hibernate (the repository's locked read for an event): it is never
     * managed, so nothing but the repository's update, checked against the version it was read at, writes its change.
     */
    public static Shipment stored(UUID id, UUID orderId, String correlationId, Instant createdAt, Progress progress) {
        Shipment shipment = new Shipment();
        shipment.id = id;
        shipment.orderId = orderId;
        shipment.correlationId = correlationId;
        shipment.createdAt = createdAt;
        shipment.status = progress.status();
        shipment.address = progress.address();
        shipment.paid = progress.paid();
        shipment.cancelRequested = progress.cancelRequested();
        shipment.creationUncertain = progress.creationUncertain();
        shipment.attempts = progress.attempts();
        shipment.cancelAttempts = progress.cancelAttempts();
        shipment.cancelRefused = progress.cancelRefused();
        shipment.nextAttemptAt = progress.nextAttemptAt();
        shipment.claimedUntil = progress.claimedUntil();
        shipment.carrierShipmentId = progress.carrierShipmentId();
        shipment.lastError = progress.lastError();
        shipment.causedByEventId = progress.causedByEventId();
        shipment.cancelCausedByEventId = progress.cancelCausedByEventId();
        shipment.updatedAt = progress.updatedAt();
        shipment.version = progress.version();
        return shipment;
    }

    /** OrderCreated: the address is known. PENDING stays PENDING, or becomes REQUESTED if the payment is in. */
    public void noteOrderCreated(Address address, UUID causedBy, Instant now) {
        Objects.requireNonNull(address, "address");
        if (this.address != null) {
            throw illegal("noteOrderCreated");
        }
        switch (status) {
            case PENDING -> {
                this.address = address;
                if (paid) {
                    request(causedBy, now);
                } else {
                    touch(now);
                }
            }
            // cancelled before the order was heard of: remember it, never take the forward step
            case CANCELLED -> {
                this.address = address;
                touch(now);
            }
            default -> throw illegal("noteOrderCreated");
        }
    }

    /**
     * PaymentSucceeded: PENDING stays PENDING (the order is not known yet) or becomes REQUESTED. A cancelled
     * shipment only records it: payment refunds on its own.
     */
    public void notePaid(UUID causedBy, Instant now) {
        if (paid) {
            throw illegal("notePaid");
        }
        switch (status) {
            case PENDING -> {
                paid = true;
                if (address != null) {
                    request(causedBy, now);
                } else {
                    touch(now);
                }
            }
            case CANCELLED -> {
                paid = true;
                touch(now);
            }
            default -> throw illegal("notePaid");
        }
    }

    /**
     * A worker claims the row to call the carrier (create in REQUESTED, cancel in CANCELLING) until the lease ends. A
     * REQUESTED row whose cancellation waited for a claim that ran out unanswered is claimed for its cancellation
     * instead (CANCELLING, looked up by its idempotency key): the order is cancelled, so no create call is made again.
     */
    public void startAttempt(Instant now, Duration lease) {
        switch (status) {
            case REQUESTED, CANCELLING -> {
                if (isInFlight(now)) {
                    throw illegal("startAttempt");
                }
                if (status == ShipmentStatus.REQUESTED && claimedUntil != null) {
                    // the previous caller's lease ran out without an answer recorded: its call may have gone through
                    creationUncertain = true;
                }
                if (status == ShipmentStatus.REQUESTED && cancelRequested) {
                    // what a cancellation heard after the lease ran out does at once (abandonForCancellation)
                    startCancelling(now);
                }
                // as the column keeps it (microseconds): the claim is compared with the row it is read back from
                claimedUntil = now.plus(lease).truncatedTo(ChronoUnit.MICROS);
                // the call now made may cancel, or find the parcel, whatever the last one was answered
                cancelRefused = false;
                touch(now);
            }
            default -> throw illegal("startAttempt");
        }
    }

    /**
     * The carrier created the shipment: REQUESTED -> CREATED, and on to CANCELLING if the order was cancelled meanwhile.
     * Whichever claim's call it answers: with one idempotency key the carrier holds one shipment, so a caller whose
     * lease ran out brings the id the one after it would. For the same reason ON_HOLD takes it (the calls of later
     * claims failed, an earlier one's landed): the shipment exists, and the operator's retry would only find it.
     *
     * <p>A create call whose caller lost its lease (a pause longer than the lease) can land after the cancellation
     * looked for it by its idempotency key: while it looks (CANCELLING, the id recorded so that a "not found" does not
     * end it) or after it found nothing (CANCELLED -> CANCELLING). Either way the shipment the carrier now holds is
     * cancelled too; otherwise a parcel would go out for a cancelled order. The carrier's report brings such a shipment
     * the same way when no answer ever comes.
     */
    public ShipmentCreated noteCreated(String carrierShipmentId, Instant now) {
        Objects.requireNonNull(carrierShipmentId, "carrierShipmentId");
        switch (status) {
            case REQUESTED -> {
                this.carrierShipmentId = carrierShipmentId;
                status = ShipmentStatus.CREATED;
                clearSchedule();
                if (cancelRequested) {
                    startCancelling(now);
                }
                touch(now);
            }
            case ON_HOLD -> {
                this.carrierShipmentId = carrierShipmentId;
                status = ShipmentStatus.CREATED;
                clearSchedule();
                touch(now);
            }
            case CANCELLING, CANCELLED -> {
                if (!mayBeCreatedLate()) {
                    throw illegal("noteCreated");
                }
                this.carrierShipmentId = carrierShipmentId;
                if (status == ShipmentStatus.CANCELLED) {
                    startCancelling(now);
                }
                touch(now);
            }
            default -> throw illegal("noteCreated");
        }
        return new ShipmentCreated(id.toString(), carrierShipmentId);
    }

    /**
     * The carrier refused the shipment for good: REQUESTED -> REJECTED (-> CANCELLED if the order was cancelled
     * meanwhile). Ignored if {@code claim} is no longer the row's: the call of the claim that is answers for itself.
     *
     * @param claim the {@link #claimedUntil} of the claim the call was made under
     */
    public List<ShippingEvent> noteRejected(Instant claim, String reason, Instant now) {
        List<ShippingEvent> events = new ArrayList<>();
        if (!isClaimedBy(claim)) {
            return events;
        }
        switch (status) {
            case REQUESTED -> {
                status = ShipmentStatus.REJECTED;
                lastError = truncate(reason);
                clearSchedule();
                // shortened as kept: the carrier's free text, whole, could outgrow the event the outbox takes
                events.add(new ShipmentFailed(id.toString(), lastError));
                if (cancelRequested) {
                    events.add(finishCancelling());
                }
                touch(now);
            }
            default -> throw illegal("noteRejected");
        }
        return events;
    }

    /**
     * The carrier did not create the shipment this time (503, timeout, connection error): one more failed attempt,
     * the next one scheduled with backoff; after the last one, ON_HOLD for an operator (nothing is undone). If the
     * order was cancelled meanwhile, no further attempt is made: the cancellation is answered instead. Ignored if
     * {@code claim} is no longer the row's: counted, it would free the row from the call under way (another caller may
     * start a third) and might put it on hold while that call creates the shipment.
     *
     * @param claim     the {@link #claimedUntil} of the claim the call was made under
     * @param uncertain the call may have reached the carrier (a timeout): a shipment may exist there
     */
    public List<ShippingEvent> noteCarrierUnavailable(Instant claim, String error, boolean uncertain, Instant now,
                                                      RetryPolicy policy) {
        List<ShippingEvent> events = new ArrayList<>();
        if (!isClaimedBy(claim)) {
            return events;
        }
        switch (status) {
            case REQUESTED -> {
                attempts++;
                lastError = truncate(error);
                creationUncertain |= uncertain;
                claimedUntil = null;
                if (cancelRequested) {
                    abandonForCancellation(now).ifPresent(events::add);
                } else if (attempts >= policy.maxAttempts()) {
                    status = ShipmentStatus.ON_HOLD;
                    nextAttemptAt = null;
                    events.add(new ShipmentOnHold(id.toString(), "carrier unavailable after " + attempts + " attempts", attempts));
                } else {
                    nextAttemptAt = now.plus(policy.delayAfter(attempts));
                }
                touch(now);
            }
            default -> throw illegal("noteCarrierUnavailable");
        }
        return events;
    }

    /** ShipmentRetryRequested: an operator asks to try again. ON_HOLD -> REQUESTED with the attempts reset. */
    public void requestRetry(UUID causedBy, Instant now) {
        switch (status) {
            case ON_HOLD -> request(causedBy, now);
            default -> throw illegal("requestRetry");
        }
    }

    /**
     * OrderCancelling. Answers at once where nothing can exist at the carrier (PENDING, REJECTED, and ON_HOLD or
     * REQUESTED between attempts unless an earlier call may have created the shipment); records the request while a
     * create call is under way; starts the cancellation at the carrier for a created shipment (or one that may have
     * been created). A second cancellation is refused: one heard again is {@link #repeatCancellationAnswer}'s.
     *
     * @return the answer, if it can be given now
     */
    public Optional<ShipmentCancelled> cancel(UUID causedBy, Instant now) {
        if (cancelRequested) {
            throw illegal("cancel");
        }
        Optional<ShipmentCancelled> answer;
        switch (status) {
            case PENDING, REJECTED -> answer = Optional.of(finishCancelling());
            case ON_HOLD -> answer = abandonForCancellation(now);
            case REQUESTED -> {
                if (isInFlight(now)) {
                    cancelRequested = true;
                    answer = Optional.empty();
                } else {
                    answer = abandonForCancellation(now);
                }
            }
            case CREATED -> {
                startCancelling(now);
                answer = Optional.empty();
            }
            default -> throw illegal("cancel");
        }
        cancelCausedByEventId = causedBy;
        touch(now);
        return answer;
    }

    /**
     * The carrier confirmed the cancellation, or has no shipment for this order: CANCELLING -> CANCELLED. A lookup that
     * found nothing, or found another shipment, while a late create call landed or the carrier's report showed one
     * ({@link #noteCreated}) ends nothing: the shipment recorded meanwhile is cancelled next, by its id. (A carrier that
     * forgot our key finds nothing under it, or the last of the parcels it made under it.)
     *
     * @param carrierShipmentId the id the cancellation cancelled (known, or looked up); null if the lookup found none
     * @return the answer to the cancellation, unless a shipment is left to cancel
     */
    public Optional<ShipmentCancelled> noteCancelled(String carrierShipmentId, Instant now) {
        Optional<ShipmentCancelled> event;
        switch (status) {
            case CANCELLING -> {
                if (this.carrierShipmentId != null && !this.carrierShipmentId.equals(carrierShipmentId)) {
                    startCancelling(now);
                    event = Optional.empty();
                } else {
                    if (carrierShipmentId != null) {
                        this.carrierShipmentId = carrierShipmentId;
                    }
                    event = Optional.of(finishCancelling());
                }
                touch(now);
            }
            default -> throw illegal("noteCancelled");
        }
        return event;
    }

    /**
     * An operator settled with the carrier that nothing of this shipment will go out, where the carrier's API kept
     * refusing its cancellation (a 404 for a parcel it had given us, a refusal a person resolved): CANCELLING ->
     * CANCELLED, with the answer the cancellation owed, which names who said so. Only as {@link #whyNotConfirmable}
     * allows: a call under way decides by the carrier's word, and the operator's word holds for the parcel they named.
     * A create call of an earlier claim that lands later still reopens it ({@link #noteCreated}).
     *
     * @param operator     who confirmed it
     * @param confirmation what they gave as the carrier's word
     */
    public ShipmentCancelled confirmCancelledByHand(String carrierShipmentId, String operator, String confirmation,
                                                    Instant now) {
        if (status != ShipmentStatus.CANCELLING || whyNotConfirmable(carrierShipmentId, now).isPresent()) {
            throw illegal("confirmCancelledByHand");
        }
        // the row's last word on the cancellation, for the operators' view of it
        lastError = truncate("confirmed cancelled at the carrier by operator " + operator + ": " + confirmation);
        touch(now);
        return new ShipmentCancelled(finishCancelling().shipmentId(), operator, confirmation);
    }

    /**
     * Why an operator's word cannot end this shipment's cancellation now, if it cannot.
     *
     * @param carrierShipmentId the parcel the operator settled with the carrier; null for "none under our key", where
     *                          the shipment knows of none (its lookup by key kept failing)
     */
    public Optional<String> whyNotConfirmable(String carrierShipmentId, Instant now) {
        if (status != ShipmentStatus.CANCELLING && status != ShipmentStatus.CANCELLED) {
            return Optional.of("is " + status + ": only a cancellation the carrier keeps refusing (CANCELLING) is "
                    + "confirmed by hand");
        }
        if (!Objects.equals(carrierShipmentId, this.carrierShipmentId)) {
            return Optional.of("is " + (this.carrierShipmentId == null ? "known by no parcel id (looked up by its key)"
                    : "parcel " + this.carrierShipmentId) + ", not " + (carrierShipmentId == null ? "without one"
                    : carrierShipmentId) + ": what the carrier said of another parcel does not end it");
        }
        if (status == ShipmentStatus.CANCELLED) {
            return Optional.empty();
        }
        if (isInFlight(now)) {
            return Optional.of("has a call to the carrier under way until " + claimedUntil + ", whose answer decides");
        }
        if (!cancelRefused) {
            return Optional.of("has had no cancel call refused by the carrier yet (none answered, or none made: the "
                    + "parcel may yet be cancelled or found): the carrier is asked first");
        }
        return Optional.empty();
    }

    /**
     * OrderCancelling once more, under a new event id (an operator re-sends it for an order whose answer was lost): the
     * answer the first one got, if it got one. Only CANCELLED has answered: CANCELLING (the carrier is being asked, or
     * asked again for a create call that landed late) and a request waiting for a create call to resolve still owe the
     * answer, and give it when they end. Changes nothing: what the answer reports is done.
     *
     * @return the answer to give again; empty while the answer is owed, or if no cancellation was heard
     */
    public Optional<ShipmentCancelled> repeatCancellationAnswer() {
        return status == ShipmentStatus.CANCELLED ? Optional.of(cancellationAnswer()) : Optional.empty();
    }

    /** {@link #noteCancelFailed(Instant, String, String, boolean, Instant, RetryPolicy)} of a call left unanswered. */
    public void noteCancelFailed(Instant claim, String error, Instant now, RetryPolicy policy) {
        noteCancelFailed(claim, null, error, false, now, policy);
    }

    /**
     * The cancellation failed: a failed compensation, tried again with backoff, for ever. Stays CANCELLING. Ignored if
     * {@code claim} is no longer the row's, as {@link #noteCarrierUnavailable} is. A parcel a lookup by key found is
     * kept, to be cancelled by its id from then on: a later lookup that finds none (a lagging replica) must not end a
     * cancellation whose parcel was seen.
     *
     * @param claim   the {@link #claimedUntil} of the claim the call was made under
     * @param parcel  the parcel whose cancel failed (the row's, or one a lookup by key found); null if a lookup failed
     * @param refused the carrier answered with a refusal, rather than leave the call unanswered
     */
    public void noteCancelFailed(Instant claim, String parcel, String error, boolean refused, Instant now,
                                 RetryPolicy policy) {
        if (!isClaimedBy(claim)) {
            return;
        }
        switch (status) {
            case CANCELLING -> {
                if (parcel != null && carrierShipmentId == null) {
                    carrierShipmentId = parcel;
                }
                // a refusal about another parcel than the row's (one recorded meanwhile) says nothing of the row's
                cancelRefused = refused && Objects.equals(parcel, carrierShipmentId);
                cancelAttempts++;
                lastError = truncate(error);
                claimedUntil = null;
                nextAttemptAt = now.plus(policy.delayAfter(cancelAttempts));
                touch(now);
            }
            default -> throw illegal("noteCancelFailed");
        }
    }

    /**
     * The transaction that claimed a create call takes the claim back before it committed (an OrderCancelling applied
     * in the same transaction as the PaymentSucceeded that claimed it): the call is handed to a caller only after the
     * commit, so none went out on it, and a cancellation answers as if it had never been claimed.
     *
     * @param claim the {@link #claimedUntil} of that claim
     */
    public void withdrawClaim(Instant claim, Instant now) {
        switch (status) {
            case REQUESTED -> {
                if (cancelRequested || claim == null || !isClaimedBy(claim)) {
                    throw illegal("withdrawClaim");
                }
                claimedUntil = null;
                touch(now);
            }
            default -> throw illegal("withdrawClaim");
        }
    }

    private void request(UUID causedBy, Instant now) {
        status = ShipmentStatus.REQUESTED;
        attempts = 0;
        nextAttemptAt = now;
        claimedUntil = null;
        causedByEventId = causedBy;
        touch(now);
    }

    /** No create call is under way: answer the cancellation now, or check at the carrier first if one may exist. */
    private Optional<ShipmentCancelled> abandonForCancellation(Instant now) {
        if (mayExistAtCarrier()) {
            // a claim that ran out without an answer: whatever the look-up finds was created without a ShipmentCreated
            creationUncertain |= claimedUntil != null;
            startCancelling(now);
            return Optional.empty();
        }
        return Optional.of(finishCancelling());
    }

    private void startCancelling(Instant now) {
        status = ShipmentStatus.CANCELLING;
        cancelAttempts = 0;
        cancelRefused = false;
        nextAttemptAt = now;
        claimedUntil = null;
    }

    private ShipmentCancelled finishCancelling() {
        status = ShipmentStatus.CANCELLED;
        clearSchedule();
        return cancellationAnswer();
    }

    /** Built in one place: an answer given again must read as the first one did. */
    private ShipmentCancelled cancellationAnswer() {
        return new ShipmentCancelled(id.toString());
    }

    private void clearSchedule() {
        nextAttemptAt = null;
        claimedUntil = null;
    }

    /** A create was requested and no carrier id is known: a create call may still land with one. */
    private boolean mayBeCreatedLate() {
        return causedByEventId != null && carrierShipmentId == null;
    }

    private boolean mayExistAtCarrier() {
        // a claim that was never resolved is a call whose answer we do not know
        return carrierShipmentId != null || creationUncertain || claimedUntil != null;
    }

    private void touch(Instant now) {
        updatedAt = now;
    }

    private IllegalTransitionException illegal(String transition) {
        return new IllegalTransitionException(status, transition);
    }

    private static String truncate(String error) {
        return Reasons.fit(error, MAX_ERROR_LENGTH);
    }

    /**
     * What of a shipment its saga changes, as it stands: compared before and after a step, and written as one row
     * update (the repository's), with the version it was read at. The rest (id, order, correlation, creation time)
     * never changes after the shipment is opened.
     */
    public record Progress(ShipmentStatus status, Address address, boolean paid, boolean cancelRequested,
                           boolean creationUncertain, int attempts, int cancelAttempts, boolean cancelRefused,
                           Instant nextAttemptAt, Instant claimedUntil, String carrierShipmentId, String lastError,
                           UUID causedByEventId, UUID cancelCausedByEventId, Instant updatedAt, long version) {
    }

    public Progress progress() {
        return new Progress(status, address, paid, cancelRequested, creationUncertain, attempts, cancelAttempts,
                cancelRefused, nextAttemptAt, claimedUntil, carrierShipmentId, lastError, causedByEventId,
                cancelCausedByEventId, updatedAt, version);
    }

    /** {@code claim} is the row's claim (none, if the row is not claimed): a caller's outcome is for the row as it is. */
    public boolean isClaimedBy(Instant claim) {
        return Objects.equals(claimedUntil, claim);
    }

    /** A carrier call is under way (claimed and the lease has not run out). */
    public boolean isInFlight(Instant now) {
        return claimedUntil != null && claimedUntil.isAfter(now);
    }

    /** The carrier is to be called now: create or cancel work, its time has come, and nobody is calling already. */
    public boolean isDue(Instant now) {
        return status.hasCarrierWork() && nextAttemptAt != null && !nextAttemptAt.isAfter(now) && !isInFlight(now);
    }

    /** OrderCancelling was heard already (answered, being answered, or waiting for a call to resolve). */
    public boolean isCancellationUnderway() {
        return cancelRequested || status == ShipmentStatus.CANCELLING || status == ShipmentStatus.CANCELLED;
    }

    public boolean knowsOrder() {
        return address != null;
    }

    public UUID id() {
        return id;
    }

    public UUID orderId() {
        return orderId;
    }

    public ShipmentStatus status() {
        return status;
    }

    public Address address() {
        return address;
    }

    public boolean isPaid() {
        return paid;
    }

    public boolean isCancelRequested() {
        return cancelRequested;
    }

    public boolean isCreationUncertain() {
        return creationUncertain;
    }

    public int attempts() {
        return attempts;
    }

    public int cancelAttempts() {
        return cancelAttempts;
    }

    public boolean cancelRefused() {
        return cancelRefused;
    }

    public Instant nextAttemptAt() {
        return nextAttemptAt;
    }

    public Instant claimedUntil() {
        return claimedUntil;
    }

    public String carrierShipmentId() {
        return carrierShipmentId;
    }

    public String lastError() {
        return lastError;
    }

    public String correlationId() {
        return correlationId;
    }

    public UUID causedByEventId() {
        return causedByEventId;
    }

    public UUID cancelCausedByEventId() {
        return cancelCausedByEventId;
    }

    public Instant createdAt() {
        return createdAt;
    }

    public Instant updatedAt() {
        return updatedAt;
    }
}
