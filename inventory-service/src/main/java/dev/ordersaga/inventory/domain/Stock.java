package dev.ordersaga.inventory.domain;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/**
 * The counts of one SKU. Units move available -> reserved (reserve), reserved -> available (release) and
 * reserved -> shipped (consume); no movement leaves a count below zero (and a CHECK in the table says the same).
 * Callers hold the row lock (SELECT ... FOR UPDATE) while they move units.
 */
@Entity
@Table(name = "stock")
public class Stock {

    @Id
    private String sku;

    @Column(nullable = false)
    private long available;

    @Column(nullable = false)
    private long reserved;

    @Column(nullable = false)
    private long shipped;

    /** Units ever made available by {@link #adjustAvailableTo}: always available + reserved + shipped. */
    @Column(nullable = false)
    private long stocked;

    protected Stock() {
    }

    /** A SKU with nothing in stock. */
    public Stock(String sku) {
        if (sku == null || sku.isBlank()) {
            throw new IllegalArgumentException("a SKU is required");
        }
        this.sku = sku;
    }

    /** A SKU's row as read without Hibernate ({@code StockRepository}); its changes are written the same way. */
    public static Stock stored(String sku, long available, long reserved, long shipped, long stocked) {
        Stock stock = new Stock(sku);
        stock.available = available;
        stock.reserved = reserved;
        stock.shipped = shipped;
        stock.stocked = stocked;
        return stock;
    }

    /** The counts, to tell whether a movement changed them. */
    public record Counts(long available, long reserved, long shipped, long stocked) {
    }

    public Counts counts() {
        return new Counts(available, reserved, shipped, stocked);
    }

    /**
     * The warehouse counted its free units: available is set, reserved and shipped units are not touched. The units
     * that appeared or vanished (the difference to the available count before) are added to, or taken from, stocked.
     */
    public void adjustAvailableTo(int quantity) {
        if (quantity < 0) {
            throw new NegativeStockException("available of " + sku + " cannot be set to " + quantity);
        }
        stocked = Math.addExact(stocked, quantity - available);
        available = quantity;
    }

    /**
     * An entity tag of the counts, for an operator's conditional set: a set computed from counts read earlier holds
     * only while they are what was read, and the saga moves units between them at any time. The counts themselves
     * rather than a version: counts that came back to what was read make the same set right again.
     */
    public String tag() {
        return available + "-" + reserved + "-" + shipped;
    }

    public boolean canReserve(int quantity) {
        return quantity > 0 && available >= quantity;
    }

    /** available -> reserved. */
    public void reserve(int quantity) {
        requirePositive(quantity);
        if (available < quantity) {
            throw NegativeStockException.moving(sku, "reserve", quantity, "available", available);
        }
        available -= quantity;
        reserved = Math.addExact(reserved, quantity);
    }

    /** reserved -> available: a reservation is undone. */
    public void release(int quantity) {
        requirePositive(quantity);
        if (reserved < quantity) {
            throw NegativeStockException.moving(sku, "release", quantity, "reserved", reserved);
        }
        reserved -= quantity;
        available = Math.addExact(available, quantity);
    }

    /** reserved -> shipped: the order was confirmed. */
    public void consume(int quantity) {
        requirePositive(quantity);
        if (reserved < quantity) {
            throw NegativeStockException.moving(sku, "consume", quantity, "reserved", reserved);
        }
        reserved -= quantity;
        shipped = Math.addExact(shipped, quantity);
    }

    private static void requirePositive(int quantity) {
        if (quantity <= 0) {
            throw new IllegalArgumentException("a quantity to move is positive, not " + quantity);
        }
    }

    public String sku() {
        return sku;
    }

    public long available() {
        return available;
    }

    public long reserved() {
        return reserved;
    }

    public long shipped() {
        return shipped;
    }

    public long stocked() {
        return stocked;
    }
}
