package dev.ordersaga.order.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.OrderCancelled;
import dev.ordersaga.events.Topics;
import dev.ordersaga.order.domain.Address;
import dev.ordersaga.order.domain.OrderItem;
import dev.ordersaga.order.persistence.OrderRepository;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.Orders;
import io.quarkus.narayana.jta.QuarkusTransaction;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionalException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@QuarkusTest
@WithTestResource(StackTestResource.class)
class OutboxTest {

    private static KafkaTopicProbe orderEvents;

    @Inject
    OrderService orderService;

    @Inject
    OrderRepository orders;

    @Inject
    OutboxWriter outbox;

    @Inject
    DataSource dataSource;

    @BeforeAll
    static void watchTopic() {
        orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS);
    }

    @AfterAll
    static void stopWatching() {
        orderEvents.close();
    }

    @Test
    void stateChangeThatRollsBackEmitsNothing() {
        String correlationId = "rollback-" + UUID.randomUUID();
        UUID[] placedId = new UUID[1];
        try (Correlation.Scope ignored = Correlation.open(correlationId, null)) {
            assertThatThrownBy(() -> QuarkusTransaction.requiringNew().run(() -> {
                placedId[0] = orderService.place(placeOrder(correlationId), Optional.empty(), "-").order().id();
                throw new IllegalStateException("the step fails after the order and its event were written");
            })).hasMessageContaining("step fails");

            // a later event of the same order on the same partition: once it is there, anything the rolled-back
            // transaction had emitted would be there before it
            QuarkusTransaction.requiringNew().run(() -> outbox.publish(placedId[0], new OrderCancelled("marker")));
        }

        orderEvents.awaitKey(placedId[0].toString(), Duration.ofSeconds(30));
        List<String> types = orderEvents.matching(r -> placedId[0].toString().equals(r.key())).stream()
                .map(r -> EventCodec.decode(r.value()).type()).toList();
        assertThat(types).containsExactly("OrderCancelled");
        assertThat(QuarkusTransaction.requiringNew().call(() -> orders.findByIdOptional(placedId[0]))).isEmpty();
    }

    @Test
    void publishingOutsideATransactionIsRefused() {
        try (Correlation.Scope ignored = Correlation.open("no-tx", null)) {
            assertThatThrownBy(() -> outbox.publish(UUID.randomUUID(), Orders.created()))
                    .isInstanceOf(TransactionalException.class);
        }
    }

    @Test
    void publishingWithoutACorrelationIsRefused() {
        assertThatThrownBy(() -> QuarkusTransaction.requiringNew().run(() -> outbox.publish(UUID.randomUUID(), Orders.created())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no correlation scope");
    }

    @Test
    void outboxRowsAreNotKeptOnceWritten() throws Exception {
        UUID orderId;
        try (Correlation.Scope ignored = Correlation.open("kept-" + UUID.randomUUID(), null)) {
            orderId = orderService.place(placeOrder("kept"), Optional.empty(), "-").order().id();
        }
        orderEvents.awaitKey(orderId.toString(), Duration.ofSeconds(30));
        try (Connection c = dataSource.getConnection(); ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM outbox")) {
            rs.next();
            assertThat(rs.getLong(1)).isZero();
        }
    }

    private static OrderService.PlaceOrder placeOrder(String correlationId) {
        return new OrderService.PlaceOrder("cust-1", List.of(new OrderItem("SKU-MUG", 1, new BigDecimal("3.00"))), "EUR",
                new Address("Ada", "1 Main St", null, "London", "E1", "GB"), "tok_ok", correlationId);
    }
}
