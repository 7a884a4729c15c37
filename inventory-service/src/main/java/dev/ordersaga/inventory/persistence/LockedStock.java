package dev.ordersaga.inventory.persistence;

import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.inventory.domain.Stock;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Stock rows a transaction has locked, read with plain SQL, and the write of what the domain's movements then changed
 * of them: sent in the round trip of the event that the movements caused, instead of Hibernate's flush of each row.
 */
public final class LockedStock {

    static final String COLUMNS = "sku, available, reserved, shipped, stocked";

    private static final String UPDATE = "UPDATE stock SET available = ?, reserved = ?, shipped = ?, stocked = ? WHERE sku = ?";

    private final Map<String, Stock> rows = new TreeMap<>();
    private final Map<String, Stock.Counts> asRead = new TreeMap<>();

    private LockedStock(List<Stock> rows) {
        rows.forEach(stock -> {
            this.rows.put(stock.sku(), stock);
            this.asRead.put(stock.sku(), stock.counts());
        });
    }

    /** The rows of a statement that selected {@link #COLUMNS}. */
    static LockedStock from(TransactionalWrites.Results results) throws SQLException {
        return new LockedStock(results.rows(LockedStock::stock));
    }

    private static Stock stock(ResultSet row) throws SQLException {
        return Stock.stored(row.getString(1), row.getLong(2), row.getLong(3), row.getLong(4), row.getLong(5));
    }

    /** The locked rows by SKU, for the domain to move units in; SKUs without a row are absent. */
    public Map<String, Stock> rows() {
        return Collections.unmodifiableMap(rows);
    }

    /** One UPDATE a row whose counts moved since it was read (none if nothing moved); each must find its row. */
    public Optional<TransactionalWrites.Write> changes() {
        TransactionalWrites.Write changes = null;
        for (Stock stock : rows.values()) {
            Stock.Counts now = stock.counts();
            if (now.equals(asRead.get(stock.sku()))) {
                continue;
            }
            TransactionalWrites.Write update = new TransactionalWrites.Write(UPDATE, 5, (statement, first) -> {
                statement.setLong(first, now.available());
                statement.setLong(first + 1, now.reserved());
                statement.setLong(first + 2, now.shipped());
                statement.setLong(first + 3, now.stocked());
                statement.setString(first + 4, stock.sku());
            }).expecting(1);
            changes = changes == null ? update : changes.then(update);
        }
        return Optional.ofNullable(changes);
    }
}
