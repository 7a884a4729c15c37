package dev.ordersaga.order.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.ordersaga.order.domain.SagaEventRecord;

import java.time.Instant;
import java.util.UUID;

@JsonInclude(JsonInclude.Include.NON_NULL)
public record TimelineEntry(String type, String producer, Instant occurredAt, UUID eventId, String correlationId,
                            UUID causationId, String note) {

    static TimelineEntry of(SagaEventRecord r) {
        return new TimelineEntry(r.type(), r.producer(), r.occurredAt(), r.eventId(), r.correlationId(), r.causationId(),
                r.note());
    }
}
