package dev.ordersaga.payment.application;

import java.time.Instant;
import java.util.UUID;

/**
 * A payment owes the provider a call at {@code at}; observed after the transaction that scheduled it committed.
 * A call due at once was leased to this process in that very transaction: {@code claimed} is then what to call,
 * and the worker needs no claiming transaction of its own.
 */
public record PaymentDue(UUID paymentId, Instant at, PaymentTask claimed) {

    static PaymentDue later(UUID paymentId, Instant at) {
        return new PaymentDue(paymentId, at, null);
    }

    static PaymentDue claimed(PaymentTask task, Instant now) {
        return new PaymentDue(task.paymentId(), now, task);
    }
}
