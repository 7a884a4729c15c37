package dev.ordersaga.payment.persistence;

import dev.ordersaga.eventing.Inbox;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.events.Topics;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.ordersaga.payment.testing.PaymentFixtures.stockReserved;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The inbox claim of payment's consumer takes the order's advisory lock in the same statement, and the handlers'
 * own request for it ({@link PaymentRepository#lockOrder}) is then answered without the database: the lock must
 * still serialise the order's transactions as before.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(PaymentSandboxResource.class)
class OrderLockTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @Inject
    Inbox inbox;

    @Inject
    PaymentRepository payments;

    @Inject
    DataSource dataSource;

    @Test
    void theClaimHoldsTheOrderLockUntilCommitAndAnotherTransactionWaitsForIt() throws Exception {
        EventEnvelope<StockReserved> event = EventEnvelope.of(UUID.randomUUID(), "order-lock-test", null, stockReserved());
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);

        CompletableFuture<Boolean> holder = CompletableFuture.supplyAsync(() -> QuarkusTransaction.requiringNew().call(() -> {
            boolean first = inbox.claimUnderOrderLock(event, Topics.INVENTORY_EVENTS, PaymentRepository.ORDER_LOCK_SPACE);
            claimed.countDown();
            release.await(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            // what a handler does first: held already, so it returns at once
            payments.lockOrder(event.orderId());
            return first;
        }));
        assertThat(claimed.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(orderLocks(event.orderId(), true)).isEqualTo(1);

        CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> QuarkusTransaction.requiringNew().run(
                () -> payments.lockOrder(event.orderId())));
        await().atMost(PATIENCE).until(() -> orderLocks(event.orderId(), false) == 1);
        assertThat(waiter).isNotDone();

        release.countDown();
        assertThat(holder.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
        waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(orderLocks(event.orderId(), true)).isZero();
    }

    @Test
    void aRepeatedEventIsNotClaimedTwiceUnderTheLock() {
        EventEnvelope<StockReserved> event = EventEnvelope.of(UUID.randomUUID(), "order-lock-test", null, stockReserved());
        boolean first = QuarkusTransaction.requiringNew().call(
                () -> inbox.claimUnderOrderLock(event, Topics.INVENTORY_EVENTS, PaymentRepository.ORDER_LOCK_SPACE));
        boolean again = QuarkusTransaction.requiringNew().call(
                () -> inbox.claimUnderOrderLock(event, Topics.INVENTORY_EVENTS, PaymentRepository.ORDER_LOCK_SPACE));

        assertThat(first).isTrue();
        assertThat(again).isFalse();
    }

    /** Advisory locks of the two-key form on the order, held (granted) or waited for. */
    private int orderLocks(UUID orderId, boolean granted) throws SQLException {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement query = connection.prepareStatement("""
                     SELECT count(*) FROM pg_locks
                     WHERE locktype = 'advisory' AND objsubid = 2 AND classid::bigint = ? AND objid::bigint = ?
                       AND granted = ?""")) {
            query.setLong(1, Integer.toUnsignedLong(PaymentRepository.ORDER_LOCK_SPACE));
            query.setLong(2, Integer.toUnsignedLong(orderId.hashCode()));
            query.setBoolean(3, granted);
            try (ResultSet rs = query.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
