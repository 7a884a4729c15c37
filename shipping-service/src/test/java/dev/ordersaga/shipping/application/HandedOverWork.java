package dev.ordersaga.shipping.application;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.TransactionPhase;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What committed transactions handed to {@link ShipmentWorker}, seen as the worker sees it: the calls a transaction
 * left claimed and the work it left due later. A carrier call is made on nothing else (the sweep aside, which only
 * takes rows whose next attempt is due), so a test can tell that none will follow from a commit without waiting to
 * see none arrive. Kept per watched thread: the observers run in the thread that commits, before its commit
 * returns, while the service's own consumer and sweep commit on theirs.
 */
@ApplicationScoped
public class HandedOverWork {

    /** One transaction's hand-over: the shipments it left a call claimed for, or work due later. */
    public record HandOver(List<UUID> calls, List<UUID> due) {
    }

    private final Map<Thread, List<HandOver>> byThread = new ConcurrentHashMap<>();

    void onClaimed(@Observes(during = TransactionPhase.AFTER_SUCCESS) ClaimedCalls claimed) {
        record(new HandOver(claimed.calls().stream().map(CarrierWork::shipmentId).toList(), List.of()));
    }

    void onDue(@Observes(during = TransactionPhase.AFTER_SUCCESS) ShipmentDue due) {
        record(new HandOver(List.of(), List.of(due.shipmentId())));
    }

    /** From now on, keeps what the current thread's commits hand over (and forgets what it kept before). */
    public void watchThisThread() {
        byThread.put(Thread.currentThread(), new CopyOnWriteArrayList<>());
    }

    /** What the current thread's commits handed over since it began to be watched, in commit order. */
    public List<HandOver> ofThisThread() {
        return List.copyOf(byThread.getOrDefault(Thread.currentThread(), List.of()));
    }

    /** Only for watched threads: the service's own consumer and workers commit all along. */
    private void record(HandOver handOver) {
        List<HandOver> watched = byThread.get(Thread.currentThread());
        if (watched != null) {
            watched.add(handOver);
        }
    }
}
