package dev.ordersaga.eventing;

import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.MalformedEventException;
import dev.ordersaga.events.UnknownEventTypeException;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * The one way a consumer applies an event: decode, open the saga's correlation scope, claim the event id in the
 * inbox, then run the handler, all in one transaction. A repeat is skipped and logged.
 *
 * <p>{@link #process} owns the transaction and tries again, in a new one, when it failed for a passing reason (a
 * lock conflict, a database restarting); what can never succeed ({@link NotRetryable}, a malformed message) or is
 * still failing after the last attempt is thrown to the messaging layer, which parks it on the dead-letter topic.
 */
@ApplicationScoped
public class IncomingEvents {

    private static final Logger LOG = Logger.getLogger(IncomingEvents.class);

    @Inject
    Inbox inbox;

    @Inject
    MeterRegistry meters;

    @ConfigProperty(name = "eventing.consumer.max-attempts", defaultValue = "8")
    int maxAttempts;

    @ConfigProperty(name = "eventing.consumer.retry-backoff", defaultValue = "PT0.1S")
    Duration firstBackoff;

    @ConfigProperty(name = "eventing.consumer.max-retry-backoff", defaultValue = "PT5S")
    Duration maxBackoff;

    /** Applies the event in a transaction of its own, retrying passing failures with exponential back-off. */
    public void process(String topic, String json, Consumer<EventEnvelope<SagaEvent>> handler) {
        Duration backoff = firstBackoff;
        for (int attempt = 1; ; attempt++) {
            try {
                QuarkusTransaction.requiringNew().run(() -> apply(topic, json, handler));
                return;
            } catch (RuntimeException e) {
                if (isPermanent(e) || attempt >= maxAttempts) {
                    LOG.errorf(e, "Parking a message of %s after %d attempt(s): %s", topic, attempt, e.getMessage());
                    throw e;
                }
                meters.counter("saga.consumer.retries", "topic", topic).increment();
                LOG.warnf("Attempt %d on a message of %s failed (%s); retrying in %d ms", attempt, topic, e, backoff.toMillis());
                try {
                    Thread.sleep(backoff.toMillis());
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
                backoff = backoff.multipliedBy(2).compareTo(maxBackoff) > 0 ? maxBackoff : backoff.multipliedBy(2);
            }
        }
    }

    private static boolean isPermanent(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof NotRetryable || t instanceof MalformedEventException) {
                return true;
            }
        }
        return false;
    }

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
