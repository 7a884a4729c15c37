package dev.ordersaga.events;

/** An operator asked shipping to try the carrier again for an order that was waiting for a person. */
public record ShipmentRetryRequested(String requestedBy) implements OrderEvent {
}
