package dev.ordersaga.eventing;

/** What this instance's CDC relay is doing. Exactly one instance of a service streams; the others stand by. */
public enum RelayRole {
    /** Relay switched off by configuration. */
    DISABLED,
    /** Another instance holds the relay lock; this one takes over when that one goes away. */
    STANDBY,
    /** Lock held; publication, slot and engine are being set up. */
    STARTING,
    /** Streaming this service's outbox to Kafka. */
    STREAMING,
    /** The last attempt failed; retrying after a back-off. */
    RECOVERING,
    STOPPED
}
