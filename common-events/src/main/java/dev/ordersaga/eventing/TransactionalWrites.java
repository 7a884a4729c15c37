package dev.ordersaga.eventing;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
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

    @Inject
    DataSource dataSource;

    /**
     * @param what names the write in the error, e.g. "note OrderCreated in the timeline of order …"
     * @return the number of rows written
     * @throws EventStoreException                         if the database refused it: the transaction must roll back
     * @throws jakarta.transaction.TransactionalException if there is no transaction
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public int write(String sql, Parameters parameters, Supplier<String> what) {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(sql)) {
            parameters.set(statement);
            return statement.executeUpdate();
        } catch (SQLException e) {
            throw new EventStoreException("could not " + what.get(), e);
        }
    }
}
