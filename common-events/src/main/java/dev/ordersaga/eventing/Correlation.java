package dev.ordersaga.eventing;

import org.jboss.logging.MDC;

import java.util.Optional;
import java.util.UUID;

/**
 * The saga an event handler or request is working for. While a scope is open, the correlation id is in the
 * logging MDC (so every log line of the step carries it) and the outbox copies it, with the causing event's id,
 * into every event the step publishes.
 */
public final class Correlation {

    public static final String MDC_KEY = "correlationId";
    public static final String HEADER = "X-Correlation-Id";

    private static final ThreadLocal<Context> CURRENT = new ThreadLocal<>();

    public record Context(String correlationId, UUID causationId) {
    }

    private Correlation() {
    }

    /**
     * @param correlationId the saga's correlation id
     * @param causationId   id of the event being handled; null when the step was started by a person or a timer
     */
    public static Scope open(String correlationId, UUID causationId) {
        if (correlationId == null || correlationId.isBlank()) {
            throw new IllegalArgumentException("correlation id is required");
        }
        Context previous = CURRENT.get();
        Object previousMdc = MDC.get(MDC_KEY);
        CURRENT.set(new Context(correlationId, causationId));
        MDC.put(MDC_KEY, correlationId);
        return () -> {
            if (previous == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(previous);
            }
            if (previousMdc == null) {
                MDC.remove(MDC_KEY);
            } else {
                MDC.put(MDC_KEY, previousMdc);
            }
        };
    }

    public static Optional<Context> current() {
        return Optional.ofNullable(CURRENT.get());
    }

    /** A fresh correlation id for a saga that starts without one. */
    public static String newId() {
        return UUID.randomUUID().toString();
    }

    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }
}
