package dev.ordersaga.inventory.persistence;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.EventStoreException;
import dev.ordersaga.eventing.Inbox;
import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderConfirmed;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.Topics;
import dev.ordersaga.inventory.InventoryRows;
import dev.ordersaga.inventory.application.InventoryService;
import dev.ordersaga.inventory.domain.Reservation;
import dev.ordersaga.inventory.domain.ReservationStatus;
import dev.ordersaga.inventory.domain.ReservedItem;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.OptionalInt;
import java.util.UUID;

import static dev.ordersaga.inventory.InventoryRows.newSku;
import static dev.ordersaga.inventory.InventoryRows.orderOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The reservation and its stock are read, locked, and written with plain SQL on the event path: what is read is what
 * the rows hold, and a write made from a reservation read at a version the row has left changes nothing.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
class ReservationRepositoryTest {

    @Inject
    InventoryService inventory;

    @Inject
    ReservationRepository reservations;

    @Inject
    TransactionalWrites writes;

    @Inject
    DataSource dataSource;

    @Inject
    Inbox inbox;

    @Test
    void aReservationIsReadWithItsItemsInLineOrderAndTheStockItHolds() throws Exception {
        String first = newSku("zz-first");
        String second = newSku("aa-second");
        inventory.setAvailable(first, 5);
        inventory.setAvailable(second, 7);
        UUID orderId = reserve(orderOf(first, 2, second, 3));

        ReservationRepository.Locked locked = QuarkusTransaction.requiringNew()
                .call(() -> reservations.lockWithStock(orderId, confirmedClaim(orderId))).orElseThrow();

        Reservation reservation = locked.reservation();
        assertThat(reservation.status()).isEqualTo(ReservationStatus.RESERVED);
        assertThat(reservation.version()).isZero();
        assertThat(reservation.reservationId().toString()).isEqualTo(new InventoryRows(dataSource).reservationId(orderId));
        // line order is SKU order: reserve() merges the lines of a SKU and sorts them
        assertThat(reservation.items()).extracting(ReservedItem::sku, ReservedItem::quantity)
                .containsExactly(tuple(second, 3), tuple(first, 2));
        assertThat(locked.stock().rows().values()).extracting(s -> s.sku(), s -> s.available(), s -> s.reserved())
                .containsExactly(tuple(second, 4L, 3L), tuple(first, 3L, 2L));
        assertThat(locked.stock().changes()).isEmpty();
        assertThat(QuarkusTransaction.requiringNew().call(() -> reservations.lockWithStock(UUID.randomUUID(), confirmedClaim(UUID.randomUUID())))).isEmpty();
    }

    @Test
    void aTransitionWrittenOverARowThatMovedOnChangesNothing() throws Exception {
        String sku = newSku("stale");
        inventory.setAvailable(sku, 4);
        UUID orderId = reserve(orderOf(sku, 1));
        ReservationRepository.Locked stale = QuarkusTransaction.requiringNew()
                .call(() -> reservations.lockWithStock(orderId, confirmedClaim(orderId))).orElseThrow();
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE reservation SET version = version + 1 WHERE order_id = ?")) {
            ps.setObject(1, orderId);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }

        stale.reservation().consume(stale.stock().rows());
        assertThatThrownBy(() -> QuarkusTransaction.requiringNew().run(() -> writes.write(
                stale.stock().changes().orElseThrow().then(reservations.update(stale.reservation())), () -> "consume")))
                .isInstanceOf(EventStoreException.class).hasMessageContaining("statement 2 changed 0 row(s), not 1");

        InventoryRows rows = new InventoryRows(dataSource);
        assertThat(rows.reservationStatus(orderId)).isEqualTo("RESERVED");
        assertThat(rows.stock(sku)).as("the stock written before the refused statement rolled back with it").isEqualTo("3/1/0");
    }

    @Test
    void aTransitionMovesTheRowAndItsVersion() throws Exception {
        String sku = newSku("consume");
        inventory.setAvailable(sku, 2);
        UUID orderId = reserve(orderOf(sku, 2));

        QuarkusTransaction.requiringNew().run(() -> {
            ReservationRepository.Locked locked = reservations.lockWithStock(orderId, confirmedClaim(orderId)).orElseThrow();
            locked.reservation().consume(locked.stock().rows());
            writes.write(reservations.update(locked.reservation()).then(locked.stock().changes().orElseThrow()), () -> "consume");
        });

        InventoryRows rows = new InventoryRows(dataSource);
        assertThat(rows.reservationStatus(orderId)).isEqualTo("CONSUMED");
        assertThat(rows.stock(sku)).isEqualTo("0/0/2");
        assertThat(rows.count("SELECT version FROM reservation WHERE order_id = ?", orderId)).isEqualTo(1);
    }

    /** The claim of an OrderConfirmed of the order, for a read that goes with one. */
    private InboxClaim confirmedClaim(UUID orderId) {
        return inbox.claimOf(EventEnvelope.of(orderId, "repository-" + UUID.randomUUID(), null,
                new OrderConfirmed(BigDecimal.ONE, "EUR")), Topics.ORDER_EVENTS, OptionalInt.empty());
    }

    private UUID reserve(OrderCreated order) {
        EventEnvelope<OrderCreated> created = EventEnvelope.of(UUID.randomUUID(), "repository-" + UUID.randomUUID(), null, order);
        try (Correlation.Scope ignored = Correlation.open(created.correlationId(), created.eventId())) {
            inventory.onOrderCreated(created, created.payload(),
                    inbox.claimOf(created, Topics.ORDER_EVENTS, OptionalInt.empty()));
        }
        return created.orderId();
    }
}
