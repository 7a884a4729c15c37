package dev.ordersaga.order.application;

/** The client sent an Idempotency-Key again, with a different request. */
public class IdempotencyKeyReusedException extends RuntimeException {

    public IdempotencyKeyReusedException(String key) {
        super("Idempotency-Key '" + key + "' was used before with a different request");
    }
}
