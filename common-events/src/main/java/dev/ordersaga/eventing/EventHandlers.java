package dev.ordersaga.eventing;

import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.SagaEvent;

import java.util.HashMap;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * What a consumer does with each kind of event on the topics it follows. A topic carries more kinds than any one
 * consumer acts on (payment hears OrderConfirmed, which asks nothing of it): an event of a kind without a handler
 * is passed over before it costs a transaction or an inbox row, which is safe because it has no effect to repeat.
 */
public final class EventHandlers {

    private final Map<Class<?>, BiConsumer<EventEnvelope<SagaEvent>, SagaEvent>> byType = new HashMap<>();
    private Consumer<EventEnvelope<SagaEvent>> otherwise;
    private OptionalInt orderLockSpace = OptionalInt.empty();

    private EventHandlers() {
    }

    public static EventHandlers create() {
        return new EventHandlers();
    }

    @SuppressWarnings("unchecked")
    public <E extends SagaEvent> EventHandlers on(Class<E> type, BiConsumer<EventEnvelope<?>, E> handler) {
        if (byType.putIfAbsent(type, (envelope, payload) -> handler.accept(envelope, (E) payload)) != null) {
            throw new IllegalArgumentException("two handlers for " + type.getSimpleName());
        }
        return this;
    }

    /** For a consumer that acts on every event it hears (the order notes each in its saga's timeline). */
    public EventHandlers otherwise(Consumer<EventEnvelope<SagaEvent>> handler) {
        this.otherwise = handler;
        return this;
    }

    /**
     * For handlers that begin by taking their order's advisory lock in this space
     * ({@link TransactionalWrites#lockUntilCommit}): the lock is taken with the inbox claim, in the same statement,
     * and the handler's own request for it costs nothing.
     */
    public EventHandlers lockingOrdersIn(int lockSpace) {
        this.orderLockSpace = OptionalInt.of(lockSpace);
        return this;
    }

    OptionalInt orderLockSpace() {
        return orderLockSpace;
    }

    public boolean handles(SagaEvent payload) {
        return handles(payload.getClass());
    }

    public boolean handles(Class<? extends SagaEvent> type) {
        return otherwise != null || byType.containsKey(type);
    }

    void dispatch(EventEnvelope<SagaEvent> event) {
        BiConsumer<EventEnvelope<SagaEvent>, SagaEvent> handler = byType.get(event.payload().getClass());
        if (handler != null) {
            handler.accept(event, event.payload());
        } else if (otherwise != null) {
            otherwise.accept(event);
        }
    }
}
