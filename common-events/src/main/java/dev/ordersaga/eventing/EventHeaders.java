package dev.ordersaga.eventing;

/** Kafka headers the relay puts on every event, so that tools can route and trace without parsing the value. */
public final class EventHeaders {

    public static final String EVENT_ID = "eventId";
    public static final String EVENT_TYPE = "eventType";
    public static final String CORRELATION_ID = "correlationId";
    public static final String CAUSATION_ID = "causationId";

    private EventHeaders() {
    }
}
