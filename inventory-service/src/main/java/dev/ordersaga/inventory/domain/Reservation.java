package dev.ordersaga.inventory.domain;

import dev.ordersaga.events.Ids;
import dev.ordersaga.events.InventoryEvent;
import dev.ordersaga.events.OrderLine;
import dev.ordersaga.events.StockItem;
import dev.ordersaga.events.StockReleased;
import dev.ordersaga.events.StockReservationFailed;
import dev.ordersaga.events.StockReserved;
import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.OrderColumn;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The stock one order holds, and its state machine. A reservation takes every line of an order or none; each
 * transition is a method named after the fact it records, checks the current state and returns the event to publish,
 * which the caller hands to the outbox in the same transaction. No other class sets the status.
 *
 * <pre>
 * RESERVED -> RELEASED | CONSUMED
 * FAILED   -> RELEASED            (answering a cancel)
 * </pre>
 *
 * The stock passed in is the caller's: rows it has locked, keyed by SKU.
 */
@Entity
@Table(name = "reservation")
public class Reservation {

    public static final String INSUFFICIENT_STOCK = "insufficient stock";

    @Id
    @Column(name = "order_id")
    private UUID orderId;

    @Column(name = "reservation_id", nullable = false, unique = true)
    private UUID reservationId;

    @Enumerated(EnumType.STRING)
    @Column(nullable = false)
    private ReservationStatus status;

    /** What is held, one item per SKU; empty unless the stock was reserved. */
    @ElementCollection
    @CollectionTable(name = "reservation_item", joinColumns = @JoinColumn(name = "order_id"))
    @OrderColumn(name = "line_no")
    private List<ReservedItem> items = new ArrayList<>();

    @Column(name = "failure_reason")
    private String failureReason;

    @Column(name = "correlation_id", nullable = false)
    private String correlationId;

    @Column(name = "created_at", nullable = false)
    private Instant createdAt;

    @Column(name = "updated_at", nullable = false)
    private Instant updatedAt;

    @Version
    private long version;

    protected Reservation() {
    }

    private Reservation(UUID orderId, ReservationStatus status, List<ReservedItem> items, String failureReason,
                        String correlationId) {
        this.orderId = orderId;
        this.reservationId = Ids.timeOrdered();
        this.status = status;
        this.items = new ArrayList<>(items);
        this.failureReason = failureReason;
        this.correlationId = correlationId;
        this.createdAt = Instant.now();
        this.updatedAt = createdAt;
    }

    /**
     * A reservation as its rows hold it, read without Hibernate ({@code ReservationRepository}); its changes are
     * written the same way.
     */
    public static Reservation stored(UUID orderId, UUID reservationId, ReservationStatus status, List<ReservedItem> items,
                                     String failureReason, String correlationId, Instant createdAt, Instant updatedAt,
                                     long version) {
        Reservation reservation = new Reservation();
        reservation.orderId = orderId;
        reservation.reservationId = reservationId;
        reservation.status = status;
        reservation.items = new ArrayList<>(items);
        reservation.failureReason = failureReason;
        reservation.correlationId = correlationId;
        reservation.createdAt = createdAt;
        reservation.updatedAt = updatedAt;
        reservation.version = version;
        return reservation;
    }

    /** A new reservation and the event that tells the saga about it. */
    public record Outcome(Reservation reservation, InventoryEvent event) {
    }

    /**
     * Step 2, all or nothing: every line of the order is reserved, or none is. Lines of the same SKU count together;
     * a SKU without a stock row counts as 0 available.
     *
     * @param lockedStock the stock rows of the order's SKUs, locked by the caller
     * @return RESERVED with StockReserved, or FAILED with StockReservationFailed (and no stock moved)
     */
    public static Outcome reserve(UUID orderId, List<OrderLine> lines, Map<String, Stock> lockedStock, String correlationId) {
        if (lines == null || lines.isEmpty()) {
            return failed(orderId, "order has no lines", List.of(), correlationId);
        }
        SortedMap<String, Integer> requested = new TreeMap<>();
        List<String> invalid = new ArrayList<>();
        for (OrderLine line : lines) {
            if (line == null || line.sku() == null || line.sku().isBlank() || line.quantity() <= 0) {
                invalid.add(line == null ? "null" : String.valueOf(line.sku()));
            } else {
                requested.merge(line.sku(), line.quantity(), Math::addExact);
            }
        }
        if (!invalid.isEmpty()) {
            return failed(orderId, "invalid order line", invalid, correlationId);
        }
        List<String> unavailable = requested.entrySet().stream()
                .filter(e -> !canReserve(lockedStock.get(e.getKey()), e.getValue()))
                .map(Map.Entry::getKey)
                .toList();
        if (!unavailable.isEmpty()) {
            return failed(orderId, INSUFFICIENT_STOCK, unavailable, correlationId);
        }
        List<ReservedItem> held = new ArrayList<>();
        requested.forEach((sku, quantity) -> {
            lockedStock.get(sku).reserve(quantity);
            held.add(new ReservedItem(sku, quantity));
        });
        Reservation reservation = new Reservation(orderId, ReservationStatus.RESERVED, held, null, correlationId);
        return new Outcome(reservation, new StockReserved(reservation.reservationId.toString(), reservation.stockItems()));
    }

    /**
     * The order is cancelling and inventory never reserved anything for it: the cancel is answered with nothing
     * released, and the order can never reserve afterwards (its reservation is RELEASED).
     */
    public static Outcome cancelledBeforeReserving(UUID orderId, String correlationId) {
        Reservation reservation = new Reservation(orderId, ReservationStatus.RELEASED, List.of(), null, correlationId);
        return new Outcome(reservation, reservation.releasedAnswer());
    }

    private static Outcome failed(UUID orderId, String reason, List<String> skus, String correlationId) {
        Reservation reservation = new Reservation(orderId, ReservationStatus.FAILED, List.of(), reason, correlationId);
        return new Outcome(reservation, new StockReservationFailed(reason, List.copyOf(skus)));
    }

    private static boolean canReserve(Stock stock, int quantity) {
        return stock != null && stock.canReserve(quantity);
    }

    /**
     * Compensation of step 2 (OrderCancelling): RESERVED -> RELEASED gives the units back; FAILED -> RELEASED answers
     * the cancel with nothing released.
     *
     * @param lockedStock the stock rows of {@link #skus()}, locked by the caller
     */
    public StockReleased release(Map<String, Stock> lockedStock) {
        switch (status) {
            case RESERVED -> {
                items.forEach(item -> stockOf(lockedStock, item.sku()).release(item.quantity()));
                moveTo(ReservationStatus.RELEASED);
                return releasedAnswer();
            }
            case FAILED -> {
                // a failed reservation holds no items: the answer names nothing released
                moveTo(ReservationStatus.RELEASED);
                return releasedAnswer();
            }
            default -> throw new IllegalTransitionException(status, "release");
        }
    }

    /**
     * A cancel that comes again (an operator re-sends OrderCancelling for an order whose answer was lost) gets the
     * answer the release gave: the same reservation id and items, and no stock moves. Only a RELEASED reservation has
     * one; the state does not change.
     */
    public StockReleased answerAgain() {
        switch (status) {
            case RELEASED -> {
                return releasedAnswer();
            }
            default -> throw new IllegalTransitionException(status, "answerAgain");
        }
    }

    /**
     * Built in one place for the first answer and every later one, so that they cannot differ: the items kept after a
     * release are the ones it gave back (none after FAILED, none when cancelled before reserving).
     */
    private StockReleased releasedAnswer() {
        return new StockReleased(reservationId.toString(), stockItems());
    }

    /**
     * OrderConfirmed: RESERVED -> CONSUMED, the reserved units are shipped. Nothing to publish.
     *
     * @param lockedStock the stock rows of {@link #skus()}, locked by the caller
     */
    public void consume(Map<String, Stock> lockedStock) {
        switch (status) {
            case RESERVED -> {
                items.forEach(item -> stockOf(lockedStock, item.sku()).consume(item.quantity()));
                moveTo(ReservationStatus.CONSUMED);
            }
            default -> throw new IllegalTransitionException(status, "consume");
        }
    }

    private static Stock stockOf(Map<String, Stock> lockedStock, String sku) {
        Stock stock = lockedStock.get(sku);
        if (stock == null) {
            throw new StockNotLockedException(sku);
        }
        return stock;
    }

    private void moveTo(ReservationStatus next) {
        status = next;
        updatedAt = Instant.now();
    }

    /** The SKUs held, sorted: the order in which their rows are locked. */
    public List<String> skus() {
        return items.stream().map(ReservedItem::sku).sorted().toList();
    }

    public List<StockItem> stockItems() {
        return items.stream().map(ReservedItem::toStockItem).toList();
    }

    public UUID orderId() {
        return orderId;
    }

    public UUID reservationId() {
        return reservationId;
    }

    public ReservationStatus status() {
        return status;
    }

    public List<ReservedItem> items() {
        return List.copyOf(items);
    }

    public String failureReason() {
        return failureReason;
    }

    public String correlationId() {
        return correlationId;
    }

    public Instant createdAt() {
        return createdAt;
    }

    public Instant updatedAt() {
        return updatedAt;
    }

    /** The version the row had when this was read (0 for a new reservation). */
    public long version() {
        return version;
    }
}
