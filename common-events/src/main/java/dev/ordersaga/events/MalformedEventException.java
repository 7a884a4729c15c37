package dev.ordersaga.events;

/** A message that can never be processed as it is: it is parked, not retried. */
public class MalformedEventException extends RuntimeException {

    public MalformedEventException(String message) {
        super(message);
    }

    public MalformedEventException(String message, Throwable cause) {
        super(message, cause);
    }
}
