package dev.ordersaga.audit.load;

import dev.ordersaga.audit.Snapshot.Facts;
import dev.ordersaga.audit.Snapshot.HandConfirmed;
import dev.ordersaga.audit.Snapshot.Line;
import dev.ordersaga.audit.Snapshot.Order;
import dev.ordersaga.audit.Snapshot.Payment;
import dev.ordersaga.audit.Snapshot.Reservation;
import dev.ordersaga.audit.Snapshot.Shipment;
import dev.ordersaga.audit.Snapshot.Sighting;
import dev.ordersaga.audit.Snapshot.Stock;
import dev.ordersaga.audit.Snapshot.Surplus;
import dev.ordersaga.audit.Snapshot.TimelineEntry;

import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Reads the four services' databases, read-only, each in one REPEATABLE READ transaction (one consistent picture per
 * database). Only the rows of the orders in scope, and the stock of the SKUs their lines name.
 */
public final class Databases {

    /** What the databases hold about the orders in scope. */
    public record Rows(List<Order> orders, List<UUID> ordersNotFound, List<TimelineEntry> timeline,
                       List<HandConfirmed> handConfirmed, List<Reservation> reservations, List<Sighting> sightings,
                       List<Stock> stock,
                       List<Payment> payments, List<Shipment> shipments, List<Surplus> surpluses) {
    }

    private final String host;
    private final int port;
    private final String user;
    private final String password;

    public Databases(String host, int port, String user, String password) {
        this.host = host;
        this.port = port;
        this.user = user;
        this.password = password;
    }

    /**
     * @param since    orders created at or after it; or null, then
     * @param orderIds exactly these orders
     */
    public Rows load(Instant since, Set<UUID> orderIds) {
        List<Order> orders = new ArrayList<>();
        List<TimelineEntry> timeline = new ArrayList<>();
        List<HandConfirmed> handConfirmed = new ArrayList<>();
        read("order_db", c -> {
            orders.addAll(orders(c, since, orderIds));
            timeline.addAll(timeline(c, ids(orders)));
            handConfirmed.addAll(handConfirmed(c, ids(orders)));
        });
        List<UUID> notFound = new ArrayList<>();
        if (orderIds != null) {
            Set<UUID> found = new HashSet<>(ids(orders));
            orderIds.stream().filter(id -> !found.contains(id)).forEach(notFound::add);
        }
        List<UUID> ids = ids(orders);
        Set<String> skus = new TreeSet<>();
        orders.forEach(o -> o.lines().forEach(l -> skus.add(l.sku())));

        List<Reservation> reservations = new ArrayList<>();
        List<Sighting> sightings = new ArrayList<>();
        List<Stock> stock = new ArrayList<>();
        read("inventory_db", c -> {
            reservations.addAll(reservations(c, ids));
            sightings.addAll(sightings(c, ids));
            stock.addAll(stock(c, skus));
        });
        List<Payment> payments = new ArrayList<>();
        List<Surplus> surpluses = new ArrayList<>();
        read("payment_db", c -> {
            payments.addAll(payments(c, ids));
            surpluses.addAll(surpluses(c, "surplus_charge", Surplus.CHARGE, ids));
        });
        List<Shipment> shipments = new ArrayList<>();
        read("shipping_db", c -> {
            shipments.addAll(shipments(c, ids));
            surpluses.addAll(surpluses(c, "surplus_shipment", Surplus.SHIPMENT, ids));
        });
        return new Rows(orders, notFound, timeline, handConfirmed, reservations, sightings, stock, payments, shipments,
                surpluses);
    }

    /**
     * The orders of order_db, in scope or not, among the given ids: read after the ledgers, so that an order created
     * while the audit read them is known too.
     */
    public Set<UUID> existingOrders(Collection<UUID> ids) {
        Set<UUID> existing = new HashSet<>();
        if (ids.isEmpty()) {
            return existing;
        }
        read("order_db", c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT id FROM orders WHERE id = ANY(?)")) {
                ps.setArray(1, uuids(c, ids));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        existing.add(rs.getObject("id", UUID.class));
                    }
                }
            }
        });
        return existing;
    }

    @FunctionalInterface
    private interface Reading {
        void from(Connection connection) throws SQLException;
    }

    private void read(String database, Reading reading) {
        String url = "jdbc:postgresql://" + host + ":" + port + "/" + database;
        Properties props = new Properties();
        props.setProperty("user", user);
        props.setProperty("password", password);
        props.setProperty("connectTimeout", "5");
        props.setProperty("socketTimeout", "120");
        props.setProperty("ApplicationName", "order-saga-audit");
        try (Connection c = DriverManager.getConnection(url, props)) {
            c.setReadOnly(true);
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            c.setAutoCommit(false);
            try {
                reading.from(c);
            } finally {
                c.rollback();
            }
        } catch (SQLException e) {
            throw new LoadException("cannot read " + database + " at " + host + ":" + port + " as " + user + ": "
                    + e.getMessage(), e);
        }
    }

    private static List<UUID> ids(List<Order> orders) {
        return orders.stream().map(Order::id).toList();
    }

    // --- order_db

    private static List<Order> orders(Connection c, Instant since, Set<UUID> orderIds) throws SQLException {
        boolean waitingForKnown = hasColumn(c, "orders", "waiting_for");
        String columns = "SELECT id, status, total, currency, waiting_reason, created_at, stock_reserved, paid, "
                + "shipment_created, stock_released, payment_refunded, shipment_cancelled"
                + (waitingForKnown ? ", waiting_for" : "") + " FROM orders ";
        List<Order> orders = new ArrayList<>();
        Map<UUID, List<Line>> lines = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(columns
                + (since != null ? "WHERE created_at >= ?" : "WHERE id = ANY(?)") + " ORDER BY created_at, id")) {
            if (since != null) {
                ps.setObject(1, OffsetDateTime.ofInstant(since, ZoneOffset.UTC));
            } else {
                ps.setArray(1, uuids(c, orderIds));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    UUID id = rs.getObject("id", UUID.class);
                    List<Line> orderLines = new ArrayList<>();
                    lines.put(id, orderLines);
                    orders.add(new Order(id, rs.getString("status"), rs.getBigDecimal("total"),
                            rs.getString("currency"), rs.getString("waiting_reason"),
                            waitingForKnown ? rs.getString("waiting_for") : null,
                            rs.getObject("created_at", OffsetDateTime.class).toInstant(), orderLines,
                            new Facts(rs.getBoolean("stock_reserved"), rs.getBoolean("paid"),
                                    rs.getBoolean("shipment_created"), rs.getBoolean("stock_released"),
                                    rs.getBoolean("payment_refunded"), rs.getBoolean("shipment_cancelled"))));
                }
            }
        }
        // lines after the orders: the records copy their lists, so the lines are read into the lists first
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT order_id, sku, quantity FROM order_item WHERE order_id = ANY(?) ORDER BY order_id, line_no")) {
            ps.setArray(1, uuids(c, lines.keySet()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    lines.get(rs.getObject("order_id", UUID.class)).add(new Line(rs.getString("sku"), rs.getInt("quantity")));
                }
            }
        }
        List<Order> withLines = new ArrayList<>(orders.size());
        for (Order o : orders) {
            withLines.add(new Order(o.id(), o.status(), o.total(), o.currency(), o.waitingReason(), o.waitingFor(),
                    o.createdAt(), lines.get(o.id()), o.facts()));
        }
        return withLines;
    }

    private static List<HandConfirmed> handConfirmed(Connection c, List<UUID> orderIds) throws SQLException {
        List<HandConfirmed> confirmed = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT order_id, action, operator, detail FROM operator_action "
                + "WHERE order_id = ANY(?) AND action IN (?, ?) ORDER BY id")) {
            ps.setArray(1, uuids(c, orderIds));
            ps.setString(2, HandConfirmed.PAYMENT_REFUNDED);
            ps.setString(3, HandConfirmed.SHIPMENT_CANCELLED);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    confirmed.add(new HandConfirmed(rs.getObject("order_id", UUID.class), rs.getString("action"),
                            rs.getString("operator"), rs.getString("detail")));
                }
            }
        }
        return confirmed;
    }

    private static List<TimelineEntry> timeline(Connection c, List<UUID> orderIds) throws SQLException {
        List<TimelineEntry> timeline = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT order_id, event_id, type, producer, note FROM saga_event WHERE order_id = ANY(?) ORDER BY seq")) {
            ps.setArray(1, uuids(c, orderIds));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    timeline.add(new TimelineEntry(rs.getObject("order_id", UUID.class), rs.getObject("event_id", UUID.class),
                            rs.getString("type"), rs.getString("producer"), rs.getString("note")));
                }
            }
        }
        return timeline;
    }

    // --- inventory_db

    private static List<Reservation> reservations(Connection c, List<UUID> orderIds) throws SQLException {
        Map<UUID, List<Line>> items = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT order_id, sku, quantity FROM reservation_item WHERE order_id = ANY(?) ORDER BY order_id, line_no")) {
            ps.setArray(1, uuids(c, orderIds));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    items.computeIfAbsent(rs.getObject("order_id", UUID.class), id -> new ArrayList<>())
                            .add(new Line(rs.getString("sku"), rs.getInt("quantity")));
                }
            }
        }
        List<Reservation> reservations = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT order_id, reservation_id, status, failure_reason "
                + "FROM reservation WHERE order_id = ANY(?) ORDER BY order_id")) {
            ps.setArray(1, uuids(c, orderIds));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    UUID orderId = rs.getObject("order_id", UUID.class);
                    reservations.add(new Reservation(orderId, rs.getObject("reservation_id", UUID.class),
                            rs.getString("status"), rs.getString("failure_reason"), items.getOrDefault(orderId, List.of())));
                }
            }
        }
        return reservations;
    }

    private static List<Sighting> sightings(Connection c, List<UUID> orderIds) throws SQLException {
        List<Sighting> sightings = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT order_id, event_id FROM order_sighting WHERE order_id = ANY(?) ORDER BY id")) {
            ps.setArray(1, uuids(c, orderIds));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    sightings.add(new Sighting(rs.getObject("order_id", UUID.class), rs.getObject("event_id", UUID.class)));
                }
            }
        }
        return sightings;
    }

    /** Whether a column exists: the audit also reads databases that older releases of the services migrated. */
    private static boolean hasColumn(Connection c, String table, String column) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM information_schema.columns "
                + "WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?")) {
            ps.setString(1, table);
            ps.setString(2, column);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    private static List<Stock> stock(Connection c, Collection<String> skus) throws SQLException {
        boolean stockedKnown = hasColumn(c, "stock", "stocked");
        Array skuArray = c.createArrayOf("varchar", skus.toArray());
        // what the reservations of the whole database hold of each SKU: reserved and shipped must be exactly that (by
        // SKU, as the rows come: a SKU without a row is reported in the same place on every run)
        Map<String, long[]> held = new TreeMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT ri.sku, r.status, SUM(ri.quantity) AS held "
                + "FROM reservation_item ri JOIN reservation r ON r.order_id = ri.order_id "
                + "WHERE ri.sku = ANY(?) AND r.status IN ('RESERVED', 'CONSUMED') GROUP BY ri.sku, r.status")) {
            ps.setArray(1, skuArray);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long[] byStatus = held.computeIfAbsent(rs.getString("sku"), sku -> new long[2]);
                    byStatus["RESERVED".equals(rs.getString("status")) ? 0 : 1] = rs.getLong("held");
                }
            }
        }
        List<Stock> stock = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT sku, available, reserved, shipped"
                + (stockedKnown ? ", stocked" : "") + " FROM stock WHERE sku = ANY(?) ORDER BY sku")) {
            ps.setArray(1, skuArray);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String sku = rs.getString("sku");
                    long[] h = held.getOrDefault(sku, new long[2]);
                    stock.add(new Stock(sku, stockedKnown ? Long.valueOf(rs.getLong("stocked")) : null,
                            rs.getLong("available"), rs.getLong("reserved"), rs.getLong("shipped"), h[0], h[1]));
                }
            }
        }
        // units held of a SKU whose row is gone (a hand's delete, a migration) were reserved or shipped out of nothing
        Set<String> withRow = stock.stream().map(Stock::sku).collect(Collectors.toSet());
        held.forEach((sku, h) -> {
            if (!withRow.contains(sku)) {
                stock.add(Stock.withoutRow(sku, h[0], h[1]));
            }
        });
        return stock;
    }

    // --- payment_db, shipping_db

    private static List<Payment> payments(Connection c, List<UUID> orderIds) throws SQLException {
        List<Payment> payments = new ArrayList<>();
        String confirmedBy = hasColumn(c, "payment", "refund_confirmed_by") ? "refund_confirmed_by" : "NULL::text";
        try (PreparedStatement ps = c.prepareStatement("SELECT id, order_id, status, amount, refund_answered, "
                + "status = 'CHARGING' AND next_attempt_at IS NULL AS held, provider_refund_id, "
                + confirmedBy + " AS refund_confirmed_by "
                + "FROM payment WHERE order_id = ANY(?) ORDER BY order_id, created_at")) {
            ps.setArray(1, uuids(c, orderIds));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    payments.add(new Payment(rs.getObject("id", UUID.class), rs.getObject("order_id", UUID.class),
                            rs.getString("status"), rs.getBigDecimal("amount"), rs.getBoolean("refund_answered"),
                            rs.getBoolean("held"), rs.getString("provider_refund_id"),
                            rs.getString("refund_confirmed_by")));
                }
            }
        }
        return payments;
    }

    /** A database whose migrations predate the table has recorded none. */
    private static List<Surplus> surpluses(Connection c, String table, String kind, List<UUID> orderIds)
            throws SQLException {
        List<Surplus> surpluses = new ArrayList<>();
        if (!hasColumn(c, table, "undone_at")) {
            return surpluses;
        }
        boolean byHandKnown = hasColumn(c, table, "undone_by");
        String byHand = byHandKnown ? "undone_by, undo_confirmation" : "NULL AS undone_by, NULL AS undo_confirmation";
        try (PreparedStatement ps = c.prepareStatement("SELECT order_id, provider_ref, "
                + "undone_at IS NOT NULL AS undone, undo_ref, " + byHand + " FROM " + table
                + " WHERE order_id = ANY(?) ORDER BY order_id, found_at")) {
            ps.setArray(1, uuids(c, orderIds));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    surpluses.add(new Surplus(rs.getObject("order_id", UUID.class), kind, rs.getString("provider_ref"),
                            rs.getBoolean("undone"), rs.getString("undo_ref"), rs.getString("undone_by"),
                            rs.getString("undo_confirmation")));
                }
            }
        }
        return surpluses;
    }

    private static List<Shipment> shipments(Connection c, List<UUID> orderIds) throws SQLException {
        List<Shipment> shipments = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT id, order_id, status, carrier_shipment_id, "
                + "creation_uncertain FROM shipment WHERE order_id = ANY(?) ORDER BY order_id, created_at")) {
            ps.setArray(1, uuids(c, orderIds));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    shipments.add(new Shipment(rs.getObject("id", UUID.class), rs.getObject("order_id", UUID.class),
                            rs.getString("status"), rs.getString("carrier_shipment_id"),
                            rs.getBoolean("creation_uncertain")));
                }
            }
        }
        return shipments;
    }

    private static Array uuids(Connection c, Collection<UUID> ids) throws SQLException {
        return c.createArrayOf("uuid", new LinkedHashSet<>(ids).toArray());
    }
}
