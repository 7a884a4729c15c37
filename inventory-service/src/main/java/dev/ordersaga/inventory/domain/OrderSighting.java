package dev.ordersaga.inventory.domain;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;
import java.util.UUID;

/**
 * That inventory heard of an order. One row per application of OrderCreated, deliberately not unique per order:
 * it is the inbox, not the table, that makes a redelivered event take effect once, and this row shows it.
 */
@Entity
@Table(name = "order_sighting")
public class OrderSighting {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    @Column(name = "order_id", nullable = false)
    private UUID orderId;

    @Column(name = "event_id", nullable = false)
    private UUID eventId;

    @Column(name = "correlation_id", nullable = false)
    private String correlationId;

    @Column(name = "seen_at", nullable = false)
    private Instant seenAt;

    protected OrderSighting() {
    }

    public OrderSighting(UUID orderId, UUID eventId, String correlationId) {
        this.orderId = orderId;
        this.eventId = eventId;
        this.correlationId = correlationId;
        this.seenAt = Instant.now();
    }

    public UUID orderId() {
        return orderId;
    }

    public UUID eventId() {
        return eventId;
    }

    public String correlationId() {
        return correlationId;
    }

    public Instant seenAt() {
        return seenAt;
    }
}
