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

    /** Parked again after a replay, a message is said to come from where it lay on its topic, not the replay topic. */
    @Test
    void aReplayedMessageLayWhereItLayBeforeItWasParked() {
        ConsumerRecord<String, String> replayed = new ConsumerRecord<>("inventory.replay", 0, 3, "key", "{}");
        replayed.headers().add(DeadLetters.REPLAYED_FROM, utf8("order.events"))
                .add(DeadLetters.REPLAYED_FROM_PARTITION, utf8("2")).add(DeadLetters.REPLAYED_FROM_OFFSET, utf8("57"));
        assertThat(DeadLetters.originalPosition(replayed)).containsExactly("2", "57");

        ConsumerRecord<String, String> first = new ConsumerRecord<>("order.events", 1, 9, "key", "{}");
        // only a replay topic's headers count, as for origin()
        first.headers().add(DeadLetters.REPLAYED_FROM_PARTITION, utf8("2"))
                .add(DeadLetters.REPLAYED_FROM_OFFSET, utf8("57"));
        assertThat(DeadLetters.originalPosition(first)).containsExactly("1", "9");
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static ConsumerRecord<String, String> record(String topic, String replayedFrom) {
        ConsumerRecord<String, String> record = new ConsumerRecord<>(topic, 0, 0, "key", "{}");
        if (replayedFrom != null) {
            record.headers().add(new RecordHeader(DeadLetters.REPLAYED_FROM, replayedFrom.getBytes(StandardCharsets.UTF_8)));
        }
        return record;
    }
}
