package dev.ordersaga.shipping.messaging;

import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.ShipmentCreated;
import dev.ordersaga.events.ShipmentOnHold;
import dev.ordersaga.events.ShipmentRetryRequested;
import dev.ordersaga.shipping.application.ShippingService;
import dev.ordersaga.shipping.domain.Shipment;
import dev.ordersaga.shipping.domain.ShipmentStatus;
import dev.ordersaga.shipping.testing.CarrierSandboxApi;
import dev.ordersaga.shipping.testing.CarrierSandboxResource;
import dev.ordersaga.shipping.testing.SagaEvents;
import dev.ordersaga.shipping.testing.ShippingEventsProbe;
import dev.ordersaga.testing.Inboxes;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.StackTestResource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static dev.ordersaga.shipping.testing.SagaEvents.orderCreated;
import static dev.ordersaga.shipping.testing.SagaEvents.paymentSucceeded;
import static dev.ordersaga.shipping.testing.SagaEvents.retryRequested;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A carrier outage longer than the retries: the shipment waits for an operator, who has it tried again. */
@QuarkusTest
@TestProfile(ShipmentOnHoldTest.ThreeAttempts.class)
@WithTestResource(StackTestResource.class)
@WithTestResource(CarrierSandboxResource.class)
class ShipmentOnHoldTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    public static class ThreeAttempts implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("shipping.retry.max-attempts", "3");
        }
    }

    @RegisterExtension
    static final SagaEvents events = new SagaEvents();

    @RegisterExtension
    static final ShippingEventsProbe published = new ShippingEventsProbe();

    @RegisterExtension
    static final CarrierSandboxApi carrier = CarrierSandboxApi.ofTheApplication();

    @Inject
    ShippingService shipping;

    @Inject
    DataSource dataSource;

    @Inject
    OutboxWriter outbox;

    @Inject
    MeterRegistry meters;

    @Test
    void outageBeyondTheRetriesPutsTheShipmentOnHoldAndAnOperatorRetryCreatesIt() {
        SagaEvents.Saga saga = events.saga();
        carrier.outageOf(saga.orderId(), 10);
        double heldBefore = shipmentsHeld();
        EventEnvelope<ShipmentOnHold> onHold;
        try (LogCapture log = LogCapture.of(ShippingService.class)) {
            saga.send(orderCreated());
            saga.send(paymentSucceeded());

            onHold = published.await(saga.orderId(), ShipmentOnHold.class, WAIT);
            // the order now waits for a person, who must hear of it; told once the hold committed, which the event
            // on the topic may overtake
            await().atMost(WAIT).untilAsserted(() -> assertThat(log.containing("ALERT shipment held for an operator")
                    .stream().filter(line -> line.message().contains(saga.orderId().toString())))
                    .singleElement().satisfies(line -> assertThat(line.level()).isEqualTo(org.jboss.logmanager.Level.ERROR)));
        }
        assertThat(shipmentsHeld()).isEqualTo(heldBefore + 1);

        assertThat(onHold.payload().attempts()).isEqualTo(3);
        assertThat(onHold.payload().reason()).isEqualTo("carrier unavailable after 3 attempts");
        Shipment held = row(saga.orderId());
        assertThat(held.status()).isEqualTo(ShipmentStatus.ON_HOLD);
        assertThat(held.attempts()).isEqualTo(3);
        // an operator decides: no further attempt (the worker calls only for a row that owes a call), no cancellation
        // by itself (which the marker would come after)
        assertThat(held.nextAttemptAt()).isNull();
        assertThat(held.claimedUntil()).isNull();
        UUID marker = published.mark(outbox, saga.orderId(), saga.correlationId(), WAIT);
        assertThat(published.typesBefore(saga.orderId(), marker)).containsExactly("ShipmentOnHold");
        assertThat(row(saga.orderId())).satisfies(still -> {
            assertThat(still.status()).isEqualTo(ShipmentStatus.ON_HOLD);
            assertThat(still.attempts()).isEqualTo(3);
        });
        assertThat(carrier.shipmentsOf(saga.orderId())).isEmpty();

        carrier.outageOf(saga.orderId(), 0);
        EventEnvelope<ShipmentRetryRequested> retry = saga.send(retryRequested());

        EventEnvelope<ShipmentCreated> created = published.await(saga.orderId(), ShipmentCreated.class, WAIT);
        assertThat(created.causationId()).isEqualTo(retry.eventId());
        Shipment shipment = row(saga.orderId());
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.attempts()).as("reset by the retry").isZero();
        assertThat(carrier.shipmentsOf(saga.orderId())).singleElement()
                .satisfies(s -> assertThat(s.shipmentId()).isEqualTo(created.payload().carrierShipmentId()));
        assertThat(published.typesOf(saga.orderId())).as("the marker between")
                .containsExactly("ShipmentOnHold", "ShipmentFailed", "ShipmentCreated");
    }

    @Test
    void retryOfAShipmentThatIsNotOnHoldChangesNothing() {
        SagaEvents.Saga saga = events.saga();
        saga.send(orderCreated());
        saga.send(paymentSucceeded());
        published.await(saga.orderId(), ShipmentCreated.class, WAIT);

        EventEnvelope<ShipmentRetryRequested> retry = saga.send(retryRequested());
        EventEnvelope<ShipmentRetryRequested> unknownOrder = events.saga().send(retryRequested());

        await().atMost(WAIT).until(() -> Inboxes.claimed(dataSource, retry.eventId())
                && Inboxes.claimed(dataSource, unknownOrder.eventId()));
        // the row first, the carrier's books after: a create call the retry caused is owed, under way, or counted
        Shipment shipment = row(saga.orderId());
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CREATED);
        assertThat(shipment.nextAttemptAt()).isNull();
        assertThat(shipment.claimedUntil()).isNull();
        assertThat(carrier.shipmentsOf(saga.orderId())).singleElement()
                .satisfies(s -> assertThat(s.createCalls()).isEqualTo(1));
        UUID marker = published.mark(outbox, saga.orderId(), saga.correlationId(), WAIT);
        assertThat(published.typesBefore(saga.orderId(), marker)).containsExactly("ShipmentCreated");

        UUID unknown = unknownOrder.orderId();
        assertThat(shipping.find(unknown)).as("a retry opens no shipment").isEmpty();
        assertThat(carrier.shipmentsOf(unknown)).isEmpty();
        UUID unknownMarker = published.mark(outbox, unknown, "marker-" + unknown, WAIT);
        assertThat(published.typesBefore(unknown, unknownMarker)).isEmpty();
    }

    private Shipment row(UUID orderId) {
        return shipping.find(orderId).orElseThrow();
    }

    /** Registered at startup: there from the first scrape, at zero. */
    private double shipmentsHeld() {
        Counter counter = meters.find("saga.shipping.shipments.held").counter();
        assertThat(counter).as("registered at startup").isNotNull();
        return counter.count();
    }
}
