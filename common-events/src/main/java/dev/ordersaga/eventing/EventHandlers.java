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

    /**
     * A handler that sends the event's inbox claim itself, in the round trip of its first read
     * ({@link InboxClaim#then}), and acts only if the claim was not a {@link InboxClaim#duplicate()}. It must send
     * the claim before anything else goes to the database, and on every path: a handler that returns without having
     * sent it fails its event.
     */
    @FunctionalInterface
    public interface Claiming<E> {
        void handle(EventEnvelope<?> event, E payload, InboxClaim claim);
    }

    /** A handler, and whether it sends the claim itself. */
    private record Handler(Claiming<SagaEvent> handler, boolean claims) {
    }

    private final Map<Class<?>, Handler> byType = new HashMap<>();
    private Handler otherwise;
    private OptionalInt orderLockSpace = OptionalInt.empty();

    private EventHandlers() {
    }

    public static EventHandlers create() {
        return new EventHandlers();
    }

    /** A handler that runs after the event's claim was sent, in a round trip of its own, and found it new. */
    @SuppressWarnings("unchecked")
    public <E extends SagaEvent> EventHandlers on(Class<E> type, BiConsumer<EventEnvelope<?>, E> handler) {
        return add(type, new Handler((envelope, payload, claim) -> handler.accept(envelope, (E) payload), false));
    }

    /** A handler that sends the event's claim with its first read ({@link Claiming}). */
    @SuppressWarnings("unchecked")
    public <E extends SagaEvent> EventHandlers on(Class<E> type, Claiming<E> handler) {
        return add(type, new Handler((envelope, payload, claim) -> handler.handle(envelope, (E) payload, claim), true));
    }

    private EventHandlers add(Class<?> type, Handler handler) {
        if (byType.putIfAbsent(type, handler) != null) {
            throw new IllegalArgumentException("two handlers for " + type.getSimpleName());
        }
        return this;
    }

    /** For a consumer that acts on every event it hears (the order notes each in its saga's timeline). */
    @SuppressWarnings("unchecked")
    public EventHandlers otherwise(Consumer<EventEnvelope<SagaEvent>> handler) {
        this.otherwise = new Handler((envelope, payload, claim) -> handler.accept((EventEnvelope<SagaEvent>) envelope), false);
        return this;
    }

    /** As {@link #otherwise(Consumer)}, for a handler that sends the event's claim with its first read. */
    public EventHandlers otherwise(Claiming<SagaEvent> handler) {
        this.otherwise = new Handler(handler, true);
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

    /** Whether the handler of this kind of event sends the claim itself; false if there is none. */
    boolean claims(SagaEvent payload) {
        Handler handler = handlerOf(payload);
        return handler != null && handler.claims();
    }

    void dispatch(EventEnvelope<SagaEvent> event, InboxClaim claim) {
        Handler handler = handlerOf(event.payload());
        if (handler != null) {
            handler.handler().handle(event, event.payload(), claim);
        }
    }

    private Handler handlerOf(SagaEvent payload) {
        Handler handler = byType.get(payload.getClass());
        return handler != null ? handler : otherwise;
    }
}
