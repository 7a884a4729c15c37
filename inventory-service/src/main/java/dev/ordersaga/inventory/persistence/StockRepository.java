package dev.ordersaga.inventory.persistence;

import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.inventory.domain.Stock;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.LockModeType;

import java.util.Collection;
import java.util.UUID;

@ApplicationScoped
public class StockRepository implements PanacheRepositoryBase<Stock, String> {

    /*
     * Rows are locked in SKU order: every transaction locks in the same order, so two orders that share SKUs queue up
     * instead of deadlocking. PostgreSQL sorts before it locks the rows a SELECT ... ORDER BY ... FOR ... returns; the
     * "C" collation makes the order that of the bytes, whatever the database's collation. FOR NO KEY UPDATE is what
     * Hibernate's PESSIMISTIC_WRITE ({@link #lockOrCreate}) takes too: it conflicts with itself as FOR UPDATE does.
     */
    private static final String LOCK_BY_SKU = "SELECT " + LockedStock.COLUMNS + " FROM stock WHERE sku = ANY (?) "
            + "ORDER BY sku COLLATE \"C\" FOR NO KEY UPDATE";

    private static final String LOCK_RESERVED_BY_ORDER = "SELECT " + LockedStock.COLUMNS + " FROM stock "
            + "WHERE sku IN (SELECT sku FROM reservation_item WHERE order_id = ?) ORDER BY sku COLLATE \"C\" FOR NO KEY UPDATE";

    /**
     * The statement that locks the rows of the given SKUs for the rest of the transaction, to send in one round trip
     * with the others a handler needs first (read its rows with {@link LockedStock#from}). It was one Hibernate lookup
     * per SKU, a round trip each.
     */
    static TransactionalWrites.Write locking(Collection<String> skus) {
        String[] array = skus.toArray(String[]::new);
        return new TransactionalWrites.Write(LOCK_BY_SKU, 1, (statement, first) ->
                statement.setArray(first, statement.getConnection().createArrayOf("varchar", array)));
    }

    /** As {@link #locking}, for the SKUs the order's reservation holds: sent after the statement that locks it. */
    static TransactionalWrites.Write lockingReservedBy(UUID orderId) {
        return new TransactionalWrites.Write(LOCK_RESERVED_BY_ORDER, 1, (statement, first) -> statement.setObject(first, orderId));
    }

    /** The row of a SKU, locked; created with nothing in stock if it did not exist (concurrent creators do not clash). */
    public Stock lockOrCreate(String sku) {
        getEntityManager()
                .createNativeQuery("INSERT INTO stock (sku, available, reserved, shipped) VALUES (?1, 0, 0, 0) ON CONFLICT (sku) DO NOTHING")
                .setParameter(1, sku)
                .executeUpdate();
        return findById(sku, LockModeType.PESSIMISTIC_WRITE);
    }
}
