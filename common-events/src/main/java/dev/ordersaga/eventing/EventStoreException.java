package dev.ordersaga.eventing;

/** The database refused an outbox or inbox write; the surrounding transaction must roll back. */
public class EventStoreException extends RuntimeException {

    public EventStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
