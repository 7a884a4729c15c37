package dev.ordersaga.eventing;

import dev.ordersaga.events.OrderCreated;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class IncomingEventsPassOverTest {

    private final EventHandlers onlyOrderCreated = EventHandlers.create().on(OrderCreated.class, (event, created) -> {
    });

    @Test
    void aKnownKindWithoutAHandlerIsPassedOverByItsHeader() {
        assertThat(IncomingEvents.passedOver(record("OrderConfirmed"), onlyOrderCreated)).isTrue();
    }

    @Test
    void aKindWithAHandlerIsApplied() {
        assertThat(IncomingEvents.passedOver(record("OrderCreated"), onlyOrderCreated)).isFalse();
    }

    @Test
    void aConsumerThatWantsEveryKindPassesNothingOver() {
        EventHandlers everything = EventHandlers.create().otherwise(event -> {
        });
        assertThat(IncomingEvents.passedOver(record("OrderConfirmed"), everything)).isFalse();
    }

    @Test
    void withoutTheHeaderOrWithAnUnknownTypeTheRecordIsDecoded() {
        // decoding decides: a malformed value is parked, an unknown type is skipped with a log line
        assertThat(IncomingEvents.passedOver(record(null), onlyOrderCreated)).isFalse();
        assertThat(IncomingEvents.passedOver(record("OrderTeleported"), onlyOrderCreated)).isFalse();
    }

    private static ConsumerRecord<String, String> record(String type) {
        ConsumerRecord<String, String> record = new ConsumerRecord<>("order.events", 0, 0, "key", "{}");
        if (type != null) {
            record.headers().add(new RecordHeader(EventHeaders.EVENT_TYPE, type.getBytes(StandardCharsets.UTF_8)));
        }
        return record;
    }
}
