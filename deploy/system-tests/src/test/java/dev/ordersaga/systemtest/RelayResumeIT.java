package dev.ordersaga.systemtest;

import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelled;
import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.KafkaTopicProbe;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The relay picks up where its stored offset says: what was published stays published once. */
class RelayResumeIT {

    @Test
    void relayResumesFromItsStoredOffsetAfterARestart() throws Exception {
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS)) {
            List<UUID> before = new ArrayList<>();
            // no heartbeat while it runs: the last order's event is acknowledged but unmarked when the stop comes,
            // which only the stop's own last handover marks
            try (ServiceProcess order = ServiceProcess.start("order-service", "resume-order-1", 18181,
                    Map.of("eventing.relay.heartbeat-interval", "PT10M")).awaitReady()) {
                order.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
                for (int i = 0; i < 5; i++) {
                    before.add(OrderApi.placeOrder(order));
                }
                before.forEach(id -> orderEvents.awaitKey(id.toString(), Duration.ofSeconds(30)));
            }
            assertThat(Databases.count("order_db", "SELECT count(*) FROM cdc_offset")).as("stored offset").isEqualTo(1);

            // committed while no relay runs
            UUID whileDown = UUID.randomUUID();
            OutboxRows.commit("order_db", EventEnvelope.of(whileDown, "resume-" + whileDown, null, new OrderCancelled("while down")));

            try (ServiceProcess order = ServiceProcess.start("order-service", "resume-order-2", 18181, Map.of()).awaitReady()) {
                orderEvents.awaitKey(whileDown.toString(), Duration.ofSeconds(60));
                // everything up to the stored offset stays published once; a replay from the start would repeat it
                UUID after = OrderApi.placeOrder(order);
                orderEvents.awaitKey(after.toString(), Duration.ofSeconds(30));
            }
            // the relay stopped: once the probe read all the topic holds, a replayed copy would be among what it has
            orderEvents.awaitCaughtUp(Duration.ofSeconds(30));
            for (UUID id : before) {
                assertThat(orderEvents.matching(r -> id.toString().equals(r.key()))).as("events of order " + id).hasSize(1);
            }
            assertThat(orderEvents.matching(r -> whileDown.toString().equals(r.key()))).hasSize(1);
        }
    }
}
