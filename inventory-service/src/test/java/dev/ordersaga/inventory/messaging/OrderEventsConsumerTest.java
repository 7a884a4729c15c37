package dev.ordersaga.inventory.messaging;

import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelled;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.Topics;
import dev.ordersaga.inventory.InventoryRows;
import dev.ordersaga.inventory.application.InventoryService;
import dev.ordersaga.testing.Inboxes;
import dev.ordersaga.testing.KafkaTestProducer;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.Orders;
import io.micrometer.core.instrument.MeterRegistry;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@QuarkusTest
@WithTestResource(StackTestResource.class)
class OrderEventsConsumerTest {

    private static KafkaTestProducer producer;

    @Inject
    DataSource dataSource;

    @Inject
    MeterRegistry meters;

    @Inject
    OrderEventsConsumer consumer;

    @Inject
    InventoryService inventory;

    private InventoryRows rows;

    @BeforeEach
    void rows() {
        rows = new InventoryRows(dataSource);
    }

    @BeforeAll
    static void connect() {
        producer = new KafkaTestProducer();
    }

    @AfterAll
    static void disconnect() {
        producer.close();
    }

    @Test
    void duplicateEventIsProcessedOnce() throws Exception {
        UUID orderId = UUID.randomUUID();
        EventEnvelope<OrderCreated> created = EventEnvelope.of(orderId, "dup-" + orderId, null, Orders.created());
        // a cancellation: whatever became of the reservation (stocked or not), inventory answers it
        EventEnvelope<OrderCancelling> marker = EventEnvelope.of(orderId, "dup-" + orderId, null,
                new OrderCancelling("marker", "saga"));
        double duplicatesBefore = duplicates();

        producer.send(Topics.ORDER_EVENTS, orderId.toString(), EventCodec.encode(created));
        producer.send(Topics.ORDER_EVENTS, orderId.toString(), EventCodec.encode(created));
        // same key, same partition, applied in order: once the marker is in the inbox, the duplicate was handled
        producer.send(Topics.ORDER_EVENTS, orderId.toString(), EventCodec.encode(marker));

        await().atMost(Duration.ofSeconds(30)).until(() -> Inboxes.claimed(dataSource, marker.eventId()));
        assertThat(Inboxes.claimed(dataSource, created.eventId())).isTrue();
        assertThat(sightings(orderId)).as("effects of OrderCreated delivered twice").isEqualTo(1);
        // the service's counter, counted once the transaction committed: the backlog of the shared topic may hold
        // repeats of its own
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(duplicates() - duplicatesBefore).isGreaterThanOrEqualTo(1.0));
    }

    @Test
    void poisonMessageIsParkedAndTheNextEventApplied() throws Exception {
        String key = UUID.randomUUID().toString();
        UUID orderId = UUID.fromString(key);
        EventEnvelope<OrderCreated> next = EventEnvelope.of(orderId, "poison-" + key, null, Orders.created());
        try (KafkaTopicProbe dlq = KafkaTopicProbe.fromNow(Topics.INVENTORY_DLQ)) {
            producer.send(Topics.ORDER_EVENTS, key, "{\"this is\": \"not an event\"}");
            producer.send(Topics.ORDER_EVENTS, key, EventCodec.encode(next));

            KafkaTopicProbe.Received parked = dlq.awaitKey(key, Duration.ofSeconds(30));
            assertThat(parked.value()).isEqualTo("{\"this is\": \"not an event\"}");
            assertThat(parked.header("dead-letter-reason")).contains("missing field");
            await().atMost(Duration.ofSeconds(30)).until(() -> sightings(orderId) == 1);
        }
    }

    @Test
    void eventOfAnUnknownTypeIsSkipped() throws Exception {
        UUID orderId = UUID.randomUUID();
        String fromTheFuture = EventCodec.encode(EventEnvelope.of(orderId, "future-" + orderId, null, Orders.created()))
                .replace("\"type\":\"OrderCreated\"", "\"type\":\"OrderGiftWrapped\"");
        EventEnvelope<OrderCreated> next = EventEnvelope.of(orderId, "future-" + orderId, null, Orders.created());
        try (KafkaTopicProbe dlq = KafkaTopicProbe.fromNow(Topics.INVENTORY_DLQ)) {
            String poison = "{\"poison after\": \"" + orderId + "\"}";
            producer.send(Topics.ORDER_EVENTS, orderId.toString(), fromTheFuture);
            producer.send(Topics.ORDER_EVENTS, orderId.toString(), EventCodec.encode(next));
            // same key, same partition, handled and parked in order: once the poison is on the DLQ, the unknown type
            // would be there before it
            producer.send(Topics.ORDER_EVENTS, orderId.toString(), poison);
            await().atMost(Duration.ofSeconds(30)).until(() -> Inboxes.claimed(dataSource, next.eventId()));
            assertThat(sightings(orderId)).isEqualTo(1);
            assertThat(dlq.awaitKey(orderId.toString(), Duration.ofSeconds(30)).value()).isEqualTo(poison);
            assertThat(dlq.matching(r -> orderId.toString().equals(r.key()))).as("the unknown type not parked")
                    .extracting(KafkaTopicProbe.Received::value).containsExactly(poison);
        }
    }

    @Test
    void aPollIsAppliedInOneTransactionWithRepeatsSkipped() throws Exception {
        UUID first = UUID.randomUUID();
        UUID second = UUID.randomUUID();
        EventEnvelope<OrderCreated> a = EventEnvelope.of(first, "batch-" + first, null, Orders.created());
        EventEnvelope<OrderCreated> b = EventEnvelope.of(second, "batch-" + second, null, Orders.created());

        consumer.consume(poll(record(first, EventCodec.encode(a)), record(second, EventCodec.encode(b)),
                record(first, EventCodec.encode(a))));

        assertThat(sightings(first)).as("OrderCreated delivered twice in one poll").isEqualTo(1);
        assertThat(sightings(second)).isEqualTo(1);
        // the rows' transaction, not the service's batch meters, which its own consumer moves meanwhile
        assertThat(sightingTransaction(second)).as("applied as one batch").isEqualTo(sightingTransaction(first));
    }

    @Test
    void aPoisonMessageInAPollIsParkedAndTheRestApplied() throws Exception {
        UUID before = UUID.randomUUID();
        UUID poisoned = UUID.randomUUID();
        UUID after = UUID.randomUUID();
        double fallbacksBefore = counted("saga.consumer.batch.fallbacks");
        try (KafkaTopicProbe dlq = KafkaTopicProbe.fromNow(Topics.INVENTORY_DLQ)) {
            consumer.consume(poll(
                    record(before, EventCodec.encode(EventEnvelope.of(before, "p-" + before, null, Orders.created()))),
                    record(poisoned, "{\"this is\": \"not an event\"}"),
                    record(after, EventCodec.encode(EventEnvelope.of(after, "p-" + after, null, Orders.created())))));

            assertThat(sightings(before)).isEqualTo(1);
            assertThat(sightings(after)).isEqualTo(1);
            assertThat(sightingTransaction(after)).as("applied one by one after the batch failed")
                    .isNotEqualTo(sightingTransaction(before));
            assertThat(counted("saga.consumer.batch.fallbacks")).isGreaterThanOrEqualTo(fallbacksBefore + 1);
            assertThat(dlq.awaitKey(poisoned.toString(), Duration.ofSeconds(30)).value())
                    .isEqualTo("{\"this is\": \"not an event\"}");
        }
    }

    /**
     * Stock that disagrees with a reservation (a hand-made fix, a partial restore) fails the same way on every try: the
     * event is parked at once with its reason, not retried until the channel stops and every other saga waits.
     */
    @Test
    void aReleaseTheStockCannotCoverIsParkedAtOnceAndNothingMoves() throws Exception {
        String sku = InventoryRows.newSku("disagree");
        inventory.setAvailable(sku, 5);
        UUID orderId = UUID.randomUUID();
        consumer.consume(poll(record(orderId, EventCodec.encode(
                EventEnvelope.of(orderId, "d-" + orderId, null, InventoryRows.orderOf(sku, 2))))));
        assertThat(rows.reservationStatus(orderId)).isEqualTo("RESERVED");
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE stock SET available = 4, reserved = 1 WHERE sku = ?")) {
            ps.setString(1, sku);
            ps.executeUpdate();
        }
        EventEnvelope<OrderCancelling> cancelling = EventEnvelope.of(orderId, "d-" + orderId, null,
                new OrderCancelling("customer changed their mind", "customer"));

        try (KafkaTopicProbe dlq = KafkaTopicProbe.fromNow(Topics.INVENTORY_DLQ)) {
            consumer.consume(poll(record(orderId, EventCodec.encode(cancelling))));

            KafkaTopicProbe.Received parked = dlq.awaitKey(orderId.toString(), Duration.ofSeconds(5));
            assertThat(parked.header("dead-letter-reason")).contains("cannot release 2 of " + sku + ": reserved is 1");
        }
        assertThat(rows.stock(sku)).as("nothing moved").isEqualTo("4/1/0");
        assertThat(rows.reservationStatus(orderId)).isEqualTo("RESERVED");
    }

    @Test
    void anEventInventoryDoesNotActOnLeavesNoInboxRow() throws Exception {
        UUID orderId = UUID.randomUUID();
        EventEnvelope<OrderCancelled> cancelled = EventEnvelope.of(orderId, "skip-" + orderId, null,
                new OrderCancelled("customer changed their mind"));
        EventEnvelope<OrderCreated> created = EventEnvelope.of(orderId, "skip-" + orderId, null, Orders.created());

        consumer.consume(poll(record(orderId, EventCodec.encode(cancelled)), record(orderId, EventCodec.encode(created))));

        assertThat(Inboxes.claimed(dataSource, created.eventId())).isTrue();
        assertThat(Inboxes.claimed(dataSource, cancelled.eventId())).as("OrderCancelled asks nothing of inventory").isFalse();
    }

    private static long offset = 1_000_000;

    private static ConsumerRecord<String, String> record(UUID key, String value) {
        return new ConsumerRecord<>(Topics.ORDER_EVENTS, 0, offset++, key.toString(), value);
    }

    @SafeVarargs
    private static ConsumerRecords<String, String> poll(ConsumerRecord<String, String>... records) {
        return new ConsumerRecords<>(Map.of(new TopicPartition(Topics.ORDER_EVENTS, 0), List.of(records)), Map.of());
    }

    private double counted(String name) {
        return meters.find(name).counters().stream().mapToDouble(c -> c.count()).sum();
    }

    /** The transaction that wrote the order's sighting (its row's xmin). */
    private String sightingTransaction(UUID orderId) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT xmin::text FROM order_sighting WHERE order_id = ?")) {
            ps.setObject(1, orderId);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("a sighting of order " + orderId).isTrue();
                return rs.getString(1);
            }
        }
    }

    private double duplicates() {
        return meters.find("saga.inbox.duplicates").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private long sightings(UUID orderId) throws SQLException {
        return count("SELECT count(*) FROM order_sighting WHERE order_id = ?", orderId);
    }

    private long count(String sql, UUID id) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
