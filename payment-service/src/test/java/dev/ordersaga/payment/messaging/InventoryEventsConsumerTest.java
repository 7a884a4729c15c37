package dev.ordersaga.payment.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.events.Topics;
import dev.ordersaga.payment.testing.OrderSaga;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.payment.testing.ProviderLedger;
import dev.ordersaga.testing.Inboxes;
import dev.ordersaga.testing.KafkaTestProducer;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.time.Duration;

import static dev.ordersaga.payment.testing.PaymentFixtures.orderCreated;
import static dev.ordersaga.payment.testing.PaymentFixtures.stockReserved;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(PaymentSandboxResource.class)
class InventoryEventsConsumerTest {

    private static final Duration PATIENCE = Duration.ofSeconds(90);

    private static KafkaTestProducer producer;
    private static KafkaTopicProbe paymentEvents;

    @Inject
    DataSource dataSource;

    @ConfigProperty(name = "payment.provider.url")
    String providerUrl;

    @BeforeAll
    static void connect() {
        producer = new KafkaTestProducer();
        paymentEvents = KafkaTopicProbe.fromNow(Topics.PAYMENT_EVENTS);
    }

    @AfterAll
    static void disconnect() {
        paymentEvents.close();
        producer.close();
    }

    @Test
    void duplicateStockReservedChargesOnce() throws Exception {
        OrderSaga saga = new OrderSaga(producer, paymentEvents, "payment-dup-stock");
        try (LogCapture log = LogCapture.of(IncomingEvents.class)) {
            saga.publish(orderCreated("tok_ok"));
            EventEnvelope<StockReserved> reserved = saga.publish(stockReserved());
            saga.redeliver(reserved);

            await().atMost(PATIENCE).until(() -> !saga.published(PaymentSucceeded.class).isEmpty());
            // this very delivery, not any duplicate of the topic, known by the inbox and skipped
            await().atMost(PATIENCE)
                    .until(() -> log.containing("Duplicate StockReserved " + reserved.eventId()).size() == 1);
            assertThat(Inboxes.rows(dataSource, reserved.eventId())).isEqualTo(1);
        }
        assertThat(ProviderLedger.of(providerUrl, saga.orderId()).charges()).singleElement()
                .satisfies(charge -> assertThat(charge.chargeCalls()).as("the duplicate sends no call").isEqualTo(1));
        assertThat(saga.published(PaymentSucceeded.class)).hasSize(1);
    }
}
