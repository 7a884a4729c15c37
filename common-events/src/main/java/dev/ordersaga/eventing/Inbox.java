package dev.ordersaga.eventing;

import dev.ordersaga.events.EventEnvelope;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

/**
 * The ids of the events this service has applied. Claiming an id happens in the handler's transaction: if the
 * handler rolls back, so does the claim, and the redelivered event is applied then.
 */
@ApplicationScoped
public class Inbox {

    private static final String CLAIM = """
            INSERT INTO inbox (event_id, event_type, topic, order_id, correlation_id, received_at)
            VALUES (?, ?, ?, ?, ?, now())
            ON CONFLICT (event_id) DO NOTHING""";

    @Inject
    TransactionalWrites writes;

    /**
     * @return true if this is the first delivery of the event; false if it was applied before (or is being applied
     * by a concurrent transaction that then commits: the insert waits for it)
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public boolean claim(EventEnvelope<?> envelope, String topic) {
        return writes.write(CLAIM, claim -> {
            claim.setObject(1, envelope.eventId());
            claim.setString(2, envelope.type());
            claim.setString(3, topic);
            claim.setObject(4, envelope.orderId());
            claim.setString(5, envelope.correlationId());
        }, () -> "record event " + envelope.eventId() + " in the inbox") == 1;
    }
}
