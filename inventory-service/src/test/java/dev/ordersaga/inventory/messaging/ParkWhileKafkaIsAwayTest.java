package dev.ordersaga.inventory.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.KafkaTestProducer;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.Orders;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Parking a poison message needs Kafka too. A park Kafka does not take is a passing failure: tried again, not the end
 * of the consumer (which would stop every saga of the service until a restart).
 */
@QuarkusTest
@TestProfile(ParkWhileKafkaIsAwayTest.TwoFailedParks.class)
@WithTestResource(StackTestResource.class)
class ParkWhileKafkaIsAwayTest {

    /** The first two parks of each message fail: of the test's own too, whatever else is parked meanwhile. */
    public static class TwoFailedParks implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("eventing.dead-letters.fault.failed-parks", "2");
        }
    }

    private static KafkaTestProducer producer;

    @Inject
    DataSource dataSource;

    @BeforeAll
    static void connect() {
        producer = new KafkaTestProducer();
    }

    @AfterAll
    static void disconnect() {
        producer.close();
    }

    @Test
    void aPoisonMessageWhoseParkFailsIsParkedOnALaterAttemptAndTheNextEventApplied() throws Exception {
        String key = UUID.randomUUID().toString();
        UUID orderId = UUID.fromString(key);
        EventEnvelope<OrderCreated> next = EventEnvelope.of(orderId, "park-fails-" + key, null, Orders.created());
        try (KafkaTopicProbe dlq = KafkaTopicProbe.fromNow(Topics.INVENTORY_DLQ);
             LogCapture log = LogCapture.of(IncomingEvents.class)) {
            producer.send(Topics.ORDER_EVENTS, key, "{\"this is\": \"not an event\"}");
            producer.send(Topics.ORDER_EVENTS, key, EventCodec.encode(next));

            assertThat(dlq.awaitKey(key, Duration.ofSeconds(30)).value()).isEqualTo("{\"this is\": \"not an event\"}");
            await().atMost(Duration.ofSeconds(30)).until(() -> sightings(orderId) == 1);
            // the next event applied, the consumer is past the park: what the dead-letter topic holds now is all of it
            dlq.awaitCaughtUp(Duration.ofSeconds(30));
            assertThat(dlq.matching(r -> key.equals(r.key()))).as("parked once").hasSize(1);
            // another message parked meanwhile (one an earlier test left on the topic) fails its own two parks
            assertThat(log.matching(line -> line.message().contains("(eventing.dead-letters.fault.failed-parks)")
                    && line.message().contains("order " + key + ",")))
                    .as("the two parks Kafka did not take, each a retried attempt").hasSize(2);
            assertThat(log.containing("ALERT message parked: a message of " + Topics.ORDER_EVENTS).stream()
                    .filter(line -> line.message().contains("order " + key)))
                    .as("once, for the park Kafka took").singleElement()
                    .satisfies(line -> assertThat(line.message()).contains("on " + Topics.INVENTORY_DLQ));
        }
    }

    private long sightings(UUID orderId) throws Exception {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM order_sighting WHERE order_id = ?")) {
            ps.setObject(1, orderId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
