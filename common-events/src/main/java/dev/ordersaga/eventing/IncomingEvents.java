package dev.ordersaga.eventing;

import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.UnknownEventTypeException;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import org.jboss.logging.Logger;

import java.util.function.Consumer;

/**
 * The one way a consumer applies an event: decode, open the saga's correlation scope, claim the event id in the
 * inbox, then run the handler, all in the consumer's transaction. A repeat is skipped and logged.
 */
@ApplicationScoped
public class IncomingEvents {

    private static final Logger LOG = Logger.getLogger(IncomingEvents.class);

    @Inject
    Inbox inbox;

    @Inject
    MeterRegistry meters;

    /**
     * @throws dev.ordersaga.events.MalformedEventException if the message can never be applied; the messaging
     *                                                      layer parks it on the dead-letter topic
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public void apply(String topic, String json, Consumer<EventEnvelope<SagaEvent>> handler) {
        EventEnvelope<SagaEvent> envelope;
        try {
            envelope = EventCodec.decode(json);
        } catch (UnknownEventTypeException e) {
            LOG.infof("Skipping event of unknown type '%s' on %s: published by a newer producer", e.type(), topic);
            return;
        }
        try (Correlation.Scope ignored = Correlation.open(envelope.correlationId(), envelope.eventId())) {
            if (!inbox.claim(envelope, topic)) {
                meters.counter("saga.inbox.duplicates", "topic", topic).increment();
                LOG.infof("Duplicate %s %s for order %s skipped: already applied", envelope.type(), envelope.eventId(),
                        envelope.orderId());
                return;
            }
            LOG.debugf("Applying %s %s for order %s", envelope.type(), envelope.eventId(), envelope.orderId());
            handler.accept(envelope);
        }
    }
}
