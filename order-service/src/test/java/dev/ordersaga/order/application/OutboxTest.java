package dev.ordersaga.order.application;

import dev.ordersaga.eventing.CdcRelay;
import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.EventStoreException;
import dev.ordersaga.eventing.EventTooLargeException;
import dev.ordersaga.eventing.Inbox;
import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.NotRetryable;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.OrderCancelled;
import dev.ordersaga.events.Topics;
import dev.ordersaga.order.domain.Address;
import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.OrderStatus;
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
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

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

    @Inject
    TransactionalWrites writes;

    @Inject
    Inbox inbox;

    @Inject
    CdcRelay relay;

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
    void anEventLargerThanKafkaTakesIsRefusedWithItsTransaction() {
        UUID orderId = UUID.randomUUID();
        String correlationId = "too-large-" + orderId;
        try (Correlation.Scope ignored = Correlation.open(correlationId, null)) {
            assertThatThrownBy(() -> QuarkusTransaction.requiringNew().run(() -> {
                outbox.publish(orderId, new OrderCancelled("small enough"));
                outbox.publish(orderId, new OrderCancelled("€".repeat(400 * 1024)));
            })).isInstanceOf(EventTooLargeException.class).isInstanceOf(NotRetryable.class)
                    .hasMessageStartingWith("OrderCancelled for order " + orderId + " is 12")
                    .hasMessageEndingWith(" bytes encoded, more than Kafka takes (921600)");

            // behind it on its partition: anything of the rolled-back transaction would be on the topic first
            QuarkusTransaction.requiringNew().run(() -> outbox.publish(orderId, new OrderCancelled("marker")));
        }
        orderEvents.awaitKey(orderId.toString(), Duration.ofSeconds(30));
        assertThat(orderEvents.matching(r -> orderId.toString().equals(r.key())).stream()
                .map(r -> ((OrderCancelled) EventCodec.decode(r.value()).payload()).reason()))
                .containsExactly("marker");
    }

    @Test
    void publishingWithoutACorrelationIsRefused() {
        assertThatThrownBy(() -> QuarkusTransaction.requiringNew().run(() -> outbox.publish(UUID.randomUUID(), Orders.created())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no correlation scope");
    }

    @Test
    void outboxRowsAreNotKeptOnceWritten() throws Exception {
        UUID orderId = placed("kept");
        orderEvents.awaitKey(orderId.toString(), Duration.ofSeconds(30));
        try (Connection c = dataSource.getConnection(); ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM outbox")) {
            rs.next();
            assertThat(rs.getLong(1)).isZero();
        }
    }

    @Test
    void aPlacedOrderIsStoredWhole() {
        OrderService.PlaceOrder command = new OrderService.PlaceOrder("cust-2",
                List.of(new OrderItem("SKU-MUG", 2, new BigDecimal("3.50")), new OrderItem("SKU-PEN", 1, new BigDecimal("1.25"))),
                "EUR", new Address("Ada", "1 Main St", "Flat 2", "London", "E1", "GB"), "tok_ok", "whole-" + UUID.randomUUID());
        UUID orderId;
        try (Correlation.Scope ignored = Correlation.open(command.correlationId(), null)) {
            orderId = orderService.place(command, Optional.empty(), null).order().id();
        }

        Order stored = QuarkusTransaction.requiringNew().call(() -> orders.findWithItems(orderId)).orElseThrow();
        assertThat(stored.status()).isEqualTo(OrderStatus.PENDING);
        assertThat(stored.total()).isEqualByComparingTo("8.25");
        assertThat(stored.customerId()).isEqualTo("cust-2");
        assertThat(stored.correlationId()).isEqualTo(command.correlationId());
        assertThat(stored.shippingAddress().line2()).isEqualTo("Flat 2");
        assertThat(stored.items()).extracting(OrderItem::sku, OrderItem::quantity)
                .containsExactly(tuple("SKU-MUG", 2), tuple("SKU-PEN", 1));
        assertThat(stored.progress().version()).isZero();
        assertThat(stored.progress().stockReserved()).isFalse();
    }

    @Test
    void aChangeWrittenOverAnotherIsRefusedAndNothingOfItStays() {
        UUID orderId = placed("stale");
        EventEnvelope<StockReserved> fact = stockReserved(orderId, "stale");

        assertThatThrownBy(() -> QuarkusTransaction.requiringNew().run(() -> {
            Order order = orders.lockForChange(orderId, fact.eventId(), claimOf(fact)).orElseThrow().order();
            Order.Progress read = order.progress();
            order.startCompensation("test", "customer");
            // the row moves on after it was read: the update must find nothing to write over
            writes.write("UPDATE orders SET version = version + 1 WHERE id = ?", bump -> bump.setObject(1, orderId),
                    () -> "bump the version of order " + orderId);
            writes.write(orders.update(order, read).orElseThrow(), () -> "update order " + orderId);
        })).isInstanceOf(EventStoreException.class).hasMessageContaining("changed 0 row(s), not 1");

        Order after = QuarkusTransaction.requiringNew().call(() -> orders.findById(orderId));
        assertThat(after.status()).isEqualTo(OrderStatus.PENDING);
        assertThat(after.progress().version()).isZero();
    }

    @Test
    void aFactChangesTheOrderOnceAndBumpsItsVersion() {
        UUID orderId = placed("fact");
        EventEnvelope<StockReserved> reserved = stockReserved(orderId, "fact");
        applied(reserved);

        Order after = QuarkusTransaction.requiringNew().call(() -> orders.findById(orderId));
        assertThat(after.status()).isEqualTo(OrderStatus.STOCK_RESERVED);
        assertThat(after.progress().stockReserved()).isTrue();
        assertThat(after.progress().version()).isEqualTo(1);
    }

    @Test
    void aFactDeliveredAgainIsToldByTheClaimSentWithTheReadAndChangesNothing() throws Exception {
        UUID orderId = placed("again");
        EventEnvelope<StockReserved> reserved = stockReserved(orderId, "again");
        InboxClaim first = applied(reserved);
        InboxClaim second = applied(reserved);

        assertThat(first.duplicate()).isFalse();
        assertThat(second.duplicate()).isTrue();
        Order after = QuarkusTransaction.requiringNew().call(() -> orders.findById(orderId));
        assertThat(after.status()).isEqualTo(OrderStatus.STOCK_RESERVED);
        assertThat(after.progress().version()).as("changed by the first delivery only").isEqualTo(1);
        assertThat(count("SELECT count(*) FROM inbox WHERE event_id = ?", reserved.eventId())).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM saga_event WHERE event_id = ?", reserved.eventId()))
                .as("noted in the timeline once").isEqualTo(1);
    }

    @Test
    void aFactDeliveredAgainAfterTheInboxForgotItIsToldByTheTimelineAndChangesNothing() throws Exception {
        UUID orderId = placed("pruned");
        EventEnvelope<StockReserved> reserved = stockReserved(orderId, "pruned");
        applied(reserved);
        // as InboxPruner does once the inbox's retention has passed
        update("DELETE FROM inbox WHERE event_id = ?", reserved.eventId());

        InboxClaim again = applied(reserved);

        assertThat(again.duplicate()).as("the inbox no longer knows it").isFalse();
        Order after = QuarkusTransaction.requiringNew().call(() -> orders.findById(orderId));
        assertThat(after.status()).isEqualTo(OrderStatus.STOCK_RESERVED);
        assertThat(after.progress().version()).as("changed by the first delivery only").isEqualTo(1);
        assertThat(count("SELECT count(*) FROM saga_event WHERE event_id = ?", reserved.eventId()))
                .as("noted in the timeline once").isEqualTo(1);
    }

    @Test
    void theLockedReadForAChangeReturnsTheOrderAsStored() {
        UUID orderId = placed("read");
        Order stored = QuarkusTransaction.requiringNew().call(() -> orders.findWithItems(orderId)).orElseThrow();
        EventEnvelope<StockReserved> fact = stockReserved(orderId, "read");

        OrderRepository.Locked locked = QuarkusTransaction.requiringNew().call(
                () -> orders.lockForChange(orderId, fact.eventId(), claimOf(fact))).orElseThrow();
        Order read = locked.order();

        assertThat(read.id()).isEqualTo(orderId);
        assertThat(read.customerId()).isEqualTo(stored.customerId());
        assertThat(read.total()).isEqualByComparingTo(stored.total());
        assertThat(read.currency()).isEqualTo(stored.currency());
        assertThat(read.correlationId()).isEqualTo(stored.correlationId());
        Address to = stored.shippingAddress();
        assertThat(read.shippingAddress()).extracting(Address::name, Address::line1, Address::line2, Address::city,
                Address::postalCode, Address::country)
                .containsExactly(to.name(), to.line1(), to.line2(), to.city(), to.postalCode(), to.country());
        assertThat(read.createdAt()).isEqualTo(stored.createdAt());
        assertThat(read.progress()).isEqualTo(stored.progress());
        assertThatThrownBy(read::items).as("the items are not read for a fact").isInstanceOf(IllegalStateException.class);
        assertThat(locked.factNoted()).as("a fact not in the timeline").isFalse();
        EventEnvelope<StockReserved> none = stockReserved(orderId, "none");
        assertThat(QuarkusTransaction.requiringNew().call(
                () -> orders.lockForChange(UUID.randomUUID(), none.eventId(), claimOf(none)))).isEmpty();
    }

    /**
     * Vacuum cut the empty outbox back to no pages, and a prepared DELETE planned then cached a sequential scan that
     * read every page the next minute's dead rows filled. Rows that never commit fill pages as events do and never
     * reach the relay (logical decoding passes rolled-back transactions over).
     */
    @Test
    void theOutboxKeepsItsPagesThroughVacuumSoItsDeleteUsesTheKey() throws Exception {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO outbox (id, aggregate_type, aggregate_id, type, payload, correlation_id, occurred_at) "
                        + "SELECT gen_random_uuid(), 'order', 'none', 'OrderCreated', repeat('x', 1000), 'none', now() "
                        + "FROM generate_series(1, 400)");
            }
            c.rollback();
            c.setAutoCommit(true);
            boolean prepared = false;
            try (Statement s = c.createStatement()) {
                s.execute("VACUUM outbox");
                try (ResultSet rs = s.executeQuery("SELECT pg_relation_size('outbox') / current_setting('block_size')::int")) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("pages the outbox kept through vacuum").isGreaterThanOrEqualTo(50);
                }
                s.execute("SET plan_cache_mode = force_generic_plan");
                s.execute("PREPARE outbox_delete(uuid) AS DELETE FROM outbox WHERE id = $1");
                prepared = true;
                try (ResultSet rs = s.executeQuery("EXPLAIN EXECUTE outbox_delete('" + UUID.randomUUID() + "')")) {
                    StringBuilder plan = new StringBuilder();
                    while (rs.next()) {
                        plan.append(rs.getString(1)).append('\n');
                    }
                    assertThat(plan.toString()).contains("Index Scan using outbox_pkey");
                }
            } finally {
                // the connection goes back to the pool: only what this test set is undone (the driver's own
                // prepared statements stay)
                try (Statement s = c.createStatement()) {
                    if (prepared) {
                        s.execute("DEALLOCATE outbox_delete");
                    }
                    s.execute("RESET plan_cache_mode");
                }
            }
        }
    }

    /**
     * The slot confirms what the relay's engine has as its offset, and PostgreSQL 15 decodes nothing of a transaction
     * that touches no published table: without a heartbeat that decodes, the slot would stay at the last outbox commit
     * while the outbox is quiet, and hold all the WAL written since.
     */
    @Test
    void whileTheOutboxIsQuietTheSlotFollowsTheWalWrittenElsewhere() throws Exception {
        String written;
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            // WAL of this database with no outbox row in it: a table of the test's own, made, filled and dropped
            c.setAutoCommit(false);
            s.execute("CREATE TABLE outbox_test_elsewhere (n int)");
            s.execute("INSERT INTO outbox_test_elsewhere SELECT generate_series(1, 1000)");
            s.execute("DROP TABLE outbox_test_elsewhere");
            c.commit();
            c.setAutoCommit(true);
            try (ResultSet rs = s.executeQuery("SELECT pg_current_wal_lsn()::text")) {
                rs.next();
                written = rs.getString(1);
            }
        }

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement q = c.prepareStatement("SELECT confirmed_flush_lsn >= ?::pg_lsn, confirmed_flush_lsn"
                         + " FROM pg_replication_slots WHERE slot_name = ?")) {
                q.setString(1, written);
                q.setString(2, relay.slotName());
                try (ResultSet rs = q.executeQuery()) {
                    assertThat(rs.next()).as("the relay's slot " + relay.slotName()).isTrue();
                    assertThat(rs.getBoolean(1)).as("the slot at %s has passed %s", rs.getString(2), written).isTrue();
                }
            }
        });
    }

    private static EventEnvelope<StockReserved> stockReserved(UUID orderId, String correlationId) {
        return EventEnvelope.of(orderId, correlationId, null, new StockReserved("res-1", List.of()));
    }

    private InboxClaim claimOf(EventEnvelope<?> event) {
        return inbox.claimOf(event, Topics.INVENTORY_EVENTS, OptionalInt.empty());
    }

    /** The fact applied in a transaction of its own, as the consumer applies it; its claim, answered. */
    private InboxClaim applied(EventEnvelope<StockReserved> fact) {
        InboxClaim claim = claimOf(fact);
        try (Correlation.Scope ignored = Correlation.open(fact.correlationId(), fact.eventId())) {
            QuarkusTransaction.requiringNew().run(() -> orderService.apply(fact, claim, Order::onStockReserved));
        }
        return claim;
    }

    private void update(String sql, UUID id) throws Exception {
        try (Connection c = dataSource.getConnection(); PreparedStatement statement = c.prepareStatement(sql)) {
            statement.setObject(1, id);
            statement.executeUpdate();
        }
    }

    private long count(String sql, UUID id) throws Exception {
        try (Connection c = dataSource.getConnection(); PreparedStatement statement = c.prepareStatement(sql)) {
            statement.setObject(1, id);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** A new order, placed in a correlation scope of its own. */
    private UUID placed(String correlationPrefix) {
        try (Correlation.Scope ignored = Correlation.open(correlationPrefix + "-" + UUID.randomUUID(), null)) {
            return orderService.place(placeOrder(correlationPrefix), Optional.empty(), null).order().id();
        }
    }

    private static OrderService.PlaceOrder placeOrder(String correlationId) {
        return new OrderService.PlaceOrder("cust-1", List.of(new OrderItem("SKU-MUG", 1, new BigDecimal("3.00"))), "EUR",
                new Address("Ada", "1 Main St", null, "London", "E1", "GB"), "tok_ok", correlationId);
    }
}
