package dev.ordersaga.payment.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.PaymentRefunded;
import dev.ordersaga.payment.application.PaymentService;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.domain.PaymentStatus;
import dev.ordersaga.payment.testing.OrderSaga;
import dev.ordersaga.payment.testing.OrderSagas;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.payment.testing.ProviderLedger;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static dev.ordersaga.payment.testing.PaymentFixtures.orderCancelling;
import static dev.ordersaga.payment.testing.PaymentFixtures.orderCreated;
import static dev.ordersaga.payment.testing.PaymentFixtures.stockReserved;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A poll's events applied as the consumer applies them ({@link IncomingEvents#processAll}: one transaction for the
 * poll), handed over by the test rather than by Kafka, so that which events share a poll is certain.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(PaymentSandboxResource.class)
class SagaEventsInOnePollTest {

    private static final Duration PATIENCE = Duration.ofSeconds(90);

    @RegisterExtension
    static final OrderSagas sagas = new OrderSagas();

    @Inject
    IncomingEvents incoming;

    @Inject
    SagaEventsConsumer consumer;

    @Inject
    PaymentService payments;

    @Inject
    OutboxWriter outbox;

    @ConfigProperty(name = "payment.provider.url")
    String providerUrl;

    @Test
    void stockReservedAndOrderCancellingInOnePollChargeNothing() {
        OrderSaga saga = sagas.saga("payment-one-poll-cancel");
        poll(saga.envelope(orderCreated("tok_ok")));
        // the charge is claimed by StockReserved and the cancellation recorded before the poll's transaction commits:
        // no call can have started before the worker could know of it
        poll(saga.envelope(stockReserved()), saga.envelope(orderCancelling()));

        List<EventEnvelope<PaymentRefunded>> refunded = await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
                .until(() -> saga.published(PaymentRefunded.class), list -> !list.isEmpty());
        assertThat(refunded).singleElement()
                .satisfies(answer -> assertThat(answer.payload().amount()).isEqualByComparingTo("0"));
        // all the service committed for the order so far is on the topic: a count, not what happened to arrive
        saga.awaitCommittedSoFar(outbox, PATIENCE);
        assertThat(saga.publishedTypes()).containsExactly("PaymentRefunded");
        assertThat(ProviderLedger.of(providerUrl, saga.orderId()).charges()).isEmpty();
        Payment payment = payments.findByOrderId(saga.orderId()).orElseThrow();
        assertThat(payment.status()).isEqualTo(PaymentStatus.CANCELLED);
        assertThat(payment.stockReserved()).isTrue();
    }

    /** One poll of the consumer, with these events in this order. */
    private void poll(EventEnvelope<?>... events) {
        List<ConsumerRecord<String, String>> records = Arrays.stream(events)
                .map(event -> new ConsumerRecord<>(event.topic(), 0, 0L, event.orderId().toString(),
                        EventCodec.encode(event)))
                .toList();
        incoming.processAll(records, consumer.handlers());
    }
}
