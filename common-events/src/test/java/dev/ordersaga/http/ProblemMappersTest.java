package dev.ordersaga.http;

import dev.ordersaga.eventing.EventStoreException;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;

class ProblemMappersTest {

    @Test
    void thePoolsTimeoutIsFoundWhereverItIsWrapped() {
        SQLException poolTimeout = thrownBy("io.agroal.pool.ConnectionPool", new SQLException("Sorry, acquisition timeout!"));
        assertThat(ProblemMappers.noConnectionFree(poolTimeout)).isTrue();
        assertThat(ProblemMappers.noConnectionFree(new EventStoreException("could not write", poolTimeout))).isTrue();
        assertThat(ProblemMappers.noConnectionFree(new RuntimeException(new EventStoreException("could not write", poolTimeout))))
                .isTrue();
    }

    @Test
    void whatTheDatabaseRefusesIsNotBusy() {
        SQLException refused = thrownBy("org.postgresql.core.v3.QueryExecutorImpl",
                new SQLException("duplicate key value violates unique constraint", "23505") { });
        assertThat(ProblemMappers.noConnectionFree(new EventStoreException("could not write", refused))).isFalse();
        assertThat(ProblemMappers.noConnectionFree(new EventStoreException("could not write",
                thrownBy("dev.ordersaga.Elsewhere", new SQLException("Sorry, acquisition timeout!"))))).isFalse();
        assertThat(ProblemMappers.noConnectionFree(new IllegalStateException("no cause"))).isFalse();
    }

    private static SQLException thrownBy(String className, SQLException e) {
        e.setStackTrace(new StackTraceElement[]{new StackTraceElement(className, "getConnection", null, -1)});
        return e;
    }
}
