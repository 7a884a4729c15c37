package dev.ordersaga.work;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class ProviderCallsTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    private final Queue<UUID> claimed = new ConcurrentLinkedQueue<>();
    private final Map<UUID, Instant> claimedAt = new ConcurrentHashMap<>();
    private final Queue<UUID> attempted = new ConcurrentLinkedQueue<>();
    private final Queue<UUID> called = new ConcurrentLinkedQueue<>();
    private final AtomicInteger sweeps = new AtomicInteger();
    private final List<UUID> dueRows = List.of(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID());

    private final ProviderCalls<UUID> calls = new ProviderCalls<>("test-call", 2,
            id -> {
                claimedAt.put(id, Instant.now());
                claimed.add(id);
                return Optional.of(id);
            },
            limit -> {
                sweeps.incrementAndGet();
                return dueRows.subList(0, Math.min(limit, dueRows.size()));
            },
            this::call,
            LEASE);

    /** A call that blows up for an id whose high bits are 0, and is made for any other. */
    private void call(UUID id) {
        attempted.add(id);
        if (id.getMostSignificantBits() == 0) {
            throw new IllegalStateException("a call that blows up");
        }
        called.add(id);
    }

    @AfterEach
    void stop() {
        calls.stop();
    }

    /** A call may start half its lease after the claim, so the whole call must fit in the other half. */
    @Test
    void aLeaseACallCanOutlastIsRefusedNamingWhatWouldFit() {
        assertThatNoException().isThrownBy(() -> ProviderCalls.requireLeaseOutlasts("x.lease", Duration.ofSeconds(30),
                Duration.ofSeconds(12), "two exchanges"));

        assertThatThrownBy(() -> ProviderCalls.requireLeaseOutlasts("x.lease", Duration.ofSeconds(30),
                Duration.ofSeconds(15), "two exchanges"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("x.lease=30s is too short: a claimed call may start 15s after its claim and take up to 15s "
                        + "(two exchanges), so its lease could run out while it is under way and another worker call "
                        + "again; make the lease longer than 30s, or the provider's timeout shorter");
        assertThatThrownBy(() -> ProviderCalls.requireLeaseOutlasts("x.lease", Duration.ofMillis(2500),
                Duration.ofMillis(1800), "one exchange")).hasMessageContaining("make the lease longer than 3.6s");
    }

    @Test
    void aCallClaimedByItsTransactionRunsWithoutAClaimOfItsOwn() {
        UUID id = UUID.randomUUID();
        calls.due(id, Instant.now(), id);
        await().atMost(Duration.ofSeconds(5)).until(() -> called.contains(id));
        assertThat(claimed).isEmpty();
    }

    @Test
    void aCallDueLaterIsClaimedWhenItsTimeHasCome() {
        UUID id = UUID.randomUUID();
        Instant at = Instant.now().plusMillis(300);
        calls.due(id, at, null);
        await().atMost(Duration.ofSeconds(5)).until(() -> called.contains(id));
        assertThat(claimed).containsExactly(id);
        assertThat(claimedAt.get(id)).as("claimed not before its time").isAfterOrEqualTo(at);
    }

    @Test
    void theSweepCallsWhatItClaimedUpToTheLimit() {
        calls.sweep(2);
        await().atMost(Duration.ofSeconds(5)).until(() -> called.size() == 2);
        assertThat(called).containsExactlyInAnyOrderElementsOf(dueRows.subList(0, 2));
        assertThat(sweeps).hasValue(1);
    }

    /**
     * On one thread, a call that throws is followed by the next, and gives its claim back: a claimed call left counted
     * would shrink every later sweep's room for good.
     */
    @Test
    void aFailingCallDoesNotStopTheOthers() {
        ProviderCalls<UUID> oneThread = new ProviderCalls<>("one-thread", 1, Optional::of, limit -> List.of(),
                this::call, LEASE);
        try {
            UUID blowsUp = new UUID(0, 1);
            UUID fine = UUID.randomUUID();
            oneThread.due(blowsUp, Instant.now(), blowsUp);
            oneThread.due(fine, Instant.now(), fine);
            await().atMost(Duration.ofSeconds(5)).until(() -> called.contains(fine));
            assertThat(attempted).containsExactly(blowsUp, fine);
            await().atMost(Duration.ofSeconds(5)).until(() -> oneThread.callsUnderWay() == 0);
        } finally {
            oneThread.stop();
        }
    }

    @Test
    void theSweepClaimsNoMoreThanTheLimitWhileClaimedCallsAreUnderWay() throws Exception {
        CountDownLatch provider = new CountDownLatch(1);
        AtomicInteger claimedByTheSweep = new AtomicInteger();
        ProviderCalls<UUID> slow = new ProviderCalls<>("slow-call", 1, Optional::of,
                limit -> {
                    claimedByTheSweep.addAndGet(limit);
                    return dueRows.subList(0, Math.min(limit, dueRows.size()));
                },
                id -> {
                    try {
                        provider.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    called.add(id);
                },
                LEASE);
        try {
            slow.sweep(2);
            slow.sweep(2);
            assertThat(claimedByTheSweep).as("the second sweep finds no room: two calls are claimed already").hasValue(2);
            assertThat(slow.callsUnderWay()).isEqualTo(2);
            provider.countDown();
            await().atMost(Duration.ofSeconds(5)).until(() -> slow.callsUnderWay() == 0);
            assertThat(called).hasSize(2);
            slow.sweep(2);
            assertThat(claimedByTheSweep).as("room again once they are done").hasValue(4);
        } finally {
            provider.countDown();
            slow.stop();
        }
    }

    @Test
    void aClaimThatWaitedForAThreadForOverHalfItsLeaseIsNotCalledAndIsCalledWhenClaimedAgain() throws Exception {
        // the time the runtime reads; moved on by the test while the one thread is busy
        AtomicLong nanos = new AtomicLong();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch provider = new CountDownLatch(1);
        UUID blocking = UUID.randomUUID();
        UUID queued = UUID.randomUUID();
        ProviderCalls<UUID> oneThread = new ProviderCalls<>("one-thread", 1, Optional::of, limit -> List.of(),
                id -> {
                    if (id.equals(blocking)) {
                        started.countDown();
                        try {
                            provider.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    called.add(id);
                },
                LEASE, nanos::get);
        try {
            oneThread.due(blocking, Instant.now(), blocking);
            oneThread.due(queued, Instant.now(), queued);
            assertThat(oneThread.callsUnderWay()).isEqualTo(2);
            assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
            nanos.addAndGet(LEASE.dividedBy(2).plusMillis(1).toNanos());
            provider.countDown();
            await().atMost(Duration.ofSeconds(5)).until(() -> oneThread.callsUnderWay() == 0);
            assertThat(called).containsExactly(blocking);

            // its lease ran out: the sweep's claim, made now, is called
            oneThread.due(queued, Instant.now(), queued);
            await().atMost(Duration.ofSeconds(5)).until(() -> called.contains(queued));
        } finally {
            provider.countDown();
            oneThread.stop();
        }
    }

    @Test
    void aClaimWhoseTransactionCommittedOverHalfItsLeaseAfterTheClaimIsNotCalled() {
        UUID late = UUID.randomUUID();
        UUID onTime = UUID.randomUUID();
        // claimed at the start of a batch whose commit came 16 s later, and one claimed moments before the commit
        calls.due(late, Instant.now().minus(LEASE.dividedBy(2)).minusSeconds(1), late);
        calls.due(onTime, Instant.now().minusSeconds(1), onTime);

        await().atMost(Duration.ofSeconds(5)).until(() -> calls.callsUnderWay() == 0);
        assertThat(called).containsExactly(onTime);
    }

    /**
     * A sweep's or a due row's claim sets the lease at the start of its transaction: a transaction that waited over
     * half the lease (for a pooled connection, a lock) leaves its calls too little of it, so they are not made.
     */
    @Test
    void aClaimWhoseOwnTransactionTookOverHalfItsLeaseIsNotCalled() {
        AtomicLong clock = new AtomicLong();
        UUID swept = UUID.randomUUID();
        UUID woken = UUID.randomUUID();
        UUID onTime = UUID.randomUUID();
        AtomicLong transaction = new AtomicLong(LEASE.dividedBy(2).plusSeconds(1).toNanos());
        ProviderCalls<UUID> slowClaims = new ProviderCalls<>("slow-claim", 1,
                id -> {
                    clock.addAndGet(transaction.get());
                    return Optional.of(id);
                },
                limit -> {
                    clock.addAndGet(transaction.get());
                    return List.of(swept);
                },
                this::call, LEASE, clock::get);
        try {
            slowClaims.sweep(10);
            slowClaims.due(woken, Instant.now(), null);
            await().atMost(Duration.ofSeconds(5)).until(() -> slowClaims.callsUnderWay() == 0 && clock.get()
                    >= 2 * transaction.get());
            transaction.set(Duration.ofSeconds(1).toNanos());
            slowClaims.due(onTime, Instant.now(), null);
            await().atMost(Duration.ofSeconds(5)).until(() -> called.contains(onTime));
        } finally {
            slowClaims.stop();
        }
        assertThat(called).containsExactly(onTime);
    }

    @Test
    void nothingNewStartsOnceStopped() {
        calls.stop();
        UUID id = UUID.randomUUID();
        calls.due(id, Instant.now(), id);
        calls.sweep(10);
        assertThat(sweeps).as("no claim after the stop").hasValue(0);
        assertThat(called).isEmpty();
    }
}
