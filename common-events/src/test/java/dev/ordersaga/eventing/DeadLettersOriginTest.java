package dev.ordersaga.eventing;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** Where a message first came from, which its inbox row, its parking and its counters name. */
class DeadLettersOriginTest {

    @Test
    void aReplayedMessageCameFromTheTopicItWasParkedFrom() {
        assertThat(DeadLetters.origin(record("inventory.replay", "order.events"))).isEqualTo("order.events");
    }

    @Test
    void aMessageOnAnyOtherTopicCameFromThatTopicWhateverItsHeadersSay() {
        assertThat(DeadLetters.origin(record("order.events", null))).isEqualTo("order.events");
        // anyone who may write order.events may set a header; only DeadLetters writes a replay topic
        assertThat(DeadLetters.origin(record("order.events", "payment.events"))).isEqualTo("order.events");
        assertThat(DeadLetters.origin(record("inventory.replay", null))).isEqualTo("inventory.replay");
    }

    private static ConsumerRecord<String, String> record(String topic, String replayedFrom) {
        ConsumerRecord<String, String> record = new ConsumerRecord<>(topic, 0, 0, "key", "{}");
        if (replayedFrom != null) {
            record.headers().add(new RecordHeader(DeadLetters.REPLAYED_FROM, replayedFrom.getBytes(StandardCharsets.UTF_8)));
        }
        return record;
    }
}
