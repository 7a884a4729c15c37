package dev.ordersaga.inventory.application;

import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderConfirmed;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.OrderLine;
import dev.ordersaga.events.StockReleased;
import dev.ordersaga.inventory.domain.OrderSighting;
import dev.ordersaga.inventory.domain.Reservation;
import dev.ordersaga.inventory.domain.ReservationStatus;
import dev.ordersaga.inventory.domain.Stock;
import dev.ordersaga.inventory.persistence.LockedStock;
import dev.ordersaga.inventory.persistence.OrderSightingRepository;
import dev.ordersaga.inventory.persistence.ReservationRepository;
import dev.ordersaga.inventory.persistence.StockRepository;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.LockModeType;
import jakarta.transaction.Transactional;
import org.jboss.logging.Logger;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * One transactional method per incoming fact or command: load (and lock), call the domain, hand its event to the
 * outbox in the same transaction. Called from a consumer, it joins the consumer's transaction, so the inbox claim,
 * the stock movement and the event commit together.
 */
@ApplicationScoped
public class InventoryService {

    private static final Logger LOG = Logger.getLogger(InventoryService.class);

    @Inject
    OrderSightingRepository sightings;

    @Inject
    ReservationRepository reservations;

    @Inject
    StockRepository stock;

    @Inject
    OutboxWriter outbox;

    @Inject
    TransactionalWrites writes;

    /** OrderCreated: reserve every line or none. */
    @Transactional
    public void onOrderCreated(EventEnvelope<?> event, OrderCreated created, InboxClaim claim) {
        UUID orderId = event.orderId();
        List<OrderLine> lines = created.items() == null ? List.of() : created.items();
        OrderSightingRepository.Sighted sighted = sightings.lockStock(orderId,
                lines.stream().filter(Objects::nonNull).map(OrderLine::sku).filter(Objects::nonNull).toList(), claim);
        if (claim.duplicate()) {
            return;
        }
        // one row per applied OrderCreated: the proof that a redelivered event took effect once
        TransactionalWrites.Write sighting = sightings.appending(
                new OrderSighting(orderId, event.eventId(), event.correlationId()));
        if (sighted.reservation().isPresent()) {
            writes.write(sighting, () -> "note the sighting of order " + orderId);
            LOG.infof("Order %s already has a reservation (%s): OrderCreated %s not acted on", orderId,
                    sighted.reservation().get(), event.eventId());
            return;
        }
        LockedStock stock = sighted.stock();
        Reservation.Outcome outcome = Reservation.reserve(orderId, lines, stock.rows(), event.correlationId());
        outbox.publish(orderId, outcome.event(),
                envelope -> withStock(sighting.then(reservations.insertion(outcome.reservation())), stock));
        LOG.infof("Order %s: reservation %s %s (%s)", orderId, outcome.reservation().reservationId(),
                outcome.reservation().status(), outcome.event());
    }

    /**
     * OrderCancelling: give back what was reserved, once, and answer every OrderCancelling, also when nothing was
     * reserved.
     */
    @Transactional
    public void onOrderCancelling(EventEnvelope<?> event, OrderCancelling cancelling, InboxClaim claim) {
        UUID orderId = event.orderId();
        Optional<ReservationRepository.Locked> found = reservations.lockWithStock(orderId, claim);
        if (claim.duplicate()) {
            return;
        }
        if (found.isEmpty()) {
            Reservation.Outcome outcome = Reservation.cancelledBeforeReserving(orderId, event.correlationId());
            outbox.publish(orderId, outcome.event(), envelope -> reservations.insertion(outcome.reservation()));
            LOG.infof("Order %s cancelling (%s) before any reservation: answered with nothing released", orderId,
                    cancelling.reason());
            return;
        }
        Reservation reservation = found.get().reservation();
        if (reservation.status() == ReservationStatus.RELEASED) {
            // A new OrderCancelling for a released order is an operator's re-send: the first answer may have been lost
            // (say, with a replication slot after a failover), and the order waits in COMPENSATING until it hears one.
            StockReleased again = reservation.answerAgain();
            outbox.publish(orderId, again);
            LOG.infof("Order %s cancelling again (%s): reservation %s is released already, answered again with %s",
                    orderId, cancelling.reason(), reservation.reservationId(), again.items());
            return;
        }
        // A consumed reservation refuses (IllegalTransitionException): an order is never cancelled once confirmed, so
        // the two facts disagree, and the event is parked with its alert rather than acknowledged with a warning
        // while the order waits for an answer that never comes.
        LockedStock stock = found.get().stock();
        StockReleased released = reservation.release(stock.rows());
        outbox.publish(orderId, released, envelope -> withStock(reservations.update(reservation), stock));
        LOG.infof("Order %s cancelling (%s): reservation %s released %s", orderId, cancelling.reason(),
                reservation.reservationId(), released.items());
    }

    /** OrderConfirmed: the reserved units are shipped. */
    @Transactional
    public void onOrderConfirmed(EventEnvelope<?> event, OrderConfirmed confirmed, InboxClaim claim) {
        UUID orderId = event.orderId();
        Optional<ReservationRepository.Locked> found = reservations.lockWithStock(orderId, claim);
        if (claim.duplicate()) {
            return;
        }
        if (found.isEmpty()) {
            LOG.infof("Order %s confirmed, but inventory holds no reservation for it: skipped", orderId);
            return;
        }
        Reservation reservation = found.get().reservation();
        if (reservation.status() == ReservationStatus.CONSUMED) {
            LOG.infof("Order %s confirmed again: reservation %s is consumed already", orderId,
                    reservation.reservationId());
            return;
        }
        // A failed or released reservation refuses (IllegalTransitionException): a confirmed order had its stock
        // reserved, so inventory's books disagree with a shipment, and the event is parked with its alert rather
        // than acknowledged with a warning.
        LockedStock stock = found.get().stock();
        reservation.consume(stock.rows());
        writes.write(withStock(reservations.update(reservation), stock),
                () -> "consume reservation " + reservation.reservationId() + " of order " + orderId);
        LOG.infof("Order %s confirmed: reservation %s consumed, %s shipped", orderId, reservation.reservationId(),
                reservation.stockItems());
    }

    /** A reservation's write, and the write of the stock its transition moved, to go in one round trip. */
    private static TransactionalWrites.Write withStock(TransactionalWrites.Write reservation, LockedStock stock) {
        return stock.changes().map(reservation::then).orElse(reservation);
    }

    /** PUT /stock/{sku}: sets the available units, creating the SKU. */
    @Transactional
    public Stock setAvailable(String sku, int quantity) {
        return adjusted(stock.lockOrCreate(sku), quantity);
    }

    /**
     * The counts a conditional set accepts: any existing SKU's ({@link #ANY}, If-Match's bare *), or those whose
     * {@link Stock#tag()} is one of {@code tags}.
     */
    public record IfMatch(boolean anyExisting, Set<String> tags) {

        public static final IfMatch ANY = new IfMatch(true, Set.of());

        public IfMatch {
            tags = Set.copyOf(tags);
        }

        boolean admits(String tag) {
            return anyExisting || tags.contains(tag);
        }
    }

    /**
     * PUT /stock/{sku} with If-Match: sets the available units only while the SKU's counts are what the caller read.
     *
     * @param expected the counts the caller accepts
     * @throws StockChangedException when the SKU is missing or its counts differ (nothing is changed)
     */
    @Transactional
    public Stock setAvailable(String sku, int quantity, IfMatch expected) {
        Stock row = stock.findByIdOptional(sku, LockModeType.PESSIMISTIC_WRITE)
                .orElseThrow(() -> new StockChangedException(sku, null));
        if (!expected.admits(row.tag())) {
            throw new StockChangedException(sku, row);
        }
        return adjusted(row, quantity);
    }

    private static Stock adjusted(Stock row, int quantity) {
        row.adjustAvailableTo(quantity);
        LOG.infof("Stock of %s set to %d available (%d reserved, %d shipped)", row.sku(), quantity, row.reserved(),
                row.shipped());
        return row;
    }

    @Transactional
    public Optional<Stock> findStock(String sku) {
        return stock.findByIdOptional(sku);
    }
}
