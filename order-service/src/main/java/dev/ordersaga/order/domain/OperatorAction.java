package dev.ordersaga.order.domain;

import dev.ordersaga.events.Reasons;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;
import java.util.UUID;

/** What an operator did to an order: kept for the audit trail. */
@Entity
@Table(name = "operator_action")
public class OperatorAction {

    static final int MAX_DETAIL_LENGTH = 512;

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    @Column(name = "order_id", nullable = false)
    private UUID orderId;

    @Column(nullable = false)
    private String action;

    @Column(nullable = false)
    private String operator;

    @Column(nullable = false)
    private Instant at;

    @Column
    private String detail;

    protected OperatorAction() {
    }

    public OperatorAction(UUID orderId, String action, String operator, String detail) {
        this.orderId = orderId;
        this.action = action;
        this.operator = operator;
        this.at = Instant.now();
        this.detail = Reasons.fit(detail, MAX_DETAIL_LENGTH);
    }

    public UUID orderId() {
        return orderId;
    }

    public String action() {
        return action;
    }

    public String operator() {
        return operator;
    }

    public Instant at() {
        return at;
    }

    public String detail() {
        return detail;
    }
}
