package dev.ordersaga.order.domain;

import dev.ordersaga.events.OrderCancelled;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderConfirmed;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.OrderLine;
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

    @Id
    private UUID id;

    @Column(name = "customer_id", nullable = false)
    private String customerId;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    private OrderStatus status;

    @ElementCollection(fetch = FetchType.EAGER)
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

    @Column(name = "created_at", nullable = false)
    private Instant createdAt;

    @Column(name = "updated_at", nullable = false)
    private Instant updatedAt;

    @Version
    private long version;

    protected Order() {
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
        order.total = items.stream().map(OrderItem::lineTotal).reduce(BigDecimal.ZERO, BigDecimal::add);
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

    /** StockReserved: PENDING -> STOCK_RESERVED. */
    public void noteStockReserved() {
        switch (status) {
            case PENDING -> moveTo(OrderStatus.STOCK_RESERVED);
            default -> throw new IllegalTransitionException(status, "noteStockReserved");
        }
    }

    /** PaymentSucceeded: STOCK_RESERVED -> PAID. */
    public void notePaid() {
        switch (status) {
            case STOCK_RESERVED -> moveTo(OrderStatus.PAID);
            default -> throw new IllegalTransitionException(status, "notePaid");
        }
    }

    /** ShipmentCreated: PAID -> SHIPPING_CREATED. */
    public void noteShipmentCreated() {
        switch (status) {
            case PAID -> moveTo(OrderStatus.SHIPPING_CREATED);
            default -> throw new IllegalTransitionException(status, "noteShipmentCreated");
        }
    }

    /** Step 5: SHIPPING_CREATED -> CONFIRMED. */
    public OrderConfirmed confirm() {
        switch (status) {
            case SHIPPING_CREATED -> moveTo(OrderStatus.CONFIRMED);
            default -> throw new IllegalTransitionException(status, "confirm");
        }
        return new OrderConfirmed(total, currency);
    }

    /** A step failed or someone cancelled: PENDING | STOCK_RESERVED | PAID -> COMPENSATING. */
    public OrderCancelling startCompensation(String reason, String requestedBy) {
        switch (status) {
            case PENDING, STOCK_RESERVED, PAID -> moveTo(OrderStatus.COMPENSATING);
            default -> throw new IllegalTransitionException(status, "startCompensation");
        }
        cancelReason = reason;
        return new OrderCancelling(reason, requestedBy);
    }

    /** Every participant has undone its step: COMPENSATING -> CANCELLED. */
    public OrderCancelled cancel() {
        switch (status) {
            case COMPENSATING -> moveTo(OrderStatus.CANCELLED);
            default -> throw new IllegalTransitionException(status, "cancel");
        }
        return new OrderCancelled(cancelReason);
    }

    private void moveTo(OrderStatus next) {
        status = next;
        updatedAt = Instant.now();
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

    public Instant createdAt() {
        return createdAt;
    }

    public Instant updatedAt() {
        return updatedAt;
    }
}
