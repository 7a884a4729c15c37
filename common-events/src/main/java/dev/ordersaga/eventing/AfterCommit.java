package dev.ordersaga.eventing;

import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

/**
 * What a transaction reports about itself (a counter, an alert) once it committed: one that rolls back, and is tried
 * again, would otherwise report the same thing twice, or a thing that never happened.
 */
public final class AfterCommit {

    private AfterCommit() {
    }

    /** Runs {@code action} after the current transaction commits, and not at all if it rolls back. */
    public static void run(TransactionSynchronizationRegistry transactions, Runnable action) {
        transactions.registerInterposedSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {
            }

            @Override
            public void afterCompletion(int status) {
                if (status == Status.STATUS_COMMITTED) {
                    action.run();
                }
            }
        });
    }
}
