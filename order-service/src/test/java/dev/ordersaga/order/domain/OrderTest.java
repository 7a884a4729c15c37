package dev.ordersaga.order.domain;

import dev.ordersaga.events.OrderCancelled;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderConfirmed;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** The order state machine as a table: every transition from every state, allowed or refused. */
class OrderTest {

    /** transition -> the states it is allowed from, and the state it leads to */
    private static final Map<String, Allowed> TABLE = Map.of(
            "noteStockReserved", new Allowed(EnumSet.of(OrderStatus.PENDING), OrderStatus.STOCK_RESERVED),
            "notePaid", new Allowed(EnumSet.of(OrderStatus.STOCK_RESERVED), OrderStatus.PAID),
            "noteShipmentCreated", new Allowed(EnumSet.of(OrderStatus.PAID), OrderStatus.SHIPPING_CREATED),
            "confirm", new Allowed(EnumSet.of(OrderStatus.SHIPPING_CREATED), OrderStatus.CONFIRMED),
            "startCompensation", new Allowed(EnumSet.of(OrderStatus.PENDING, OrderStatus.STOCK_RESERVED, OrderStatus.PAID),
                    OrderStatus.COMPENSATING),
            "cancel", new Allowed(EnumSet.of(OrderStatus.COMPENSATING), OrderStatus.CANCELLED),
            // an operator's question, not a move: the participants' answers move the order
            "askForCompensationAgain", new Allowed(EnumSet.of(OrderStatus.COMPENSATING), OrderStatus.COMPENSATING));

    private static final Map<String, Consumer<Order>> TRANSITIONS = Map.of(
            "noteStockReserved", Order::noteStockReserved,
            "notePaid", Order::notePaid,
            "noteShipmentCreated", Order::noteShipmentCreated,
            "confirm", Order::confirm,
            "startCompensation", o -> o.startCompensation("test", "tester"),
            "cancel", Order::cancel,
            "askForCompensationAgain", o -> o.askForCompensationAgain("tester"));

    private record Allowed(Set<OrderStatus> from, OrderStatus to) {
    }

    static Stream<Arguments> everyTransitionFromEveryState() {
        return TRANSITIONS.keySet().stream().sorted()
                .flatMap(t -> Arrays.stream(OrderStatus.values()).map(s -> arguments(t, s)));
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("everyTransitionFromEveryState")
    void transitionIsAllowedExactlyWhereTheMachineHasIt(String transition, OrderStatus from) {
        Order order = orderIn(from);
        Allowed allowed = TABLE.get(transition);
        if (allowed.from().contains(from)) {
            TRANSITIONS.get(transition).accept(order);
            assertThat(order.status()).isEqualTo(allowed.to());
        } else {
            assertThatThrownBy(() -> TRANSITIONS.get(transition).accept(order))
                    .isInstanceOfSatisfying(IllegalTransitionException.class, e -> {
                        assertThat(e.from()).isEqualTo(from);
                        assertThat(e.transition()).isEqualTo(transition);
                    });
            assertThat(order.status()).as("a refused transition changes nothing").isEqualTo(from);
        }
    }

    @Test
    void placingComputesTheTotalAndStartsPending() {
        Order.Placed placed = placed();
        assertThat(placed.order().status()).isEqualTo(OrderStatus.PENDING);
        assertThat(placed.order().total()).isEqualByComparingTo("28.50");
        assertThat(placed.event().total()).isEqualByComparingTo("28.50");
        assertThat(placed.event().items()).hasSize(2);
        assertThat(placed.event().paymentToken()).isEqualTo("tok_ok");
    }

    @Test
    void confirmationCarriesTheTotal() {
        OrderConfirmed confirmed = orderIn(OrderStatus.SHIPPING_CREATED).confirm();
        assertThat(confirmed.total()).isEqualByComparingTo("28.50");
        assertThat(confirmed.currency()).isEqualTo("EUR");
    }

    @Test
    void compensationKeepsTheReasonForTheCancellation() {
        Order order = orderIn(OrderStatus.PAID);
        OrderCancelling cancelling = order.startCompensation("payment declined", "saga");
        assertThat(cancelling.reason()).isEqualTo("payment declined");
        assertThat(order.cancel().reason()).isEqualTo("payment declined");
        assertThat(order.cancelReason()).isEqualTo("payment declined");
    }

    @Test
    void aReasonLongerThanTheOrderKeepsIsShortenedForTheOrderAndItsEvent() {
        Order order = orderIn(OrderStatus.PAID);
        OrderCancelling cancelling = order.startCompensation("out of stock: " + "SKU-LONG, ".repeat(100), "saga");
        assertThat(order.cancelReason()).hasSize(Order.MAX_REASON_LENGTH).startsWith("out of stock: SKU-LONG").endsWith("…");
        assertThat(cancelling.reason()).isEqualTo(order.cancelReason());

        Order waiting = orderIn(OrderStatus.PAID);
        waiting.onShipmentOnHold("carrier down: " + "503 ".repeat(200));
        assertThat(waiting.waitingReason()).hasSize(Order.MAX_REASON_LENGTH);
    }

    @Test
    void cancelAfterConfirmationIsRejected() {
        Order order = orderIn(OrderStatus.CONFIRMED);
        assertThatThrownBy(() -> order.startCompensation("too late", "customer"))
                .isInstanceOf(IllegalTransitionException.class)
                .hasMessage("order in CONFIRMED cannot startCompensation");
    }

    @Test
    void finalStatesAreConfirmedAndCancelledOnly() {
        assertThat(Arrays.stream(OrderStatus.values()).filter(OrderStatus::isFinal))
                .containsExactlyInAnyOrder(OrderStatus.CONFIRMED, OrderStatus.CANCELLED);
    }

    @Test
    void anOrderNeedsItems() {
        assertThatThrownBy(() -> Order.place(UUID.randomUUID(), "c", List.of(), "EUR", address(), "tok_ok", "corr"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void factsHeardInAnyOrderConfirmTheOrderAlongTheMachine() {
        Order order = orderIn(OrderStatus.PENDING);
        assertThat(order.onShipmentCreated()).isEmpty();
        assertThat(order.onPaymentSucceeded()).isEmpty();
        assertThat(order.status()).as("nothing moves before stock is reserved").isEqualTo(OrderStatus.PENDING);
        assertThat(order.onStockReserved()).hasValueSatisfying(e -> assertThat(e).isInstanceOf(OrderConfirmed.class));
        assertThat(order.status()).isEqualTo(OrderStatus.CONFIRMED);
    }

    @Test
    void inOrderFactsConfirmStepByStep() {
        Order order = orderIn(OrderStatus.PENDING);
        assertThat(order.onStockReserved()).isEmpty();
        assertThat(order.status()).isEqualTo(OrderStatus.STOCK_RESERVED);
        assertThat(order.onPaymentSucceeded()).isEmpty();
        assertThat(order.status()).isEqualTo(OrderStatus.PAID);
        assertThat(order.onShipmentCreated()).hasValueSatisfying(e -> assertThat(e).isInstanceOf(OrderConfirmed.class));
    }

    @Test
    void aFailedStepStartsCompensationAndTheOrderIsCancelledOnceEveryParticipantUndidItsStep() {
        Order order = orderIn(OrderStatus.STOCK_RESERVED);
        assertThat(order.onStepFailed("payment failed: card declined"))
                .hasValueSatisfying(e -> assertThat(((OrderCancelling) e).reason()).isEqualTo("payment failed: card declined"));
        assertThat(order.onCompensated(Order.Participant.INVENTORY)).isEmpty();
        assertThat(order.onCompensated(Order.Participant.SHIPPING)).isEmpty();
        assertThat(order.status()).isEqualTo(OrderStatus.COMPENSATING);
        assertThat(order.onCompensated(Order.Participant.PAYMENT))
                .hasValueSatisfying(e -> assertThat(((OrderCancelled) e).reason()).isEqualTo("payment failed: card declined"));
        assertThat(order.status()).isEqualTo(OrderStatus.CANCELLED);
    }

    @Test
    void lateForwardFactsNeverResurrectAFinishedOrder() {
        Order cancelled = orderIn(OrderStatus.CANCELLED);
        assertThat(cancelled.onPaymentSucceeded()).isEmpty();
        assertThat(cancelled.onStockReserved()).isEmpty();
        assertThat(cancelled.onShipmentCreated()).isEmpty();
        assertThat(cancelled.onStepFailed("late")).isEmpty();
        assertThat(cancelled.onCompensated(Order.Participant.PAYMENT)).isEmpty();
        assertThat(cancelled.status()).isEqualTo(OrderStatus.CANCELLED);

        Order compensating = orderIn(OrderStatus.COMPENSATING);
        assertThat(compensating.onPaymentSucceeded()).isEmpty();
        assertThat(compensating.status()).isEqualTo(OrderStatus.COMPENSATING);
    }

    @Test
    void aChargeRefundedAtOnceIsNoPayment() {
        Order order = orderIn(OrderStatus.STOCK_RESERVED);
        assertThat(order.onChargeRefundedAtOnce()).isEmpty();
        assertThat(order.status()).as("still waiting for the payment's outcome").isEqualTo(OrderStatus.STOCK_RESERVED);
        assertThat(order.onStepFailed("payment failed: card declined")).isPresent();
        assertThat(order.onChargeRefundedAtOnce()).isEmpty();
        assertThat(order.status()).isEqualTo(OrderStatus.COMPENSATING);
        assertThatThrownBy(() -> orderIn(OrderStatus.CONFIRMED).onChargeRefundedAtOnce())
                .isInstanceOf(IllegalTransitionException.class);
    }

    @Test
    void factsTheMachineHasNoPlaceForAreRefused() {
        assertThatThrownBy(() -> orderIn(OrderStatus.CONFIRMED).onStepFailed("carrier lost it"))
                .isInstanceOf(IllegalTransitionException.class);
        assertThatThrownBy(() -> orderIn(OrderStatus.PAID).onStockReserved()).isInstanceOf(IllegalTransitionException.class);
        assertThatThrownBy(() -> orderIn(OrderStatus.PAID).onCompensated(Order.Participant.PAYMENT))
                .isInstanceOf(IllegalTransitionException.class);
        assertThatThrownBy(() -> orderIn(OrderStatus.CONFIRMED).onPaymentSucceeded()).isInstanceOf(IllegalTransitionException.class);
    }

    @Test
    void aCompensatingOrdersParticipantsAreAskedAgainWithoutTheOrderMoving() {
        Order order = orderIn(OrderStatus.PAID);
        order.startCompensation("payment disputed", "operator:alice");
        order.onCompensated(Order.Participant.INVENTORY);
        assertThat(order.compensationStatus()).isEqualTo("waiting for payment, shipping");

        OrderCancelling again = order.askForCompensationAgain("operator:bob");

        assertThat(again).isEqualTo(new OrderCancelling("payment disputed", "operator:bob"));
        assertThat(order.status()).isEqualTo(OrderStatus.COMPENSATING);
        assertThat(order.onCompensated(Order.Participant.INVENTORY)).as("an answer again changes nothing").isEmpty();
        assertThat(order.onCompensated(Order.Participant.PAYMENT)).isEmpty();
        assertThat(order.onCompensated(Order.Participant.SHIPPING)).containsInstanceOf(OrderCancelled.class);
        assertThat(order.onCompensated(Order.Participant.SHIPPING)).as("late, once cancelled").isEmpty();
    }

    @Test
    void anOrderOnHoldWaitsForAPersonWithTheReasonUntilTheRetry() {
        Order order = orderIn(OrderStatus.PAID);
        assertThatThrownBy(() -> order.requestShipmentRetry("alice")).as("nothing to retry yet")
                .isInstanceOf(IllegalTransitionException.class);
        order.onShipmentOnHold("carrier unavailable after 5 attempts");
        assertThat(order.waitingReason()).isEqualTo("carrier unavailable after 5 attempts");
        assertThat(order.waitingSince()).isNotNull();
        assertThat(order.status()).as("no refund, no cancel by itself").isEqualTo(OrderStatus.PAID);
        assertThat(order.requestShipmentRetry("operator:alice").requestedBy()).isEqualTo("operator:alice");
        assertThat(order.waitingReason()).isNull();
        assertThat(order.onShipmentCreated()).isPresent();
        assertThat(order.status()).isEqualTo(OrderStatus.CONFIRMED);
    }

    @Test
    void anOrderWhoseChargeIsHeldWaitsForAPersonUntilThePaymentsNews() {
        Order order = orderIn(OrderStatus.STOCK_RESERVED);
        order.onPaymentOnHold("payment provider has no charge under key pay-1");
        assertThat(order.waitingFor()).isEqualTo(Order.Participant.PAYMENT);
        assertThat(order.waitingReason()).isEqualTo("payment provider has no charge under key pay-1");
        assertThat(order.waitingSince()).isNotNull();
        assertThat(order.status()).as("nothing undone by itself").isEqualTo(OrderStatus.STOCK_RESERVED);
        assertThatThrownBy(() -> order.requestShipmentRetry("operator:alice")).as("shipping has nothing to retry")
                .isInstanceOf(IllegalTransitionException.class);

        order.onPaymentSucceeded();

        assertThat(order.status()).isEqualTo(OrderStatus.PAID);
        assertThat(order.waitingFor()).isNull();
        assertThat(order.waitingReason()).isNull();
        assertThat(order.waitingSince()).isNull();
    }

    @Test
    void aShipmentsHoldHeardFirstIsNotTakenOverOrEndedByThePaymentsNews() {
        // the facts come on two topics: a shipment's hold may be heard before the payment's news that came before it
        Order order = orderIn(OrderStatus.PENDING);
        order.onShipmentOnHold("carrier unavailable after 5 attempts");
        order.onPaymentOnHold("payment provider has no charge under key pay-1");
        assertThat(order.waitingFor()).isEqualTo(Order.Participant.SHIPPING);
        order.onPaymentSucceeded();
        order.onStockReserved();

        assertThat(order.status()).isEqualTo(OrderStatus.PAID);
        assertThat(order.waitingFor()).isEqualTo(Order.Participant.SHIPPING);
        assertThat(order.waitingReason()).isEqualTo("carrier unavailable after 5 attempts");
        assertThat(order.requestShipmentRetry("operator:alice")).isNotNull();
    }

    @Test
    void aPaymentsHoldIsHeardOnlyWhileThePaymentIsOpen() {
        Order paidEarly = orderIn(OrderStatus.PENDING);
        paidEarly.onPaymentSucceeded();
        paidEarly.onPaymentOnHold("stale");
        assertThat(paidEarly.waitingReason()).isNull();

        Order shippedEarly = orderIn(OrderStatus.STOCK_RESERVED);
        shippedEarly.onShipmentCreated();
        shippedEarly.onPaymentOnHold("stale: shipping acts only on a succeeded charge");
        assertThat(shippedEarly.waitingFor()).isNull();
        assertThat(shippedEarly.waitingReason()).isNull();

        Order compensating = orderIn(OrderStatus.COMPENSATING);
        compensating.onPaymentOnHold("the cancellation answers the payment");
        assertThat(compensating.waitingReason()).isNull();

        for (OrderStatus past : List.of(OrderStatus.PAID, OrderStatus.SHIPPING_CREATED, OrderStatus.CONFIRMED)) {
            assertThatThrownBy(() -> orderIn(past).onPaymentOnHold("too late")).as(past.name())
                    .isInstanceOf(IllegalTransitionException.class);
        }
    }

    @Test
    void anOrderWhoseChargeIsHeldIsSentBackToPaymentOnlyWhileItWaitsForIt() {
        Order order = orderIn(OrderStatus.STOCK_RESERVED);
        assertThatThrownBy(() -> order.requestPaymentRetry("operator:alice")).as("not waiting")
                .isInstanceOf(IllegalTransitionException.class);
        order.onPaymentOnHold("payment provider has no charge under key pay-1");

        assertThat(order.requestPaymentRetry("operator:alice").requestedBy()).isEqualTo("operator:alice");

        assertThat(order.waitingFor()).isNull();
        assertThat(order.waitingReason()).isNull();
        assertThat(order.status()).isEqualTo(OrderStatus.STOCK_RESERVED);
        assertThatThrownBy(() -> order.requestPaymentRetry("operator:alice")).as("sent back once")
                .isInstanceOf(IllegalTransitionException.class);

        Order carrierDown = orderIn(OrderStatus.PAID);
        carrierDown.onShipmentOnHold("carrier unavailable after 5 attempts");
        assertThatThrownBy(() -> carrierDown.requestPaymentRetry("operator:alice")).as("it waits for the carrier")
                .isInstanceOf(IllegalTransitionException.class);
    }

    @Test
    void cancellingAnOrderWhoseChargeIsHeldStopsTheWait() {
        Order order = orderIn(OrderStatus.STOCK_RESERVED);
        order.onPaymentOnHold("payment provider has no charge under key pay-1");
        order.startCompensation("customer called", "operator:alice");
        assertThat(order.waitingFor()).isNull();
        assertThat(order.waitingReason()).isNull();
        assertThat(order.status()).isEqualTo(OrderStatus.COMPENSATING);
    }

    @Test
    void cancellingAnOrderOnHoldStopsTheWait() {
        Order order = orderIn(OrderStatus.PAID);
        order.onShipmentOnHold("carrier down");
        order.startCompensation("operator gave up on the carrier", "operator:alice");
        assertThat(order.waitingReason()).isNull();
        assertThat(order.status()).isEqualTo(OrderStatus.COMPENSATING);
    }

    private static Order.Placed placed() {
        return Order.place(UUID.randomUUID(), "cust-1",
                List.of(new OrderItem("SKU-MUG", 2, new BigDecimal("10.50")), new OrderItem("SKU-TEA", 1, new BigDecimal("7.50"))),
                "EUR", address(), "tok_ok", "corr-1");
    }

    private static Address address() {
        return new Address("Ada Lovelace", "12 St James Square", null, "London", "SW1Y 4JH", "GB");
    }

    /** Walks a new order along the machine's own transitions to the given state. */
    static Order orderIn(OrderStatus target) {
        Order order = placed().order();
        List<Consumer<Order>> path = switch (target) {
            case PENDING -> List.of();
            case STOCK_RESERVED -> List.of(Order::noteStockReserved);
            case PAID -> List.of(Order::noteStockReserved, Order::notePaid);
            case SHIPPING_CREATED -> List.of(Order::noteStockReserved, Order::notePaid, Order::noteShipmentCreated);
            case CONFIRMED -> List.of(Order::noteStockReserved, Order::notePaid, Order::noteShipmentCreated, Order::confirm);
            case COMPENSATING -> List.of(o -> o.startCompensation("test", "tester"));
            case CANCELLED -> List.of(o -> o.startCompensation("test", "tester"), Order::cancel);
        };
        path.forEach(step -> step.accept(order));
        assertThat(order.status()).isEqualTo(target);
        return order;
    }
}
