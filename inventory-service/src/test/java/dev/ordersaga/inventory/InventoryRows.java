package dev.ordersaga.inventory;

import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.OrderLine;
import dev.ordersaga.testing.Inboxes;
import dev.ordersaga.testing.Orders;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Reads what inventory-service wrote, straight from its tables, and builds the orders the tests send. */
public final class InventoryRows {

    private final DataSource dataSource;

    public InventoryRows(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** A SKU that no other test touches. */
    public static String newSku(String name) {
        return "T-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** {@link Orders#created()} with other lines: sku, quantity, sku, quantity, ... */
    public static OrderCreated orderOf(Object... skuAndQuantity) {
        List<OrderLine> lines = new ArrayList<>();
        for (int i = 0; i < skuAndQuantity.length; i += 2) {
            lines.add(new OrderLine((String) skuAndQuantity[i], (Integer) skuAndQuantity[i + 1], new BigDecimal("1.00")));
        }
        OrderCreated base = Orders.created();
        BigDecimal total = BigDecimal.valueOf(lines.stream().mapToInt(OrderLine::quantity).sum()).setScale(2);
        return new OrderCreated(base.customerId(), lines, total, base.currency(), base.shippingAddress(), base.paymentToken());
    }

    /** "available/reserved/shipped", or null if the SKU has no row. */
    public String stock(String sku) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT available, reserved, shipped FROM stock WHERE sku = ?")) {
            ps.setString(1, sku);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) + "/" + rs.getLong(2) + "/" + rs.getLong(3) : null;
            }
        }
    }

    /** The status of the order's reservation, or null if it has none. */
    public String reservationStatus(UUID orderId) throws SQLException {
        return string("SELECT status FROM reservation WHERE order_id = ?", orderId);
    }

    public String reservationId(UUID orderId) throws SQLException {
        return string("SELECT reservation_id::text FROM reservation WHERE order_id = ?", orderId);
    }

    /** "sku=quantity ..." of what the order's reservation holds, in line order. */
    public String reservationItems(UUID orderId) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT sku, quantity FROM reservation_item WHERE order_id = ? ORDER BY line_no")) {
            ps.setObject(1, orderId);
            List<String> items = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    items.add(rs.getString(1) + "=" + rs.getInt(2));
                }
            }
            return String.join(" ", items);
        }
    }

    public long count(String sql, Object parameter) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, parameter);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    public boolean inboxHas(UUID eventId) throws SQLException {
        return Inboxes.claimed(dataSource, eventId);
    }

    private String string(String sql, UUID id) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }
}
