package dev.ordersaga.systemtest;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The benchmark tells PostgreSQL's processes apart by their titles, as Debian's PostgreSQL 15 sets them. */
class PostgresKindTest {

    @Test
    void processTitlesNameWhatEachProcessDoes() {
        assertThat(SagaBenchmark.postgresKind("postgres: 15/main: walsender order_svc 127.0.0.1(50512) START_REPLICATION\0"))
                .isEqualTo("walsenders");
        assertThat(SagaBenchmark.postgresKind("postgres: 15/main: inventory_svc inventory_db 127.0.0.1(50530) idle\0"))
                .isEqualTo("service sessions");
        assertThat(SagaBenchmark.postgresKind("postgres: 15/main: walwriter \0")).startsWith("WAL writer");
        assertThat(SagaBenchmark.postgresKind("postgres: 15/main: checkpointer \0")).startsWith("WAL writer");
        assertThat(SagaBenchmark.postgresKind("postgres: 15/main: autovacuum worker order_db\0")).isEqualTo("autovacuum");
        assertThat(SagaBenchmark.postgresKind("postgres: 15/main: postgres order_db 127.0.0.1(50600) idle\0")).isEqualTo("other");
        assertThat(SagaBenchmark.postgresKind("/usr/lib/postgresql/15/bin/postgres\0-D\0/var/lib/postgresql/15/main\0"))
                .isEqualTo("other");
    }
}
