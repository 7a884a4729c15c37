package dev.ordersaga.order.domain;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;
import java.util.UUID;

/** A client's Idempotency-Key for POST /orders, with a hash of the request it came with. */
@Entity
@Table(name = "idempotency_key")
public class IdempotencyKey {

    @Id
    private String key;

    @Column(name = "request_hash", nullable = false)
    private String requestHash;

    @Column(name = "order_id", nullable = false)
    private UUID orderId;

    @Column(name = "created_at", nullable = false)
    private Instant createdAt;

    protected IdempotencyKey() {
    }

    public IdempotencyKey(String key, String requestHash, UUID orderId) {
        this.key = key;
        this.requestHash = requestHash;
        this.orderId = orderId;
        this.createdAt = Instant.now();
    }

    public boolean sameRequest(String hash) {
        return requestHash.equals(hash);
    }

    public UUID orderId() {
        return orderId;
    }
}
