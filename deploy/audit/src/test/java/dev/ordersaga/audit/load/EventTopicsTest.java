package dev.ordersaga.audit.load;

import dev.ordersaga.audit.Snapshot.TopicEvent;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderConfirmed;
import dev.ordersaga.events.Topics;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

class EventTopicsTest {

    final UUID order = UUID.randomUUID();

    @Test
    void aRecordOfAnOrderInScopeIsDecodedWithTheContracts() {
        EventEnvelope<OrderConfirmed> envelope = EventEnvelope.of(order, "cid-1", null,
                new OrderConfirmed(new BigDecimal("21.00"), "EUR"));
        Optional<TopicEvent> event = EventTopics.toEvent(Topics.ORDER_EVENTS, 2, 41, order.toString(),
                EventCodec.encode(envelope), Map.of(), Set.of(order));
        assertThat(event).contains(new TopicEvent(Topics.ORDER_EVENTS, 2, 41, order, envelope.eventId(), "OrderConfirmed"));
    }

    @Test
    void recordsOfOtherOrdersAreSkipped() {
        assertThat(EventTopics.toEvent(Topics.ORDER_EVENTS, 0, 0, UUID.randomUUID().toString(), "{}", Map.of(),
                Set.of(order))).isEmpty();
        assertThat(EventTopics.toEvent(Topics.ORDER_EVENTS, 0, 0, "not-an-order", "{}", Map.of(), Set.of(order))).isEmpty();
    }

    @Test
    void aRecordThatDoesNotDecodeIsKnownByItsHeaders() {
        UUID eventId = UUID.randomUUID();
        String newerType = "{\"eventId\": \"%s\", \"type\": \"OrderTeleported\", \"payload\": {}}".formatted(eventId);
        Optional<TopicEvent> event = EventTopics.toEvent(Topics.ORDER_EVENTS, 0, 7, order.toString(), newerType,
                Map.of("eventId", eventId.toString(), "eventType", "OrderTeleported"), Set.of(order));
        assertThat(event).contains(new TopicEvent(Topics.ORDER_EVENTS, 0, 7, order, eventId, "OrderTeleported"));
    }

    @Test
    void aRecordWithoutAnEventIdIsKeptWithoutOne() {
        Optional<TopicEvent> event = EventTopics.toEvent(Topics.PAYMENT_EVENTS, 0, 9, order.toString(), "garbage",
                Map.of(), Set.of(order));
        assertThat(event).contains(new TopicEvent(Topics.PAYMENT_EVENTS, 0, 9, order, null, null));
    }
}
