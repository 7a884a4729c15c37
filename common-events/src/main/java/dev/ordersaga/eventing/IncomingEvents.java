package dev.ordersaga.eventing;

import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.EventTypes;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.MalformedEventException;
import dev.ordersaga.events.UnknownEventTypeException;
import dev.ordersaga.retry.Backoff;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.ShutdownEvent;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Predicate;

/**
 * The one way a consumer applies an event: decode, pass over a kind it has no handler for, open the saga's
 * correlation scope, claim the event id in the inbox, then run the handler, all in one transaction. A repeat is
 * skipped and logged.
 *
 * <p>{@link #process} owns the transaction and tries again, in a new one, when it failed for a passing reason (a
 * lock conflict, a database restarting, a row not visible yet); what can never succeed ({@link NotRetryable}, a
 * malformed message, a row that stays invisible) is parked on the service's dead-letter topic ({@link DeadLetters}).
 *
 * <p>{@link #processAll} applies what one poll returned in a single transaction: one commit (one WAL flush) and one
 * round of transaction overhead for the lot instead of one per event, which is what lets a consumer keep up under
 * load. Should that transaction fail, nothing of it stays and the records are applied one by one as above, so a
 * poison message or a lock conflict costs one retry, never an event.
 */
@ApplicationScoped
public class IncomingEvents {

    private static final Logger LOG = Logger.getLogger(IncomingEvents.class);

    @Inject
    Inbox inbox;

    @Inject
    MeterRegistry meters;

    @Inject
    TransactionSynchronizationRegistry transactions;

    @Inject
    DeadLetters deadLetters;

    @Inject
    Instance<EntityManager> entityManager;

    /** About a minute with the default back-off: long enough for a database restart or fail-over. */
    @ConfigProperty(name = "eventing.consumer.max-attempts", defaultValue = "20")
    int maxAttempts;

    /**
     * Attempts on an event about a row the database does not show ({@link NotVisibleYetException}) before it is
     * parked: with the default back-off, 3 s for a window that lasts while a committing session waits for the CPU.
     */
    @ConfigProperty(name = "eventing.consumer.not-visible-attempts", defaultValue = "6")
    int notVisibleAttempts;

    @ConfigProperty(name = "eventing.consumer.retry-backoff", defaultValue = "PT0.1S")
    Duration firstBackoff;

    @ConfigProperty(name = "eventing.consumer.max-retry-backoff", defaultValue = "PT5S")
    Duration maxBackoff;

    private volatile boolean stopping;

    /**
     * Applies the event in a transaction of its own. A passing failure is retried with exponential back-off; a
     * message that can never be applied is parked and acknowledged, and a park that Kafka did not take is a passing
     * failure. A failure while the service shuts down, or one still there after the last attempt, is thrown: the
     * message is not acknowledged, the channel stops (the health check reports it) and the message comes again after
     * the restart. A valid message is never parked for a passing reason.
     */
    public void process(ConsumerRecord<String, String> record, EventHandlers handlers) {
        Backoff backoff = new Backoff(firstBackoff, maxBackoff);
        for (int attempt = 1; ; attempt++) {
            try {
                QuarkusTransaction.requiringNew().run(() -> apply(DeadLetters.origin(record), record.value(), handlers));
                return;
            } catch (RuntimeException e) {
                RuntimeException failure = e;
                Throwable permanent = permanentCause(e);
                String after = "";
                if (permanent == null && attempt >= notVisibleAttempts && !stopping) {
                    permanent = causeMatching(e, NotVisibleYetException.class::isInstance);
                    after = " after " + attempt + " attempts";
                }
                if (permanent != null) {
                    try {
                        deadLetters.park(record, permanent);
                        LOG.errorf("ALERT message parked: %s on %s%s: %s", where(record), deadLetters.topic(), after,
                                permanent.getMessage());
                        return;
                    } catch (RuntimeException notParked) {
                        // Kafka away: a passing failure like any other, not one that stops the channel for good. The
                        // next attempt applies the message again, fails the same way and parks it then.
                        failure = notParked;
                    }
                }
                if (stopping) {
                    LOG.infof("Shutting down: a message of %s is left for redelivery (%s)", record.topic(), failure.toString());
                    throw failure;
                }
                if (attempt >= maxAttempts) {
                    LOG.errorf(failure, "ALERT consumer of %s gave up after %d attempts on %s; the channel stops and the "
                            + "message comes again after a restart", record.topic(), attempt, where(record));
                    throw failure;
                }
                meters.counter("saga.consumer.retries", "topic", record.topic()).increment();
                Duration delay = backoff.delayAfter(attempt);
                LOG.warnf("Attempt %d on %s failed (%s); retrying in %d ms", attempt, where(record), failure,
                        delay.toMillis());
                try {
                    Thread.sleep(delay.toMillis());
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw failure;
                }
            }
        }
    }

    /**
     * Applies a poll's records in one transaction, in order per order id; if that fails, one by one through
     * {@link #process}. Within the batch the records are sorted by key (stably, so one order's events keep their
     * order): every consumer of the service then locks orders in the same order, and two batches never deadlock on
     * their orders' rows. Rows that events of different orders share (inventory's stock, by SKU) are locked in SKU order
     * within an event only: two replicas' batches may deadlock on them, which PostgreSQL breaks by failing one, and
     * that batch goes one by one below.
     */
    public void processAll(Iterable<ConsumerRecord<String, String>> records,
                           EventHandlers handlers) {
        List<ConsumerRecord<String, String>> batch = new ArrayList<>();
        records.forEach(record -> {
            if (!passedOver(record, handlers)) {
                batch.add(record);
            }
        });
        if (batch.isEmpty()) {
            return;
        }
        if (batch.size() == 1) {
            process(batch.get(0), handlers);
            return;
        }
        List<ConsumerRecord<String, String>> lockOrder = new ArrayList<>(batch);
        lockOrder.sort(Comparator.comparing(r -> r.key() == null ? "" : r.key()));
        try {
            QuarkusTransaction.requiringNew().run(() -> {
                for (ConsumerRecord<String, String> record : lockOrder) {
                    apply(DeadLetters.origin(record), record.value(), handlers);
                    endOfEvent();
                }
            });
            // no topic tag: one poll mixes the topics the service follows
            meters.summary("saga.consumer.batch.size").record(batch.size());
            return;
        } catch (RuntimeException e) {
            meters.counter("saga.consumer.batch.fallbacks").increment();
            LOG.infof("A batch of %d messages was rolled back (%s); applying them one by one", batch.size(), e.toString());
        }
        batch.forEach(record -> process(record, handlers));
    }

    /** What a person needs to find a message again: on the topic, in the order's timeline, in the inbox. */
    private static String where(ConsumerRecord<String, String> record) {
        String eventId = DeadLetters.header(record, EventHeaders.EVENT_ID);
        return String.format("a message of %s (partition %d, offset %d, order %s, event %s)", record.topic(),
                record.partition(), record.offset(), record.key(), eventId == null ? "unknown" : eventId);
    }

    /**
     * A kind of event no handler wants, told by the type header the relay copies from the outbox row: passed over
     * before a transaction is begun or the value decoded. Payment and shipping hear OrderConfirmed on every saga, and
     * at moderate load each such event would otherwise cost a transaction of its own. A record without the header,
     * or with a type this build does not know, goes the long way ({@link #apply} decodes, skips or parks it).
     */
    static boolean passedOver(ConsumerRecord<String, String> record, EventHandlers handlers) {
        Header type = record.headers().lastHeader(EventHeaders.EVENT_TYPE);
        if (type == null || type.value() == null) {
            return false;
        }
        return EventTypes.classOf(new String(type.value(), StandardCharsets.UTF_8))
                .map(known -> !handlers.handles(known))
                .orElse(false);
    }

    /**
     * Each event's changes go to the database before the next event is applied, and the persistence context is
     * emptied: the next event reads what this one wrote, as it would in a transaction of its own, and Hibernate's
     * dirty checking before every query stays as cheap as for one event instead of growing with the batch.
     */
    private void endOfEvent() {
        if (entityManager.isResolvable()) {
            EntityManager em = entityManager.get();
            em.flush();
            em.clear();
        }
    }

    void onStop(@Observes ShutdownEvent event) {
        stopping = true;
    }

    /**
     * The cause of a failure that the same message meets on every attempt, or null if another attempt may succeed.
     * Besides the failures marked so ({@link NotRetryable}, a malformed message): a value the database refuses as
     * such (SQLSTATE class 22: too long, out of range; a NOT NULL, foreign key or CHECK violation), and a programming
     * error set off by what the message holds (a field it lacks, an argument out of range). Retried, each of these
     * would stop the channel after the last attempt, and with it every saga the service takes part in, for one message
     * that a replay from the dead-letter topic serves as well once its cause is mended. A unique violation is left to
     * the retries: two replicas inserting the same row during a rebalance meet it once, and the next attempt reads
     * the row the other wrote. Connection, lock and serialization failures (classes 08, 40, 53, 55, 57) pass.
     */
    static Throwable permanentCause(Throwable e) {
        return causeMatching(e, t -> t instanceof NotRetryable
                || t instanceof MalformedEventException
                || t instanceof SQLException sql && refusedValue(sql.getSQLState())
                || t instanceof NullPointerException
                || t instanceof IllegalArgumentException
                || t instanceof ClassCastException
                || t instanceof ArithmeticException
                || t instanceof IndexOutOfBoundsException);
    }

    private static boolean refusedValue(String sqlState) {
        return sqlState != null && (sqlState.startsWith("22")
                || sqlState.equals("23502") || sqlState.equals("23503") || sqlState.equals("23514"));
    }

    /** The first of {@code e} and its causes that {@code test} accepts, or null. */
    private static Throwable causeMatching(Throwable e, Predicate<Throwable> test) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (test.test(t)) {
                return t;
            }
        }
        return null;
    }

    private void skipDuplicate(EventEnvelope<SagaEvent> envelope, String topic) {
        // counted once committed: a batch rolled back by a later event is applied again one by one, and would count
        // its duplicates twice
        AfterCommit.run(transactions, () -> meters.counter("saga.inbox.duplicates", "topic", topic).increment());
        LOG.infof("Duplicate %s %s for order %s skipped: already applied", envelope.type(), envelope.eventId(),
                envelope.orderId());
    }

    /**
     * @throws dev.ordersaga.events.MalformedEventException if the message can never be applied; the messaging
     *                                                      layer parks it on the dead-letter topic
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public void apply(String topic, String json, EventHandlers handlers) {
        EventEnvelope<SagaEvent> envelope;
        try {
            envelope = EventCodec.decode(json);
        } catch (UnknownEventTypeException e) {
            LOG.infof("Skipping event of unknown type '%s' on %s: published by a newer producer", e.type(), topic);
            return;
        }
        if (!handlers.handles(envelope.payload())) {
            return;
        }
        try (Correlation.Scope ignored = Correlation.open(envelope.correlationId(), envelope.eventId())) {
            InboxClaim claim = inbox.claimOf(envelope, topic, handlers.orderLockSpace());
            boolean sentByHandler = handlers.claims(envelope.payload());
            if (!sentByHandler && !inbox.send(claim)) {
                skipDuplicate(envelope, topic);
                return;
            }
            LOG.debugf("Applying %s %s for order %s", envelope.type(), envelope.eventId(), envelope.orderId());
            handlers.dispatch(envelope, claim);
            if (!claim.answered()) {
                // the handler may have acted without knowing whether it should: nothing of this transaction may stay
                throw new IllegalStateException("the handler of " + envelope.type() + " did not send its inbox claim");
            }
            if (sentByHandler && claim.duplicate()) {
                skipDuplicate(envelope, topic);
            }
        }
    }
}
