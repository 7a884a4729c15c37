package dev.ordersaga.order.application;

import dev.ordersaga.events.Ids;
import dev.ordersaga.eventing.AfterCommit;
import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.NotVisibleYetException;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderEvent;
import dev.ordersaga.events.PaymentRefunded;
import dev.ordersaga.events.Reasons;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.StockReleased;
import dev.ordersaga.events.Topics;
import dev.ordersaga.order.domain.Address;
import dev.ordersaga.order.domain.IdempotencyKey;
import dev.ordersaga.order.domain.OperatorAction;
import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.OrderItem;
import dev.ordersaga.order.domain.OrderStatus;
import dev.ordersaga.order.domain.SagaEventRecord;
import dev.ordersaga.order.persistence.IdempotencyKeyRepository;
import dev.ordersaga.order.persistence.OperatorActionRepository;
import dev.ordersaga.order.persistence.OrderRepository;
import dev.ordersaga.order.persistence.SagaEventRepository;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * One transactional method per command and per incoming fact: load the order, let its state machine decide, hand
 * the resulting event to the outbox and note everything in the saga timeline, in one transaction.
 */
@ApplicationScoped
public class OrderService {

    private static final Logger LOG = Logger.getLogger(OrderService.class);

    /** How long after its id was made an order that does not show may still be becoming visible ({@link #placedLately}). */
    private static final Duration PLACED_LATELY = Duration.ofMinutes(1);

    @Inject
    OrderRepository orders;

    @Inject
    SagaEventRepository timeline;

    @Inject
    IdempotencyKeyRepository idempotencyKeys;

    @Inject
    OperatorActionRepository operatorActions;

    @Inject
    OutboxWriter outbox;

    @Inject
    TransactionalWrites writes;

    @Inject
    MeterRegistry meters;

    @Inject
    TransactionSynchronizationRegistry transactions;

    public record PlaceOrder(String customerId, List<OrderItem> items, String currency, Address shippingAddress,
                             String paymentToken, String correlationId) {
    }

    /** The order a request made, and whether it was made by an earlier request with the same key. */
    public record Placement(Order order, boolean replayed) {
    }

    /** @param requestHash the request's hash, needed only with an idempotency key */
    @Transactional
    public Placement place(PlaceOrder command, Optional<String> idempotencyKey, String requestHash) {
        Optional<Order> earlier = idempotencyKey.flatMap(key -> replay(key, requestHash));
        if (earlier.isPresent()) {
            return new Placement(earlier.get(), true);
        }
        Order.Placed placed = Order.place(Ids.timeOrdered(), command.customerId(), command.items(), command.currency(),
                command.shippingAddress(), command.paymentToken(), command.correlationId());
        // the order, its items, its event and its timeline entry in one round trip; the key (rare) after it
        publish(placed.order(), placed.event(), orders.insertion(placed.order()));
        // flushed here, not at commit: a concurrent request that placed an order with the same key makes this insert
        // wait for its commit and then fail inside this method, where the caller answers with that order
        idempotencyKey.ifPresent(key -> idempotencyKeys.persistAndFlush(new IdempotencyKey(key, requestHash, placed.order().id())));
        LOG.infof("Order %s placed: %d item(s), total %s %s", placed.order().id(), command.items().size(),
                placed.order().total(), command.currency());
        return new Placement(placed.order(), false);
    }

    /** The order with its items. */
    @Transactional
    public Optional<Order> find(UUID id) {
        return orders.findWithItems(id);
    }

    /**
     * The order an earlier request with this key placed, if any.
     *
     * @throws IdempotencyKeyReusedException if that request had another body
     */
    @Transactional
    public Optional<Order> replay(String idempotencyKey, String requestHash) {
        Optional<IdempotencyKey> known = idempotencyKeys.findByIdOptional(idempotencyKey);
        if (known.isPresent() && !known.get().sameRequest(requestHash)) {
            throw new IdempotencyKeyReusedException(idempotencyKey);
        }
        return known.map(k -> orders.findById(k.orderId()));
    }

    /**
     * The customer cancels: compensation starts. A cancel of an order already cancelling or cancelled is answered
     * with it and changes nothing: a client that lost the first answer and asks again learns that its cancel holds,
     * where a refusal would read as "too late".
     */
    @Transactional
    public Order cancelByCustomer(UUID orderId) {
        Order order = orders.findForUpdate(orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
        if (order.status() == OrderStatus.COMPENSATING || order.status() == OrderStatus.CANCELLED) {
            LOG.infof("Order %s is %s already: the customer's cancel changes nothing", orderId, order.status());
            return withItems(order);
        }
        publish(order, order.startCompensation("cancelled by the customer", "customer"));
        LOG.infof("Order %s cancelled by the customer: compensating", orderId);
        return withItems(order);
    }

    /** An operator cancels: full compensation (release, refund, cancel shipment), recorded with who and when. */
    @Transactional
    public Order cancelByOperator(UUID orderId, String operator, String reason) {
        Order order = orders.findForUpdate(orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
        // the reason is the customer's to read, the operator's name is not: it is in the order's log of actions
        String why = reason == null || reason.isBlank() ? "cancelled by an operator" : reason;
        publish(order, order.startCompensation(why, "operator:" + operator));
        operatorActions.persist(new OperatorAction(orderId, "cancel", operator, why));
        LOG.warnf("Order %s cancelled by operator %s: compensating", orderId, operator);
        return withItems(order);
    }

    /** An operator asks every participant again for its answer to a compensating order's cancellation. */
    @Transactional
    public Order askForCompensationAgain(UUID orderId, String operator) {
        Order order = orders.findForUpdate(orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
        publish(order, order.askForCompensationAgain("operator:" + operator));
        operatorActions.persist(new OperatorAction(orderId, "resend-cancellation", operator, order.compensationStatus()));
        LOG.warnf("Order %s: operator %s asked the participants again for their answers to its cancellation (%s)",
                orderId, operator, order.compensationStatus());
        return withItems(order);
    }

    /** An operator sends an order whose payment was held back to payment, to be charged again. */
    @Transactional
    public Order retryPayment(UUID orderId, String operator) {
        return sendBack(orderId, operator, "retry-payment", Order::requestPaymentRetry, "payment to charge again");
    }

    /** An operator sends an order that waits for the carrier back to shipping. */
    @Transactional
    public Order retryShipping(UUID orderId, String operator) {
        return sendBack(orderId, operator, "retry-shipping", Order::requestShipmentRetry,
                "shipping to try the carrier again");
    }

    /** An order that waits for a person goes back to the participant it waits for, with what it waited for on record. */
    private Order sendBack(UUID orderId, String operator, String action, BiFunction<Order, String, OrderEvent> request,
                           String asked) {
        Order order = orders.findForUpdate(orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
        String waitedFor = order.waitingReason();
        publish(order, request.apply(order, "operator:" + operator));
        operatorActions.persist(new OperatorAction(orderId, action, operator, waitedFor));
        LOG.warnf("Order %s: operator %s asked %s", orderId, operator, asked);
        return withItems(order);
    }

    /**
     * Applies a fact of another service to its order, unless it was applied before: its inbox claim, sent with the
     * order's locked read, finds it, or, once the inbox has forgotten it, the order's timeline holds it. The event is
     * noted in the timeline in any case; one for an order this service did not place (not one of its sagas) is
     * skipped.
     *
     * @throws NotVisibleYetException if an order placed moments ago does not show: retried, parked if it never does
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public void apply(EventEnvelope<?> event, InboxClaim claim, Function<Order, Optional<OrderEvent>> fact) {
        Optional<OrderRepository.Locked> found = orders.lockForChange(event.orderId(), event.eventId(), claim);
        if (claim.duplicate()) {
            return;
        }
        if (found.isPresent() && found.get().factNoted()) {
            // its inbox entry was pruned: applied again, it would be noted twice, which the timeline refuses, and the
            // consumer would retry it until its channel stopped for good
            LOG.infof("Duplicate %s %s for order %s skipped: in its timeline already", event.type(), event.eventId(),
                    event.orderId());
            return;
        }
        SagaEventRecord record = new SagaEventRecord(event.eventId(), event.orderId(), event.type(),
                producerOf(event.topic()), event.occurredAt(), event.correlationId(), event.causationId());
        if (found.isEmpty()) {
            if (placedLately(event.orderId(), Instant.now())) {
                // its POST's commit may be streamed and not yet visible: skipped, the saga would stop for good
                throw new NotVisibleYetException(event.type() + " for order " + event.orderId()
                        + ", placed moments ago, which this service does not show (yet)");
            }
            LOG.infof("%s for unknown order %s skipped: not one this service placed", event.type(), event.orderId());
            return;
        }
        if (event.payload() instanceof ShipmentCancelled cancelled && cancelled.confirmedBy() != null) {
            // the order is refunded on an operator's word rather than the carrier's: who is kept with the operators'
            // actions, the word in the timeline, which customers read
            confirmedByHand(event, record, "confirm-shipment-cancelled", "confirmed cancelled at the carrier",
                    cancelled.confirmedBy(), cancelled.confirmation());
        } else if (event.payload() instanceof PaymentRefunded refunded && refunded.confirmedBy() != null) {
            // cancelled on an operator's word that the money is back, where the provider's API kept refusing the refund
            confirmedByHand(event, record, "confirm-payment-refunded", "confirmed refunded outside the provider's API",
                    refunded.confirmedBy(), refunded.confirmation());
        }
        Order order = found.get().order();
        Order.Progress progress = order.progress();
        var before = order.status();
        Optional<OrderEvent> next = fact.apply(order);
        // an undoing is what compensation waits for, never late: only a step's outcome is
        if (order.status() == before && next.isEmpty() && (before.isFinal() || before == OrderStatus.COMPENSATING)
                && !undoesAStep(event.payload())) {
            record.note("late: the order was " + before + "; the producer undoes its own step");
            LOG.infof("Late %s for order %s in %s: recorded, the order does not move", event.type(), order.id(), before);
        }
        // the order's change, the fact in the timeline and the event it caused: one round trip
        TransactionalWrites.Write entry = timeline.entry(record);
        TransactionalWrites.Write noted = orders.update(order, progress).map(change -> change.then(entry)).orElse(entry);
        if (next.isPresent()) {
            publish(order, next.get(), noted);
        } else {
            writes.write(noted, () -> "note " + record.type() + " in the timeline of order " + record.orderId());
        }
        if (order.status() != before) {
            LOG.infof("Order %s: %s -> %s on %s", order.id(), before, order.status(), event.type());
        }
    }

    /** An undoing an operator confirmed by hand: who, with the operators' actions; their word, in the timeline. */
    private void confirmedByHand(EventEnvelope<?> event, SagaEventRecord record, String action, String what,
                                 String operator, String confirmation) {
        record.note(Reasons.fit(what + " by an operator: " + confirmation, SagaEventRecord.MAX_NOTE_LENGTH));
        operatorActions.persist(new OperatorAction(event.orderId(), action, operator, confirmation));
    }

    /**
     * Whether an order this service does not show may be one it placed moments ago, whose POST's commit logical
     * decoding streamed before the POST's session made it visible: order ids tell when they were made (version 7).
     * The window lasts while that session waits for the CPU; a minute either way leaves room for replicas' clocks.
     * An older id, or one of another kind, is not an order this service placed lately: however late its fact comes,
     * a commit of the order would have shown by then.
     */
    static boolean placedLately(UUID orderId, Instant now) {
        if (orderId.version() != 7) {
            return false;
        }
        long age = now.toEpochMilli() - Ids.unixMillisOf(orderId);
        return Math.abs(age) < PLACED_LATELY.toMillis();
    }

    /** The locked read left the items unread; the answer to a command shows them. */
    private Order withItems(Order order) {
        return orders.findWithItems(order.id()).orElseThrow();
    }

    private void publish(Order order, OrderEvent event) {
        publish(order, event, null);
    }

    /**
     * The event goes to the outbox and into the timeline, after {@code before} if given (the fact that caused it, or
     * the new order itself), in one round trip.
     */
    private void publish(Order order, OrderEvent event, TransactionalWrites.Write before) {
        EventEnvelope<OrderEvent> envelope = outbox.publish(order.id(), event, published -> {
            TransactionalWrites.Write entry = timeline.entry(new SagaEventRecord(published.eventId(), order.id(),
                    published.type(), "order", published.occurredAt(), published.correlationId(),
                    published.causationId()));
            return before == null ? entry : before.then(entry);
        });
        switch (envelope.type()) {
            case "OrderConfirmed" -> countFinishedOnCommit("CONFIRMED");
            case "OrderCancelled" -> countFinishedOnCommit("CANCELLED");
            default -> {
            }
        }
    }

    /**
     * Once the transaction commits: one that rolls back (a consumer's batch, applied again one event at a time) would
     * count the same order again.
     */
    private void countFinishedOnCommit(String status) {
        AfterCommit.run(transactions, () -> meters.counter("saga.orders.finished", "status", status).increment());
    }

    /** StockReleased, PaymentRefunded, ShipmentCancelled: a participant has undone its step. */
    private static boolean undoesAStep(SagaEvent fact) {
        return fact instanceof StockReleased || fact instanceof PaymentRefunded || fact instanceof ShipmentCancelled;
    }

    private static String producerOf(String topic) {
        return switch (topic) {
            case Topics.ORDER_EVENTS -> "order";
            case Topics.INVENTORY_EVENTS -> "inventory";
            case Topics.PAYMENT_EVENTS -> "payment";
            case Topics.SHIPPING_EVENTS -> "shipping";
            default -> topic;
        };
    }
}
