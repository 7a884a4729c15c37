package dev.ordersaga.events;

/**
 * A well-formed envelope whose type this build does not know: a newer producer's new fact. Consumers skip it
 * (new facts are new types, so an old consumer has nothing to do with them).
 */
public class UnknownEventTypeException extends MalformedEventException {

    private final String type;

    public UnknownEventTypeException(String type) {
        super("unknown event type '" + type + "'");
        this.type = type;
    }

    public String type() {
        return type;
    }
}
