package dev.ordersaga.eventing;

import io.debezium.engine.DebeziumEngine;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The relay's records that were handed to Kafka, in the order they were read from the log, each with the sends
 * that carry it. A record is marked processed (its offset may then be stored) only once Kafka acknowledged it and
 * every record before it, so the stored offset never passes an event Kafka does not have.
 *
 * <p>The relay does not wait for the acknowledgements of a batch before it takes the next one: waiting made a
 * relay that hands records over one at a time (the low-latency setting) publish one event per Kafka round trip.
 * Acknowledged records are marked on the next call, and at the latest on the engine's next heartbeat (every
 * second) when the outbox goes quiet, and when the relay stops gracefully ({@link #close}); a crash before that
 * publishes them again after the restart, which the consumers' inboxes absorb.
 *
 * <p>Not thread-safe: the engine hands batches over one after the other, on one thread, and a stopping relay
 * closes it from another; the relay holds its monitor around each use.
 */
final class PendingPublishes<R> {

    private record Pending<R>(R record, List<? extends Future<?>> sends) {

        boolean acknowledged() {
            return sends.stream().allMatch(Future::isDone);
        }
    }

    private final ArrayDeque<Pending<R>> queue = new ArrayDeque<>();
    private final int maxPending;
    private final long ackTimeoutMillis;
    /** The engine's, from its last handover: the one to mark with when the relay stops. */
    private DebeziumEngine.RecordCommitter<R> committer;
    private boolean closed;

    PendingPublishes(int maxPending, long ackTimeoutMillis) {
        this.maxPending = maxPending;
        this.ackTimeoutMillis = ackTimeoutMillis;
    }

    /** A record and its sends (none for a record that is not published, such as a heartbeat). */
    void add(R record, List<? extends Future<?>> sends) {
        queue.addLast(new Pending<>(record, sends));
    }

    int size() {
        return queue.size();
    }

    /**
     * Marks processed every record at the head whose sends are all acknowledged, in order; first waits for the
     * oldest while more than the bound are pending. The committer is kept for {@link #close}, which has no
     * handover of its own to take one from.
     *
     * @return how many records were marked
     * @throws IllegalStateException if a send failed or was not acknowledged in time: nothing from that record on
     *                               is marked, and the engine must stop so that it reads them again
     */
    int settle(DebeziumEngine.RecordCommitter<R> committer) throws InterruptedException {
        this.committer = committer;
        int marked = 0;
        while (!queue.isEmpty()) {
            Pending<R> head = queue.peekFirst();
            if (!head.acknowledged() && queue.size() <= maxPending) {
                break;
            }
            for (Future<?> send : head.sends()) {
                try {
                    send.get(ackTimeoutMillis, TimeUnit.MILLISECONDS);
                } catch (ExecutionException | TimeoutException e) {
                    throw new IllegalStateException("Kafka did not acknowledge an event; " + queue.size()
                            + " record(s) from it on stay unmarked and are read again", e);
                }
            }
            committer.markProcessed(head.record());
            queue.removeFirst();
            marked++;
        }
        return marked;
    }

    /**
     * Takes no more records and marks, with the committer of the last handover, whatever Kafka acknowledged: what
     * a graceful stop stores. The caller has waited for the outstanding sends (the producer's flush), so the
     * acknowledged records are all there are, unless a send failed.
     *
     * @return how many records were marked
     * @throws IllegalStateException as {@link #settle}, if a send failed
     */
    int close() throws InterruptedException {
        closed = true;
        return committer == null ? 0 : settle(committer);
    }

    boolean closed() {
        return closed;
    }
}
