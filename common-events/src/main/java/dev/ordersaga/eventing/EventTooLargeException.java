package dev.ordersaga.eventing;

/**
 * An event larger than Kafka takes. Refused where it is written, so that its transaction fails (a consumer parks the
 * message that led to it): once committed, the relay could never publish it, and would stop on it with every event of
 * the service behind it.
 */
public class EventTooLargeException extends RuntimeException implements NotRetryable {

    public EventTooLargeException(String message) {
        super(message);
    }
}
