package dev.ordersaga.eventing;

/**
 * Marks a failure that no retry can mend (a transition the state machine does not have, a malformed message):
 * the message is parked at once instead of being tried again.
 */
public interface NotRetryable {
}
