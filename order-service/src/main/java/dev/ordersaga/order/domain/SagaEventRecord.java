package dev.ordersaga.order.domain;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;
import java.util.UUID;

/** One entry of an order's saga timeline: an event of any of the four services. */
@Entity
@Table(name = "saga_event")
public class SagaEventRecord {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long seq;

    @Column(name = "event_id", nullable = false, unique = true)
    private UUID eventId;

    @Column(name = "order_id", nullable = false)
    private UUID orderId;

    @Column(nullable = false)
    private String type;

    @Column(nullable = false)
    private String producer;

    @Column(name = "occurred_at", nullable = false)
    private Instant occurredAt;

    @Column(name = "recorded_at", nullable = false)
    private Instant recordedAt;

    @Column(name = "correlation_id", nullable = false)
    private String correlationId;

    @Column(name = "causation_id")
    private UUID causationId;

    /** As the column keeps it. */
    public static final int MAX_NOTE_LENGTH = 512;

    /** How the order took the event, where that is not obvious (a late event, for instance). */
    @Column
    private String note;

    protected SagaEventRecord() {
    }

    public SagaEventRecord(UUID eventId, UUID orderId, String type, String producer, Instant occurredAt,
                           String correlationId, UUID causationId) {
        this.eventId = eventId;
        this.orderId = orderId;
        this.type = type;
        this.producer = producer;
        this.occurredAt = occurredAt;
        this.recordedAt = Instant.now();
        this.correlationId = correlationId;
        this.causationId = causationId;
    }

    public void note(String note) {
        this.note = note;
    }

    public Long seq() {
        return seq;
    }

    public UUID eventId() {
        return eventId;
    }

    public UUID orderId() {
        return orderId;
    }

    public String type() {
        return type;
    }

    public String producer() {
        return producer;
    }

    public Instant occurredAt() {
        return occurredAt;
    }

    public Instant recordedAt() {
        return recordedAt;
    }

    public String correlationId() {
        return correlationId;
    }

    public UUID causationId() {
        return causationId;
    }

    public String note() {
        return note;
    }
}
