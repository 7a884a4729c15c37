package dev.ordersaga.shipping.application;

import dev.ordersaga.eventing.AfterCommit;
import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.ShipmentCreated;
import dev.ordersaga.events.ShipmentRetryRequested;
import dev.ordersaga.events.ShippingAddress;
import dev.ordersaga.events.ShippingEvent;
import dev.ordersaga.shipping.domain.Address;
import dev.ordersaga.shipping.domain.RetryPolicy;
import dev.ordersaga.shipping.domain.Shipment;
import dev.ordersaga.shipping.domain.ShipmentStatus;
import dev.ordersaga.shipping.persistence.ShipmentRepository;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;

/**
 * One transactional method per incoming fact and per carrier outcome: load (or open) the shipment, call its state
 * machine, hand the returned events to the outbox. The carrier itself is called by {@link ShipmentWorker}, outside
 * any transaction; a transaction that leaves carrier work due wakes it once it committed.
 *
 * <p>A step's change of the shipment is written with plain JDBC, its version checked, in the round trip of the
 * step's first event ({@link #store}): the shipment is read locked and detached, so Hibernate writes nothing of it.
 * Only the worker's claims ({@link #claim}, {@link #claimDue}), which publish nothing, leave the write to Hibernate.
 *
 * <p>A fact's handler sends the event's inbox claim in the round trip of that locked read, the first thing it asks of
 * the database, and acts on nothing if the claim finds the event applied before: the claim costs no round trip of its
 * own. The consumer's claims take the order's advisory lock first, in the same statement
 * ({@link ShipmentRepository#ORDER_LOCK_SPACE}).
 */
@ApplicationScoped
@Startup // its counters exist from the start, at zero, for the alert rules
public class ShippingService {

    private static final Logger LOG = Logger.getLogger(ShippingService.class);

    /** The key of this transaction's {@link ClaimedCalls} among its resources. */
    private static final Object CLAIMED_CALLS = ClaimedCalls.class;

    @Inject
    ShipmentRepository shipments;

    @Inject
    OutboxWriter outbox;

    @Inject
    TransactionalWrites writes;

    @Inject
    Event<ShipmentDue> due;

    @Inject
    Event<ClaimedCalls> claimed;

    @Inject
    TransactionSynchronizationRegistry transactions;

    @Inject
    MeterRegistry meters;

    @ConfigProperty(name = "shipping.retry.max-attempts")
    int maxAttempts;

    @ConfigProperty(name = "shipping.retry.base-delay")
    Duration baseDelay;

    @ConfigProperty(name = "shipping.retry.max-delay")
    Duration maxDelay;

    /** How long a claimed carrier call may take before another worker may take the row over. */
    @ConfigProperty(name = "shipping.worker.lease")
    Duration lease;

    private Counter compensationFailures;
    private Counter shipmentsHeld;

    @PostConstruct
    void registerMeters() {
        // registered up front, so that the alert rule sees a zero rather than no series
        compensationFailures = meters.counter("saga.compensation.failures", "step", "shipment-cancel");
        shipmentsHeld = Counter.builder("saga.shipping.shipments.held")
                .description("Shipments held for an operator: the carrier stayed unavailable through every attempt")
                .register(meters);
    }

    // ---- facts from other services

    /** OrderCreated: the shipment learns its address (and is requested if the payment is in already). */
    @Transactional
    public void onOrderCreated(EventEnvelope<?> event, OrderCreated created, InboxClaim claim) {
        Optional<Shipment> existing = shipments.lockByOrderIdForChange(event.orderId(), claim);
        if (claim.duplicate()) {
            return;
        }
        ShippingAddress a = created.shippingAddress();
        if (a == null || a.line1() == null) {
            LOG.warnf("OrderCreated of order %s has no shipping address: nothing to ship", event.orderId());
            return;
        }
        onShipmentOf(event, existing, shipment -> {
            if (shipment.knowsOrder()) {
                LOG.infof("Order %s already known to shipment %s: OrderCreated %s skipped", event.orderId(),
                        shipment.id(), event.eventId());
                return List.of();
            }
            shipment.noteOrderCreated(new Address(a.name(), a.line1(), a.line2(), a.city(), a.postalCode(), a.country()),
                    event.eventId(), Instant.now());
            LOG.infof("Shipment %s of order %s: address known, %s", shipment.id(), event.orderId(), describe(shipment));
            wakeIfDue(shipment);
            return List.of();
        });
    }

    /**
     * PaymentSucceeded: the shipment is requested at the carrier once the order is known too. A charge that payment
     * refunds at once (it settled after a decline, or while the order was being cancelled) ships nothing: the order's
     * cancellation, on another topic, may not have arrived yet, and the carrier would create a parcel for an order
     * that is being cancelled. The cancellation, when it comes, answers for the shipment as for an unpaid one.
     */
    @Transactional
    public void onPaymentSucceeded(EventEnvelope<?> event, PaymentSucceeded succeeded, InboxClaim claim) {
        Optional<Shipment> existing = shipments.lockByOrderIdForChange(event.orderId(), claim);
        if (claim.duplicate()) {
            return;
        }
        if (succeeded.refundedAtOnce()) {
            LOG.infof("PaymentSucceeded %s of order %s is refunded at once (the order is being cancelled): nothing to ship",
                    event.eventId(), event.orderId());
            return;
        }
        onShipmentOf(event, existing, shipment -> {
            if (shipment.isPaid()) {
                LOG.infof("Payment of order %s already known to shipment %s: PaymentSucceeded %s skipped",
                        event.orderId(), shipment.id(), event.eventId());
                return List.of();
            }
            shipment.notePaid(event.eventId(), Instant.now());
            LOG.infof("Shipment %s of order %s: paid (%s), %s", shipment.id(), event.orderId(), succeeded.paymentId(),
                    describe(shipment));
            wakeIfDue(shipment);
            return List.of();
        });
    }

    /**
     * OrderCancelling: answered with ShipmentCancelled, at once or after the carrier has cancelled. One re-sent under a
     * new event id (an operator's, for an order that never heard the answer) gets the answer again if it was given, and
     * nothing while it is owed: the cancellation under way answers it when it ends.
     */
    @Transactional
    public void onOrderCancelling(EventEnvelope<?> event, OrderCancelling cancelling, InboxClaim claim) {
        Optional<Shipment> existing = shipments.lockByOrderIdForChange(event.orderId(), claim);
        if (claim.duplicate()) {
            return;
        }
        onShipmentOf(event, existing, shipment -> {
            if (shipment.isCancellationUnderway()) {
                Optional<ShipmentCancelled> again = shipment.repeatCancellationAnswer();
                if (again.isEmpty()) {
                    LOG.infof("Shipment %s of order %s is already %s: OrderCancelling %s skipped, answered when the "
                                    + "cancellation ends", shipment.id(), event.orderId(),
                            shipment.isCancelRequested() ? "to be cancelled" : shipment.status(), event.eventId());
                    return List.of();
                }
                // published here, not returned: publish() would name the first OrderCancelling its cause, and this
                // answer is the re-sent one's
                outbox.publish(event.orderId(), again.get());
                LOG.infof("Shipment %s of order %s is already CANCELLED: OrderCancelling %s (requested by %s) answered "
                        + "again with ShipmentCancelled", shipment.id(), event.orderId(), event.eventId(),
                        cancelling.requestedBy());
                return List.of();
            }
            ShipmentStatus before = shipment.status();
            Instant now = Instant.now();
            claimedCallsIfAny().flatMap(calls -> calls.withdraw(shipment.id())).ifPresent(unsent -> {
                // claimed by an earlier event of this transaction (a batch), handed to no caller yet: none went out
                shipment.withdrawClaim(unsent.claimedUntil(), now);
                LOG.infof("Shipment %s of order %s: the create call claimed in this transaction is not made",
                        shipment.id(), event.orderId());
            });
            Optional<ShipmentCancelled> answer = shipment.cancel(event.eventId(), now);
            if (answer.isPresent()) {
                LOG.infof("Shipment %s of order %s cancelled from %s (%s): nothing to undo at the carrier",
                        shipment.id(), event.orderId(), before, cancelling.reason());
            } else if (shipment.isCancelRequested()) {
                LOG.infof("Shipment %s of order %s: cancel requested (%s) while the carrier is being called; answered "
                        + "once the call resolved", shipment.id(), event.orderId(), cancelling.reason());
            } else {
                LOG.infof("Shipment %s of order %s: cancelling at the carrier (%s)", shipment.id(), event.orderId(),
                        cancelling.reason());
            }
            wakeIfDue(shipment);
            return answer.<List<ShippingEvent>>map(List::of).orElse(List.of());
        });
    }

    /** ShipmentRetryRequested: an operator asks to try the carrier again for a shipment on hold. */
    @Transactional
    public void onShipmentRetryRequested(EventEnvelope<?> event, ShipmentRetryRequested retry, InboxClaim claim) {
        Optional<Shipment> found = shipments.lockByOrderIdForChange(event.orderId(), claim);
        if (claim.duplicate()) {
            return;
        }
        if (found.isEmpty()) {
            LOG.infof("Retry of the shipment of order %s requested by %s, but this order has no shipment: skipped",
                    event.orderId(), retry.requestedBy());
            return;
        }
        Shipment shipment = found.get();
        Shipment.Progress read = shipment.progress();
        if (shipment.status() != ShipmentStatus.ON_HOLD) {
            LOG.warnf("Retry of shipment %s of order %s requested by %s, but it is %s, not ON_HOLD: skipped",
                    shipment.id(), event.orderId(), retry.requestedBy(), shipment.status());
            return;
        }
        shipment.requestRetry(event.eventId(), Instant.now());
        LOG.infof("Shipment %s of order %s: retry requested by %s, attempts reset", shipment.id(), event.orderId(),
                retry.requestedBy());
        wakeIfDue(shipment);
        store(shipment, shipments.update(shipment, read), List.of());
    }

    // ---- the worker's side: claims and carrier outcomes

    /** Claims the shipment for a carrier call if one is due and nobody is making it. */
    @Transactional
    public Optional<CarrierWork> claim(UUID shipmentId) {
        Instant now = Instant.now();
        return shipments.lockByIdUnlessLocked(shipmentId)
                .filter(shipment -> shipment.isDue(now))
                .map(shipment -> {
                    shipment.startAttempt(now, lease);
                    return CarrierWork.of(shipment);
                });
    }

    /** Claims up to {@code limit} shipments whose carrier call is due; rows another replica holds are skipped. */
    @Transactional
    public List<CarrierWork> claimDue(int limit) {
        Instant now = Instant.now();
        return shipments.lockDue(now, limit).stream()
                .filter(shipment -> shipment.isDue(now))
                .map(shipment -> {
                    shipment.startAttempt(now, lease);
                    return CarrierWork.of(shipment);
                })
                .toList();
    }

    /**
     * What became of a carrier shipment under a shipment's key: {@code recorded} on the shipment now; else known
     * already, or, with {@code recordedAnother}, a second parcel of a shipment that recorded another one (or none:
     * refused). A reconciliation counts only what it recorded.
     */
    public record CarrierShipmentNoted(boolean recorded, Optional<ShipmentRepository.AtCarrier> recordedAnother) {
    }

    @Transactional
    public CarrierShipmentNoted onCreatedAtCarrier(UUID shipmentId, String carrierShipmentId) {
        ShipmentRepository.AtCarrier[] other = new ShipmentRepository.AtCarrier[1];
        boolean[] recorded = new boolean[1];
        onShipment(shipmentId, shipment -> {
            ShipmentStatus before = shipment.status();
            if (shipment.carrierShipmentId() != null || before == ShipmentStatus.REJECTED) {
                // the report adopted one create of a call in flight, or the call's answer came after the report's (the
                // shipment may be cancelled or cancelling by now): the same parcel is known already; another is a
                // second one, made under a key the carrier forgot. A refused shipment has none: an earlier call went
                // through unseen and a later one, made anew under the forgotten key, was refused, so the saga is told
                // the shipment failed and its parcel must go
                if (!carrierShipmentId.equals(shipment.carrierShipmentId())) {
                    other[0] = atCarrier(shipment);
                }
                return List.of();
            }
            ShipmentCreated created = shipment.noteCreated(carrierShipmentId, Instant.now());
            recorded[0] = true;
            LOG.infof("Shipment %s of order %s created at the carrier as %s", shipmentId, shipment.orderId(),
                    carrierShipmentId);
            if (before == ShipmentStatus.ON_HOLD) {
                LOG.warnf("Shipment %s of order %s: the create call of an earlier claim landed after the shipment went "
                        + "on hold; no operator retry is needed", shipmentId, shipment.orderId());
            } else if (before == ShipmentStatus.CANCELLING || before == ShipmentStatus.CANCELLED) {
                LOG.warnf("Shipment %s of order %s: a create call landed after the order's cancellation looked for it; "
                        + "cancelling %s at the carrier too", shipmentId, shipment.orderId(), carrierShipmentId);
            } else if (shipment.status() == ShipmentStatus.CANCELLING) {
                LOG.infof("Shipment %s of order %s: the order was cancelled during the call, cancelling at the carrier",
                        shipmentId, shipment.orderId());
            }
            wakeIfDue(shipment);
            return List.of(created);
        });
        return new CarrierShipmentNoted(recorded[0], Optional.ofNullable(other[0]));
    }

    @Transactional
    public void onRejectedByCarrier(CarrierWork work, String reason) {
        UUID shipmentId = work.shipmentId();
        onShipment(shipmentId, shipment -> {
            if (!shipment.isClaimedBy(work.claimedUntil())) {
                return ignoreReplaced(shipment, work, "rejection (" + reason + ")");
            }
            List<ShippingEvent> events = shipment.noteRejected(work.claimedUntil(), reason, Instant.now());
            LOG.warnf("Shipment %s of order %s rejected by the carrier: %s%s", shipmentId, shipment.orderId(), reason,
                    shipment.status() == ShipmentStatus.CANCELLED ? "; the order's cancellation is answered" : "");
            return events;
        });
    }

    @Transactional
    public void onCarrierUnavailable(CarrierWork work, String reason, boolean uncertain) {
        UUID shipmentId = work.shipmentId();
        onShipment(shipmentId, shipment -> {
            if (!shipment.isClaimedBy(work.claimedUntil())) {
                return ignoreReplaced(shipment, work, "failure (" + reason + ")");
            }
            List<ShippingEvent> events = shipment.noteCarrierUnavailable(work.claimedUntil(), reason, uncertain,
                    Instant.now(), retryPolicy());
            switch (shipment.status()) {
                case REQUESTED -> LOG.warnf("Carrier unavailable for shipment %s of order %s (attempt %d of %d): %s; "
                                + "next attempt at %s", shipmentId, shipment.orderId(), shipment.attempts(), maxAttempts,
                        reason, shipment.nextAttemptAt());
                case ON_HOLD -> {
                    // the order now waits for a person (DESIGN: no automatic refund), who must hear of it: once the
                    // hold is committed, as a rolled-back one would be told and counted again on the next attempt
                    int attempts = shipment.attempts();
                    AfterCommit.run(transactions, () -> {
                        shipmentsHeld.increment();
                        LOG.errorf("ALERT shipment held for an operator: shipment %s of order %s ON HOLD after %d "
                                + "attempts (%s); nothing is refunded or cancelled: retry-shipping or cancel",
                                shipmentId, shipment.orderId(), attempts, reason);
                    });
                }
                default -> LOG.infof("Carrier unavailable for shipment %s of order %s (%s); the order is cancelled: "
                        + "no further attempt, shipment %s", shipmentId, shipment.orderId(), reason, shipment.status());
            }
            wakeIfDue(shipment);
            return events;
        });
    }

    /**
     * The cancellation's call answered: {@code carrierShipmentId} is cancelled at the carrier, or (null) the lookup by
     * key found none.
     *
     * @return the shipment as it recorded its carrier shipment, if that is another than the one cancelled: a lookup
     * under a key the carrier forgot found a second parcel, which the caller reports as one
     */
    @Transactional
    public Optional<ShipmentRepository.AtCarrier> onCancelledAtCarrier(UUID shipmentId, String carrierShipmentId) {
        ShipmentRepository.AtCarrier[] other = new ShipmentRepository.AtCarrier[1];
        onShipment(shipmentId, shipment -> {
            Optional<ShipmentCancelled> cancelled = shipment.noteCancelled(carrierShipmentId, Instant.now());
            if (cancelled.isEmpty()) {
                LOG.warnf("Shipment %s of order %s: the carrier had %s when asked, but %s was recorded meanwhile (a create "
                                + "call landed, or the carrier's report showed it); cancelling that", shipmentId,
                        shipment.orderId(), carrierShipmentId == null ? "none" : carrierShipmentId,
                        shipment.carrierShipmentId());
                if (carrierShipmentId != null) {
                    other[0] = atCarrier(shipment);
                }
                wakeIfDue(shipment);
                return List.of();
            }
            LOG.infof("Shipment %s of order %s cancelled at the carrier (%s)", shipmentId, shipment.orderId(),
                    carrierShipmentId == null ? "the carrier has none" : carrierShipmentId);
            return List.of(cancelled.get());
        });
        return Optional.ofNullable(other[0]);
    }

    private static ShipmentRepository.AtCarrier atCarrier(Shipment shipment) {
        return new ShipmentRepository.AtCarrier(shipment.id(), shipment.orderId(), shipment.correlationId(),
                shipment.carrierShipmentId());
    }

    /** Counts a compensation that failed for a cause of its own, outside {@link #onCancelFailed}. */
    void countCompensationFailure() {
        compensationFailures.increment();
    }

    /** A failed compensation: alert, count, and schedule the next attempt (there is always one). */
    @Transactional
    public void onCancelFailed(CarrierWork work, String parcel, String reason, boolean refused) {
        UUID shipmentId = work.shipmentId();
        onShipment(shipmentId, shipment -> {
            if (!shipment.isClaimedBy(work.claimedUntil())) {
                return ignoreReplaced(shipment, work, "failure (" + reason + ")");
            }
            shipment.noteCancelFailed(work.claimedUntil(), parcel, reason, refused, Instant.now(), retryPolicy());
            compensationFailures.increment();
            LOG.errorf("ALERT compensation failed: shipment cancel of order %s (shipment %s) attempt %d: %s; next "
                            + "attempt at %s", shipment.orderId(), shipmentId, shipment.cancelAttempts(), reason,
                    shipment.nextAttemptAt());
            wakeIfDue(shipment);
            return List.of();
        });
    }

    /**
     * An operator's word that nothing of the order's shipment is left at the carrier, where the carrier's API kept
     * refusing its cancellation ({@link Shipment#confirmCancelledByHand}): the cancellation is answered, and the
     * order's compensation goes on, order-service logging who said so among the order's operator actions. Logged at
     * WARN here too: the order is refunded on that word. Asked again once it holds (an answer lost), it changes
     * nothing.
     *
     * @param carrierShipmentId the parcel the operator settled with the carrier (null: none under our key)
     * @return the shipment as it stands after; empty if the order has none
     * @throws NotConfirmable when the shipment's cancellation cannot end on an operator's word now, saying why
     */
    @Transactional
    public Optional<Shipment> confirmCancelledByHand(UUID orderId, String carrierShipmentId, String operator,
                                                     String reason) {
        Optional<Shipment> found = shipments.findByOrderId(orderId);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        Shipment[] after = new Shipment[1];
        try (Correlation.Scope ignored = Correlation.open(found.get().correlationId(), null)) {
            onShipment(found.get().id(), shipment -> {
                after[0] = shipment;
                Instant now = Instant.now();
                shipment.whyNotConfirmable(carrierShipmentId, now).ifPresent(why -> {
                    throw new NotConfirmable("the shipment of order " + orderId + " " + why);
                });
                if (shipment.status() == ShipmentStatus.CANCELLED) {
                    return List.of();
                }
                String refused = shipment.lastError();
                ShipmentCancelled cancelled = shipment.confirmCancelledByHand(carrierShipmentId, operator, reason,
                        now);
                LOG.warnf("Shipment %s (%s) of order %s confirmed cancelled at the carrier by operator %s after %d "
                                + "refused attempt(s) (last: %s): %s", shipment.id(), carrierShipmentId, orderId,
                        operator, shipment.cancelAttempts(), refused, reason);
                return List.of(cancelled);
            });
        }
        return Optional.of(after[0]);
    }

    /** A shipment's cancellation that an operator's word cannot end now; the message says why. */
    public static final class NotConfirmable extends RuntimeException {

        NotConfirmable(String message) {
            super(message);
        }
    }

    @Transactional
    public Optional<Shipment> find(UUID orderId) {
        return shipments.findByOrderId(orderId);
    }

    // ----

    RetryPolicy retryPolicy() {
        return new RetryPolicy(maxAttempts, baseDelay, maxDelay);
    }

    private static List<ShippingEvent> ignoreReplaced(Shipment shipment, CarrierWork work, String outcome) {
        LOG.warnf("Shipment %s of order %s: %s of a claim that ran out and was replaced (attempt %d) ignored; the row "
                        + "is %s, %s", shipment.id(), shipment.orderId(), outcome, work.attempt(), shipment.status(),
                shipment.claimedUntil() == null ? "not claimed" : "claimed until " + shipment.claimedUntil());
        return List.of();
    }

    /**
     * Applies an event's step to the order's shipment, read locked with the event's claim (which took the order's
     * advisory lock before the read: two first facts of an order never both open its shipment); the order's first
     * event opens it. The step changes the shipment (and claims its carrier call, if that is due) and returns the events to
     * publish; {@link #store} writes it all. A new shipment is inserted once with the state the step left it in: an
     * INSERT of an empty shipment and an UPDATE with its address would be two writes for one.
     */
    private void onShipmentOf(EventEnvelope<?> event, Optional<Shipment> existing,
                              Function<Shipment, List<ShippingEvent>> step) {
        if (existing.isPresent()) {
            Shipment shipment = existing.get();
            Shipment.Progress read = shipment.progress();
            List<ShippingEvent> events = step.apply(shipment);
            store(shipment, shipments.update(shipment, read), events);
        } else {
            Shipment shipment = Shipment.open(event.orderId(), event.correlationId(), Instant.now());
            List<ShippingEvent> events = step.apply(shipment);
            store(shipment, Optional.of(shipments.insertion(shipment)), events);
        }
    }

    /** Applies a carrier outcome's step to the shipment, locked, as {@link #onShipmentOf} does an event's. */
    private void onShipment(UUID shipmentId, Function<Shipment, List<ShippingEvent>> step) {
        Shipment shipment = shipments.lockByIdForChange(shipmentId)
                .orElseThrow(() -> new IllegalStateException("no shipment " + shipmentId));
        Shipment.Progress read = shipment.progress();
        List<ShippingEvent> events = step.apply(shipment);
        store(shipment, shipments.update(shipment, read), events);
    }

    /**
     * Writes a step's change of the shipment in the round trip of the first event it caused (the shipment is detached:
     * nothing else writes it), or alone if it caused none; a second event (a rejection that also answers a
     * cancellation) costs a round trip of its own. Written by Hibernate at the flush, the change was a round trip
     * apart from the event's on every step that publishes.
     */
    private void store(Shipment shipment, Optional<TransactionalWrites.Write> change, List<ShippingEvent> events) {
        if (events.isEmpty()) {
            change.ifPresent(write -> writes.write(write,
                    () -> "write shipment " + shipment.id() + " of order " + shipment.orderId()));
            return;
        }
        publish(shipment, events.get(0), change);
        events.subList(1, events.size()).forEach(event -> publish(shipment, event, Optional.empty()));
    }

    /** A cancellation answers the OrderCancelling that asked for it, whichever step publishes it. */
    private void publish(Shipment shipment, ShippingEvent event, Optional<TransactionalWrites.Write> alongside) {
        Correlation.Context context = Correlation.current()
                .orElseThrow(() -> new IllegalStateException("no correlation scope open for shipment " + shipment.id()));
        Function<EventEnvelope<ShippingEvent>, TransactionalWrites.Write> write =
                alongside.isEmpty() ? null : envelope -> alongside.get();
        UUID cause = shipment.cancelCausedByEventId();
        if (event instanceof ShipmentCancelled && cause != null && !cause.equals(context.causationId())) {
            try (Correlation.Scope ignored = Correlation.open(context.correlationId(), cause)) {
                outbox.publish(shipment.orderId(), event, write);
            }
        } else {
            outbox.publish(shipment.orderId(), event, write);
        }
    }

    private void wakeIfDue(Shipment shipment) {
        Instant now = Instant.now();
        if (shipment.isDue(now)) {
            // claimed here, under this transaction's row lock: saves the worker a claiming transaction per call
            shipment.startAttempt(now, lease);
            claimedCalls().add(CarrierWork.of(shipment));
        } else if (shipment.status().hasCarrierWork() && shipment.nextAttemptAt() != null) {
            due.fire(new ShipmentDue(shipment.id(), shipment.nextAttemptAt()));
        }
    }

    /**
     * The calls this transaction claimed, made with its first claim and fired then, once: the worker acts on what it
     * holds when the transaction has committed. A map in memory, no round trip.
     */
    private ClaimedCalls claimedCalls() {
        return claimedCallsIfAny().orElseGet(() -> {
            ClaimedCalls calls = new ClaimedCalls();
            transactions.putResource(CLAIMED_CALLS, calls);
            claimed.fire(calls);
            return calls;
        });
    }

    private Optional<ClaimedCalls> claimedCallsIfAny() {
        return Optional.ofNullable((ClaimedCalls) transactions.getResource(CLAIMED_CALLS));
    }

    private static String describe(Shipment shipment) {
        return switch (shipment.status()) {
            case REQUESTED -> "requesting it at the carrier";
            case PENDING -> shipment.knowsOrder() ? "waiting for the payment" : "waiting for the order";
            default -> "shipment " + shipment.status() + ", no forward step";
        };
    }
}
