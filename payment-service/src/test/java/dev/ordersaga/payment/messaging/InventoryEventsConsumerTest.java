package dev.ordersaga.payment.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.payment.testing.OrderSaga;
import dev.ordersaga.payment.testing.OrderSagas;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.payment.testing.ProviderLedger;
import dev.ordersaga.testing.Inboxes;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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

    @RegisterExtension
    static final OrderSagas sagas = new OrderSagas();

    @Inject
    DataSource dataSource;

    @Inject
    OutboxWriter outbox;

    @ConfigProperty(name = "payment.provider.url")
    String providerUrl;

    @Test
    void duplicateStockReservedChargesOnce() throws Exception {
        OrderSaga saga = sagas.saga("payment-dup-stock");
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
        saga.awaitCommittedSoFar(outbox, PATIENCE);
        assertThat(saga.published(PaymentSucceeded.class)).hasSize(1);
    }
}
