package dev.ordersaga.audit;

import dev.ordersaga.audit.Snapshot.CarrierShipment;
import dev.ordersaga.audit.Snapshot.Facts;
import dev.ordersaga.audit.Snapshot.HandConfirmed;
import dev.ordersaga.audit.Snapshot.Line;
import dev.ordersaga.audit.Snapshot.Order;
import dev.ordersaga.audit.Snapshot.Payment;
import dev.ordersaga.audit.Snapshot.ProviderCharge;
import dev.ordersaga.audit.Snapshot.ProviderRefund;
import dev.ordersaga.audit.Snapshot.Reservation;
import dev.ordersaga.audit.Snapshot.Shipment;
import dev.ordersaga.audit.Snapshot.Sighting;
import dev.ordersaga.audit.Snapshot.Stock;
import dev.ordersaga.audit.Snapshot.Surplus;
import dev.ordersaga.audit.Snapshot.TimelineEntry;
import dev.ordersaga.audit.Snapshot.TopicEvent;
import dev.ordersaga.audit.Snapshot.UnmatchedEntry;
import dev.ordersaga.audit.Violation.Kind;
import dev.ordersaga.events.EventTypes;
import dev.ordersaga.events.Ids;
import dev.ordersaga.events.InventoryEvent;
import dev.ordersaga.events.OrderEvent;
import dev.ordersaga.events.PaymentEvent;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.ShippingEvent;
import dev.ordersaga.events.Topics;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static dev.ordersaga.audit.Violation.ofOrder;
import static dev.ordersaga.audit.Violation.ofSku;

/**
 * The saga's invariants as pure functions of a {@link Snapshot}: no database, no Kafka, no HTTP. Each order in scope
 * is checked for
 * <ul>
 *   <li>being settled: CONFIRMED, CANCELLED, or waiting for an operator with a reason, on the participant that is
 *       held for one (SHIPPING: its shipment ON_HOLD; PAYMENT: its payment held);</li>
 *   <li>its outcome: CONFIRMED — reservation CONSUMED (holding the order's lines), net charge = total, exactly one
 *       live shipment at the carrier, payment SUCCEEDED and shipment CREATED; CANCELLED — no reservation RESERVED or
 *       CONSUMED, net charge zero, no live shipment (or what {@link #onAnOperatorsWord} takes on an operator's word),
 *       payment DECLINED, REFUNDED or CANCELLED and shipment CANCELLED;
 *       every refund of one of the order's own charges;</li>
 *   <li>effects taken once: at most one payment, shipment and reservation row, one charge, one refund and one carrier
 *       shipment per order reference, one order_sighting;</li>
 *   <li>its events: every timeline entry on its producer's topic, and every state of every service with the event
 *       that state is published with; none of its messages parked on a dead-letter topic;</li>
 * </ul>
 * every SKU its lines touch for stocked = available + reserved + shipped, reserved = what RESERVED reservations
 * hold, shipped = what CONSUMED reservations hold; and every ledger entry that names no order order_db has, if the
 * scope reaches it (see {@link #orphans}).
 */
public final class Checks {

    /** Order statuses in the order of the saga, for the summary. */
    static final List<String> ORDER_STATUSES = List.of("PENDING", "STOCK_RESERVED", "PAID", "SHIPPING_CREATED",
            "CONFIRMED", "COMPENSATING", "CANCELLED");

    private static final int ORDERS_NAMED_PER_SKU = 3;

    private Checks() {
    }

    public static AuditResult run(Snapshot snapshot) {
        Index index = new Index(snapshot);
        List<Violation> violations = new ArrayList<>();
        for (UUID missing : snapshot.ordersNotFound()) {
            violations.add(ofOrder(Kind.ORDER_NOT_FOUND, missing, "asked for, but order_db has no such order"));
        }
        List<Surplus> surplusesUndone = new ArrayList<>();
        List<HandConfirmed> onOperatorsWord = new ArrayList<>();
        for (Order order : snapshot.orders()) {
            List<Surplus> undone = undoneSurpluses(order, index);
            for (Surplus s : undone) {
                if (s.onOperatorsWord()) {
                    onOperatorsWord.add(new HandConfirmed(order.id(), Surplus.CHARGE.equals(s.kind())
                            ? HandConfirmed.SURPLUS_REFUNDED : HandConfirmed.SURPLUS_CANCELLED, s.undoneBy(),
                            s.kind() + " " + s.providerRef() + (s.undoRef() == null ? "" : " as " + s.undoRef())
                                    + ": " + s.confirmation()));
                } else {
                    surplusesUndone.add(s);
                }
            }
            onOperatorsWord.addAll(onAnOperatorsWord(order, index));
            violations.addAll(settled(order));
            violations.addAll(waitsForAHold(order, index));
            violations.addAll(outcome(order, index));
            violations.addAll(effectsOnce(order, index, undone));
            violations.addAll(factsOnce(order, index));
            violations.addAll(events(order, index));
            violations.addAll(parked(order, index));
        }
        violations.addAll(stock(snapshot));
        violations.addAll(orphans(snapshot, index));

        Map<String, Integer> byStatus = new TreeMap<>((a, b) -> {
            int ia = ORDER_STATUSES.indexOf(a);
            int ib = ORDER_STATUSES.indexOf(b);
            if (ia >= 0 && ib >= 0) {
                return Integer.compare(ia, ib);
            }
            return ia >= 0 ? -1 : ib >= 0 ? 1 : a.compareTo(b);
        });
        snapshot.orders().forEach(o -> byStatus.merge(o.status(), 1, Integer::sum));
        int waiting = (int) snapshot.orders().stream().filter(o -> !finished(o) && waits(o)).count();
        Set<String> touched = touchedSkus(snapshot).keySet();
        List<Stock> checked = snapshot.stock().stream().filter(s -> s.row() && touched.contains(s.sku())).toList();
        Set<String> withRow = checked.stream().map(Stock::sku).collect(Collectors.toSet());
        return new AuditResult(snapshot.scope(), snapshot.orders().size(), byStatus, waiting, checked.size(),
                (int) checked.stream().filter(s -> s.stocked() == null).count(),
                (int) touched.stream().filter(sku -> !withRow.contains(sku)).count(), ledgers(snapshot, index),
                snapshot.topics().recordsRead(), snapshot.events().size(), snapshot.topics().undecodable(),
                duplicates(snapshot), surplusesUndone, onOperatorsWord, violations);
    }

    // --- settled

    static List<Violation> settled(Order order) {
        if (finished(order) || waits(order)) {
            return List.of();
        }
        return List.of(ofOrder(Kind.NOT_SETTLED, order.id(),
                "status " + order.status() + " and not waiting for an operator (no waiting reason)"));
    }

    /**
     * An order waits for the participant it names, and that participant is what holds it up: each retry an operator
     * may send resumes one participant's held step only. Orders that do not wait are judged by {@link #settled}.
     */
    static List<Violation> waitsForAHold(Order order, Index index) {
        if (finished(order) || !waits(order) || order.waitingFor() == null) {
            return List.of();
        }
        String held = switch (order.waitingFor()) {
            case "SHIPPING" -> index.shipments(order.id()).stream().anyMatch(s -> "ON_HOLD".equals(s.status()))
                    ? null : "no shipment of it is ON_HOLD (" + statuses(index.shipments(order.id()), Shipment::status) + ")";
            case "PAYMENT" -> index.payments(order.id()).stream().anyMatch(Payment::held)
                    ? null : "no payment of it is held (" + statuses(index.payments(order.id()), Payment::status) + ")";
            default -> "no participant of that name";
        };
        if (held == null) {
            return List.of();
        }
        return List.of(ofOrder(Kind.WAIT_WITHOUT_HOLD, order.id(),
                "status " + order.status() + ", waits for " + order.waitingFor() + ", but " + held));
    }

    private static <T> String statuses(List<T> rows, Function<T, String> status) {
        return rows.isEmpty() ? "none" : rows.stream().map(status).collect(Collectors.joining(", "));
    }

    private static boolean finished(Order order) {
        return "CONFIRMED".equals(order.status()) || "CANCELLED".equals(order.status());
    }

    private static boolean waits(Order order) {
        return order.waitingReason() != null && !order.waitingReason().isBlank();
    }

    // --- the outcome: what CONFIRMED and CANCELLED promise

    static List<Violation> outcome(Order order, Index index) {
        List<Violation> found = new ArrayList<>();
        List<Reservation> reservations = index.reservations(order.id());
        // a second charge or parcel an operator confirmed settled outside the provider's API is off the books
        Set<String> chargesOnWord = surplusesOnWord(order, index, Surplus.CHARGE);
        Set<String> parcelsOnWord = surplusesOnWord(order, index, Surplus.SHIPMENT);
        Money net = Money.net(without(index.charges(order.id()), c -> chargesOnWord.contains(c.chargeId())),
                without(index.refunds(order.id()), r -> chargesOnWord.contains(r.chargeId())), order.currency());
        long live = index.carrierShipments(order.id()).stream()
                .filter(c -> c.live() && !parcelsOnWord.contains(c.shipmentId())).count();
        Set<String> onWord = onAnOperatorsWord(order, index).stream().map(HandConfirmed::action)
                .collect(Collectors.toSet());
        refundsOfOtherCharges(found, order, index);
        switch (order.status()) {
            case "CONFIRMED" -> {
                if (reservations.isEmpty()) {
                    found.add(ofOrder(Kind.RESERVATION_STATE, order.id(), "CONFIRMED, but inventory has no reservation"));
                }
                for (Reservation r : reservations) {
                    if (!"CONSUMED".equals(r.status())) {
                        found.add(ofOrder(Kind.RESERVATION_STATE, order.id(), "CONFIRMED, but reservation "
                                + r.reservationId() + " is " + r.status() + ", not CONSUMED"));
                    } else if (!perSku(r.items()).equals(perSku(order.lines()))) {
                        found.add(ofOrder(Kind.RESERVATION_ITEMS, order.id(), "reservation " + r.reservationId()
                                + " consumed " + perSku(r.items()) + ", the order has " + perSku(order.lines())));
                    }
                }
                if (!net.equalsAmount(order.total())) {
                    found.add(ofOrder(Kind.NET_CHARGE, order.id(), "CONFIRMED with total " + plain(order.total()) + " "
                            + order.currency() + ", but at the provider " + net.describe()));
                }
                if (live != 1) {
                    found.add(ofOrder(Kind.LIVE_SHIPMENTS, order.id(), "CONFIRMED with " + live
                            + " live shipment(s) at the carrier, not exactly one" + carrierDetail(index, order.id())));
                }
                participants(found, order, index, Set.of("SUCCEEDED"), Set.of("CREATED"));
            }
            case "CANCELLED" -> {
                if (reservations.isEmpty()) {
                    // OrderCancelling leaves one, RELEASED, where nothing was reserved: a late OrderCreated then reserves nothing
                    found.add(ofOrder(Kind.RESERVATION_STATE, order.id(), "CANCELLED, but inventory has no reservation"));
                }
                for (Reservation r : reservations) {
                    if ("RESERVED".equals(r.status()) || "CONSUMED".equals(r.status())) {
                        found.add(ofOrder(Kind.RESERVATION_STATE, order.id(), "CANCELLED, but reservation "
                                + r.reservationId() + " is " + r.status() + ", not RELEASED or FAILED"));
                    }
                }
                if (!net.equalsAmount(BigDecimal.ZERO) && !onWord.contains(HandConfirmed.PAYMENT_REFUNDED)) {
                    found.add(ofOrder(Kind.NET_CHARGE, order.id(), "CANCELLED, but at the provider " + net.describe()));
                }
                if (live > 0 && !onWord.contains(HandConfirmed.SHIPMENT_CANCELLED)) {
                    found.add(ofOrder(Kind.LIVE_SHIPMENTS, order.id(), "CANCELLED with " + live
                            + " live shipment(s) at the carrier" + carrierDetail(index, order.id())));
                }
                participants(found, order, index, Set.of("DECLINED", "REFUNDED", "CANCELLED"), Set.of("CANCELLED"));
            }
            default -> {
                // on its way or waiting for an operator: no outcome promised yet
            }
        }
        return found;
    }

    /** The order's second effects of a kind that the audit takes as undone on an operator's word. */
    private static Set<String> surplusesOnWord(Order order, Index index, String kind) {
        return undoneSurpluses(order, index).stream().filter(s -> s.onOperatorsWord() && s.kind().equals(kind))
                .map(Surplus::providerRef).collect(Collectors.toSet());
    }

    /**
     * The undoings of a CANCELLED order that its ledger does not show but an operator confirmed settled another way
     * (payment's and shipping's confirm-by-hand, which the services allow only once the provider's API refused the
     * undoing): the whole charge left where the operator confirmed a refund made outside the provider's books (no
     * provider refund id named), exactly one live parcel, the shipment's own, where the carrier said, outside its API,
     * that it will not go out. The audit takes their word for those and lists
     * them for a person to check; a ledger that shows anything else (a refund on top: the money returned twice) is
     * judged as without it.
     */
    static List<HandConfirmed> onAnOperatorsWord(Order order, Index index) {
        if (!"CANCELLED".equals(order.status())) {
            return List.of();
        }
        List<HandConfirmed> taken = new ArrayList<>();
        // the word covers a refund made outside the provider (none named): one at its dashboard is in the ledger
        boolean refundedOutside = index.payments(order.id()).stream()
                .anyMatch(p -> p.refundConfirmedBy() != null && p.providerRefundId() == null);
        Set<String> chargesOnWord = surplusesOnWord(order, index, Surplus.CHARGE);
        index.handConfirmed(order.id(), HandConfirmed.PAYMENT_REFUNDED)
                .filter(word -> refundedOutside && Money.net(
                        without(index.charges(order.id()), c -> chargesOnWord.contains(c.chargeId())),
                        without(index.refunds(order.id()), r -> chargesOnWord.contains(r.chargeId())),
                        order.currency()).equalsAmount(order.total()))
                .ifPresent(taken::add);
        // and the parcel the operator named, which is the shipment's: another one live is no parcel they settled
        Set<String> named = index.shipments(order.id()).stream().map(Shipment::carrierShipmentId)
                .filter(Objects::nonNull).collect(Collectors.toSet());
        Set<String> parcelsOnWord = surplusesOnWord(order, index, Surplus.SHIPMENT);
        List<CarrierShipment> live = index.carrierShipments(order.id()).stream()
                .filter(c -> c.live() && !parcelsOnWord.contains(c.shipmentId())).toList();
        index.handConfirmed(order.id(), HandConfirmed.SHIPMENT_CANCELLED)
                .filter(word -> live.size() == 1 && named.contains(live.get(0).shipmentId()))
                .ifPresent(taken::add);
        return taken;
    }

    /**
     * The providers' ledgers say what happened to the money and the parcel; the participants' rows say what the
     * services believe, and what they still owe the provider. A finished order whose payment is still REFUNDING, or
     * whose shipment is still CANCELLING, would pass the ledger checks now and break them once the call lands.
     */
    private static void participants(List<Violation> found, Order order, Index index, Set<String> payments,
                                     Set<String> shipments) {
        // every finished saga passed through each participant, and a CANCELLED one's OrderCancelling leaves a row where
        // none was: without it, a forward event still on its way (topics have no common order) would charge or ship
        if (index.payments(order.id()).isEmpty()) {
            found.add(ofOrder(Kind.PARTICIPANT_STATE, order.id(), order.status() + ", but payment has no row for it"));
        }
        if (index.shipments(order.id()).isEmpty()) {
            found.add(ofOrder(Kind.PARTICIPANT_STATE, order.id(), order.status() + ", but shipping has no row for it"));
        }
        for (Payment p : index.payments(order.id())) {
            if (!payments.contains(p.status())) {
                found.add(ofOrder(Kind.PARTICIPANT_STATE, order.id(), order.status() + ", but payment " + p.id()
                        + " is " + p.status() + ", not " + String.join(" or ", new TreeSet<>(payments))));
            }
        }
        for (Shipment s : index.shipments(order.id())) {
            if (!shipments.contains(s.status())) {
                found.add(ofOrder(Kind.PARTICIPANT_STATE, order.id(), order.status() + ", but shipment " + s.id()
                        + " is " + s.status() + ", not " + String.join(" or ", new TreeSet<>(shipments))));
            }
        }
    }

    /**
     * A refund counts for the order whose charge it refunds: one that names this order but another's charge does not,
     * and one of this order's charges that names another reference is not counted in its net charge.
     */
    private static void refundsOfOtherCharges(List<Violation> found, Order order, Index index) {
        Set<String> charges = index.charges(order.id()).stream().map(ProviderCharge::chargeId).collect(Collectors.toSet());
        for (ProviderRefund r : index.refunds(order.id())) {
            if (!charges.contains(r.chargeId())) {
                found.add(ofOrder(Kind.NET_CHARGE, order.id(), "refund " + r.refundId() + " names this order, but refunds "
                        + "charge " + r.chargeId() + ", which is not one of its charges"));
            }
        }
        for (String chargeId : charges) {
            for (UnmatchedEntry r : index.unmatchedRefundsOf(chargeId)) {
                found.add(ofOrder(Kind.NET_CHARGE, order.id(), r.entry() + " refunds its charge " + chargeId
                        + " but names " + describeReference(r) + ": not counted for this order"));
            }
        }
    }

    private static String carrierDetail(Index index, UUID orderId) {
        List<CarrierShipment> all = index.carrierShipments(orderId);
        return all.isEmpty() ? "" : " (" + all.stream().map(s -> s.shipmentId() + " " + s.status())
                .collect(Collectors.joining(", ")) + ")";
    }

    /** Succeeded charges minus refunds, in the order's currency; entries in another currency are named. */
    record Money(BigDecimal charged, BigDecimal refunded, List<String> foreign) {

        static Money net(List<ProviderCharge> charges, List<ProviderRefund> refunds, String currency) {
            BigDecimal charged = BigDecimal.ZERO;
            BigDecimal refunded = BigDecimal.ZERO;
            List<String> foreign = new ArrayList<>();
            for (ProviderCharge c : charges) {
                if (!c.succeeded()) {
                    continue;
                }
                if (!Objects.equals(c.currency(), currency)) {
                    foreign.add("charge " + c.chargeId() + " in " + c.currency());
                }
                charged = charged.add(c.amount());
            }
            for (ProviderRefund r : refunds) {
                if (!Objects.equals(r.currency(), currency)) {
                    foreign.add("refund " + r.refundId() + " in " + r.currency());
                }
                refunded = refunded.add(r.amount());
            }
            return new Money(charged, refunded, foreign);
        }

        boolean equalsAmount(BigDecimal expected) {
            return foreign.isEmpty() && charged.subtract(refunded).compareTo(expected) == 0;
        }

        String describe() {
            return "succeeded charges " + plain(charged) + " - refunds " + plain(refunded) + " = "
                    + plain(charged.subtract(refunded)) + (foreign.isEmpty() ? "" : "; in another currency: "
                    + String.join(", ", foreign));
        }
    }

    private static String plain(BigDecimal amount) {
        BigDecimal stripped = amount.stripTrailingZeros();
        return (stripped.scale() < 2 ? stripped.setScale(2) : stripped).toPlainString();
    }

    private static Map<String, Integer> perSku(List<Line> lines) {
        Map<String, Integer> perSku = new TreeMap<>();
        lines.forEach(l -> perSku.merge(l.sku(), l.quantity(), Integer::sum));
        return perSku;
    }

    // --- parked

    /**
     * A message of the order that a consumer parked was never applied: whatever the saga did without it, an operator
     * has to look at it (and republish it, or not). The saga's own events are never parked when all goes well, so a
     * run under faults that parks one has found a bug or a case the state machines do not know.
     */
    static List<Violation> parked(Order order, Index index) {
        List<Violation> found = new ArrayList<>();
        for (Snapshot.Parked p : index.parked(order.id())) {
            TopicEvent m = p.message();
            found.add(ofOrder(Kind.PARKED, order.id(), (m.type() == null ? "a message" : m.type()) + " "
                    + (m.eventId() == null ? "without an event id" : m.eventId()) + " sits on " + m.topic() + " "
                    + m.partition() + "@" + m.offset() + ", never applied" + (p.reason() == null ? "" : ": " + p.reason())));
        }
        return found;
    }

    // --- effects taken once

    /** @param undone the order's second effects that the services undid ({@link #undoneSurpluses}) */
    static List<Violation> effectsOnce(Order order, Index index, List<Surplus> undone) {
        List<Violation> found = new ArrayList<>();
        UUID id = order.id();
        Set<String> undoneCharges = refs(undone, Surplus.CHARGE);
        Set<String> undoneParcels = refs(undone, Surplus.SHIPMENT);
        twice(found, id, index.payments(id), "payment rows in payment_db", p -> p.id() + " " + p.status());
        twice(found, id, index.shipments(id), "shipment rows in shipping_db", s -> s.id() + " " + s.status());
        twice(found, id, index.reservations(id), "reservations in inventory_db",
                r -> r.reservationId() + " " + r.status());
        twice(found, id, chargesCounted(index.charges(id), undoneCharges),
                "charges at the payment provider", c -> c.chargeId() + " key " + c.idempotencyKey() + " " + c.status());
        twice(found, id, without(index.refunds(id), r -> undoneCharges.contains(r.chargeId())),
                "refunds at the payment provider",
                r -> r.refundId() + " key " + r.idempotencyKey() + " " + plain(r.amount()));
        twice(found, id, without(index.carrierShipments(id), s -> undoneParcels.contains(s.shipmentId())),
                "shipments at the carrier", s -> s.shipmentId() + " key " + s.idempotencyKey() + " " + s.status());
        twice(found, id, index.sightings(id), "order_sighting rows (OrderCreated applied by inventory)",
                s -> "event " + s.eventId());
        refundedTwice(found, order, index, undoneCharges);
        surplusRefundedTwice(found, order, index);
        return found;
    }

    /**
     * A second charge an operator confirmed refunded by hand was refunded where they said, as the payment's own refund
     * ({@link #refundedTwice}): a provider refund of it other than the one they named is the money returned twice.
     */
    private static void surplusRefundedTwice(List<Violation> found, Order order, Index index) {
        for (Surplus s : index.surpluses(order.id())) {
            if (!s.onOperatorsWord() || !Surplus.CHARGE.equals(s.kind())) {
                continue;
            }
            for (ProviderRefund r : index.refunds(order.id())) {
                if (r.chargeId().equals(s.providerRef()) && !r.refundId().equals(s.undoRef())) {
                    found.add(ofOrder(Kind.EFFECT_TWICE, order.id(), "refunded twice: operator " + s.undoneBy()
                            + " confirmed second charge " + s.providerRef() + " refunded " + (s.undoRef() == null
                            ? "outside the provider" : "as " + s.undoRef()) + ", and the provider made refund "
                            + r.refundId() + " of " + plain(r.amount()) + " as well"));
                }
            }
        }
    }

    /**
     * A payment an operator confirmed refunded by hand was refunded where they said: at the provider under the refund
     * id they named, or outside it (none named). Any other refund of its charge at the provider is the money returned a
     * second time: a refund call that was under way unseen when they confirmed (payment-service logs an ALERT for it),
     * though the ledger's net then looks right.
     */
    private static void refundedTwice(List<Violation> found, Order order, Index index, Set<String> undoneCharges) {
        for (Payment p : index.payments(order.id())) {
            if (p.refundConfirmedBy() == null) {
                continue;
            }
            for (ProviderRefund r : index.refunds(order.id())) {
                if (!r.refundId().equals(p.providerRefundId()) && !undoneCharges.contains(r.chargeId())) {
                    found.add(ofOrder(Kind.EFFECT_TWICE, order.id(), "refunded twice: operator " + p.refundConfirmedBy()
                            + " confirmed payment " + p.id() + " refunded " + (p.providerRefundId() == null
                            ? "outside the provider" : "as " + p.providerRefundId()) + ", and the provider made refund "
                            + r.refundId() + " of " + plain(r.amount()) + " as well"));
                }
            }
        }
    }

    /**
     * A second charge or parcel that a provider made under one of our keys, having forgotten it, is the provider's
     * doing, not a step the saga took twice; the services find it in the provider's report and undo it. It counts as
     * undone when the service recorded the undo and the provider's books agree: the charge refunded in full, the parcel
     * cancelled. One still owed, or whose undo the books do not show, stays an effect taken twice. One an operator
     * confirmed settled outside the provider's API, which the services allow only once the API refused the undo, is
     * taken on their word (and listed with it) as the payment's own refund is ({@link #onAnOperatorsWord}): a parcel
     * whatever the carrier's books show of it, a charge refunded outside the provider where they named no refund there,
     * and where they named one, only if the books show it and the charge refunded in full. A refund of the charge at
     * the provider other than one they named is the money returned twice ({@link #surplusRefundedTwice}).
     */
    static List<Surplus> undoneSurpluses(Order order, Index index) {
        List<Surplus> undone = new ArrayList<>();
        for (Surplus s : index.surpluses(order.id())) {
            if (!s.undone()) {
                continue;
            }
            boolean refundNamed = s.onOperatorsWord() && s.undoRef() != null;
            if (s.onOperatorsWord() && (Surplus.SHIPMENT.equals(s.kind()) || !refundNamed)) {
                undone.add(s);
                continue;
            }
            boolean booksAgree = switch (s.kind()) {
                case Surplus.CHARGE -> index.charges(order.id()).stream()
                        .filter(c -> c.chargeId().equals(s.providerRef()) && c.succeeded())
                        .anyMatch(c -> index.refunds(order.id()).stream()
                                .filter(r -> r.chargeId().equals(c.chargeId()))
                                .map(ProviderRefund::amount).reduce(BigDecimal.ZERO, BigDecimal::add)
                                .compareTo(c.amount()) == 0
                                && (!refundNamed || index.refunds(order.id()).stream().anyMatch(
                                        r -> r.chargeId().equals(c.chargeId()) && r.refundId().equals(s.undoRef()))));
                case Surplus.SHIPMENT -> index.carrierShipments(order.id()).stream()
                        .anyMatch(c -> c.shipmentId().equals(s.providerRef()) && !c.live());
                default -> false;
            };
            if (booksAgree) {
                undone.add(s);
            }
        }
        return undone;
    }

    /**
     * The charges that count as steps taken: under each key, every settled charge not undone; a key with none of those
     * counts once if it was declined. A provider that forgot a key and declined a call under it anew moved no money, and
     * the key says it was the same step; charges under two keys are two steps.
     */
    private static List<ProviderCharge> chargesCounted(List<ProviderCharge> charges, Set<String> undone) {
        Map<String, List<ProviderCharge>> byKey = new LinkedHashMap<>();
        charges.forEach(c -> byKey.computeIfAbsent(String.valueOf(c.idempotencyKey()), k -> new ArrayList<>()).add(c));
        List<ProviderCharge> counted = new ArrayList<>();
        for (List<ProviderCharge> underKey : byKey.values()) {
            List<ProviderCharge> settled = underKey.stream()
                    .filter(c -> c.succeeded() && !undone.contains(c.chargeId())).toList();
            if (!settled.isEmpty()) {
                counted.addAll(settled);
            } else {
                underKey.stream().filter(c -> !c.succeeded()).findFirst().ifPresent(counted::add);
            }
        }
        return counted;
    }

    private static Set<String> refs(List<Surplus> surpluses, String kind) {
        return surpluses.stream().filter(s -> s.kind().equals(kind)).map(Surplus::providerRef)
                .collect(Collectors.toSet());
    }

    private static <T> List<T> without(List<T> effects, Predicate<T> undone) {
        return effects.stream().filter(undone.negate()).toList();
    }

    /**
     * The facts a saga states once: each is the outcome of one step, taken under the state machine of the service that
     * publishes it, so a second one under another event id is the step taken twice (two replicas, a replay applied
     * anew), which the rows may not show once a later transition has overwritten them. A redelivery keeps its event id
     * and is no second fact. Not here: compensations' answers, holds and operators' requests, which an operator's
     * resent cancellation or retry of a held step asks for again.
     */
    static final List<String> STATED_ONCE = List.of("OrderCreated", "StockReserved", "StockReservationFailed",
            "PaymentSucceeded", "PaymentFailed", "ShipmentCreated", "ShipmentFailed", "OrderConfirmed", "OrderCancelled");

    static List<Violation> factsOnce(Order order, Index index) {
        Map<String, Map<UUID, TopicEvent>> byType = new LinkedHashMap<>();
        for (TopicEvent e : index.events(order.id())) {
            if (e.eventId() != null && STATED_ONCE.contains(e.type())) {
                byType.computeIfAbsent(e.type(), t -> new LinkedHashMap<>()).putIfAbsent(e.eventId(), e);
            }
        }
        List<Violation> found = new ArrayList<>();
        byType.forEach((type, distinct) -> {
            if (distinct.size() > 1) {
                found.add(ofOrder(Kind.FACT_TWICE, order.id(), distinct.size() + " " + type + " events: "
                        + distinct.values().stream().map(e -> e.eventId() + " (" + e.topic() + " " + e.partition() + "@"
                        + e.offset() + ")").collect(Collectors.joining(", "))));
            }
        });
        return found;
    }

    private static <T> void twice(List<Violation> found, UUID orderId, List<T> effects, String what,
                                  Function<T, String> describe) {
        if (effects.size() > 1) {
            found.add(ofOrder(Kind.EFFECT_TWICE, orderId, effects.size() + " " + what + ": "
                    + effects.stream().map(describe).collect(Collectors.joining(", "))));
        }
    }

    // --- events on the topics

    static List<Violation> events(Order order, Index index) {
        List<Violation> found = new ArrayList<>();
        Set<String> reported = new HashSet<>();
        for (TimelineEntry entry : index.timeline(order.id())) {
            String topic = topicOfProducer(entry.producer(), entry.type());
            if (topic == null || !index.onTopic(topic, entry.eventId())) {
                List<String> elsewhere = index.topicsOf(entry.eventId());
                found.add(ofOrder(Kind.EVENT_NOT_ON_TOPIC, order.id(), entry.type() + " " + entry.eventId()
                        + " (producer " + entry.producer() + ") is in the timeline but not on "
                        + (topic == null ? "any known topic" : topic)
                        + (elsewhere.isEmpty() ? "" : " (it is on " + String.join(", ", elsewhere) + ")")));
                reported.add(entry.type());
            }
        }
        Set<String> published = new HashSet<>();
        for (TopicEvent e : index.events(order.id())) {
            if (e.type() != null) {
                published.add(e.topic() + "|" + e.type());
            }
        }
        expectedEvents(order, index).forEach((type, reasons) -> {
            String topic = topicOfType(type);
            if (!reported.contains(type) && !published.contains(topic + "|" + type)) {
                found.add(ofOrder(Kind.STATE_WITHOUT_EVENT, order.id(), "no " + type + " on " + topic + ", although "
                        + String.join("; ", reasons)));
            }
        });
        return found;
    }

    /** The events the states of the four services say were published for the order, each with the states that say so. */
    static Map<String, List<String>> expectedEvents(Order order, Index index) {
        Map<String, List<String>> expected = new LinkedHashMap<>();
        Expect expect = (type, reason) -> expected.computeIfAbsent(type, t -> new ArrayList<>()).add(reason);

        expect.that("OrderCreated", "the order exists");
        switch (order.status()) {
            case "CONFIRMED" -> expect.that("OrderConfirmed", "the order is CONFIRMED");
            case "COMPENSATING" -> expect.that("OrderCancelling", "the order is COMPENSATING");
            case "CANCELLED" -> {
                expect.that("OrderCancelling", "the order is CANCELLED");
                expect.that("OrderCancelled", "the order is CANCELLED");
            }
            default -> {
            }
        }
        Facts facts = order.facts();
        if (facts != null) {
            heard(expect, facts.stockReserved(), "StockReserved", "stock_reserved");
            heard(expect, facts.paid(), "PaymentSucceeded", "paid");
            heard(expect, facts.shipmentCreated(), "ShipmentCreated", "shipment_created");
            heard(expect, facts.stockReleased(), "StockReleased", "stock_released");
            heard(expect, facts.paymentRefunded(), "PaymentRefunded", "payment_refunded");
            heard(expect, facts.shipmentCancelled(), "ShipmentCancelled", "shipment_cancelled");
        }

        for (Reservation r : index.reservations(order.id())) {
            String state = "the reservation is " + r.status();
            switch (r.status()) {
                case "RESERVED", "CONSUMED" -> expect.that("StockReserved", state);
                case "FAILED" -> expect.that("StockReservationFailed", state);
                case "RELEASED" -> {
                    expect.that("StockReleased", state);
                    if (!r.items().isEmpty()) {
                        expect.that("StockReserved", state + " with items (it was reserved)");
                    }
                    if (r.failureReason() != null) {
                        expect.that("StockReservationFailed", state + " with a failure reason (it failed)");
                    }
                }
                default -> {
                }
            }
        }
        for (Payment p : index.payments(order.id())) {
            String state = "the payment is " + p.status();
            switch (p.status()) {
                case "SUCCEEDED", "REFUNDING" -> expect.that("PaymentSucceeded", state);
                case "REFUNDED" -> {
                    expect.that("PaymentSucceeded", state);
                    expect.that("PaymentRefunded", state);
                }
                case "DECLINED" -> expect.that("PaymentFailed", state);
                default -> {
                }
            }
            if (p.held()) {
                expect.that("PaymentOnHold", state + " and held for an operator");
            }
            if (p.refundAnswered()) {
                expect.that("PaymentRefunded", "the payment answered the cancellation (refund_answered)");
            }
        }
        for (Shipment s : index.shipments(order.id())) {
            String state = "the shipment is " + s.status();
            switch (s.status()) {
                case "CREATED" -> expect.that("ShipmentCreated", state);
                case "CANCELLING" -> {
                    // as for CANCELLED: a parcel a lookup found, kept when its cancel failed, published nothing
                    if (s.carrierShipmentId() != null && !s.creationUncertain()) {
                        expect.that("ShipmentCreated", state + " with carrier shipment " + s.carrierShipmentId());
                    }
                }
                case "CANCELLED" -> {
                    // a carrier id with no doubt about the creation: it was learnt from the create call (CREATED), not
                    // from a look-up by key while cancelling an uncertain creation, which publishes no ShipmentCreated
                    if (s.carrierShipmentId() != null && !s.creationUncertain()) {
                        expect.that("ShipmentCreated", state + " after it was created (carrier shipment "
                                + s.carrierShipmentId() + ")");
                    }
                    expect.that("ShipmentCancelled", state);
                }
                case "REJECTED" -> expect.that("ShipmentFailed", state);
                case "ON_HOLD" -> expect.that("ShipmentOnHold", state);
                default -> {
                }
            }
        }
        return expected;
    }

    @FunctionalInterface
    private interface Expect {
        void that(String type, String reason);
    }

    private static void heard(Expect expect, boolean fact, String type, String column) {
        if (fact) {
            expect.that(type, "the order heard it (" + column + ")");
        }
    }

    /** The topic of an event type, from the contracts: each producer's events form one sealed interface. */
    static String topicOfType(String type) {
        Class<? extends SagaEvent> payload = EventTypes.classOf(type).orElse(null);
        if (payload == null) {
            return null;
        } else if (OrderEvent.class.isAssignableFrom(payload)) {
            return Topics.ORDER_EVENTS;
        } else if (InventoryEvent.class.isAssignableFrom(payload)) {
            return Topics.INVENTORY_EVENTS;
        } else if (PaymentEvent.class.isAssignableFrom(payload)) {
            return Topics.PAYMENT_EVENTS;
        } else if (ShippingEvent.class.isAssignableFrom(payload)) {
            return Topics.SHIPPING_EVENTS;
        }
        return null;
    }

    /** The topic of a timeline entry: its producer's (saga_event.producer), else its type's. */
    static String topicOfProducer(String producer, String type) {
        if (producer != null) {
            switch (producer) {
                case "order" -> {
                    return Topics.ORDER_EVENTS;
                }
                case "inventory" -> {
                    return Topics.INVENTORY_EVENTS;
                }
                case "payment" -> {
                    return Topics.PAYMENT_EVENTS;
                }
                case "shipping" -> {
                    return Topics.SHIPPING_EVENTS;
                }
                default -> {
                }
            }
        }
        return topicOfType(type);
    }

    static List<AuditResult.DuplicateEvent> duplicates(Snapshot snapshot) {
        Map<String, List<TopicEvent>> byTopicAndId = new LinkedHashMap<>();
        for (TopicEvent e : snapshot.events()) {
            if (e.eventId() != null) {
                byTopicAndId.computeIfAbsent(e.topic() + "|" + e.eventId(), k -> new ArrayList<>()).add(e);
            }
        }
        List<AuditResult.DuplicateEvent> duplicates = new ArrayList<>();
        byTopicAndId.values().forEach(copies -> {
            if (copies.size() > 1) {
                TopicEvent first = copies.get(0);
                duplicates.add(new AuditResult.DuplicateEvent(first.topic(), first.eventId(), first.orderId(),
                        first.type(), copies.size()));
            }
        });
        return duplicates;
    }

    // --- stock

    static List<Violation> stock(Snapshot snapshot) {
        Map<String, Set<UUID>> touched = touchedSkus(snapshot);
        List<Violation> found = new ArrayList<>();
        for (Stock s : snapshot.stock()) {
            Set<UUID> orders = touched.get(s.sku());
            if (orders == null) {
                continue;
            }
            String touchedBy = " (touched by " + named(orders) + ")";
            if (!s.row()) {
                found.add(ofSku(Kind.STOCK_HOLDINGS, s.sku(), "no stock row, but " + s.heldByReserved()
                        + " unit(s) held by RESERVED and " + s.heldByConsumed() + " by CONSUMED reservations"
                        + touchedBy));
                continue;
            }
            long counted = s.available() + s.reserved() + s.shipped();
            if (s.stocked() != null && s.stocked() != counted) {
                found.add(ofSku(Kind.STOCK_NOT_CONSERVED, s.sku(), "stocked " + s.stocked() + " != available "
                        + s.available() + " + reserved " + s.reserved() + " + shipped " + s.shipped() + " = " + counted
                        + touchedBy));
            }
            if (s.reserved() != s.heldByReserved()) {
                found.add(ofSku(Kind.STOCK_HOLDINGS, s.sku(), "reserved " + s.reserved()
                        + " != " + s.heldByReserved() + " held by RESERVED reservations" + touchedBy));
            }
            if (s.shipped() != s.heldByConsumed()) {
                found.add(ofSku(Kind.STOCK_HOLDINGS, s.sku(), "shipped " + s.shipped()
                        + " != " + s.heldByConsumed() + " held by CONSUMED reservations" + touchedBy));
            }
        }
        return found;
    }

    /** The SKUs the lines of the orders in scope name, each with those orders. */
    static Map<String, Set<UUID>> touchedSkus(Snapshot snapshot) {
        Map<String, Set<UUID>> touched = new TreeMap<>();
        for (Order order : snapshot.orders()) {
            for (Line line : order.lines()) {
                touched.computeIfAbsent(line.sku(), sku -> new TreeSet<>()).add(order.id());
            }
        }
        return touched;
    }

    private static String named(Collection<UUID> orders) {
        List<String> ids = orders.stream().limit(ORDERS_NAMED_PER_SKU).map(UUID::toString).toList();
        String more = orders.size() > ORDERS_NAMED_PER_SKU ? " and " + (orders.size() - ORDERS_NAMED_PER_SKU) + " more" : "";
        return (orders.size() == 1 ? "order " : "orders ") + String.join(", ", ids) + more;
    }

    // --- ledger entries of no order in scope

    /** What the scope makes of a ledger entry that names no order in scope. */
    enum Unmatched {
        /** a refund of a charge of an order in scope: that order's (refundsOfOtherCharges) */
        REFUND_OF_A_CHARGE_IN_SCOPE,
        /** names an order order_db has outside the scope: that order's business */
        OF_ANOTHER_ORDER,
        /** names no order order_db has, inside the window: a violation */
        ORPHAN,
        /** names no order order_db has, where the scope does not reach */
        ORPHAN_NOT_JUDGED
    }

    /**
     * An entry that names no order order_db has is money taken or given back, or a parcel made, for nothing; or one
     * for an order id from somewhere else: another run's or a tool's, in a sandbox that outlived them, or an event
     * forged by a test. Only an id order-service could have minted inside the window is judged: it mints version 7
     * UUIDs, whose first bits are the millisecond they were made in, so such an id made at or after --since and missing
     * from order_db is an order the system lost or made up. Under --orders the scope is those orders, not a time, and
     * none is judged.
     */
    static Unmatched classify(UnmatchedEntry entry, Snapshot snapshot, Index index) {
        if (entry.chargeId() != null && index.chargeInScope(entry.chargeId())) {
            return Unmatched.REFUND_OF_A_CHARGE_IN_SCOPE;
        } else if (entry.orderExists()) {
            return Unmatched.OF_ANOTHER_ORDER;
        } else if (snapshot.since() != null && mintedAt(entry.reference()).filter(t -> !t.isBefore(snapshot.since()))
                .isPresent()) {
            return Unmatched.ORPHAN;
        }
        return Unmatched.ORPHAN_NOT_JUDGED;
    }

    /** When order-service would have minted the reference as an order id: none if it is no version 7 UUID. */
    static Optional<Instant> mintedAt(String reference) {
        return orderId(reference).filter(id -> id.version() == 7).map(id -> Instant.ofEpochMilli(Ids.unixMillisOf(id)));
    }

    /**
     * The order id a reference spells exactly as the services write it: UUID.fromString also takes forms such as
     * "1-1-1-1-1", which no service writes and which the scope's exact match would not take either.
     */
    static Optional<UUID> orderId(String reference) {
        if (reference == null) {
            return Optional.empty();
        }
        try {
            UUID id = UUID.fromString(reference);
            return id.toString().equals(reference) ? Optional.of(id) : Optional.empty();
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    static List<Violation> orphans(Snapshot snapshot, Index index) {
        List<Violation> found = new ArrayList<>();
        for (UnmatchedEntry e : snapshot.unmatched()) {
            if (classify(e, snapshot, index) == Unmatched.ORPHAN) {
                found.add(Violation.ofLedgerEntry(Kind.ORPHAN_LEDGER_ENTRY, e.entry(), describeReference(e) + ": "
                        + e.what() + "; an order id minted at " + mintedAt(e.reference()).orElseThrow()
                        + ", inside the window"));
            }
        }
        return found;
    }

    static AuditResult.LedgerStats ledgers(Snapshot snapshot, Index index) {
        long ofOtherOrders = 0;
        long ofNoOrder = 0;
        List<String> notJudged = new ArrayList<>();
        for (UnmatchedEntry e : snapshot.unmatched()) {
            if (e.orderExists()) {
                ofOtherOrders++;
            } else {
                ofNoOrder++;
            }
            if (classify(e, snapshot, index) == Unmatched.ORPHAN_NOT_JUDGED) {
                notJudged.add(e.entry() + " (" + e.what() + "), " + describeReference(e));
            }
        }
        String because = notJudged.isEmpty() ? null : snapshot.since() != null
                ? "not an order id minted inside the window (order-service mints version 7 UUIDs, which carry their time)"
                : "--orders judges only the orders it lists (--since judges the entries of a window)";
        return new AuditResult.LedgerStats(snapshot.charges().size() + snapshot.refunds().size()
                + snapshot.carrierShipments().size(), ofOtherOrders, ofNoOrder, notJudged, because);
    }

    private static String describeReference(UnmatchedEntry e) {
        if (e.reference() == null) {
            return "no reference";
        }
        return "reference " + e.reference() + (e.orderExists() ? " (an order outside the scope)" : " (no order in order_db)");
    }

    /** The snapshot's rows by order (ledger entries by their reference), and the event ids on each topic. */
    static final class Index {

        private final Map<UUID, List<Reservation>> reservations;
        private final Map<UUID, List<Sighting>> sightings;
        private final Map<UUID, List<Payment>> payments;
        private final Map<UUID, List<Shipment>> shipments;
        private final Map<UUID, List<Surplus>> surpluses;
        private final Map<UUID, List<HandConfirmed>> handConfirmed;
        private final Map<String, List<ProviderCharge>> charges;
        private final Map<String, List<ProviderRefund>> refunds;
        private final Map<String, List<CarrierShipment>> carrierShipments;
        private final Set<String> chargesInScope;
        private final Map<String, List<UnmatchedEntry>> unmatchedRefunds;
        private final Map<UUID, List<TimelineEntry>> timeline;
        private final Map<UUID, List<TopicEvent>> events;
        private final Map<UUID, List<Snapshot.Parked>> parked;
        private final Map<UUID, Set<String>> topicsByEventId = new HashMap<>();

        Index(Snapshot s) {
            reservations = group(s.reservations(), Reservation::orderId);
            sightings = group(s.sightings(), Sighting::orderId);
            payments = group(s.payments(), Payment::orderId);
            shipments = group(s.shipments(), Shipment::orderId);
            surpluses = group(s.surpluses(), Surplus::orderId);
            handConfirmed = group(s.handConfirmed(), HandConfirmed::orderId);
            charges = group(s.charges(), ProviderCharge::reference);
            refunds = group(s.refunds(), ProviderRefund::reference);
            carrierShipments = group(s.carrierShipments(), CarrierShipment::reference);
            chargesInScope = s.charges().stream().map(ProviderCharge::chargeId).collect(Collectors.toSet());
            unmatchedRefunds = group(s.unmatched(), UnmatchedEntry::chargeId);
            timeline = group(s.timeline(), TimelineEntry::orderId);
            events = group(s.events(), TopicEvent::orderId);
            parked = group(s.parked(), p -> p.message().orderId());
            for (TopicEvent e : s.events()) {
                if (e.eventId() != null) {
                    topicsByEventId.computeIfAbsent(e.eventId(), id -> new TreeSet<>()).add(e.topic());
                }
            }
        }

        private static <T, K> Map<K, List<T>> group(List<T> rows, Function<T, K> key) {
            Map<K, List<T>> grouped = new HashMap<>();
            for (T row : rows) {
                K k = key.apply(row);
                if (k != null) {
                    grouped.computeIfAbsent(k, x -> new ArrayList<>()).add(row);
                }
            }
            return grouped;
        }

        List<Reservation> reservations(UUID orderId) {
            return reservations.getOrDefault(orderId, List.of());
        }

        List<Sighting> sightings(UUID orderId) {
            return sightings.getOrDefault(orderId, List.of());
        }

        List<Payment> payments(UUID orderId) {
            return payments.getOrDefault(orderId, List.of());
        }

        /** The operator's first confirm of that kind for the order: order-service logs one per undoing. */
        Optional<HandConfirmed> handConfirmed(UUID orderId, String action) {
            return handConfirmed.getOrDefault(orderId, List.of()).stream().filter(h -> action.equals(h.action()))
                    .findFirst();
        }

        List<Shipment> shipments(UUID orderId) {
            return shipments.getOrDefault(orderId, List.of());
        }

        List<Surplus> surpluses(UUID orderId) {
            return surpluses.getOrDefault(orderId, List.of());
        }

        List<ProviderCharge> charges(UUID orderId) {
            return charges.getOrDefault(orderId.toString(), List.of());
        }

        List<ProviderRefund> refunds(UUID orderId) {
            return refunds.getOrDefault(orderId.toString(), List.of());
        }

        List<CarrierShipment> carrierShipments(UUID orderId) {
            return carrierShipments.getOrDefault(orderId.toString(), List.of());
        }

        boolean chargeInScope(String chargeId) {
            return chargesInScope.contains(chargeId);
        }

        /** The refunds of the charge whose reference names no order in scope. */
        List<UnmatchedEntry> unmatchedRefundsOf(String chargeId) {
            return unmatchedRefunds.getOrDefault(chargeId, List.of());
        }

        List<TimelineEntry> timeline(UUID orderId) {
            return timeline.getOrDefault(orderId, List.of());
        }

        List<TopicEvent> events(UUID orderId) {
            return events.getOrDefault(orderId, List.of());
        }

        List<Snapshot.Parked> parked(UUID orderId) {
            return parked.getOrDefault(orderId, List.of());
        }

        boolean onTopic(String topic, UUID eventId) {
            return topicsByEventId.getOrDefault(eventId, Set.of()).contains(topic);
        }

        List<String> topicsOf(UUID eventId) {
            return List.copyOf(topicsByEventId.getOrDefault(eventId, Set.of()));
        }
    }
}
