package dev.ordersaga.eventing;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * One plain SQL write in the caller's transaction, for the rows a hot path writes and never reads back (inbox
 * claims, outbox rows, timeline entries): through the pool's connection, which the pool enlists in the caller's JTA transaction
 * (the one the entities flush into), without Hibernate's persist machinery around it.
 */
@ApplicationScoped
public class TransactionalWrites {

    /** Sets a statement's parameters. */
    @FunctionalInterface
    public interface Parameters {
        void set(PreparedStatement statement) throws SQLException;
    }

    /** Reads the value of one row a statement returned. */
    @FunctionalInterface
    public interface Row<T> {
        T read(ResultSet row) throws SQLException;
    }

    /** Sets a statement's parameters from the given index on: the statement may be one of several sent together. */
    @FunctionalInterface
    public interface IndexedParameters {
        void set(PreparedStatement statement, int first) throws SQLException;
    }

    /**
     * One statement with its parameters. Writes joined with {@link #then} go to the database in one round trip: the
     * driver sends the statements together and waits for the server once, and they succeed or fail with the caller's
     * transaction like any other write. A write may require the rows its statement changes ({@link #expecting}), as an
     * update of a versioned row does: checked for every statement of the round trip, not only the first.
     *
     * @param expectedRows for each statement of {@code sql} (the SQL of one write may hold more than one), the rows it
     *                     must change, or null for any number
     */
    public record Write(String sql, int parameterCount, IndexedParameters parameters, List<Integer> expectedRows) {

        /** A write of one or more statements (separated by semicolons), each free to change any number of rows. */
        public Write(String sql, int parameterCount, IndexedParameters parameters) {
            this(sql, parameterCount, parameters, Collections.nCopies(sql.split(";").length, null));
        }

        /** This write of one statement, required to change exactly so many rows. */
        public Write expecting(int rows) {
            if (expectedRows.size() != 1) {
                throw new IllegalStateException("a row count is expected of a single statement: " + sql);
            }
            return new Write(sql, parameterCount, parameters, List.of(rows));
        }

        public Write then(Write next) {
            int offset = parameterCount;
            List<Integer> expected = new ArrayList<>(expectedRows);
            expected.addAll(next.expectedRows);
            return new Write(sql + ";\n" + next.sql, parameterCount + next.parameterCount, (statement, first) -> {
                parameters.set(statement, first);
                next.parameters.set(statement, first + offset);
            }, Collections.unmodifiableList(expected));
        }
    }

    private static final String ADVISORY_XACT_LOCK = "SELECT pg_advisory_xact_lock(?, ?)";

    @Inject
    DataSource dataSource;

    @Inject
    TransactionSynchronizationRegistry transactions;

    /**
     * @param what names the write in the error, e.g. "note OrderCreated in the timeline of order …"
     * @return the number of rows written
     * @throws EventStoreException                         if the database refused it: the transaction must roll back
     * @throws jakarta.transaction.TransactionalException if there is no transaction
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public int write(String sql, Parameters parameters, Supplier<String> what) {
        return execute(sql, parameters, PreparedStatement::executeUpdate, what);
    }

    /**
     * A write that answers with a row in the same round trip: a data-modifying WITH whose SELECT reads what the
     * caller needs next (PostgreSQL runs the WITH's write whether or not the SELECT reads it; the SELECT sees the
     * database as it was before the statement).
     *
     * @return the first row's value, if the statement returned a row
     * @throws EventStoreException if the database refused it: the transaction must roll back
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public <T> Optional<T> writeAndRead(String sql, Parameters parameters, Row<T> row, Supplier<String> what) {
        return execute(sql, parameters, statement -> {
            try (ResultSet result = statement.executeQuery()) {
                return result.next() ? Optional.ofNullable(row.read(result)) : Optional.<T>empty();
            }
        }, what);
    }

    /** Reads the rows of a round trip's statements ({@link #read}), one statement after the other. */
    @FunctionalInterface
    public interface Reading<T> {
        T read(Results results) throws SQLException;
    }

    /** What the statements of one round trip returned, taken statement by statement in the order they were sent. */
    public static final class Results {

        private final PreparedStatement statement;
        private boolean atRows;

        private Results(PreparedStatement statement) throws SQLException {
            this.statement = statement;
            this.atRows = statement.execute();
        }

        /**
         * The rows of the next statement that returned rows; statements in between that returned none (writes) are
         * passed over.
         *
         * @throws SQLException if no statement is left that returned rows
         */
        public <T> List<T> rows(Row<T> row) throws SQLException {
            while (!atRows) {
                if (statement.getUpdateCount() == -1) {
                    throw new SQLException("no statement left that returned rows");
                }
                atRows = statement.getMoreResults();
            }
            List<T> rows = new ArrayList<>();
            try (ResultSet result = statement.getResultSet()) {
                while (result.next()) {
                    rows.add(row.read(result));
                }
            }
            atRows = statement.getMoreResults();
            return rows;
        }
    }

    /**
     * Sends statements that read (and may write, or lock what they read) in one round trip, and hands what they
     * returned to {@code reading}: a handler that needs several things before it can decide asks for all of them
     * at once instead of waiting for the server once per question.
     *
     * @throws EventStoreException if the database refused it: the transaction must roll back
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public <T> T read(Write statements, Reading<T> reading, Supplier<String> what) {
        return execute(statements.sql(), statement -> statements.parameters().set(statement, 1),
                statement -> reading.read(new Results(statement)), what);
    }

    /**
     * Sends a read of at most one row (a read by key, locked or not) and returns it.
     *
     * @throws EventStoreException if the database refused it: the transaction must roll back
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public <T> Optional<T> readOne(Write read, Row<T> row, Supplier<String> what) {
        return firstRow(read, row, what);
    }

    /**
     * Sends a read of at most one row outside any transaction (one the caller is in waits meanwhile), on a connection
     * in auto-commit: one round trip, where a transaction around a lone read adds a begin, a commit and a round trip
     * for nothing it keeps. For an unlocked look that acts on nothing it read without reading it again under a lock.
     *
     * @throws EventStoreException if the database refused it
     */
    @Transactional(Transactional.TxType.NOT_SUPPORTED)
    public <T> Optional<T> readOneCommitted(Write read, Row<T> row, Supplier<String> what) {
        return firstRow(read, row, what);
    }

    /**
     * Sends an event's inbox claim and then a read of at most one row (a locked read by key) in one round trip, and
     * answers the claim ({@link InboxClaim#answer}) before the row is read: the first read of a claiming handler.
     *
     * @return the row, if there is one; for a duplicate too, which the caller must ask the claim about before it acts
     * @throws EventStoreException if the database refused it: the transaction must roll back
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public <T> Optional<T> readAfter(InboxClaim claim, Write read, Row<T> row, Supplier<String> what) {
        return read(claim.then(read), results -> {
            claim.answer(results);
            return results.rows(row).stream().findFirst();
        }, what);
    }

    /**
     * Sends the write, or the writes joined into it, in one round trip.
     *
     * @return the number of rows the first statement wrote
     * @throws EventStoreException if the database refused it, or a statement changed other than the rows it expected:
     *                             the transaction must roll back
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public int write(Write write, Supplier<String> what) {
        return execute(write.sql(), statement -> write.parameters().set(statement, 1), statement -> {
            boolean resultSet = statement.execute();
            int first = -1;
            for (int i = 0; ; i++) {
                int rows = resultSet ? -1 : statement.getUpdateCount();
                if (!resultSet && rows == -1) {
                    return first;
                }
                Integer expected = i < write.expectedRows().size() ? write.expectedRows().get(i) : null;
                if (expected != null && rows != expected) {
                    throw new EventStoreException("could not " + what.get() + ": statement " + (i + 1) + " changed "
                            + rows + " row(s), not " + expected, null);
                }
                if (i == 0) {
                    first = rows;
                }
                resultSet = statement.getMoreResults();
            }
        }, what);
    }

    /**
     * Takes a transaction-scoped advisory lock (the two-key form, so it never meets the relay's one-key lock), held
     * until the caller's transaction ends. Plain JDBC: through Hibernate a native query costs its parsing, its
     * result mapping and an auto-flush, several times the statement itself, for a lock taken on every event.
     *
     * @throws EventStoreException if the database refused it: the transaction must roll back
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public void lockUntilCommit(int space, int key, Supplier<String> what) {
        if (heldUntilCommit(space, key)) {
            return;
        }
        execute(ADVISORY_XACT_LOCK, statement -> {
            statement.setInt(1, space);
            statement.setInt(2, key);
        }, PreparedStatement::execute, what);
        noteHeldUntilCommit(space, key);
    }

    /**
     * Notes that a statement of the caller's took the lock ({@link Inbox} does, with its claim), so that
     * {@link #lockUntilCommit} need not ask the database again in this transaction.
     */
    void noteHeldUntilCommit(int space, int key) {
        transactions.putResource(new AdvisoryLock(space, key), Boolean.TRUE);
    }

    /** What is done with a statement once its parameters are set. */
    @FunctionalInterface
    private interface Execution<T> {
        T run(PreparedStatement statement) throws SQLException;
    }

    /** The pool's connection (enlisted in the caller's transaction), one statement, and the error that names it. */
    private <T> T execute(String sql, Parameters parameters, Execution<T> execution, Supplier<String> what) {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(sql)) {
            parameters.set(statement);
            return execution.run(statement);
        } catch (SQLException e) {
            throw new EventStoreException("could not " + what.get(), e);
        }
    }

    /**
     * The one read behind {@link #readOne} and {@link #readOneCommitted}, which differ only in the transaction they
     * require; private, so that neither's attribute applies to the other's call.
     */
    private <T> Optional<T> firstRow(Write read, Row<T> row, Supplier<String> what) {
        return execute(read.sql(), statement -> read.parameters().set(statement, 1),
                statement -> new Results(statement).rows(row).stream().findFirst(), what);
    }

    private boolean heldUntilCommit(int space, int key) {
        return transactions.getResource(new AdvisoryLock(space, key)) != null;
    }

    private record AdvisoryLock(int space, int key) {
    }
}
