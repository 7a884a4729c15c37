package dev.ordersaga.events;

import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The wire names of the events. They are written down here, never derived from class names, so that renaming a
 * record cannot change a contract.
 */
public final class EventTypes {

    /** Schema version written by this build; consumers accept any version of a known type (fields only get added). */
    public static final int CURRENT_VERSION = 1;

    private static final Map<String, Class<? extends SagaEvent>> BY_NAME = Map.ofEntries(
            Map.entry("OrderCreated", OrderCreated.class),
            Map.entry("OrderCancelling", OrderCancelling.class),
            Map.entry("OrderConfirmed", OrderConfirmed.class),
            Map.entry("OrderCancelled", OrderCancelled.class),
            Map.entry("ShipmentRetryRequested", ShipmentRetryRequested.class),
            Map.entry("PaymentRetryRequested", PaymentRetryRequested.class),
            Map.entry("StockReserved", StockReserved.class),
            Map.entry("StockReservationFailed", StockReservationFailed.class),
            Map.entry("StockReleased", StockReleased.class),
            Map.entry("PaymentSucceeded", PaymentSucceeded.class),
            Map.entry("PaymentFailed", PaymentFailed.class),
            Map.entry("PaymentOnHold", PaymentOnHold.class),
            Map.entry("PaymentRefunded", PaymentRefunded.class),
            Map.entry("ShipmentCreated", ShipmentCreated.class),
            Map.entry("ShipmentFailed", ShipmentFailed.class),
            Map.entry("ShipmentOnHold", ShipmentOnHold.class),
            Map.entry("ShipmentCancelled", ShipmentCancelled.class));

    private static final Map<Class<? extends SagaEvent>, String> BY_CLASS = BY_NAME.entrySet().stream()
            .collect(Collectors.toUnmodifiableMap(Map.Entry::getValue, Map.Entry::getKey));

    private EventTypes() {
    }

    public static String nameOf(SagaEvent event) {
        String name = BY_CLASS.get(event.getClass());
        if (name == null) {
            throw new IllegalArgumentException("no wire name for " + event.getClass().getName());
        }
        return name;
    }

    public static Optional<Class<? extends SagaEvent>> classOf(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    public static Map<String, Class<? extends SagaEvent>> all() {
        return BY_NAME;
    }
}
