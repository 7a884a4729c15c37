package dev.ordersaga.payment.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.PaymentEvent;
import dev.ordersaga.events.PaymentRefunded;
import dev.ordersaga.events.PaymentRetryRequested;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.domain.PaymentStatus;
import dev.ordersaga.payment.domain.SettlementWatch;
import dev.ordersaga.payment.persistence.PaymentRepository;
import dev.ordersaga.payment.persistence.PaymentRepository.ChargeState;
import dev.ordersaga.retry.Backoff;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BiFunction;

/**
 * One transactional method per incoming event and per provider outcome: load (locked), call the state machine,
 * hand its events to the outbox in the same transaction. It never sets a status itself and never calls the
 * provider: a payment that owes the provider a call is made due here and picked up by {@link PaymentWorker} once
 * the transaction committed.
 *
 * <p>Every method runs inside a {@link dev.ordersaga.eventing.Correlation} scope opened by its caller (the inbox for
 * events, the worker and the webhook from the payment's persisted correlation).
 */
@ApplicationScoped
public class PaymentService {

    private static final Logger LOG = Logger.getLogger(PaymentService.class);

    @Inject
    PaymentRepository payments;

    @Inject
    OutboxWriter outbox;

    @Inject
    TransactionalWrites writes;

    @Inject
    Event<PaymentDue> due;

    @ConfigProperty(name = "payment.retry.base-delay", defaultValue = "200ms")
    Duration retryBaseDelay;

    @ConfigProperty(name = "payment.retry.max-delay", defaultValue = "10s")
    Duration retryMaxDelay;

    /** How long a claimed payment is withheld from other workers while its provider call runs. */
    @ConfigProperty(name = "payment.worker.lease", defaultValue = "30s")
    Duration lease;

    /** The first look for a late settlement of a declined or abandoned charge; each further one twice as far off. */
    @ConfigProperty(name = "payment.settlement.first-look", defaultValue = "2s")
    Duration settlementFirstLook;

    /** How many looks; 0 leaves a late settlement to the provider's webhook alone. */
    @ConfigProperty(name = "payment.settlement.looks", defaultValue = "5")
    int settlementLooks;

    private Backoff backoff;
    private SettlementWatch settlementWatch;

    @PostConstruct
    void init() {
        backoff = new Backoff(retryBaseDelay, retryMaxDelay);
        settlementWatch = new SettlementWatch(settlementFirstLook, settlementLooks);
    }

    // ---- incoming events (in the consumer's transaction) ----
    // Each handler's first statement is the event's inbox claim, sent with the payment's locked read (the claim takes
    // the order's lock first, see PaymentRepository#lockByOrderIdForChange): a duplicate returns before anything else
    // is sent or changed, and the step's time is taken once the lock was granted, as when the claim went alone first.

    @Transactional(Transactional.TxType.MANDATORY)
    public void onOrderCreated(EventEnvelope<?> event, OrderCreated created, InboxClaim claim) {
        Optional<Payment> existing = payments.lockByOrderIdForChange(event.orderId(), claim);
        if (claim.duplicate()) {
            return;
        }
        Instant now = Instant.now();
        Payment payment;
        Payment.Progress asRead = null;
        if (existing.isPresent()) {
            payment = existing.get();
            asRead = payment.progress();
            boolean wasKnown = payment.orderKnown();
            payment.noteOrderCreated(created.total(), created.currency(), created.paymentToken(), event.eventId(), now);
            if (wasKnown) {
                LOG.infof("OrderCreated for order %s again: payment %s is %s already, nothing to do", event.orderId(),
                        payment.id(), payment.status());
            } else {
                LOG.infof("Order %s known now (%s %s), stock was reserved before: payment %s is %s", event.orderId(),
                        payment.amount(), payment.currency(), payment.id(), payment.status());
            }
        } else {
            payment = Payment.forOrder(event.orderId(), created.total(), created.currency(), created.paymentToken(),
                    event.correlationId(), event.eventId(), now);
            LOG.infof("Payment %s of order %s opened: %s %s, waiting for the stock reservation", payment.id(),
                    event.orderId(), payment.amount(), payment.currency());
        }
        afterTransition(payment, asRead, List.of(), now);
    }

    @Transactional(Transactional.TxType.MANDATORY)
    public void onStockReserved(EventEnvelope<?> event, StockReserved reserved, InboxClaim claim) {
        Optional<Payment> existing = payments.lockByOrderIdForChange(event.orderId(), claim);
        if (claim.duplicate()) {
            return;
        }
        Instant now = Instant.now();
        if (existing.isEmpty()) {
            Payment payment = Payment.beforeOrderCreated(event.orderId(), event.correlationId(), event.eventId(), now);
            payment.noteStockReserved(event.eventId(), now);
            afterTransition(payment, null, List.of(), now);
            LOG.infof("Stock of order %s reserved (%s) before the order is known here: recorded, charging once "
                    + "OrderCreated arrives", event.orderId(), reserved.reservationId());
            return;
        }
        Payment payment = existing.get();
        Payment.Progress asRead = payment.progress();
        PaymentStatus before = payment.status();
        payment.noteStockReserved(event.eventId(), now);
        if (payment.status() == PaymentStatus.CHARGING && before == PaymentStatus.PENDING) {
            LOG.infof("Stock of order %s reserved: charging %s %s (payment %s)", event.orderId(), payment.amount(),
                    payment.currency(), payment.id());
        } else if (before == PaymentStatus.CANCELLED) {
            LOG.infof("Stock of order %s reserved after the order was cancelled: payment %s is never charged",
                    event.orderId(), payment.id());
        } else {
            LOG.infof("Stock of order %s reserved again: payment %s is %s, nothing to do", event.orderId(), payment.id(),
                    payment.status());
        }
        afterTransition(payment, asRead, List.of(), now);
    }

    @Transactional(Transactional.TxType.MANDATORY)
    public void onOrderCancelling(EventEnvelope<?> event, OrderCancelling cancelling, InboxClaim claim) {
        Optional<Payment> existing = payments.lockByOrderIdForChange(event.orderId(), claim);
        if (claim.duplicate()) {
            return;
        }
        Instant now = Instant.now();
        Payment payment = existing.orElse(null);
        Payment.Progress asRead = payment == null ? null : payment.progress();
        if (payment == null) {
            // cannot happen in the saga (OrderCreated precedes it on the same partition); tolerated: answered with
            // nothing to refund, and recorded, so that nothing is ever charged for this order afterwards
            payment = Payment.beforeOrderCreated(event.orderId(), event.correlationId(), event.eventId(), now);
            LOG.infof("OrderCancelling for order %s that payment never heard of: recorded as cancelled", event.orderId());
        }
        PaymentStatus before = payment.status();
        boolean answeredBefore = payment.refundAnswered();
        List<PaymentEvent> events = payment.requestCancellation(event.eventId(), now);
        if (answeredBefore && !events.isEmpty() && events.get(0) instanceof PaymentRefunded answer) {
            // an operator's re-send for an order stuck compensating: the line tells it from the first answer
            LOG.infof("Order %s cancelling again (%s, requested by %s): payment %s is %s, its cancellation answered "
                    + "before: answered again with PaymentRefunded of %s %s (refund %s)", event.orderId(),
                    cancelling.reason(), cancelling.requestedBy(), payment.id(), payment.status(), answer.amount(),
                    answer.currency(), answer.providerRefundId() == null ? "none" : answer.providerRefundId());
        } else {
            LOG.infof("Order %s cancelling (%s): payment %s %s -> %s%s", event.orderId(), cancelling.reason(),
                    payment.id(), before, payment.status(), describe(payment, events));
        }
        afterTransition(payment, asRead, events, now);
    }

    @Transactional(Transactional.TxType.MANDATORY)
    public void onPaymentRetryRequested(EventEnvelope<?> event, PaymentRetryRequested retry, InboxClaim claim) {
        Optional<Payment> existing = payments.lockByOrderIdForChange(event.orderId(), claim);
        if (claim.duplicate()) {
            return;
        }
        if (existing.isEmpty()) {
            LOG.warnf("%s asked to charge order %s again, which has no payment here: nothing to do", retry.requestedBy(),
                    event.orderId());
            return;
        }
        Instant now = Instant.now();
        Payment payment = existing.get();
        Payment.Progress asRead = payment.progress();
        boolean held = payment.isHeld();
        payment.retryHeldCharge(event.eventId(), now);
        if (held && !payment.isHeld()) {
            LOG.warnf("%s asked to charge order %s again: charging %s %s under key %s, which the provider no longer "
                    + "knows", retry.requestedBy(), event.orderId(), payment.amount(), payment.currency(),
                    payment.idempotencyKey());
        } else {
            LOG.infof("%s asked to charge order %s again, but payment %s is not held (%s): nothing to do",
                    retry.requestedBy(), event.orderId(), payment.id(), payment.status());
        }
        afterTransition(payment, asRead, List.of(), now);
    }

    // ---- provider outcomes (worker, webhook): each in its own transaction ----

    /** @return whether the news changed anything (it was known already otherwise) */
    @Transactional
    public boolean recordChargeSucceeded(UUID paymentId, String chargeId) {
        Instant now = Instant.now();
        Payment payment = load(paymentId);
        Payment.Progress asRead = payment.progress();
        PaymentStatus before = payment.status();
        List<PaymentEvent> events = payment.chargeSucceeded(chargeId, now);
        if (events.isEmpty()) {
            LOG.infof("Charge %s of order %s succeeded: known already (%s)", chargeId, payment.orderId(), before);
        } else if (before == PaymentStatus.CHARGING) {
            LOG.infof("Charge %s of order %s succeeded: %s %s%s", chargeId, payment.orderId(), payment.amount(),
                    payment.currency(), payment.status() == PaymentStatus.REFUNDING ? "; the order is cancelling: refunding" : "");
        } else {
            LOG.warnf("Charge %s of order %s settled late (payment was %s): reported and refunded at once", chargeId,
                    payment.orderId(), before);
        }
        afterTransition(payment, asRead, events, now);
        return !events.isEmpty();
    }

    @Transactional
    public void recordChargeDeclined(UUID paymentId, String reason) {
        Instant now = Instant.now();
        Payment payment = load(paymentId);
        Payment.Progress asRead = payment.progress();
        PaymentStatus before = payment.status();
        List<PaymentEvent> events = payment.chargeDeclined(reason, now, settlementWatch);
        if (events.isEmpty()) {
            LOG.infof("Charge of order %s declined (%s): nothing to do, payment is %s", payment.orderId(), reason, before);
        } else {
            LOG.infof("Charge of order %s declined: %s%s", payment.orderId(), reason, describe(payment, events));
        }
        afterTransition(payment, asRead, events, now);
    }

    /**
     * A look for a late settlement of a declined or abandoned charge found none: the next look, or the end of the
     * watch. Not recorded if the look's claim ran out and another took the row (as {@link #recordChargeUnresolved}):
     * each look would count, and the watch would end before its looks were made.
     *
     * @param claimedUntil the lease of the claim the look was made under
     */
    @Transactional
    public void recordNoLateSettlement(UUID paymentId, Instant claimedUntil) {
        Instant now = Instant.now();
        Payment payment = load(paymentId);
        if (!payment.isClaimedUntil(claimedUntil)) {
            logStaleClaim(payment, "settlement status");
            return;
        }
        Payment.Progress asRead = payment.progress();
        payment.noteNoLateSettlement(now, settlementWatch);
        if (payment.status() == asRead.status() && payment.nextAttemptAt() == null && asRead.nextAttemptAt() != null) {
            LOG.infof("Charge of order %s not settled late within %s s (payment %s stays %s): no more looks",
                    payment.orderId(), settlementWatch.window().toSeconds(), payment.id(), payment.status());
        }
        afterTransition(payment, asRead, List.of(), now);
    }

    /**
     * The order is cancelling and the provider has no charge for the payment: none is sent, nothing to refund, and the
     * provider is asked again a few times in case a call that got no answer still lands.
     */
    @Transactional
    public void recordChargeAbandoned(UUID paymentId) {
        Instant now = Instant.now();
        Payment payment = load(paymentId);
        Payment.Progress asRead = payment.progress();
        PaymentStatus before = payment.status();
        List<PaymentEvent> events = payment.chargeAbandoned(now, settlementWatch);
        if (events.isEmpty()) {
            LOG.infof("The provider has no charge of order %s: nothing to do, payment is %s", payment.orderId(), before);
        } else {
            LOG.infof("The provider has no charge of order %s, which is cancelling: payment %s %s -> %s without a "
                    + "charge%s", payment.orderId(), payment.id(), before, payment.status(), describe(payment, events));
        }
        afterTransition(payment, asRead, events, now);
    }

    /**
     * The provider has no charge under the payment's key, which it may have forgotten: held for an operator
     * ({@link Payment#chargeHeld}).
     *
     * Not recorded if the call's claim ran out and another took the row (as {@link #recordChargeUnresolved}): for a
     * cancelling order the hold makes the row due at once, and a third worker would call while the second's call is
     * under way; that call asks the provider the same question, and its answer is the one to record.
     *
     * @param claimedUntil the lease of the claim the call was made under
     * @return whether it was put on hold now (not held already, not resolved meanwhile, its order not cancelling,
     * its claim not replaced)
     */
    @Transactional
    public boolean recordChargeHeld(UUID paymentId, String reason, Instant chargingSinceOfTheCall, Instant claimedUntil) {
        Instant now = Instant.now();
        Payment payment = load(paymentId);
        if (!payment.isClaimedUntil(claimedUntil)) {
            logStaleClaim(payment, "charge status");
            return false;
        }
        Payment.Progress asRead = payment.progress();
        List<PaymentEvent> events = payment.chargeHeld(reason, now, chargingSinceOfTheCall);
        afterTransition(payment, asRead, events, now);
        return !events.isEmpty();
    }

    /**
     * @param claimedUntil the lease of the claim the call was made under
     * @return the number of the attempt that got no answer; 0 if the charge was resolved meanwhile, or if the call's
     * claim ran out and another took the row: that one's call is under way, and its outcome is the one to record
     */
    @Transactional
    public int recordChargeUnresolved(UUID paymentId, Instant claimedUntil) {
        return failedUnderClaim(paymentId, claimedUntil, "charge",
                (payment, now) -> payment.chargeUnresolved(now, backoff));
    }

    /**
     * A charge sent again was refused as a request ({@link Payment#chargeRefusedAgain}): kept, and the provider's
     * status asked after a backoff.
     *
     * @return as {@link #recordChargeUnresolved}
     */
    @Transactional
    public int recordChargeRefusedAgain(UUID paymentId, Instant claimedUntil, String reason) {
        return failedUnderClaim(paymentId, claimedUntil, "charge",
                (payment, now) -> payment.chargeRefusedAgain(reason, now, backoff));
    }

    /** A call's failure, recorded only while the call's claim is the row's; the attempt that failed, or 0. */
    private int failedUnderClaim(UUID paymentId, Instant claimedUntil, String call,
                                 BiFunction<Payment, Instant, Integer> failure) {
        Instant now = Instant.now();
        Payment payment = load(paymentId);
        if (!payment.isClaimedUntil(claimedUntil)) {
            logStaleClaim(payment, call);
            return 0;
        }
        Payment.Progress asRead = payment.progress();
        int attempt = failure.apply(payment, now);
        afterTransition(payment, asRead, List.of(), now);
        return attempt;
    }

    @Transactional
    public void recordRefundSucceeded(UUID paymentId, String refundId) {
        Instant now = Instant.now();
        Payment payment = load(paymentId);
        if (payment.refundConfirmedBy() != null && !refundId.equals(payment.providerRefundId())) {
            // the call was under way unseen (its answer lost, its claim run out) when an operator returned the money
            // another way: the customer may have it twice
            LOG.errorf("ALERT refund %s of order %s made by the provider after operator %s confirmed the order "
                            + "refunded by hand (%s): the customer may have been refunded twice", refundId,
                    payment.orderId(), payment.refundConfirmedBy(), payment.refundConfirmation());
        }
        Payment.Progress asRead = payment.progress();
        List<PaymentEvent> events = payment.refundSucceeded(refundId, now);
        if (!events.isEmpty()) {
            LOG.infof("Refund %s of order %s succeeded: %s %s returned", refundId, payment.orderId(), payment.amount(),
                    payment.currency());
        }
        afterTransition(payment, asRead, events, now);
    }

    /**
     * @param claimedUntil the lease of the claim the call was made under
     * @param refused      the provider refused it, rather than leave it unanswered
     * @return the number of the refund attempt that failed; 0 if the refund succeeded meanwhile, or if the call's claim
     * ran out and another took the row (as {@link #recordChargeUnresolved})
     */
    @Transactional
    public int recordRefundFailed(UUID paymentId, Instant claimedUntil, boolean refused) {
        return failedUnderClaim(paymentId, claimedUntil, "refund",
                (payment, now) -> payment.refundFailed(now, backoff, refused));
    }

    /**
     * Recorded, the outcome would reschedule the row under whatever moved the call's claim on: a claim that replaced
     * it (a worker that paused past its lease), whose call the sweep would then hand to a third worker while it is
     * under way, or an outcome recorded meanwhile (a webhook's), which already says what the call asked.
     */
    private static void logStaleClaim(Payment payment, String call) {
        LOG.infof("A %s call for payment %s of order %s ended after its claim no longer held the row (a later claim "
                + "or a recorded outcome moved it): not recorded", call, payment.id(), payment.orderId());
    }

    /**
     * An operator's word that the customer has the order's money back, where the provider's API kept refusing the
     * refund ({@link Payment#confirmRefundedByHand}): the cancellation is answered, and the order's compensation goes
     * on, order-service logging who said so among the order's operator actions. Logged at WARN here too: the order is
     * cancelled on that word, and the refund's alerts stop. Asked again once it holds (an answer lost), it changes
     * nothing.
     *
     * @param refundId the provider's id of the refund the operator made (null: none made at the provider)
     * @return the payment as it stands after; empty if the order has none
     * @throws NotConfirmable when the refund cannot end on an operator's word now, saying why
     */
    @Transactional
    public Optional<Payment> confirmRefundedByHand(UUID orderId, String refundId, String operator, String reason) {
        Optional<Payment> found = payments.lockByOrderIdForChange(orderId);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        Payment payment = found.get();
        try (Correlation.Scope ignored = Correlation.open(payment.correlationId(), null)) {
            Instant now = Instant.now();
            payment.whyNotConfirmable(refundId, now).ifPresent(why -> {
                throw new NotConfirmable("the payment of order " + orderId + " " + why);
            });
            Payment.Progress asRead = payment.progress();
            int refused = payment.attempts();
            List<PaymentEvent> events = payment.confirmRefundedByHand(refundId, operator, reason, now);
            if (!events.isEmpty()) {
                LOG.warnf("Refund of order %s (%s %s, charge %s) confirmed by operator %s after %d refused attempt(s), "
                                + "as %s: %s", orderId, payment.amount(), payment.currency(),
                        payment.providerChargeId(), operator, refused,
                        refundId == null ? "settled outside the provider" : "refund " + refundId, reason);
            }
            afterTransition(payment, asRead, events, now);
        }
        return Optional.of(payment);
    }

    /** A refund that an operator's word cannot end now; the message says why. */
    public static final class NotConfirmable extends RuntimeException {

        NotConfirmable(String message) {
            super(message);
        }
    }

    // ---- work for the worker ----

    /** Claims up to {@code limit} due payments (skipping rows other replicas hold) for provider calls. */
    @Transactional
    public List<PaymentTask> claimDue(int limit) {
        Instant now = Instant.now();
        Instant until = leaseEnd(now);
        return payments.claimDue(now, until, limit).stream()
                .map(id -> PaymentTask.ofLaterClaim(payments.findById(id), until))
                .toList();
    }

    /** Claims one payment, if it is due and no other worker holds it. */
    @Transactional
    public Optional<PaymentTask> claim(UUID paymentId) {
        Instant now = Instant.now();
        Instant until = leaseEnd(now);
        return payments.claimIfDue(paymentId, now, until)
                .map(id -> PaymentTask.ofLaterClaim(payments.findById(id), until));
    }

    /**
     * The payment a provider's news is about, as last committed and unlocked: the webhook answers news it knows already
     * from this ({@link PaymentStatus#hasChargeSucceeded}), and only news that changes something takes the row's lock,
     * in {@link #recordChargeSucceeded} or {@link #recordChargeDeclined}. Read outside any transaction: a webhook comes
     * with every charge, and a transaction around this one read was a begin and a commit more for each.
     */
    public Optional<ChargeState> findCharge(String idempotencyKey) {
        UUID paymentId;
        try {
            paymentId = UUID.fromString(idempotencyKey);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        return payments.chargeState(paymentId);
    }

    /**
     * The payment as last committed. The worker reads it just before it sends a charge: a call claimed in the
     * transaction that made it due (or queued behind slow calls) may run after an OrderCancelling committed, or after
     * the provider's webhook or report recorded the charge of an earlier call, and nothing else tells it. One read
     * outside any transaction, as {@link #findCharge}.
     */
    public Optional<ChargeState> committedCharge(UUID paymentId) {
        return payments.chargeState(paymentId);
    }

    @Transactional
    public Optional<Payment> findByOrderId(UUID orderId) {
        return payments.findByOrderId(orderId);
    }

    /** In the microseconds PostgreSQL keeps, so that a claim's lease compares equal to the row's. */
    private Instant leaseEnd(Instant now) {
        return now.plus(lease).truncatedTo(ChronoUnit.MICROS);
    }

    private Payment load(UUID paymentId) {
        return payments.lockForChange(paymentId)
                .orElseThrow(() -> new IllegalStateException("no payment " + paymentId));
    }

    /**
     * Makes the payment due if it owes the provider a call now, then writes it with the transition's first event in one
     * round trip (or alone, if there is none) and publishes the other events.
     *
     * @param asRead the payment as its row was read, or null for a payment this transaction opened
     */
    private void afterTransition(Payment payment, Payment.Progress asRead, List<PaymentEvent> events, Instant now) {
        if (payment.isDue(now)) {
            // claimed here, under this transaction's row lock: saves the worker a claiming transaction per call
            Instant until = leaseEnd(now);
            payment.lease(now, until);
            due.fire(PaymentDue.claimed(PaymentTask.of(payment, until), now));
        } else if (payment.nextCall() != Payment.ProviderCall.NONE && payment.nextAttemptAt() != null) {
            due.fire(PaymentDue.later(payment.id(), payment.nextAttemptAt()));
        }
        // the observers run after the commit; the write is built now, from the payment as the lease left it
        Optional<TransactionalWrites.Write> change = asRead == null
                ? Optional.of(payments.insertion(payment))
                : payments.update(payment, asRead);
        if (events.isEmpty()) {
            change.ifPresent(write -> writes.write(write, () -> "write payment " + payment.id() + " of order "
                    + payment.orderId()));
            return;
        }
        outbox.publish(payment.orderId(), events.get(0), change.isEmpty() ? null : envelope -> change.get());
        events.subList(1, events.size()).forEach(event -> outbox.publish(payment.orderId(), event));
    }

    private static String describe(Payment payment, List<PaymentEvent> events) {
        if (events.isEmpty()) {
            return payment.status() == PaymentStatus.CHARGING ? " (cancel requested: answered once the charge resolves)" : "";
        }
        return ", emitting " + String.join(", ", events.stream().map(e -> e.getClass().getSimpleName()).toList());
    }
}
