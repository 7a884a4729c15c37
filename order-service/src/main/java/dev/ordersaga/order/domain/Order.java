package dev.ordersaga.order.domain;

import dev.ordersaga.events.OrderCancelled;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderConfirmed;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.OrderEvent;
import dev.ordersaga.events.OrderLine;
import dev.ordersaga.events.PaymentRetryRequested;
import dev.ordersaga.events.Reasons;
import dev.ordersaga.events.ShipmentRetryRequested;
import dev.ordersaga.events.ShippingAddress;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Embedded;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.FetchType;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.OrderColumn;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * An order and its state machine. Every transition is a method named after the fact it records; it checks the
 * current state and returns the event to publish, which the caller hands to the outbox in the same transaction.
 * No other class sets the status.
 *
 * <pre>
 * PENDING -> STOCK_RESERVED -> PAID -> SHIPPING_CREATED -> CONFIRMED
 * PENDING | STOCK_RESERVED | PAID -> COMPENSATING -> CANCELLED
 * </pre>
 */
@Entity
@Table(name = "orders")
public class Order {

    /** The width of {@code cancel_reason} and {@code waiting_reason}. */
    public static final int MAX_REASON_LENGTH = 512;

    @Id
    private UUID id;

    @Column(name = "customer_id", nullable = false)
    private String customerId;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    private OrderStatus status;

    // lazy: the facts of the saga never read the items, and PostgreSQL cannot lock a row read with an outer join,
    // so an eager join would cost every locked read a second query (OrderRepository#findForUpdate)
    @ElementCollection(fetch = FetchType.LAZY)
    @CollectionTable(name = "order_item", joinColumns = @JoinColumn(name = "order_id"))
    @OrderColumn(name = "line_no")
    private List<OrderItem> items = new ArrayList<>();

    @Column(nullable = false, precision = 19, scale = 4)
    private BigDecimal total;

    @Column(nullable = false, length = 3)
    private String currency;

    @Embedded
    private Address shippingAddress;

    @Column(name = "correlation_id", nullable = false)
    private String correlationId;

    @Column(name = "cancel_reason")
    private String cancelReason;

    /** Why the order waits for a person, and since when; null while it does not. */
    @Column(name = "waiting_reason")
    private String waitingReason;

    @Column(name = "waiting_since")
    private Instant waitingSince;

    /** Whose step the order waits for a person on; null while it does not wait. */
    @Enumerated(EnumType.STRING)
    @Column(name = "waiting_for")
    private Participant waitingFor;

    /* facts heard ahead of the order's state, and the compensations done */
    @Column(name = "stock_reserved", nullable = false)
    private boolean stockReserved;

    @Column(name = "paid", nullable = false)
    private boolean paid;

    @Column(name = "shipment_created", nullable = false)
    private boolean shipmentCreated;

    @Column(name = "stock_released", nullable = false)
    private boolean stockReleased;

    @Column(name = "payment_refunded", nullable = false)
    private boolean paymentRefunded;

    @Column(name = "shipment_cancelled", nullable = false)
    private boolean shipmentCancelled;

    @Column(name = "created_at", nullable = false)
    private Instant createdAt;

    @Column(name = "updated_at", nullable = false)
    private Instant updatedAt;

    @Version
    private long version;

    protected Order() {
    }

    /**
     * An order as its row stores it, read without Hibernate for a fact to change (the repository's locked read): it
     * is never managed, and its change is written by the repository with the version it was read at. Its items are
     * not read; the facts of the saga never need them.
     */
    public static Order stored(UUID id, String customerId, BigDecimal total, String currency, Address shippingAddress,
                               String correlationId, Instant createdAt, Progress progress) {
        Order order = new Order();
        order.id = id;
        order.customerId = customerId;
        order.status = progress.status();
        order.items = null;
        order.total = total;
        order.currency = currency;
        order.shippingAddress = shippingAddress;
        order.correlationId = correlationId;
        order.cancelReason = progress.cancelReason();
        order.waitingReason = progress.waitingReason();
        order.waitingSince = progress.waitingSince();
        order.waitingFor = progress.waitingFor();
        order.stockReserved = progress.stockReserved();
        order.paid = progress.paid();
        order.shipmentCreated = progress.shipmentCreated();
        order.stockReleased = progress.stockReleased();
        order.paymentRefunded = progress.paymentRefunded();
        order.shipmentCancelled = progress.shipmentCancelled();
        order.createdAt = createdAt;
        order.updatedAt = progress.updatedAt();
        order.version = progress.version();
        return order;
    }

    /** Step 1 of the saga. The payment token goes into the event for payment-service and is not stored here. */
    public static Placed place(UUID id, String customerId, List<OrderItem> items, String currency, Address address,
                               String paymentToken, String correlationId) {
        if (items.isEmpty()) {
            throw new IllegalArgumentException("an order has at least one item");
        }
        Order order = new Order();
        order.id = id;
        order.customerId = customerId;
        order.items = new ArrayList<>(items);
        order.total = totalOf(items);
        order.currency = currency;
        order.shippingAddress = address;
        order.correlationId = correlationId;
        order.status = OrderStatus.PENDING;
        order.createdAt = Instant.now();
        order.updatedAt = order.createdAt;
        OrderCreated created = new OrderCreated(customerId,
                items.stream().map(i -> new OrderLine(i.sku(), i.quantity(), i.unitPrice())).toList(),
                order.total, currency,
                new ShippingAddress(address.name(), address.line1(), address.line2(), address.city(), address.postalCode(),
                        address.country()),
                paymentToken);
        return new Placed(order, created);
    }

    public record Placed(Order order, OrderCreated event) {
    }

    /*
     * The participants publish on different topics, so their facts reach the order in any order: payment may be
     * heard of before stock. A fact that comes early is remembered and applied once the order gets there, always
     * along the machine's own transitions. A fact about a step that is being undone (COMPENSATING, CANCELLED) is
     * late: it changes nothing here, because the participant heard of the cancellation too and undoes its step
     * itself. A fact the machine has no place for throws.
     */

    /** StockReserved. */
    public Optional<OrderEvent> onStockReserved() {
        switch (status) {
            case PENDING -> stockReserved = true;
            case COMPENSATING, CANCELLED -> {
                return Optional.empty();
            }
            default -> throw new IllegalTransitionException(status, "onStockReserved");
        }
        return advance();
    }

    /** PaymentSucceeded: the charge went through, so a payment's wait for an operator is over. */
    public Optional<OrderEvent> onPaymentSucceeded() {
        switch (status) {
            case PENDING, STOCK_RESERVED -> {
                paid = true;
                if (waitingFor == Participant.PAYMENT) {
                    clearWaiting();
                }
            }
            case COMPENSATING, CANCELLED -> {
                return Optional.empty();
            }
            default -> throw new IllegalTransitionException(status, "onPaymentSucceeded");
        }
        return advance();
    }

    /**
     * PaymentSucceeded for a charge that payment refunds in the same breath: it settled after the payment was
     * declined or abandoned. It pays nothing: the decline came first, on the same topic, and an order that has not
     * heard it (parked, say) keeps waiting for it rather than taking the charge for its payment, which would leave it
     * PAID with the money returned and shipping (which ignores such a charge) never shipping.
     */
    public Optional<OrderEvent> onChargeRefundedAtOnce() {
        switch (status) {
            case PENDING, STOCK_RESERVED, COMPENSATING, CANCELLED -> {
                return Optional.empty();
            }
            default -> throw new IllegalTransitionException(status, "onChargeRefundedAtOnce");
        }
    }

    /** ShipmentCreated. */
    public Optional<OrderEvent> onShipmentCreated() {
        switch (status) {
            case PENDING, STOCK_RESERVED, PAID -> {
                shipmentCreated = true;
                clearWaiting();
            }
            case COMPENSATING, CANCELLED -> {
                return Optional.empty();
            }
            default -> throw new IllegalTransitionException(status, "onShipmentCreated");
        }
        return advance();
    }

    /** StockReservationFailed, PaymentFailed or ShipmentFailed: the saga cannot go on and compensates. */
    public Optional<OrderEvent> onStepFailed(String reason) {
        switch (status) {
            case PENDING, STOCK_RESERVED, PAID -> {
                return Optional.of(startCompensation(reason, "saga"));
            }
            case COMPENSATING, CANCELLED -> {
                return Optional.empty();
            }
            default -> throw new IllegalTransitionException(status, "onStepFailed");
        }
    }

    /** ShipmentOnHold: the carrier stayed down; a person decides. Nothing is undone by itself. */
    public void onShipmentOnHold(String reason) {
        switch (status) {
            case PENDING, STOCK_RESERVED, PAID -> waitFor(Participant.SHIPPING, reason);
            case COMPENSATING, CANCELLED -> {
                // the shipment is being cancelled anyway
            }
            default -> throw new IllegalTransitionException(status, "onShipmentOnHold");
        }
    }

    /**
     * PaymentOnHold: the provider has no charge under a key it may have forgotten, and payment sends none again; a
     * person decides (cancel), unless the provider's news of the charge ends the wait first (PaymentSucceeded or
     * PaymentFailed). Nothing is undone by itself. News that the order is past the charge, heard first, makes the hold
     * stale: a shipment created or held (shipping acts only on a succeeded charge, and its topic is not ordered with
     * payment's, so a consumer behind on payment's hears it first) or the charge's success itself (a replayed dead
     * letter can bring it ahead of the hold).
     */
    public void onPaymentOnHold(String reason) {
        switch (status) {
            case PENDING, STOCK_RESERVED -> {
                if (!paid && !shipmentCreated && waitingFor != Participant.SHIPPING) {
                    waitFor(Participant.PAYMENT, reason);
                }
            }
            case COMPENSATING, CANCELLED -> {
                // the payment is answered by the cancellation anyway
            }
            default -> throw new IllegalTransitionException(status, "onPaymentOnHold");
        }
    }

    private void waitFor(Participant participant, String reason) {
        waitingFor = participant;
        waitingReason = Reasons.fit(reason, MAX_REASON_LENGTH);
        waitingSince = Instant.now();
        updatedAt = waitingSince;
    }

    /**
     * An operator, having found no charge at the provider, sends an order whose payment was held back to payment: it
     * charges again under the key the provider forgot. Only while the order waits for the payment.
     */
    public PaymentRetryRequested requestPaymentRetry(String operator) {
        if (waitingFor != Participant.PAYMENT) {
            throw new IllegalTransitionException(status, "requestPaymentRetry");
        }
        switch (status) {
            case PENDING, STOCK_RESERVED -> clearWaiting();
            default -> throw new IllegalTransitionException(status, "requestPaymentRetry");
        }
        updatedAt = Instant.now();
        return new PaymentRetryRequested(operator);
    }

    /** An operator sends an order that waits for the carrier back to shipping. */
    public ShipmentRetryRequested requestShipmentRetry(String operator) {
        if (waitingFor != Participant.SHIPPING) {
            throw new IllegalTransitionException(status, "requestShipmentRetry");
        }
        switch (status) {
            case PENDING, STOCK_RESERVED, PAID -> clearWaiting();
            default -> throw new IllegalTransitionException(status, "requestShipmentRetry");
        }
        updatedAt = Instant.now();
        return new ShipmentRetryRequested(operator);
    }

    /**
     * An operator asks the participants again for their answers to the cancellation of an order that stays
     * COMPENSATING: an answer lost on its way (a replication slot lost in a failover takes the events it had not yet
     * relayed), or a participant mended since. A new OrderCancelling, which each participant answers with where its
     * compensation stands: done, its answer again; under way, its answer when done. The order itself does not move:
     * the answers do that, and a repeated one changes nothing ({@link #onCompensated}).
     */
    public OrderCancelling askForCompensationAgain(String requestedBy) {
        switch (status) {
            case COMPENSATING -> updatedAt = Instant.now();
            default -> throw new IllegalTransitionException(status, "askForCompensationAgain");
        }
        return new OrderCancelling(cancelReason, requestedBy);
    }

    /** Whose answer to the cancellation is still missing, for a person. */
    public String compensationStatus() {
        List<String> waiting = new ArrayList<>();
        if (!stockReleased) {
            waiting.add("inventory");
        }
        if (!paymentRefunded) {
            waiting.add("payment");
        }
        if (!shipmentCancelled) {
            waiting.add("shipping");
        }
        return waiting.isEmpty() ? "every participant answered" : "waiting for " + String.join(", ", waiting);
    }

    /** StockReleased, PaymentRefunded or ShipmentCancelled: one participant has undone its step. */
    public Optional<OrderEvent> onCompensated(Participant participant) {
        switch (status) {
            case COMPENSATING -> {
                switch (participant) {
                    case INVENTORY -> stockReleased = true;
                    case PAYMENT -> paymentRefunded = true;
                    case SHIPPING -> shipmentCancelled = true;
                }
            }
            case CANCELLED -> {
                // a late refund of a late charge: the order is cancelled already
                return Optional.empty();
            }
            default -> throw new IllegalTransitionException(status, "onCompensated(" + participant + ")");
        }
        if (stockReleased && paymentRefunded && shipmentCancelled) {
            return Optional.of(cancel());
        }
        return Optional.empty();
    }

    /** Applies the facts heard so far, one legal transition at a time. */
    private Optional<OrderEvent> advance() {
        if (status == OrderStatus.PENDING && stockReserved) {
            noteStockReserved();
        }
        if (status == OrderStatus.STOCK_RESERVED && paid) {
            notePaid();
        }
        if (status == OrderStatus.PAID && shipmentCreated) {
            noteShipmentCreated();
            return Optional.of(confirm());
        }
        return Optional.empty();
    }

    /** PENDING -> STOCK_RESERVED. */
    void noteStockReserved() {
        switch (status) {
            case PENDING -> moveTo(OrderStatus.STOCK_RESERVED);
            default -> throw new IllegalTransitionException(status, "noteStockReserved");
        }
    }

    /** STOCK_RESERVED -> PAID. */
    void notePaid() {
        switch (status) {
            case STOCK_RESERVED -> moveTo(OrderStatus.PAID);
            default -> throw new IllegalTransitionException(status, "notePaid");
        }
    }

    /** PAID -> SHIPPING_CREATED. */
    void noteShipmentCreated() {
        switch (status) {
            case PAID -> moveTo(OrderStatus.SHIPPING_CREATED);
            default -> throw new IllegalTransitionException(status, "noteShipmentCreated");
        }
    }

    /** Step 5: SHIPPING_CREATED -> CONFIRMED. */
    OrderConfirmed confirm() {
        switch (status) {
            case SHIPPING_CREATED -> moveTo(OrderStatus.CONFIRMED);
            default -> throw new IllegalTransitionException(status, "confirm");
        }
        return new OrderConfirmed(total, currency);
    }

    /** What an order of these lines costs: the sum of the lines. */
    public static BigDecimal totalOf(List<OrderItem> items) {
        return items.stream().map(OrderItem::lineTotal).reduce(BigDecimal.ZERO, BigDecimal::add);
    }

    /** A step failed or someone cancelled: PENDING | STOCK_RESERVED | PAID -> COMPENSATING. */
    public OrderCancelling startCompensation(String reason, String requestedBy) {
        switch (status) {
            case PENDING, STOCK_RESERVED, PAID -> moveTo(OrderStatus.COMPENSATING);
            default -> throw new IllegalTransitionException(status, "startCompensation");
        }
        cancelReason = Reasons.fit(reason, MAX_REASON_LENGTH);
        clearWaiting();
        return new OrderCancelling(cancelReason, requestedBy);
    }

    /** Every participant has undone its step: COMPENSATING -> CANCELLED. */
    OrderCancelled cancel() {
        switch (status) {
            case COMPENSATING -> moveTo(OrderStatus.CANCELLED);
            default -> throw new IllegalTransitionException(status, "cancel");
        }
        return new OrderCancelled(cancelReason);
    }

    private void clearWaiting() {
        waitingFor = null;
        waitingReason = null;
        waitingSince = null;
    }

    /** The participants that undo a step when the order is cancelled. */
    public enum Participant {
        INVENTORY, PAYMENT, SHIPPING
    }

    private void moveTo(OrderStatus next) {
        status = next;
        updatedAt = Instant.now();
    }

    /**
     * What of an order its saga changes, as it stands: compared before and after a fact, and written as one row
     * update (the repository's), with the version it was read at.
     */
    public record Progress(OrderStatus status, String cancelReason, String waitingReason, Instant waitingSince,
                           Participant waitingFor, boolean stockReserved, boolean paid, boolean shipmentCreated, boolean stockReleased,
                           boolean paymentRefunded, boolean shipmentCancelled, Instant updatedAt, long version) {
    }

    public Progress progress() {
        return new Progress(status, cancelReason, waitingReason, waitingSince, waitingFor, stockReserved, paid, shipmentCreated,
                stockReleased, paymentRefunded, shipmentCancelled, updatedAt, version);
    }

    public UUID id() {
        return id;
    }

    public String customerId() {
        return customerId;
    }

    public OrderStatus status() {
        return status;
    }

    public List<OrderItem> items() {
        if (items == null) {
            throw new IllegalStateException("the items of order " + id + " were not read");
        }
        return List.copyOf(items);
    }

    public BigDecimal total() {
        return total;
    }

    public String currency() {
        return currency;
    }

    public Address shippingAddress() {
        return shippingAddress;
    }

    public String correlationId() {
        return correlationId;
    }

    public String cancelReason() {
        return cancelReason;
    }

    public String waitingReason() {
        return waitingReason;
    }

    public Instant waitingSince() {
        return waitingSince;
    }

    public Participant waitingFor() {
        return waitingFor;
    }

    public Instant createdAt() {
        return createdAt;
    }

    public Instant updatedAt() {
        return updatedAt;
    }
}
