package dev.ordersaga.shipping.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.ShipmentRetryRequested;
import dev.ordersaga.shipping.application.HandedOverWork;
import dev.ordersaga.shipping.application.ShippingService;
import dev.ordersaga.shipping.domain.Shipment;
import dev.ordersaga.shipping.domain.ShipmentStatus;
import dev.ordersaga.shipping.testing.CarrierSandboxApi;
import dev.ordersaga.shipping.testing.CarrierSandboxResource;
import dev.ordersaga.shipping.testing.ShippingEventsProbe;
import dev.ordersaga.testing.Inboxes;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.logging.Level;

import static dev.ordersaga.shipping.testing.SagaEvents.orderCancelling;
import static dev.ordersaga.shipping.testing.SagaEvents.orderCreated;
import static dev.ordersaga.shipping.testing.SagaEvents.paymentSucceeded;
import static dev.ordersaga.shipping.testing.SagaEvents.retryRequested;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Events applied as the consumer applies them ({@link IncomingEvents#apply} with its handlers), each delivery in a
 * transaction of its own: the inbox claim a handler sends with its shipment's read tells a delivery of an event applied
 * before, and the handler then changes nothing.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(CarrierSandboxResource.class)
class SagaEventsConsumerTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @RegisterExtension
    static final ShippingEventsProbe published = new ShippingEventsProbe();

    @Inject
    IncomingEvents incoming;

    @Inject
    SagaEventsConsumer consumer;

    @Inject
    ShippingService shipping;

    @Inject
    OutboxWriter outbox;

    @Inject
    DataSource dataSource;

    @Inject
    HandedOverWork handedOver;

    @ConfigProperty(name = "shipping.carrier.url")
    String carrierUrl;

    /**
     * Every handler, each event delivered twice. The events are chosen so that no carrier work ever comes due: nothing
     * but the deliveries changes the row. Each handler also skips, on its own, a fact its shipment knows already; that
     * it did not get that far on the second delivery shows in the log, which has the duplicate's line and no other.
     */
    @Test
    void anEventDeliveredAgainChangesNothing() throws SQLException {
        UUID orderId = UUID.randomUUID();
        String correlationId = "again-" + orderId;
        EventEnvelope<PaymentSucceeded> paid = EventEnvelope.of(orderId, correlationId, null, paymentSucceeded());
        EventEnvelope<OrderCancelling> cancelling = EventEnvelope.of(orderId, correlationId, null, orderCancelling());
        EventEnvelope<OrderCreated> created = EventEnvelope.of(orderId, correlationId, null, orderCreated());
        EventEnvelope<ShipmentRetryRequested> retry = EventEnvelope.of(orderId, correlationId, null, retryRequested());

        Shipment opened = deliveredTwice(paid);
        assertThat(opened.status()).isEqualTo(ShipmentStatus.PENDING);
        assertThat(opened.isPaid()).isTrue();
        assertThat(opened.progress().version()).as("inserted").isZero();

        Shipment cancelled = deliveredTwice(cancelling);
        assertThat(cancelled.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(cancelled.cancelCausedByEventId()).isEqualTo(cancelling.eventId());
        assertThat(cancelled.progress().version()).isEqualTo(1);

        Shipment addressed = deliveredTwice(created);
        assertThat(addressed.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(addressed.address().line1()).isEqualTo(created.payload().shippingAddress().line1());
        assertThat(addressed.progress().version()).isEqualTo(2);

        Shipment notOnHold = deliveredTwice(retry);
        assertThat(notOnHold.progress()).as("a retry of a cancelled shipment is skipped").isEqualTo(addressed.progress());

        for (EventEnvelope<?> event : List.of(paid, cancelling, created, retry)) {
            assertThat(Inboxes.rows(dataSource, event.eventId())).as(event.type()).isEqualTo(1);
        }
        // the relay publishes in commit order: had a second delivery published anything, it would come before this.
        // Waited for by its id, not its type: a ShipmentFailed is what a wrongly applied delivery could publish
        UUID marker = published.mark(outbox, orderId, correlationId, WAIT);
        assertThat(published.typesBefore(orderId, marker)).containsExactly("ShipmentCancelled");
    }

    /**
     * PaymentSucceeded and OrderCancelling of one order in one poll, applied in one transaction: the create call the
     * payment claimed would be handed to a caller only after the commit, so none can have gone out when the
     * cancellation was recorded. It is answered at once, and the carrier is never called: the commit hands the worker
     * no call and no work due for the shipment, and the row leaves the sweep nothing to take.
     */
    @Test
    void aCancellationInTheTransactionThatClaimedTheCreateCallStopsIt() {
        UUID orderId = UUID.randomUUID();
        String correlationId = "batch-" + orderId;
        EventEnvelope<OrderCreated> created = EventEnvelope.of(orderId, correlationId, null, orderCreated());
        EventEnvelope<PaymentSucceeded> paid = EventEnvelope.of(orderId, correlationId, null, paymentSucceeded());
        EventEnvelope<OrderCancelling> cancelling = EventEnvelope.of(orderId, correlationId, null, orderCancelling());
        apply(created);
        handedOver.watchThisThread();

        incoming.processAll(List.of(record(paid, 0), record(cancelling, 1)), consumer.handlers());

        Shipment shipment = row(orderId);
        assertThat(shipment.status()).isEqualTo(ShipmentStatus.CANCELLED);
        assertThat(shipment.isCreationUncertain()).isFalse();
        assertThat(shipment.claimedUntil()).isNull();
        assertThat(shipment.progress().nextAttemptAt()).as("due for the sweep").isNull();
        // the claim PaymentSucceeded took made the transaction's hand-over; the cancellation emptied it
        assertThat(handedOver.ofThisThread()).as("what the batch's commit handed the worker")
                .singleElement().isEqualTo(new HandedOverWork.HandOver(List.of(), List.of()));
        EventEnvelope<ShipmentCancelled> cancelled = published.await(orderId, ShipmentCancelled.class, WAIT);
        assertThat(cancelled.causationId()).isEqualTo(cancelling.eventId());
        assertThat(new CarrierSandboxApi(carrierUrl).shipmentsOf(orderId)).isEmpty();
        assertThat(published.typesCommittedSoFar(outbox, orderId, correlationId, WAIT))
                .containsExactly("ShipmentCancelled");
    }

    private static ConsumerRecord<String, String> record(EventEnvelope<?> event, long offset) {
        return new ConsumerRecord<>(event.topic(), 0, offset, event.orderId().toString(), EventCodec.encode(event));
    }

    /**
     * Applies the event, then again as a redelivery; the second changes nothing of the row (its version included) and
     * writes no line but the duplicate's.
     *
     * @return the shipment after the first delivery
     */
    private Shipment deliveredTwice(EventEnvelope<?> event) {
        apply(event);
        Shipment first = row(event.orderId());
        try (LogCapture logs = LogCapture.of("dev.ordersaga")) {
            apply(event);
            assertThat(logs.matching(line -> line.message() != null
                    && line.message().contains(event.orderId().toString())
                    && line.level().intValue() >= Level.INFO.intValue()))
                    .as("only the duplicate is noted, the handler acts on nothing").singleElement()
                    .satisfies(line -> assertThat(line.message())
                            .startsWith("Duplicate " + event.type() + " " + event.eventId()));
        }
        Shipment second = row(event.orderId());
        assertThat(second.progress()).as("the row after the second delivery of " + event.type())
                .isEqualTo(first.progress());
        return first;
    }

    private void apply(EventEnvelope<?> event) {
        QuarkusTransaction.requiringNew().run(
                () -> incoming.apply(event.topic(), EventCodec.encode(event), consumer.handlers()));
    }

    private Shipment row(UUID orderId) {
        return shipping.find(orderId).orElseThrow();
    }

}
