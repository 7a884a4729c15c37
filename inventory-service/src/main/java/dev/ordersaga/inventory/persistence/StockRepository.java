package dev.ordersaga.inventory.persistence;

import dev.ordersaga.inventory.domain.Stock;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.LockModeType;

import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

@ApplicationScoped
public class StockRepository implements PanacheRepositoryBase<Stock, String> {

    /**
     * Locks the stock rows of the given SKUs (SELECT ... ORDER BY sku FOR UPDATE) for the rest of the transaction.
     * PostgreSQL takes the row locks after the sort, so every transaction locks in SKU order and two orders that
     * share SKUs queue up instead of deadlocking. (Hibernate writes PESSIMISTIC_WRITE as FOR NO KEY UPDATE on
     * PostgreSQL: it conflicts with itself just as FOR UPDATE does.) SKUs without a row are absent from the map.
     */
    public Map<String, Stock> lockAll(Collection<String> skus) {
        Map<String, Stock> locked = new TreeMap<>();
        if (skus.isEmpty()) {
            return locked;
        }
        find("sku in ?1 order by sku", skus.stream().distinct().sorted().toList())
                .withLock(LockModeType.PESSIMISTIC_WRITE)
                .list()
                .forEach(stock -> locked.put(stock.sku(), stock));
        return locked;
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
