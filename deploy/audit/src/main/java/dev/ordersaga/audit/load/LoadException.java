package dev.ordersaga.audit.load;

/** A source of the audit could not be read (database, Kafka, a ledger): the audit cannot judge, exit 2. */
public class LoadException extends RuntimeException {

    public LoadException(String message) {
        super(message);
    }

    public LoadException(String message, Throwable cause) {
        super(message, cause);
    }
}
