package dev.ordersaga.audit;

import dev.ordersaga.audit.Snapshot.CarrierShipment;
import dev.ordersaga.audit.Snapshot.HandConfirmed;
import dev.ordersaga.audit.Snapshot.Line;
import dev.ordersaga.audit.Snapshot.Payment;
import dev.ordersaga.audit.Snapshot.ProviderCharge;
import dev.ordersaga.audit.Snapshot.ProviderRefund;
import dev.ordersaga.audit.Snapshot.Reservation;
import dev.ordersaga.audit.Snapshot.Shipment;
import dev.ordersaga.audit.Snapshot.Sighting;
import dev.ordersaga.audit.Snapshot.Stock;
import dev.ordersaga.audit.Snapshot.TimelineEntry;
import dev.ordersaga.audit.Snapshot.TopicEvent;
import dev.ordersaga.audit.Snapshot.UnmatchedEntry;
import dev.ordersaga.audit.Violation.Kind;
import dev.ordersaga.events.Ids;
import dev.ordersaga.events.Topics;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.tuple;

class ChecksTest {

    final World world = new World();

    /** The audit found exactly one violation, of this kind and about this order; returns it. */
    Violation onlyViolation(Kind kind, UUID order) {
        AuditResult result = world.audit();
        assertThat(result.violations()).as("violations").hasSize(1);
        Violation v = result.violations().get(0);
        assertThat(v.kind()).isEqualTo(kind);
        assertThat(v.orderId()).isEqualTo(order);
        return v;
    }

    @Nested
    class ACleanWorld {

        @Test
        void hasNoViolation() {
            world.everyKind();
            AuditResult result = world.audit();
            assertThat(result.violations()).isEmpty();
            assertThat(result.clean()).isTrue();
            assertThat(result.ordersInScope()).isEqualTo(6);
            assertThat(result.ordersByStatus()).containsExactly(entry("PAID", 1), entry("CONFIRMED", 1),
                    entry("CANCELLED", 4));
            assertThat(result.waiting()).isEqualTo(1);
            assertThat(result.skusChecked()).isEqualTo(6);
            assertThat(result.duplicates()).isEmpty();
            assertThat(result.ledgers()).isEqualTo(new AuditResult.LedgerStats(9, 0, 0, List.of(), null));
        }

        @Test
        void anOrderWaitingForItsHeldPaymentIsSettled() {
            world.waitingForPayment();
            AuditResult result = world.audit();
            assertThat(result.violations()).isEmpty();
            assertThat(result.waiting()).isEqualTo(1);
        }

        @Test
        void anEventDeliveredTwiceIsCountedAsInformationNotAViolation() {
            UUID order = world.confirmed();
            TopicEvent reserved = world.eventOf(order, "StockReserved");
            world.events.add(new TopicEvent(reserved.topic(), 0, 999, order, reserved.eventId(), reserved.type()));
            world.events.add(new TopicEvent(reserved.topic(), 0, 1000, order, reserved.eventId(), reserved.type()));

            AuditResult result = world.audit();
            assertThat(result.violations()).isEmpty();
            assertThat(result.duplicates()).containsExactly(new AuditResult.DuplicateEvent(Topics.INVENTORY_EVENTS,
                    reserved.eventId(), order, "StockReserved", 3));
            assertThat(result.extraCopies()).isEqualTo(2);
        }

        @Test
        void aShipmentCancelledAfterAnUncertainCreationNeedsNoShipmentCreated() {
            // the carrier id was learnt by a look-up while cancelling: no ShipmentCreated was ever published
            UUID order = world.cancelledAfterShipmentCreated();
            world.unpublish(order, "ShipmentCreated");
            world.replaceShipment(order, s -> new Shipment(s.id(), s.orderId(), "CANCELLED", s.carrierShipmentId(), true));
            assertThat(world.audit().violations()).isEmpty();
        }

        @Test
        void stockWithoutTheStockedColumnIsNotJudgedForConservationButCounted() {
            UUID order = world.confirmed();
            Stock clean = world.cleanStock(world.skuOf(order));
            world.stockOverrides.put(clean.sku(), new Stock(clean.sku(), null, clean.available(), clean.reserved(),
                    clean.shipped(), clean.heldByReserved(), clean.heldByConsumed()));
            AuditResult result = world.audit();
            assertThat(result.violations()).isEmpty();
            assertThat(result.skusWithoutStocked()).isEqualTo(1);
        }
    }

    @Nested
    class Settled {

        @Test
        void anOrderOnItsWayWithoutAWaitingReasonIsNotSettled() {
            UUID order = world.waitingForOperator();
            world.replaceOrder(order, o -> o.withWaitingReason(null));
            assertThat(onlyViolation(Kind.NOT_SETTLED, order).detail()).contains("PAID");
        }

        @Test
        void anOrderWaitingForTheCarrierWhoseShipmentIsNotOnHoldIsReported() {
            UUID order = world.waitingForOperator();
            world.replaceShipment(order, s -> s.withStatus("REQUESTED"));
            assertThat(onlyViolation(Kind.WAIT_WITHOUT_HOLD, order).detail())
                    .isEqualTo("status PAID, waits for SHIPPING, but no shipment of it is ON_HOLD (REQUESTED)");
        }

        @Test
        void anOrderWaitingForItsPaymentWhosePaymentIsNotHeldIsReported() {
            UUID order = world.waitingForPayment();
            world.replacePayment(order, p -> new Payment(p.id(), order, "CHARGING", p.amount(), false, false));
            assertThat(onlyViolation(Kind.WAIT_WITHOUT_HOLD, order).detail())
                    .isEqualTo("status STOCK_RESERVED, waits for PAYMENT, but no payment of it is held (CHARGING)");
        }

        @Test
        void anOrderWaitingForThePaymentWhileItsShipmentIsOnHoldIsReported() {
            UUID order = world.waitingForOperator();
            world.replaceOrder(order, o -> o.withWaitingFor("PAYMENT"));
            assertThat(onlyViolation(Kind.WAIT_WITHOUT_HOLD, order).detail())
                    .isEqualTo("status PAID, waits for PAYMENT, but no payment of it is held (SUCCEEDED)");
        }

        @Test
        void anOrderAskedForThatDoesNotExistIsReported() {
            world.confirmed();
            UUID unknown = UUID.randomUUID();
            world.ordersNotFound.add(unknown);
            onlyViolation(Kind.ORDER_NOT_FOUND, unknown);
        }
    }

    @Nested
    class Confirmed {

        @Test
        void itsReservationMustBeConsumed() {
            UUID order = world.confirmed();
            world.replaceReservation(order, r -> r.withStatus("RESERVED"));
            assertThat(onlyViolation(Kind.RESERVATION_STATE, order).detail()).contains("RESERVED, not CONSUMED");
        }

        @Test
        void itMustHaveAReservation() {
            UUID order = world.confirmed();
            world.reservations.clear();
            assertThat(onlyViolation(Kind.RESERVATION_STATE, order).detail()).contains("no reservation");
        }

        @Test
        void itsReservationMustHoldTheOrdersLines() {
            UUID order = world.confirmed();
            world.replaceReservation(order, r -> r.withItems(List.of(new Line(world.skuOf(order), 1))));
            assertThat(onlyViolation(Kind.RESERVATION_ITEMS, order).detail()).contains("=1}").contains("=2}");
        }

        @Test
        void itsNetChargeMustBeItsTotal() {
            UUID order = world.confirmed();
            world.charges.replaceAll(c -> new ProviderCharge(c.chargeId(), c.idempotencyKey(), c.reference(),
                    new BigDecimal("10.50"), c.currency(), c.status()));
            assertThat(onlyViolation(Kind.NET_CHARGE, order).detail()).contains("21.00").contains("= 10.50");
        }

        @Test
        void aRefundOfAConfirmedOrderBreaksItsNetCharge() {
            UUID order = world.confirmed();
            world.refunds.add(new ProviderRefund("re_1", "refund-x", "ch_" + order, order.toString(),
                    new BigDecimal("21.00"), "EUR"));
            assertThat(onlyViolation(Kind.NET_CHARGE, order).detail()).contains("= 0.00");
        }

        @Test
        void aChargeInAnotherCurrencyIsNoChargeOfTheTotal() {
            UUID order = world.confirmed();
            world.charges.replaceAll(c -> new ProviderCharge(c.chargeId(), c.idempotencyKey(), c.reference(),
                    c.amount(), "USD", c.status()));
            assertThat(onlyViolation(Kind.NET_CHARGE, order).detail()).contains("in USD");
        }

        @Test
        void itNeedsALiveShipmentAtTheCarrier() {
            UUID order = world.confirmed();
            world.carrierShipments.clear();
            assertThat(onlyViolation(Kind.LIVE_SHIPMENTS, order).detail()).contains("0 live shipment(s)");
        }

        @Test
        void itsPaymentMustHaveSucceededAndItsShipmentBeCreated() {
            UUID order = world.confirmed();
            world.replacePayment(order, p -> p.withStatus("REFUNDING"));
            assertThat(onlyViolation(Kind.PARTICIPANT_STATE, order).detail())
                    .contains("CONFIRMED, but payment").contains("is REFUNDING, not SUCCEEDED");
            world.replacePayment(order, p -> p.withStatus("SUCCEEDED"));
            world.replaceShipment(order, s -> s.withStatus("CANCELLING"));
            assertThat(onlyViolation(Kind.PARTICIPANT_STATE, order).detail()).contains("is CANCELLING, not CREATED");
        }

        @Test
        void itNeedsAPaymentRowAndAShipmentRow() {
            UUID order = world.confirmed();
            List<Payment> payments = List.copyOf(world.payments);
            world.payments.clear();
            assertThat(onlyViolation(Kind.PARTICIPANT_STATE, order).detail()).contains("payment has no row");
            world.payments.addAll(payments);
            world.shipments.clear();
            assertThat(onlyViolation(Kind.PARTICIPANT_STATE, order).detail()).contains("shipping has no row");
        }

        @Test
        void aShipmentCancelledAtTheCarrierIsNotLive() {
            UUID order = world.confirmed();
            world.carrierShipments.replaceAll(s -> new CarrierShipment(s.shipmentId(), s.idempotencyKey(),
                    s.reference(), "cancelled"));
            onlyViolation(Kind.LIVE_SHIPMENTS, order);
        }
    }

    @Nested
    class Cancelled {

        @Test
        void itsReservationMustNotStillHoldStock() {
            UUID order = world.declined();
            world.replaceReservation(order, r -> r.withStatus("RESERVED"));
            assertThat(onlyViolation(Kind.RESERVATION_STATE, order).detail()).contains("not RELEASED or FAILED");
        }

        @Test
        void itsReservationMustNotBeConsumed() {
            UUID order = world.declined();
            world.replaceReservation(order, r -> r.withStatus("CONSUMED"));
            onlyViolation(Kind.RESERVATION_STATE, order);
        }

        @Test
        void inventoryMustHaveAReservationForIt() {
            // the row a participant keeps of a cancellation is what stops a late forward event from acting
            UUID order = world.outOfStock();
            world.reservations.clear();
            assertThat(onlyViolation(Kind.RESERVATION_STATE, order).detail()).contains("inventory has no reservation");
        }

        @Test
        void paymentAndShippingMustHaveARowForIt() {
            UUID order = world.declined();
            List<Payment> payments = List.copyOf(world.payments);
            world.payments.clear();
            assertThat(onlyViolation(Kind.PARTICIPANT_STATE, order).detail()).contains("CANCELLED, but payment has no row");
            world.payments.addAll(payments);
            world.shipments.clear();
            assertThat(onlyViolation(Kind.PARTICIPANT_STATE, order).detail()).contains("CANCELLED, but shipping has no row");
        }

        @Test
        void aFailedReservationIsFine() {
            UUID order = world.outOfStock();
            world.replaceReservation(order, r -> r.withStatus("FAILED"));
            assertThat(world.audit().violations()).isEmpty();
        }

        @Test
        void aChargeNotRefundedLeavesANetCharge() {
            UUID order = world.undeliverable();
            world.refunds.clear();
            assertThat(onlyViolation(Kind.NET_CHARGE, order).detail()).contains("= 21.00");
        }

        @Test
        void aLiveShipmentAtTheCarrierIsAViolation() {
            UUID order = world.cancelledAfterShipmentCreated();
            world.carrierShipments.replaceAll(s -> new CarrierShipment(s.shipmentId(), s.idempotencyKey(),
                    s.reference(), "created"));
            assertThat(onlyViolation(Kind.LIVE_SHIPMENTS, order).detail()).contains("1 live shipment(s)");
        }

        @Test
        void aRefundAnOperatorConfirmedOutsideTheProviderIsTakenOnTheirWordAndListed() {
            UUID order = world.undeliverable();
            world.refunds.clear();
            world.replacePayment(order, p -> p.confirmedByHand("alice", null));
            HandConfirmed word = new HandConfirmed(order, HandConfirmed.PAYMENT_REFUNDED, "alice",
                    "bank transfer TR-1 after the provider refused the refund");
            world.handConfirmed.add(word);
            AuditResult result = world.audit();
            assertThat(result.violations()).isEmpty();
            assertThat(result.onOperatorsWord()).containsExactly(word);
        }

        @Test
        void anOperatorsWordOnARefundTheLedgerShowsListsNothing() {
            // the operator refunded at the provider's dashboard and named that refund
            UUID order = world.undeliverable();
            world.replacePayment(order, p -> p.confirmedByHand("alice", "re_" + order));
            world.handConfirmed.add(new HandConfirmed(order, HandConfirmed.PAYMENT_REFUNDED, "alice",
                    "dashboard re_" + order));
            AuditResult result = world.audit();
            assertThat(result.violations()).isEmpty();
            assertThat(result.onOperatorsWord()).isEmpty();
        }

        @Test
        void aProviderRefundBesidesTheOneAnOperatorConfirmedIsTheMoneyReturnedTwice() {
            // a refund call under way unseen lands after the operator confirmed a transfer: the ledger nets zero
            UUID order = world.undeliverable();
            world.replacePayment(order, p -> p.confirmedByHand("alice", null));
            world.handConfirmed.add(new HandConfirmed(order, HandConfirmed.PAYMENT_REFUNDED, "alice", "transfer"));
            assertThat(onlyViolation(Kind.EFFECT_TWICE, order).detail()).contains("refunded twice: operator alice")
                    .contains("refunded outside the provider").contains("refund re_" + order);

            world.replacePayment(order, p -> p.confirmedByHand("alice", "re_dashboard"));
            assertThat(onlyViolation(Kind.EFFECT_TWICE, order).detail()).contains("refunded as re_dashboard");
        }

        @Test
        void anOperatorsWordCoversTheWholeChargeOnly() {
            // part refunded at the provider and the rest "by hand" is no settlement the services allow
            UUID order = world.undeliverable();
            world.refunds.replaceAll(r -> new ProviderRefund(r.refundId(), r.idempotencyKey(), r.chargeId(),
                    r.reference(), new BigDecimal("5.00"), r.currency()));
            world.replacePayment(order, p -> p.confirmedByHand("alice", null));
            world.handConfirmed.add(new HandConfirmed(order, HandConfirmed.PAYMENT_REFUNDED, "alice", "transfer"));
            assertThat(world.audit().violations()).extracting(Violation::kind, Violation::orderId)
                    .containsExactlyInAnyOrder(tuple(Kind.NET_CHARGE, order), tuple(Kind.EFFECT_TWICE, order));
        }

        @Test
        void aRefundAnOperatorSaidWasMadeAtTheProviderMustBeInItsLedger() {
            UUID order = world.undeliverable();
            world.refunds.clear();
            world.replacePayment(order, p -> p.confirmedByHand("alice", "re_dashboard"));
            world.handConfirmed.add(new HandConfirmed(order, HandConfirmed.PAYMENT_REFUNDED, "alice", "dashboard"));
            assertThat(onlyViolation(Kind.NET_CHARGE, order).detail()).contains("= 21.00");
            assertThat(world.audit().onOperatorsWord()).isEmpty();
        }

        @Test
        void anOperatorsWordOnTheRefundLeavesTheParcelToTheCarrier() {
            UUID order = world.cancelledAfterShipmentCreated();
            world.refunds.clear();
            world.replacePayment(order, p -> p.confirmedByHand("alice", null));
            world.handConfirmed.add(new HandConfirmed(order, HandConfirmed.PAYMENT_REFUNDED, "alice", "transfer"));
            world.carrierShipments.replaceAll(s -> new CarrierShipment(s.shipmentId(), s.idempotencyKey(),
                    s.reference(), "created"));
            assertThat(onlyViolation(Kind.LIVE_SHIPMENTS, order).detail()).contains("1 live shipment(s)");
        }

        @Test
        void aParcelTheCarrierConfirmedOutsideItsApiIsTakenOnTheOperatorsWord() {
            UUID order = world.cancelledAfterShipmentCreated();
            world.carrierShipments.replaceAll(s -> new CarrierShipment(s.shipmentId(), s.idempotencyKey(),
                    s.reference(), "created"));
            HandConfirmed word = new HandConfirmed(order, HandConfirmed.SHIPMENT_CANCELLED, "bob",
                    "carrier support ticket 42: the parcel stays in the depot");
            world.handConfirmed.add(word);
            AuditResult result = world.audit();
            assertThat(result.violations()).isEmpty();
            assertThat(result.onOperatorsWord()).containsExactly(word);

            world.carrierShipments.add(new CarrierShipment("shp_2", "another-key", order.toString(), "created"));
            assertThat(world.audit().violations()).extracting(Violation::kind)
                    .contains(Kind.LIVE_SHIPMENTS).doesNotContain(Kind.NET_CHARGE);
        }

        @Test
        void anOperatorsWordCoversTheShipmentsOwnParcelOnly() {
            // the operator confirmed "none under our key" (the shipment knew no parcel), and the carrier has one live
            UUID order = world.cancelledAfterShipmentCreated();
            world.replaceShipment(order, s -> new Shipment(s.id(), s.orderId(), s.status(), null, true));
            world.carrierShipments.replaceAll(s -> new CarrierShipment(s.shipmentId(), s.idempotencyKey(),
                    s.reference(), "created"));
            world.handConfirmed.add(new HandConfirmed(order, HandConfirmed.SHIPMENT_CANCELLED, "bob", "none at all"));
            assertThat(onlyViolation(Kind.LIVE_SHIPMENTS, order).detail()).contains("1 live shipment(s)");
            assertThat(world.audit().onOperatorsWord()).isEmpty();
        }

        @Test
        void anOperatorsWordDoesNotExcuseAConfirmedOrder() {
            UUID order = world.confirmed();
            world.carrierShipments.clear();
            world.handConfirmed.add(new HandConfirmed(order, HandConfirmed.SHIPMENT_CANCELLED, "bob", "ticket 42"));
            onlyViolation(Kind.LIVE_SHIPMENTS, order);
            assertThat(world.audit().onOperatorsWord()).isEmpty();
        }

        @Test
        void aPaymentStillRefundingIsNotAtRest() {
            // the ledger shows the refund already, or not yet: either way the payment still owes the provider a call
            UUID order = world.undeliverable();
            world.replacePayment(order, p -> p.withStatus("REFUNDING"));
            assertThat(onlyViolation(Kind.PARTICIPANT_STATE, order).detail())
                    .contains("CANCELLED, but payment").contains("is REFUNDING, not CANCELLED or DECLINED or REFUNDED");
        }

        @Test
        void aShipmentStillCancellingIsNotAtRest() {
            UUID order = world.cancelledAfterShipmentCreated();
            world.replaceShipment(order, s -> s.withStatus("CANCELLING"));
            assertThat(onlyViolation(Kind.PARTICIPANT_STATE, order).detail()).contains("is CANCELLING, not CANCELLED");
        }

        @Test
        void aRefundOfAnotherOrdersChargeIsNoRefundOfThisOne() {
            UUID confirmed = world.confirmed();
            UUID cancelled = world.undeliverable();
            world.refunds.replaceAll(r -> new ProviderRefund(r.refundId(), r.idempotencyKey(), "ch_" + confirmed,
                    r.reference(), r.amount(), r.currency()));
            assertThat(onlyViolation(Kind.NET_CHARGE, cancelled).detail()).contains("refunds charge ch_" + confirmed);
        }
    }

    @Nested
    class EffectsOnce {

        static Stream<Arguments> doubledEffects() {
            return Stream.of(
                    Arguments.of("a second payment row", "payment rows", (Function<World, UUID>) w -> {
                        UUID order = w.confirmed();
                        Payment p = w.payments.get(0);
                        w.payments.add(new Payment(UUID.randomUUID(), order, p.status(), p.amount(), false, false));
                        return order;
                    }),
                    Arguments.of("a second shipment row", "shipment rows", (Function<World, UUID>) w -> {
                        UUID order = w.confirmed();
                        Shipment s = w.shipments.get(0);
                        w.shipments.add(new Shipment(UUID.randomUUID(), order, s.status(), s.carrierShipmentId(), false));
                        return order;
                    }),
                    Arguments.of("a second reservation", "reservations", (Function<World, UUID>) w -> {
                        UUID order = w.confirmed();
                        Reservation r = w.reservations.get(0);
                        w.reservations.add(new Reservation(order, UUID.randomUUID(), r.status(), null, r.items()));
                        return order;
                    }),
                    Arguments.of("a second charge at the provider", "charges", (Function<World, UUID>) w -> {
                        UUID order = w.confirmed();
                        w.charges.add(new ProviderCharge("ch_2", UUID.randomUUID().toString(), order.toString(),
                                World.total(2), "EUR", "declined"));
                        return order;
                    }),
                    Arguments.of("a second refund at the provider", "refunds", (Function<World, UUID>) w -> {
                        UUID order = w.undeliverable();
                        ProviderRefund r = w.refunds.remove(0);
                        BigDecimal half = r.amount().divide(BigDecimal.valueOf(2));
                        w.refunds.add(new ProviderRefund("re_1", r.idempotencyKey(), r.chargeId(), r.reference(), half, "EUR"));
                        w.refunds.add(new ProviderRefund("re_2", "refund-other", r.chargeId(), r.reference(), half, "EUR"));
                        return order;
                    }),
                    Arguments.of("a second shipment at the carrier", "shipments at the carrier", (Function<World, UUID>) w -> {
                        UUID order = w.confirmed();
                        w.carrierShipments.add(new CarrierShipment("shp_2", UUID.randomUUID().toString(),
                                order.toString(), "cancelled"));
                        return order;
                    }),
                    Arguments.of("OrderCreated applied twice by inventory", "order_sighting", (Function<World, UUID>) w -> {
                        UUID order = w.confirmed();
                        w.sightings.add(new Sighting(order, w.eventOf(order, "OrderCreated").eventId()));
                        return order;
                    }));
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("doubledEffects")
        void anEffectTakenTwiceIsReported(String fault, String named, Function<World, UUID> breakIt) {
            UUID order = breakIt.apply(world);
            assertThat(onlyViolation(Kind.EFFECT_TWICE, order).detail()).startsWith("2 ").contains(named);
        }

        /** The provider forgot the payment's key and charged again under it; payment found and refunded it. */
        private ProviderCharge surplusCharge(UUID order, boolean refunded, boolean recordedUndone) {
            ProviderCharge first = world.charges.stream().filter(c -> c.reference().equals(order.toString()))
                    .findFirst().orElseThrow();
            ProviderCharge second = new ProviderCharge("ch_2", first.idempotencyKey(), first.reference(),
                    first.amount(), first.currency(), "succeeded");
            world.charges.add(second);
            if (refunded) {
                world.refunds.add(new ProviderRefund("re_2", "refund-surplus-ch_2", "ch_2", first.reference(),
                        first.amount(), first.currency()));
            }
            world.surpluses.add(new Snapshot.Surplus(order, Snapshot.Surplus.CHARGE, "ch_2", recordedUndone));
            return second;
        }

        @Test
        void aProvidersSecondChargeThatPaymentRefundedIsNoEffectTwice() {
            UUID order = world.confirmed();
            surplusCharge(order, true, true);

            AuditResult result = world.audit();

            assertThat(result.violations()).isEmpty();
            assertThat(result.surplusesUndone()).containsExactly(
                    new Snapshot.Surplus(order, Snapshot.Surplus.CHARGE, "ch_2", true));
            assertThat(Report.text(result)).contains("second effects a provider made under our keys, undone by the "
                    + "services (info): 1 (charge ch_2 of order " + order + ")");
            assertThat(Report.json(result)).contains("\"surplusesUndone\" : [ {", "\"providerRef\" : \"ch_2\"");
        }

        @Test
        void aCancelledOrdersOwnRefundAndItsSurplusRefundAreNoRefundTwice() {
            UUID order = world.undeliverable();
            surplusCharge(order, true, true);

            assertThat(world.audit().violations()).isEmpty();
        }

        @Test
        void aSurplusChargeRefundedButNotRecordedUndoneIsStillAnEffectTwice() {
            UUID order = world.confirmed();
            surplusCharge(order, true, false);

            assertThat(onlyViolation(Kind.EFFECT_TWICE, order).detail()).startsWith("2 charges").contains("ch_2");
            assertThat(world.audit().surplusesUndone()).isEmpty();
        }

        @Test
        void aSurplusChargeRecordedUndoneThatTheBooksShowUnrefundedIsAnEffectTwice() {
            UUID order = world.confirmed();
            surplusCharge(order, false, true);

            AuditResult result = world.audit();

            assertThat(result.violations()).extracting(Violation::kind).containsExactlyInAnyOrder(Kind.NET_CHARGE,
                    Kind.EFFECT_TWICE);
            assertThat(result.surplusesUndone()).isEmpty();
        }

        /** The provider kept refusing the second charge's refund; an operator returned the money another way. */
        private void surplusChargeRefundedByHand(UUID order, String refundId) {
            surplusCharge(order, false, false);
            world.surpluses.removeIf(s -> s.providerRef().equals("ch_2"));
            world.surpluses.add(Snapshot.Surplus.confirmedByHand(order, Snapshot.Surplus.CHARGE, "ch_2", refundId,
                    "olga", "bank transfer TX-9"));
        }

        @Test
        void aSecondChargeAnOperatorConfirmedRefundedOutsideTheProviderIsTakenOnTheirWord() {
            UUID order = world.confirmed();
            surplusChargeRefundedByHand(order, null);

            AuditResult result = world.audit();

            assertThat(result.violations()).as("neither a net charge of two totals nor a charge twice").isEmpty();
            assertThat(result.surplusesUndone()).isEmpty();
            assertThat(result.onOperatorsWord()).containsExactly(new Snapshot.HandConfirmed(order,
                    Snapshot.HandConfirmed.SURPLUS_REFUNDED, "olga", "charge ch_2: bank transfer TX-9"));
            assertThat(Report.text(result)).contains("order " + order + " confirm-surplus-refunded by olga: "
                    + "charge ch_2: bank transfer TX-9");
        }

        @Test
        void aSecondChargeConfirmedRefundedByHandThatTheProviderRefundedTooIsRefundedTwice() {
            UUID order = world.confirmed();
            surplusChargeRefundedByHand(order, null);
            ProviderCharge first = world.charges.get(0);
            world.refunds.add(new ProviderRefund("re_late", "refund-surplus-ch_2", "ch_2", first.reference(),
                    first.amount(), first.currency()));

            assertThat(onlyViolation(Kind.EFFECT_TWICE, order).detail()).startsWith("refunded twice: operator olga")
                    .contains("second charge ch_2").contains("re_late");
        }

        @Test
        void aSecondChargeConfirmedRefundedAsTheRefundTheOperatorNamedIsNoRefundTwice() {
            UUID order = world.confirmed();
            surplusChargeRefundedByHand(order, "re_dashboard");
            ProviderCharge first = world.charges.get(0);
            world.refunds.add(new ProviderRefund("re_dashboard", null, "ch_2", first.reference(), first.amount(),
                    first.currency()));

            AuditResult result = world.audit();

            assertThat(result.violations()).isEmpty();
            assertThat(result.onOperatorsWord()).extracting(Snapshot.HandConfirmed::word)
                    .containsExactly("charge ch_2 as re_dashboard: bank transfer TX-9");
        }

        @Test
        void aSecondChargeConfirmedRefundedAsARefundTheBooksDoNotShowIsStillChargedTwice() {
            UUID order = world.confirmed();
            surplusChargeRefundedByHand(order, "re_typo");

            AuditResult result = world.audit();

            assertThat(result.violations()).extracting(Violation::kind).containsExactlyInAnyOrder(Kind.NET_CHARGE,
                    Kind.EFFECT_TWICE);
            assertThat(result.onOperatorsWord()).as("no word the books contradict").isEmpty();
        }

        @Test
        void declinesRepeatedUnderAForgottenKeyAreNoEffectTwice() {
            UUID order = world.declined();
            ProviderCharge first = world.charges.get(0);
            world.charges.add(new ProviderCharge("ch_2", first.idempotencyKey(), first.reference(), first.amount(),
                    first.currency(), "declined"));

            assertThat(world.audit().violations()).isEmpty();

            world.charges.add(new ProviderCharge("ch_3", UUID.randomUUID().toString(), first.reference(),
                    first.amount(), first.currency(), "declined"));
            assertThat(onlyViolation(Kind.EFFECT_TWICE, order).detail()).as("a decline under another key is a second step")
                    .startsWith("2 charges").contains("ch_3");
        }

        /** The carrier forgot the shipment's key and created again under it; the second parcel is cancelled there. */
        private void cancelledSurplusParcel(UUID order, boolean recordedUndone) {
            CarrierShipment first = world.carrierShipments.stream().filter(c -> c.reference().equals(order.toString()))
                    .findFirst().orElseThrow();
            world.carrierShipments.add(new CarrierShipment("shp_2", first.idempotencyKey(), first.reference(),
                    "cancelled"));
            world.surpluses.add(new Snapshot.Surplus(order, Snapshot.Surplus.SHIPMENT, "shp_2", recordedUndone));
        }

        @Test
        void aCarriersSecondParcelThatShippingCancelledIsNoEffectTwice() {
            UUID order = world.confirmed();
            cancelledSurplusParcel(order, true);

            AuditResult result = world.audit();

            assertThat(result.violations()).isEmpty();
            assertThat(result.surplusesUndone()).extracting(Snapshot.Surplus::providerRef).containsExactly("shp_2");
        }

        @Test
        void aSecondParcelAnOperatorConfirmedCancelledWithTheCarrierIsTakenOnTheirWord() {
            UUID order = world.confirmed();
            CarrierShipment first = world.carrierShipments.stream().filter(c -> c.reference().equals(order.toString()))
                    .findFirst().orElseThrow();
            world.carrierShipments.add(new CarrierShipment("shp_2", first.idempotencyKey(), first.reference(),
                    "created"));
            world.surpluses.add(Snapshot.Surplus.confirmedByHand(order, Snapshot.Surplus.SHIPMENT, "shp_2", null,
                    "olga", "carrier ticket 77: parcel stopped at the depot"));

            AuditResult result = world.audit();

            assertThat(result.violations()).as("one live parcel, the order's own").isEmpty();
            assertThat(result.onOperatorsWord()).containsExactly(new Snapshot.HandConfirmed(order,
                    Snapshot.HandConfirmed.SURPLUS_CANCELLED, "olga",
                    "shipment shp_2: carrier ticket 77: parcel stopped at the depot"));
        }

        @Test
        void aSecondParcelShippingStillOwesACancelIsAnEffectTwice() {
            UUID order = world.confirmed();
            cancelledSurplusParcel(order, false);

            assertThat(onlyViolation(Kind.EFFECT_TWICE, order).detail()).startsWith("2 shipments at the carrier");
        }
    }

    @Nested
    class FactsStatedOnce {

        static Stream<String> statedOnce() {
            return Checks.STATED_ONCE.stream();
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("statedOnce")
        void aSecondFactUnderAnotherEventIdIsReported(String type) {
            world.everyKind();
            TopicEvent first = world.events.stream().filter(e -> type.equals(e.type())).findFirst().orElseThrow();
            world.publish(first.orderId(), first.topic(), type);
            TopicEvent second = world.events.get(world.events.size() - 1);

            assertThat(onlyViolation(Kind.FACT_TWICE, first.orderId()).detail()).isEqualTo("2 " + type + " events: "
                    + first.eventId() + " (" + first.topic() + " 0@" + first.offset() + "), "
                    + second.eventId() + " (" + second.topic() + " 0@" + second.offset() + ")");
        }

        @Test
        void whatAnOperatorMayAskForAgainIsNoSecondFact() {
            // a resent cancellation, answered again by every participant; a hold retried and held again
            UUID cancelled = world.cancelledAfterShipmentCreated();
            world.publish(cancelled, Topics.ORDER_EVENTS, "OrderCancelling");
            world.publish(cancelled, Topics.INVENTORY_EVENTS, "StockReleased");
            world.publish(cancelled, Topics.PAYMENT_EVENTS, "PaymentRefunded");
            world.publish(cancelled, Topics.SHIPPING_EVENTS, "ShipmentCancelled");
            UUID waiting = world.waitingForOperator();
            world.publish(waiting, Topics.ORDER_EVENTS, "ShipmentRetryRequested");
            world.publish(waiting, Topics.SHIPPING_EVENTS, "ShipmentOnHold");

            assertThat(world.audit().violations()).isEmpty();
        }
    }

    @Nested
    class LedgerEntriesOfNoOrderInScope {

        /** A ghost: an order id minted inside the window that order_db does not have. */
        final String ghost = Ids.timeOrdered(world.since.plusSeconds(1).toEpochMilli()).toString();

        @Test
        void aChargeForAnOrderNobodyHasIsMoneyTakenForNothing() {
            world.everyKind();
            world.unmatched.add(new UnmatchedEntry("payment provider charge ch_ghost", ghost, null, "21.00 EUR, succeeded",
                    false));
            AuditResult result = world.audit();
            assertThat(result.violations()).hasSize(1);
            Violation v = result.violations().get(0);
            assertThat(v.kind()).isEqualTo(Kind.ORPHAN_LEDGER_ENTRY);
            assertThat(v.subject()).isEqualTo("payment provider charge ch_ghost");
            assertThat(v.detail()).isEqualTo("reference " + ghost + " (no order in order_db): 21.00 EUR, succeeded; "
                    + "an order id minted at " + world.since.plusSeconds(1) + ", inside the window");
            assertThat(result.ledgers().ofNoOrder()).isEqualTo(1);
        }

        @Test
        void aCarrierShipmentForAnOrderNobodyHasIsAParcelMadeForNothing() {
            world.everyKind();
            world.unmatched.add(new UnmatchedEntry("carrier shipment shp_ghost", ghost, null, "created", false));
            AuditResult result = world.audit();
            assertThat(result.violations()).extracting(Violation::kind, Violation::subject)
                    .containsExactly(tuple(Kind.ORPHAN_LEDGER_ENTRY, "carrier shipment shp_ghost"));
            assertThat(result.violations().get(0).detail()).startsWith("reference " + ghost + " (no order in order_db): created");
        }

        @Test
        void underSinceOnlyOrderIdsMintedInsideTheWindowAreJudged() {
            // an id minted before --since (a test's leftover work), a random one (a forged event), free text (a tool)
            world.everyKind();
            String before = Ids.timeOrdered(world.since.minusSeconds(1).toEpochMilli()).toString();
            world.unmatched.add(new UnmatchedEntry("payment provider charge ch_before", before, null,
                    "5.00 EUR, succeeded", false));
            world.unmatched.add(new UnmatchedEntry("payment provider charge ch_forged", UUID.randomUUID().toString(), null,
                    "5.00 EUR, succeeded", false));
            world.unmatched.add(new UnmatchedEntry("payment provider charge ch_manual", "manual-test", null,
                    "5.00 EUR, succeeded", false));
            world.unmatched.add(new UnmatchedEntry("payment provider charge ch_after", ghost, null,
                    "5.00 EUR, succeeded", false));
            AuditResult result = world.audit();
            assertThat(result.violations()).extracting(Violation::kind, Violation::subject)
                    .containsExactly(tuple(Kind.ORPHAN_LEDGER_ENTRY, "payment provider charge ch_after"));
            assertThat(result.ledgers().ofNoOrder()).isEqualTo(4);
            assertThat(result.ledgers().notJudged()).hasSize(3);
            assertThat(result.ledgers().notJudged().get(2)).contains("ch_manual").contains("reference manual-test");
            assertThat(result.ledgers().notJudgedBecause()).contains("not an order id minted inside the window");
        }

        @Test
        void anEntryOfAnOrderOutsideTheScopeIsCountedNotJudged() {
            // an order placed before --since, charged after the window's first order
            world.everyKind();
            String older = UUID.randomUUID().toString();
            world.unmatched.add(new UnmatchedEntry("payment provider charge ch_older", older, null,
                    "21.00 EUR, succeeded", true));
            AuditResult result = world.audit();
            assertThat(result.violations()).isEmpty();
            assertThat(result.ledgers().ofOtherOrders()).isEqualTo(1);
            assertThat(result.ledgers().notJudged()).isEmpty();
        }

        @Test
        void underOrdersNoEntryOfNoOrderIsJudged() {
            world.everyKind();
            world.since = null;
            world.unmatched.add(new UnmatchedEntry("carrier shipment shp_ghost", ghost, null, "created", false));
            AuditResult result = world.audit();
            assertThat(result.violations()).isEmpty();
            assertThat(result.ledgers().notJudged()).hasSize(1);
            assertThat(result.ledgers().notJudgedBecause()).contains("--orders");
        }

        @Test
        void aRefundOfAnOrdersChargeThatNamesAnotherReferenceIsNoRefundOfThatOrder() {
            UUID order = world.confirmed();
            world.unmatched.add(new UnmatchedEntry("payment provider refund re_x", ghost, "ch_" + order,
                    "21.00 EUR of charge ch_" + order, false));
            assertThat(onlyViolation(Kind.NET_CHARGE, order).detail())
                    .isEqualTo("payment provider refund re_x refunds its charge ch_" + order + " but names reference "
                            + ghost + " (no order in order_db): not counted for this order");
        }
    }

    @Nested
    class Events {

        @Test
        void aTimelineEventMissingFromItsTopicIsReportedOnceWithItsId() {
            UUID order = world.confirmed();
            TopicEvent paid = world.eventOf(order, "PaymentSucceeded");
            world.events.remove(paid);
            assertThat(onlyViolation(Kind.EVENT_NOT_ON_TOPIC, order).detail())
                    .contains("PaymentSucceeded " + paid.eventId()).contains("not on payment.events");
        }

        @Test
        void aTimelineEventOnAnotherTopicThanItsProducersIsMissingFromItsTopic() {
            UUID order = world.confirmed();
            TopicEvent paid = world.eventOf(order, "PaymentSucceeded");
            world.events.replaceAll(e -> e == paid
                    ? new TopicEvent(Topics.SHIPPING_EVENTS, 0, e.offset(), order, e.eventId(), e.type()) : e);
            assertThat(onlyViolation(Kind.EVENT_NOT_ON_TOPIC, order).detail()).contains("it is on shipping.events");
        }

        @Test
        void aLateEventInTheTimelineMustBeOnItsTopicToo() {
            UUID order = world.declined();
            world.timeline.add(new TimelineEntry(order, UUID.randomUUID(), "PaymentSucceeded", "payment",
                    "late: the order was CANCELLED; the producer undoes its own step"));
            onlyViolation(Kind.EVENT_NOT_ON_TOPIC, order);
        }

        static Stream<Arguments> statesAndTheirEvents() {
            return Stream.of(
                    Arguments.of("confirmed", "OrderCreated"),
                    Arguments.of("confirmed", "StockReserved"),
                    Arguments.of("confirmed", "PaymentSucceeded"),
                    Arguments.of("confirmed", "ShipmentCreated"),
                    Arguments.of("confirmed", "OrderConfirmed"),
                    Arguments.of("declined", "PaymentFailed"),
                    Arguments.of("declined", "StockReleased"),
                    Arguments.of("declined", "OrderCancelling"),
                    Arguments.of("declined", "OrderCancelled"),
                    Arguments.of("declined", "ShipmentCancelled"),
                    Arguments.of("outOfStock", "StockReservationFailed"),
                    Arguments.of("outOfStock", "PaymentRefunded"),
                    Arguments.of("undeliverable", "PaymentRefunded"),
                    Arguments.of("rejectedAndCancelNotYetAnswered", "ShipmentFailed"),
                    Arguments.of("cancelledAfterShipmentCreated", "ShipmentCreated"),
                    Arguments.of("waitingForOperator", "ShipmentOnHold"),
                    Arguments.of("waitingForPayment", "PaymentOnHold"));
        }

        @ParameterizedTest(name = "{0}: {1}")
        @MethodSource("statesAndTheirEvents")
        void aStateWhoseEventNeverReachedItsTopicIsReported(String saga, String type) {
            UUID order = switch (saga) {
                case "confirmed" -> world.confirmed();
                case "declined" -> world.declined();
                case "outOfStock" -> world.outOfStock();
                case "undeliverable" -> world.undeliverable();
                case "cancelledAfterShipmentCreated" -> world.cancelledAfterShipmentCreated();
                case "waitingForOperator" -> world.waitingForOperator();
                case "waitingForPayment" -> world.waitingForPayment();
                case "rejectedAndCancelNotYetAnswered" -> {
                    // a CANCELLED shipment no longer shows that it was rejected; a REJECTED one does
                    UUID undeliverable = world.undeliverable();
                    world.replaceShipment(undeliverable, s -> s.withStatus("REJECTED"));
                    yield undeliverable;
                }
                default -> throw new IllegalArgumentException(saga);
            };
            world.unpublish(order, type);
            List<Violation> violations = world.audit().violations();
            if (saga.equals("rejectedAndCancelNotYetAnswered")) {
                // a cancelled order whose shipment has not answered the cancellation is a disagreement of its own
                assertThat(violations).extracting(Violation::kind).contains(Kind.PARTICIPANT_STATE);
                violations = violations.stream().filter(v -> v.kind() != Kind.PARTICIPANT_STATE).toList();
            }
            assertThat(violations).hasSize(1);
            assertThat(violations.get(0).kind()).isEqualTo(Kind.STATE_WITHOUT_EVENT);
            assertThat(violations.get(0).orderId()).isEqualTo(order);
            assertThat(violations.get(0).detail()).startsWith("no " + type + " on " + Checks.topicOfType(type) + ", although");
        }

        @Test
        void aServiceStateAloneRequiresItsEvent() {
            // the order never heard of the shipment (its facts say nothing), but shipping says CREATED
            UUID order = world.waitingForOperator();
            world.replaceShipment(order, s -> new Shipment(s.id(), order, "CREATED", "shp_1", false));
            world.unpublish(order, "ShipmentOnHold");
            List<Violation> violations = world.audit().violations();
            assertThat(violations).extracting(Violation::kind)
                    .containsExactlyInAnyOrder(Kind.STATE_WITHOUT_EVENT, Kind.WAIT_WITHOUT_HOLD);
            assertThat(violations).filteredOn(v -> v.kind() == Kind.STATE_WITHOUT_EVENT).singleElement()
                    .extracting(Violation::detail)
                    .isEqualTo("no ShipmentCreated on shipping.events, although the shipment is CREATED");
        }

        /**
         * A cancellation of an uncertain creation that found the parcel by its key and failed to cancel it keeps the
         * parcel's id while CANCELLING: nothing was created by a call of its own, so no ShipmentCreated is owed.
         */
        @Test
        void aParcelALookupFoundWhileCancellingOwesNoShipmentCreated() {
            UUID order = world.waitingForOperator();
            world.replaceShipment(order, s -> new Shipment(s.id(), order, "CANCELLING", "shp_found", true));
            assertThat(world.audit().violations()).extracting(Violation::kind)
                    .doesNotContain(Kind.STATE_WITHOUT_EVENT);
            world.replaceShipment(order, s -> new Shipment(s.id(), order, "CANCELLING", "shp_found", false));
            assertThat(world.audit().violations()).extracting(Violation::kind).contains(Kind.STATE_WITHOUT_EVENT);
        }

        @Test
        void anEventOfTheRightTypeOnAnotherTopicDoesNotCount() {
            UUID order = world.confirmed();
            TopicEvent confirmed = world.eventOf(order, "OrderConfirmed");
            world.unpublish(order, "OrderConfirmed");
            world.events.add(new TopicEvent(Topics.INVENTORY_EVENTS, 0, 77, order, confirmed.eventId(), "OrderConfirmed"));
            onlyViolation(Kind.STATE_WITHOUT_EVENT, order);
        }
    }

    @Nested
    class Parked {

        @Test
        void aMessageOfTheOrderOnADeadLetterTopicIsAViolationNamingItAndWhy() {
            UUID order = world.confirmed();
            UUID eventId = UUID.randomUUID();
            world.parked.add(new Snapshot.Parked(new TopicEvent(Topics.PAYMENT_DLQ, 0, 7, order, eventId, "StockReserved"),
                    "IllegalTransitionException: no transition"));
            assertThat(onlyViolation(Kind.PARKED, order).detail())
                    .contains("StockReserved " + eventId).contains("payment.dlq 0@7").contains("no transition");
        }

        @Test
        void aParkedMessageWithoutHeadersIsNamedAsSuch() {
            UUID order = world.declined();
            world.parked.add(new Snapshot.Parked(new TopicEvent(Topics.ORDER_DLQ, 0, 0, order, null, null), null));
            assertThat(onlyViolation(Kind.PARKED, order).detail()).startsWith("a message without an event id");
        }
    }

    @Nested
    class StockOfTouchedSkus {

        @Test
        void unitsThatAppearOrVanishBreakConservation() {
            UUID order = world.confirmed();
            Stock clean = world.cleanStock(world.skuOf(order));
            world.stockOverrides.put(clean.sku(), new Stock(clean.sku(), clean.stocked() - 1, clean.available(),
                    clean.reserved(), clean.shipped(), clean.heldByReserved(), clean.heldByConsumed()));
            AuditResult result = world.audit();
            assertThat(result.violations()).hasSize(1);
            Violation v = result.violations().get(0);
            assertThat(v.kind()).isEqualTo(Kind.STOCK_NOT_CONSERVED);
            assertThat(v.sku()).isEqualTo(clean.sku());
            assertThat(v.detail()).contains("stocked 8 != available 7 + reserved 0 + shipped 2 = 9")
                    .contains("touched by order " + order);
        }

        @Test
        void aConsumeAppliedTwiceShowsInTheHoldings() {
            // conserved (the units moved from available to shipped), but shipped exceeds what was consumed
            UUID order = world.confirmed();
            Stock clean = world.cleanStock(world.skuOf(order));
            world.stockOverrides.put(clean.sku(), new Stock(clean.sku(), clean.stocked(), clean.available() - 2,
                    clean.reserved(), clean.shipped() + 2, clean.heldByReserved(), clean.heldByConsumed()));
            AuditResult result = world.audit();
            assertThat(result.violations()).extracting(Violation::kind).containsExactly(Kind.STOCK_HOLDINGS);
            assertThat(result.violations().get(0).detail()).startsWith("shipped 4 != 2 held by CONSUMED reservations");
        }

        @Test
        void reservedUnitsNoReservationHoldsShowInTheHoldings() {
            UUID order = world.waitingForOperator();
            Stock clean = world.cleanStock(world.skuOf(order));
            world.stockOverrides.put(clean.sku(), new Stock(clean.sku(), clean.stocked(), clean.available() - 1,
                    clean.reserved() + 1, clean.shipped(), clean.heldByReserved(), clean.heldByConsumed()));
            AuditResult result = world.audit();
            assertThat(result.violations()).extracting(Violation::kind).containsExactly(Kind.STOCK_HOLDINGS);
            assertThat(result.violations().get(0).detail()).startsWith("reserved 2 != 1 held by RESERVED reservations");
        }

        @Test
        void unitsHeldOfASkuWithoutAStockRowShowInTheHoldings() {
            UUID order = world.confirmed();
            String sku = world.skuOf(order);
            world.stockOverrides.put(sku, Stock.withoutRow(sku, 0, 2));
            AuditResult result = world.audit();
            assertThat(result.violations()).extracting(Violation::kind).containsExactly(Kind.STOCK_HOLDINGS);
            assertThat(result.violations().get(0).detail())
                    .startsWith("no stock row, but 0 unit(s) held by RESERVED and 2 by CONSUMED reservations");
            assertThat(result.skusChecked()).isZero();
            assertThat(result.skusWithoutStockRow()).isEqualTo(1);
        }

        @Test
        void skusNoOrderInScopeTouchesAreNotJudged() {
            world.confirmed();
            world.stockOverrides.put("SKU-ELSEWHERE", new Stock("SKU-ELSEWHERE", 0L, 5, 0, 0, 0, 0));
            AuditResult result = world.audit();
            assertThat(result.violations()).isEmpty();
            assertThat(result.skusChecked()).isEqualTo(1);
        }
    }
}
