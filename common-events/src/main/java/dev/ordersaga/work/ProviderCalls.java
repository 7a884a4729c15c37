package dev.ordersaga.work;

import org.jboss.logging.Logger;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;

/**
 * The runtime of a service's calls to an external provider (payment's charges and refunds, shipping's carrier
 * calls), made outside any database transaction on a small pool of threads. What is owed is in the rows, with the
 * time of the next attempt; the runtime only decides when to look:
 * <ul>
 *   <li>a call claimed in the transaction that made it due ({@link #due} with the claimed call) runs as soon as that
 *       transaction has committed, with no claiming transaction of its own;</li>
 *   <li>a call due later (a back-off) is claimed when its time comes, if no one else took it meanwhile;</li>
 *   <li>{@link #sweep} claims whatever is due and was not taken: after a crash or a restart, rows another replica
 *       left, a lease that ran out, a wake-up that was lost.</li>
 * </ul>
 * Claims take the row with {@code FOR UPDATE SKIP LOCKED} and a lease (the service's claim functions), so two workers,
 * in one process or in two replicas, never call for the same row at once. Work scheduled but not started when the
 * service stops stays in the rows for the next sweep.
 *
 * @param <T> what one call needs, read in the claiming transaction (no managed entity crosses into the call)
 */
public final class ProviderCalls<T> {

    private static final Logger LOG = Logger.getLogger(ProviderCalls.class);

    private final String name;
    private final Function<UUID, Optional<T>> claim;
    private final IntFunction<List<T>> claimDue;
    private final Consumer<T> call;
    private final Duration maxWait;
    private final LongSupplier nanoTime;
    private final ScheduledThreadPoolExecutor executor;
    /** Claimed calls not finished yet: their leases are running. */
    private final AtomicInteger claimedCalls = new AtomicInteger();
    private volatile boolean stopping;

    /**
     * @param name    the threads' name prefix, and the word for a row in log lines
     * @param threads  calls made at once
     * @param claim    claims one row, in a transaction of its own, if it is due and no one holds it
     * @param claimDue claims up to so many due rows that no one holds, in a transaction of its own
     * @param call       makes one call and records its outcome; a failure it throws is logged and the row waits for
     *                its lease to run out
     * @param lease    how long a claim holds its row: a claimed call that waited for a thread for over half of it is
     *                 not made (see {@link #run})
     */
    public ProviderCalls(String name, int threads, Function<UUID, Optional<T>> claim, IntFunction<List<T>> claimDue,
                         Consumer<T> call, Duration lease) {
        this(name, threads, claim, claimDue, call, lease, System::nanoTime);
    }

    ProviderCalls(String name, int threads, Function<UUID, Optional<T>> claim, IntFunction<List<T>> claimDue,
                  Consumer<T> call, Duration lease, LongSupplier nanoTime) {
        this.name = name;
        this.claim = claim;
        this.claimDue = claimDue;
        this.call = call;
        this.maxWait = lease.dividedBy(2);
        this.nanoTime = nanoTime;
        AtomicInteger count = new AtomicInteger();
        executor = new ScheduledThreadPoolExecutor(threads, runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        executor.setRemoveOnCancelPolicy(true);
    }

    /**
     * Refuses a lease that a call can outlast. A claimed call may start as late as half its lease after its claim (see
     * {@link #run}), so the whole call must fit in the other half: otherwise the lease can run out while the call is
     * under way, and another worker, which takes a row whose lease ran out for one with no call under way, calls again
     * or decides as if no call had been made.
     *
     * @param leaseSetting the lease's setting, and {@code what} the call's longest course, for the message
     * @param longestCall  the longest one call can take, all its exchanges with the provider together
     * @throws IllegalStateException for a service to refuse to start with
     */
    public static void requireLeaseOutlasts(String leaseSetting, Duration lease, Duration longestCall, String what) {
        if (longestCall.compareTo(lease.dividedBy(2)) >= 0) {
            throw new IllegalStateException(String.format("%s=%ss is too short: a claimed call may start %ss after its "
                    + "claim and take up to %ss (%s), so its lease could run out while it is under way and another "
                    + "worker call again; make the lease longer than %ss, or the provider's timeout shorter",
                    leaseSetting, seconds(lease), seconds(lease.dividedBy(2)), seconds(longestCall), what,
                    seconds(longestCall.multipliedBy(2))));
        }
    }

    private static String seconds(Duration duration) {
        return BigDecimal.valueOf(duration.toMillis(), 3).stripTrailingZeros().toPlainString();
    }

    /**
     * A row has a call due at {@code at}; to be called once the transaction that said so has committed.
     *
     * @param at      when the call is due; for a claimed call, when it was claimed, since its lease runs from then
     * @param claimed the call, when that transaction claimed it already; null to claim it when due
     */
    public void due(UUID id, Instant at, T claimed) {
        if (stopping) {
            return;
        }
        try {
            if (claimed != null) {
                // the lease began with the claim, not with the commit: a long batch after its claim counts as waiting
                long sinceClaim = Math.max(0, Duration.between(at, Instant.now()).toNanos());
                start(claimed, nanoTime.getAsLong() - sinceClaim);
                return;
            }
            // rounded up: woken a fraction of a millisecond early, the claim would find the row not yet due
            long delayMillis = Math.max(0, Duration.between(Instant.now(), at).toNanos() / 1_000_000 + 1);
            executor.schedule(() -> claimAndRun(id), delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            LOG.infof("Stopping: %s %s is left to the next sweep", name, id);
        }
    }

    /**
     * Claims due rows and starts their calls, so that no more than {@code limit} claimed calls wait or run at once:
     * a claim must not sit in the queue until its lease runs out (a slow provider), or the next sweep would claim
     * the row again.
     */
    public void sweep(int limit) {
        int room = limit - claimedCalls.get();
        if (stopping || room <= 0) {
            return;
        }
        List<T> due;
        // read before the claiming transaction: its leases run from its start, and a wait for a pooled connection or
        // a lock within it comes out of the half of the lease a call may wait
        long claimedAt = nanoTime.getAsLong();
        try {
            due = claimDue.apply(room);
        } catch (RuntimeException e) {
            LOG.warnf(e, "Sweep of %s failed; trying again at the next one", name);
            return;
        }
        due.forEach(work -> start(work, claimedAt));
    }

    /** Claimed calls waiting for a thread or running. */
    public int callsUnderWay() {
        return claimedCalls.get();
    }

    /** No new calls; calls under way may finish (up to 10 s) before the datasource goes. */
    public void stop() {
        stopping = true;
        executor.shutdown();
        try {
            if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            executor.shutdownNow();
        }
    }

    private void claimAndRun(UUID id) {
        if (stopping) {
            return;
        }
        long claimedAt = nanoTime.getAsLong();
        try {
            claim.apply(id).ifPresent(work -> {
                claimedCalls.incrementAndGet();
                run(work, claimedAt);
            });
        } catch (RuntimeException e) {
            LOG.warnf(e, "Could not claim %s %s; the sweep tries again", name, id);
        }
    }

    private void start(T work, long claimedAt) {
        claimedCalls.incrementAndGet();
        try {
            executor.execute(() -> run(work, claimedAt));
        } catch (RejectedExecutionException e) {
            claimedCalls.decrementAndGet();
            LOG.infof("Stopping: a claimed %s is retried when its lease runs out", name);
        }
    }

    /**
     * Makes the call, unless the claim waited for over half its lease (for a thread, behind calls that all meet a slow
     * provider, or for the commit of the transaction that claimed it, behind the rest of its batch): a call made that late could still be under way when the lease runs out, and a row whose lease ran
     * out counts as having no call under way, so another worker could call again, or a cancellation could find
     * nothing at the provider and end the row while this call creates what it then no longer undoes. Left alone, the
     * row waits for its lease to run out and the sweep claims it again.
     */
    private void run(T work, long claimedAt) {
        try {
            long waitedNanos = nanoTime.getAsLong() - claimedAt;
            if (waitedNanos > maxWait.toNanos()) {
                LOG.warnf("A claimed %s waited %d ms for a thread, over half its lease: not called now; the sweep "
                        + "claims it again once the lease has run out", name, waitedNanos / 1_000_000);
            } else if (!stopping) {
                call.accept(work);
            }
        } catch (RuntimeException e) {
            LOG.errorf(e, "A %s call failed unexpectedly; retried when its lease runs out", name);
        } finally {
            claimedCalls.decrementAndGet();
        }
    }
}
