package dev.ordersaga.events;

/** Every compensation is done; the saga ended with the order cancelled. */
public record OrderCancelled(String reason) implements OrderEvent {
}
