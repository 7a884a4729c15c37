package dev.ordersaga.eventing;

import io.debezium.engine.DebeziumEngine;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PendingPublishesTest {

    /** Records what the relay marks processed: the offsets the engine may store. */
    static final class Marks implements DebeziumEngine.RecordCommitter<String> {
        final List<String> processed = new ArrayList<>();

        @Override
        public void markProcessed(String record) {
            processed.add(record);
        }

        @Override
        public void markBatchFinished() {
        }

        @Override
        public void markProcessed(String record, DebeziumEngine.Offsets offsets) {
            processed.add(record);
        }

        @Override
        public DebeziumEngine.Offsets buildOffsets() {
            throw new UnsupportedOperationException();
        }
    }

    private final Marks marks = new Marks();

    @Test
    void aRecordIsMarkedOnlyOnceItAndEveryRecordBeforeItAreAcknowledged() throws Exception {
        PendingPublishes<String> pending = new PendingPublishes<>(100, 1000);
        CompletableFuture<String> second = new CompletableFuture<>();
        pending.add("first", List.of(CompletableFuture.completedFuture("ack")));
        pending.add("second", List.of(second));
        pending.add("third", List.of(CompletableFuture.completedFuture("ack")));

        assertThat(pending.settle(marks)).isEqualTo(1);
        assertThat(marks.processed).containsExactly("first");
        assertThat(pending.size()).isEqualTo(2);

        second.complete("ack");
        assertThat(pending.settle(marks)).isEqualTo(2);
        assertThat(marks.processed).containsExactly("first", "second", "third");
        assertThat(pending.size()).isZero();
    }

    @Test
    void aRecordPublishedTwiceWaitsForBothSends() throws Exception {
        PendingPublishes<String> pending = new PendingPublishes<>(100, 1000);
        CompletableFuture<String> copy = new CompletableFuture<>();
        pending.add("event", List.of(CompletableFuture.completedFuture("ack"), copy));

        assertThat(pending.settle(marks)).isZero();
        copy.complete("ack");
        assertThat(pending.settle(marks)).isEqualTo(1);
        assertThat(marks.processed).containsExactly("event");
    }

    @Test
    void aRecordWithoutSendsIsMarkedInItsTurn() throws Exception {
        PendingPublishes<String> pending = new PendingPublishes<>(100, 1000);
        CompletableFuture<String> event = new CompletableFuture<>();
        pending.add("event", List.of(event));
        pending.add("heartbeat", List.of());

        assertThat(pending.settle(marks)).as("the heartbeat's offset is past the unacknowledged event").isZero();
        event.complete("ack");
        pending.settle(marks);
        assertThat(marks.processed).containsExactly("event", "heartbeat");
    }

    @Test
    void aFailedSendStopsTheMarkingAtThatRecord() throws Exception {
        PendingPublishes<String> pending = new PendingPublishes<>(100, 1000);
        pending.add("acknowledged", List.of(CompletableFuture.completedFuture("ack")));
        pending.add("failed", List.of(CompletableFuture.failedFuture(new IllegalStateException("broker gone"))));
        pending.add("after", List.of(CompletableFuture.completedFuture("ack")));

        assertThatThrownBy(() -> pending.settle(marks))
                .isInstanceOf(IllegalStateException.class)
                .hasRootCauseMessage("broker gone");
        assertThat(marks.processed).containsExactly("acknowledged");
    }

    @Test
    void overTheBoundTheOldestIsWaitedFor() throws Exception {
        PendingPublishes<String> pending = new PendingPublishes<>(1, 1000);
        // acknowledged by the time the relay waits for it, not before
        FutureTask<String> oldest = new FutureTask<>(() -> "ack") {
            @Override
            public String get(long timeout, TimeUnit unit) {
                run();
                return "ack";
            }
        };
        pending.add("oldest", List.of(oldest));
        pending.add("newest", List.of(new CompletableFuture<String>()));

        assertThat(pending.settle(marks)).isEqualTo(1);
        assertThat(marks.processed).containsExactly("oldest");
        assertThat(pending.size()).isEqualTo(1);
    }

    @Test
    void anAcknowledgementThatNeverComesOverTheBoundStopsTheRelay() {
        PendingPublishes<String> pending = new PendingPublishes<>(1, 10);
        Future<String> never = new CompletableFuture<>();
        pending.add("stuck", List.of(never));
        pending.add("next", List.of(CompletableFuture.completedFuture("ack")));

        assertThatThrownBy(() -> pending.settle(marks)).isInstanceOf(IllegalStateException.class);
        assertThat(marks.processed).isEmpty();
    }

    @Test
    void closingMarksWhatWasAcknowledgedSinceTheLastHandoverWithItsCommitter() throws Exception {
        PendingPublishes<String> pending = new PendingPublishes<>(100, 1000);
        CompletableFuture<String> last = new CompletableFuture<>();
        pending.add("earlier", List.of(CompletableFuture.completedFuture("ack")));
        pending.add("last", List.of(last));
        assertThat(pending.settle(marks)).isEqualTo(1);

        // acknowledged after the last handover: without the close, its offset would wait for the next one
        last.complete("ack");
        assertThat(pending.close()).isEqualTo(1);
        assertThat(marks.processed).containsExactly("earlier", "last");
        assertThat(pending.closed()).isTrue();
    }

    @Test
    void closingBeforeAnyHandoverMarksNothing() throws Exception {
        PendingPublishes<String> pending = new PendingPublishes<>(100, 1000);

        assertThat(pending.close()).isZero();
        assertThat(pending.closed()).isTrue();
        assertThat(marks.processed).isEmpty();
    }
}
