package dev.ordersaga.inventory.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.EventHandlers;
import dev.ordersaga.eventing.EventHeaders;
import dev.ordersaga.eventing.Inbox;
import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.Topics;
import dev.ordersaga.inventory.InventoryRows;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

import static dev.ordersaga.inventory.InventoryRows.newSku;
import static dev.ordersaga.inventory.InventoryRows.orderOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Orders racing for the same units, each in its own transaction on its own thread, as replicas or a rebalanced
 * consumer group would: the row locks serialize them, so stock is never oversold and never negative.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
class ConcurrentReservationTest {

    private static final int THREADS = 8;
    private static final int ORDERS = 50;

    @Inject
    InventoryService inventory;

    @Inject
    DataSource dataSource;

    @Inject
    Inbox inbox;

    @Inject
    IncomingEvents incoming;

    @Test
    void fiftyOrdersRacingForTenUnitsReserveExactlyTen() throws Exception {
        InventoryRows rows = new InventoryRows(dataSource);
        String sku = newSku("race");
        inventory.setAvailable(sku, 10);
        String correlationId = "race-" + UUID.randomUUID();

        try (KafkaTopicProbe inventoryEvents = KafkaTopicProbe.fromNow(Topics.INVENTORY_EVENTS)) {
            Set<String> orderIds = race(correlationId, i -> orderOf(sku, 1));

            assertThat(rows.stock(sku)).isEqualTo("0/10/0");
            assertThat(reservations(rows, correlationId, "RESERVED")).isEqualTo(10);
            assertThat(reservations(rows, correlationId, "FAILED")).isEqualTo(40);

            await().atMost(Duration.ofSeconds(60))
                    .until(() -> inventoryEvents.matching(r -> orderIds.contains(r.key())).size() >= ORDERS);
            var types = inventoryEvents.matching(r -> orderIds.contains(r.key())).stream()
                    .collect(Collectors.groupingBy(r -> r.header(EventHeaders.EVENT_TYPE), Collectors.counting()));
            assertThat(types).containsOnlyKeys("StockReserved", "StockReservationFailed")
                    .containsEntry("StockReserved", 10L)
                    .containsEntry("StockReservationFailed", 40L);
        }
    }

    @Test
    void ordersNamingSharedSkusInOppositeOrderNeitherDeadlockNorOversell() throws Exception {
        InventoryRows rows = new InventoryRows(dataSource);
        String cup = newSku("cup");
        String saucer = newSku("saucer");
        inventory.setAvailable(cup, 10);
        inventory.setAvailable(saucer, 10);
        String correlationId = "race-" + UUID.randomUUID();

        race(correlationId, i -> i % 2 == 0 ? orderOf(cup, 1, saucer, 1) : orderOf(saucer, 1, cup, 1));

        assertThat(rows.stock(cup)).isEqualTo("0/10/0");
        assertThat(rows.stock(saucer)).isEqualTo("0/10/0");
        assertThat(reservations(rows, correlationId, "RESERVED")).isEqualTo(10);
        assertThat(reservations(rows, correlationId, "FAILED")).isEqualTo(40);
    }

    /**
     * One order's OrderCancelling and OrderCreated applied at once by two consumers: a replay (its own topic, maybe
     * another replica) beside the order's partition, or two replicas during a rebalance. Whichever commits second
     * must see the first: here the OrderCreated finds no reservation while the cancellation's is uncommitted, and
     * would reserve for an order being cancelled; the reservation's key makes it wait, fail, and be tried again.
     */
    @Test
    void anOrdersCancellationAndCreationAppliedAtOnceLeaveNothingReserved() throws Exception {
        InventoryRows rows = new InventoryRows(dataSource);
        String sku = newSku("beside");
        inventory.setAvailable(sku, 5);
        UUID orderId = UUID.randomUUID();
        String correlationId = "beside-" + UUID.randomUUID();
        EventEnvelope<OrderCancelling> cancelling = EventEnvelope.of(orderId, correlationId, null,
                new OrderCancelling("customer", "test"));
        EventEnvelope<OrderCreated> created = EventEnvelope.of(orderId, correlationId, null, orderOf(sku, 1));
        EventHandlers handlers = EventHandlers.create()
                .on(OrderCreated.class, inventory::onOrderCreated)
                .on(OrderCancelling.class, inventory::onOrderCancelling);
        CountDownLatch cancelApplied = new CountDownLatch(1);
        CountDownLatch commitCancel = new CountDownLatch(1);

        CompletableFuture<Void> cancel = CompletableFuture.runAsync(() -> QuarkusTransaction.requiringNew().run(() -> {
            incoming.apply(Topics.ORDER_EVENTS, EventCodec.encode(cancelling), handlers);
            cancelApplied.countDown();
            try {
                commitCancel.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        assertThat(cancelApplied.await(60, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> create = CompletableFuture.runAsync(() -> incoming.process(
                new ConsumerRecord<>(Topics.INVENTORY_REPLAY, 0, 0, orderId.toString(), EventCodec.encode(created)),
                handlers));
        await().atMost(Duration.ofSeconds(60)).until(() -> create.isDone() || sessionsWaitingForALock() > 0);
        commitCancel.countDown();
        cancel.get(60, TimeUnit.SECONDS);
        create.get(60, TimeUnit.SECONDS);

        assertThat(rows.reservationStatus(orderId)).isEqualTo("RELEASED");
        assertThat(rows.stock(sku)).isEqualTo("5/0/0");
        assertThat(rows.inboxHas(created.eventId())).as("the OrderCreated was applied, and did nothing").isTrue();
    }

    @Test
    void theTableRefusesNegativeCountsWhateverTheCodeDoes() throws Exception {
        String sku = newSku("check");
        inventory.setAvailable(sku, 1);
        for (String count : List.of("available", "reserved", "shipped")) {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement("UPDATE stock SET " + count + " = -1 WHERE sku = ?")) {
                ps.setString(1, sku);
                assertThatThrownBy(ps::executeUpdate).as(count)
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23514"));
            }
        }
        assertThat(new InventoryRows(dataSource).stock(sku)).isEqualTo("1/0/0");
    }

    /** Applies {@value #ORDERS} OrderCreated from {@value #THREADS} threads at once; fails if any application failed. */
    private Set<String> race(String correlationId, Function<Integer, OrderCreated> order) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> applied = new ArrayList<>();
        Set<String> orderIds = new HashSet<>();
        try {
            for (int i = 0; i < ORDERS; i++) {
                EventEnvelope<OrderCreated> created = EventEnvelope.of(UUID.randomUUID(), correlationId, null, order.apply(i));
                orderIds.add(created.orderId().toString());
                applied.add(threads.submit(() -> {
                    start.await();
                    try (Correlation.Scope ignored = Correlation.open(created.correlationId(), created.eventId())) {
                        inventory.onOrderCreated(created, created.payload(),
                                inbox.claimOf(created, Topics.ORDER_EVENTS, OptionalInt.empty()));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> application : applied) {
                application.get(60, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        return orderIds;
    }

    private long sessionsWaitingForALock() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity "
                     + "WHERE datname = current_database() AND wait_event_type = 'Lock'");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static long reservations(InventoryRows rows, String correlationId, String status) throws Exception {
        return rows.count("SELECT count(*) FROM reservation WHERE correlation_id = ? AND status = '" + status + "'",
                correlationId);
    }
}
