package dev.ordersaga.events;

/**
 * A fact of the saga, published by exactly one service. The payload of an {@link EventEnvelope}.
 * Each producer groups its facts in a sealed interface so that the set of a topic's events is closed.
 */
public interface SagaEvent {
}
