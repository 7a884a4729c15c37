package dev.ordersaga.eventing;

import dev.ordersaga.events.MalformedEventException;
import jakarta.persistence.PersistenceException;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;

/** Which failures park a message at once, and which are tried again because another attempt may succeed. */
class IncomingEventsPermanentFailureTest {

    @Test
    void aValueTheDatabaseRefusesAsSuchParksTheMessage() {
        for (String state : new String[]{"22001", "22003", "22P02", "23502", "23503", "23514"}) {
            SQLException refused = new SQLException("refused", state);
            assertThat(IncomingEvents.permanentCause(new PersistenceException(new EventStoreException("write", refused))))
                    .as(state).isSameAs(refused);
        }
    }

    @Test
    void whatTheNextAttemptMayNotMeetIsTriedAgain() {
        // connection lost, serialization or deadlock, cannot connect now, lock not available, too many connections,
        // and a unique violation, which a replica inserting the same row during a rebalance causes once
        for (String state : new String[]{"08006", "40001", "40P01", "57P03", "55P03", "53300", "23505", null}) {
            assertThat(IncomingEvents.permanentCause(new PersistenceException(new SQLException("passing", state))))
                    .as(String.valueOf(state)).isNull();
        }
        assertThat(IncomingEvents.permanentCause(new IllegalStateException("no transaction"))).isNull();
        assertThat(IncomingEvents.permanentCause(new NotVisibleYetException("not yet"))).isNull();
    }

    @Test
    void aMessageThatLacksWhatItsHandlerNeedsParksIt() {
        NullPointerException lacking = new NullPointerException("unavailableSkus is null");
        assertThat(IncomingEvents.permanentCause(new RuntimeException(lacking))).isSameAs(lacking);
        assertThat(IncomingEvents.permanentCause(new IllegalArgumentException("correlation id is required"))).isNotNull();
        assertThat(IncomingEvents.permanentCause(new MalformedEventException("not JSON"))).isNotNull();
    }
}
