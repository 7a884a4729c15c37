package dev.ordersaga.systemtest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ordersaga.systemtest.SagaSystem.Line;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The saga's rules, each as a scenario on the real stack: the four services and the two sandboxes as separate
 * processes, driven over HTTP as customers and operators would, checked in the services' answers and the
 * providers' ledgers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OrderSagaIT {

    static final Duration SETTLED = Duration.ofSeconds(60);
    static final String PRICE = "10.50";

    SagaSystem saga;
    Instant startedAt;

    /** Configuration every service of this run gets on top of its own. */
    Map<String, String> faults() {
        return Map.of();
    }

    String runName() {
        return "saga";
    }

    @BeforeAll
    void startSystem() throws Exception {
        startedAt = Instant.now();
        saga = SagaSystem.start(runName(), faults());
    }

    /**
     * After every scenario, the audit of the saga's invariants over all the orders of this run: settled, charged and
     * shipped as their state says, stock conserved, every event on its topic, every effect once. It counts once every
     * consumer has applied all that was published (events of the last steps, a duplicate's second copy, may still be
     * on their way when the orders have settled).
     */
    @AfterAll
    void auditAndStopSystem() throws Exception {
        try {
            SagaSystem.AuditRun audit = saga.auditOnceQuiet(startedAt, Duration.ofSeconds(90), runName());
            System.out.println(audit.report());
            // the audit judged this run's orders, not an empty or partial scope
            assertThat(audit.report()).contains("orders in scope: " + saga.placed().size() + " (");
        } finally {
            if (saga != null) {
                saga.close();
            }
        }
    }

    @Test
    void rule01HappyPathConfirmsWithOneChargeOneShipmentAndTheFiveSteps() throws Exception {
        String sku = SagaSystem.newSku();
        saga.stock(sku, 5);
        String correlationId = "happy-" + UUID.randomUUID();
        UUID order = saga.place(correlationId, "tok_ok", "12 St James Square", new Line(sku, 2, PRICE));

        assertThat(saga.awaitSettled(order, SETTLED).path("status").asText()).isEqualTo("CONFIRMED");
        awaitStock(sku, 3, 0, 2);
        assertThat(saga.chargeCalls(order)).as("charges, and the calls with each one's key").containsExactly(1);
        assertThat(saga.netCharge(order)).isEqualByComparingTo("21.00");
        assertThat(saga.shipments(order)).containsExactly("created");
        assertThat(saga.timelineTypes(order))
                .containsSubsequence("OrderCreated", "StockReserved", "PaymentSucceeded", "ShipmentCreated", "OrderConfirmed");
        for (String service : List.of("order-service", "inventory-service", "payment-service", "shipping-service")) {
            assertThat(saga.logLines(service, correlationId)).as("log lines of " + service + " with the correlation id")
                    .isPositive();
        }
    }

    @Test
    void rule02OutOfStockCancelsWithoutChargeAndReservesNothing() {
        String plenty = SagaSystem.newSku();
        String none = SagaSystem.newSku();
        String bystander = SagaSystem.newSku();
        saga.stock(plenty, 5);
        saga.stock(none, 0);
        saga.stock(bystander, 7);
        UUID order = saga.place("oos-" + UUID.randomUUID(), "tok_ok", "12 St James Square",
                new Line(plenty, 1, PRICE), new Line(none, 1, PRICE));

        JsonNode settled = saga.awaitSettled(order, SETTLED);
        assertThat(settled.path("status").asText()).isEqualTo("CANCELLED");
        assertThat(settled.path("cancelReason").asText()).contains("out of stock").contains(none);
        awaitStock(plenty, 5, 0, 0);
        awaitStock(bystander, 7, 0, 0);
        assertThat(saga.charges(order)).isEmpty();
        assertThat(saga.shipments(order)).isEmpty();
    }

    @Test
    void rule03PaymentDeclinedReleasesStockAndCancelsWithTheReason() {
        String sku = stocked(5);
        UUID order = saga.place("declined-" + UUID.randomUUID(), "tok_declined", "12 St James Square", new Line(sku, 2, PRICE));

        JsonNode settled = saga.awaitSettled(order, SETTLED);
        assertThat(settled.path("status").asText()).isEqualTo("CANCELLED");
        assertThat(settled.path("cancelReason").asText()).contains("declined");
        awaitStock(sku, 5, 0, 0);
        assertThat(saga.netCharge(order)).isEqualByComparingTo("0");
        assertThat(saga.shipments(order)).isEmpty();
    }

    @Test
    void rule04PaymentTimeoutWithMoneyTakenConfirmsWithExactlyOneCharge() {
        String sku = stocked(5);
        UUID order = saga.place("timeout-ok-" + UUID.randomUUID(), "tok_timeout_succeeds", "12 St James Square",
                new Line(sku, 1, PRICE));

        assertThat(saga.awaitSettled(order, SETTLED).path("status").asText()).isEqualTo("CONFIRMED");
        // the provider asked after the timeout, not called again: one charge, one call with its key
        assertThat(saga.chargeCalls(order)).as("charges, and the calls with each one's key").containsExactly(1);
        assertThat(saga.netCharge(order)).isEqualByComparingTo(PRICE);
        assertThat(saga.timelineTypes(order)).doesNotContain("PaymentFailed", "OrderCancelling");
    }

    @Test
    void rule05PaymentTimeoutDeclinedCancelsAndReleasesStock() {
        String sku = stocked(5);
        UUID order = saga.place("timeout-declined-" + UUID.randomUUID(), "tok_timeout_declined", "12 St James Square",
                new Line(sku, 1, PRICE));

        assertThat(saga.awaitSettled(order, SETTLED).path("status").asText()).isEqualTo("CANCELLED");
        awaitStock(sku, 5, 0, 0);
        assertThat(saga.netCharge(order)).isEqualByComparingTo("0");
    }

    @Test
    void rule06CarrierDownBrieflyIsRetriedFromAPersistedScheduleThatSurvivesARestart() throws Exception {
        String sku = stocked(5);
        saga.carrierOutage(SagaSystem.SHIPPING_MAX_ATTEMPTS - 2);
        UUID order = saga.place("carrier-blip-" + UUID.randomUUID(), "tok_ok", "12 St James Square", new Line(sku, 1, PRICE));

        // shipping's row appears once it heard of the order and its payment: until then GET /shipments/{id} is 404
        int attemptsBeforeCrash = await().atMost(SETTLED).ignoreExceptions()
                .until(() -> saga.shipment(order).path("attempts").asInt(), a -> a >= 1);
        saga.crashAndRestart("shipping-service");
        assertThat(saga.shipment(order).path("attempts").asInt()).as("the schedule survived the crash")
                .isGreaterThanOrEqualTo(attemptsBeforeCrash);

        assertThat(saga.awaitSettled(order, SETTLED).path("status").asText()).isEqualTo("CONFIRMED");
        assertThat(saga.shipment(order).path("attempts").asInt()).isGreaterThanOrEqualTo(SagaSystem.SHIPPING_MAX_ATTEMPTS - 2);
        assertThat(saga.shipments(order)).containsExactly("created");
        assertThat(saga.refunds(order)).isEmpty();
    }

    @Test
    void rule07CarrierDownPastTheLimitWaitsForAnOperatorWhoRetriesOrCancels() throws Exception {
        String sku = stocked(5);
        saga.carrierOutage(1000);
        UUID retried = saga.place("carrier-down-a-" + UUID.randomUUID(), "tok_ok", "12 St James Square", new Line(sku, 1, PRICE));
        UUID cancelled = saga.place("carrier-down-b-" + UUID.randomUUID(), "tok_ok", "12 St James Square", new Line(sku, 1, PRICE));

        for (UUID order : List.of(retried, cancelled)) {
            JsonNode waiting = saga.awaitSettled(order, SETTLED);
            assertThat(waiting.path("status").asText()).isEqualTo("PAID");
            assertThat(waiting.path("waitingReason").asText()).contains("carrier");
            assertThat(saga.refunds(order)).as("no refund by itself").isEmpty();
            assertThat(saga.waitingOrders().findValuesAsText("orderId")).contains(order.toString());
        }
        // waiting is a settled state: the audit finds each order waiting for the shipping step its shipment holds
        SagaSystem.AuditRun whileWaiting = saga.audit(List.of(retried, cancelled));
        assertThat(whileWaiting.exitCode()).as(whileWaiting.report()).isZero();
        assertThat(whileWaiting.report()).contains("orders in scope: 2 (PAID 2); waiting for an operator: 2");

        saga.carrierOutage(0);
        saga.operatorRetryShipping(retried);
        assertThat(saga.awaitStatus(retried, "CONFIRMED", SETTLED).path("status").asText()).isEqualTo("CONFIRMED");
        assertThat(saga.shipments(retried)).containsExactly("created");

        saga.operatorCancel(cancelled);
        assertThat(saga.awaitStatus(cancelled, "CANCELLED", SETTLED).path("cancelReason").asText())
                .isEqualTo("carrier will not recover");
        assertThat(saga.netCharge(cancelled)).isEqualByComparingTo("0");
        assertThat(saga.shipments(cancelled)).doesNotContain("created");
        awaitStock(sku, 4, 0, 1);
    }

    @Test
    void rule08UndeliverableAddressIsRefundedReleasedAndCancelled() {
        String sku = stocked(5);
        UUID order = saga.place("undeliverable-" + UUID.randomUUID(), "tok_ok", "UNDELIVERABLE", new Line(sku, 2, PRICE));

        JsonNode settled = saga.awaitSettled(order, SETTLED);
        assertThat(settled.path("status").asText()).isEqualTo("CANCELLED");
        assertThat(settled.path("cancelReason").asText()).contains("undeliverable");
        assertThat(saga.charges(order)).hasSize(1);
        assertThat(saga.netCharge(order)).isEqualByComparingTo("0");
        awaitStock(sku, 5, 0, 0);
        assertThat(saga.shipments(order)).doesNotContain("created");
    }

    @Test
    void rule09AFailingRefundIsRetriedUntilItSucceedsAndAlertsEachTime() throws Exception {
        String sku = stocked(5);
        double failuresBefore = saga.metric(SagaSystem.PAYMENT, "saga_compensation_failures_total", "refund");
        UUID order = saga.place("refund-fails-" + UUID.randomUUID(), "tok_refund_fails_twice", "UNDELIVERABLE",
                new Line(sku, 1, PRICE));

        assertThat(saga.awaitSettled(order, SETTLED).path("status").asText()).isEqualTo("CANCELLED");
        assertThat(saga.netCharge(order)).isEqualByComparingTo("0");
        assertThat(saga.refunds(order)).hasSize(1);
        assertThat(saga.metric(SagaSystem.PAYMENT, "saga_compensation_failures_total", "refund") - failuresBefore)
                .isGreaterThanOrEqualTo(2);
        assertThat(saga.logLines("payment-service", "ERROR", "ALERT", order.toString())).isGreaterThanOrEqualTo(2);
    }

    @Test
    void rule09ARefundTheProviderKeepsRefusingEndsOnAnOperatorsWordWhichTheAuditLists() throws Exception {
        String sku = stocked(5);
        UUID order = saga.place("refund-refused-" + UUID.randomUUID(), "tok_refund_refused", "UNDELIVERABLE",
                new Line(sku, 1, PRICE));

        await("the provider refused the refund").atMost(SETTLED).pollInterval(Duration.ofMillis(200))
                .until(() -> saga.operatorPayment(order), p -> p.path("refundRefused").asBoolean());
        assertThat(saga.status(order)).isEqualTo("COMPENSATING");
        String word = "bank transfer TR-" + order.toString().substring(0, 8) + " after the provider refused the refund";
        saga.operatorConfirmRefunded(order, word);

        assertThat(saga.awaitStatus(order, "CANCELLED", SETTLED).path("status").asText()).isEqualTo("CANCELLED");
        assertThat(saga.operatorPayment(order).path("refundConfirmedBy").asText()).isEqualTo("operator");
        assertThat(saga.refunds(order)).as("the money went back outside the provider").isEmpty();
        assertThat(saga.netCharge(order)).isEqualByComparingTo(PRICE);
        awaitStock(sku, 5, 0, 0);
        // the ledger still shows the charge: the audit takes the operator's word for it, and names it for a person
        SagaSystem.AuditRun audit = saga.audit(List.of(order));
        assertThat(audit.exitCode()).as(audit.report()).isZero();
        assertThat(audit.report()).contains("on an operator's word").contains("order " + order
                + " confirm-payment-refunded by operator: " + word);
    }

    @Test
    void rule10CustomerCancelWhilePaymentIsInFlightEndsCancelledWithNetChargeZero() {
        String sku = stocked(5);
        for (String token : List.of("tok_timeout_succeeds", "tok_timeout_declined")) {
            // a slow provider keeps the charge in flight, so that the cancel surely comes while it is
            saga.paymentProviderSlow(5_000);
            try {
                UUID order = saga.place("cancel-in-flight-" + UUID.randomUUID(), token, "12 St James Square",
                        new Line(sku, 1, PRICE));
                saga.awaitStatus(order, "STOCK_RESERVED", SETTLED);
                // in flight: the provider has booked the charge and holds its answer back; a cancel before it would
                // test the cancellation that comes before the charge instead
                await("the charge in flight").atMost(SETTLED).until(() -> saga.charges(order).size() == 1);
                saga.cancel(order, 202);
                saga.paymentProviderSlow(0);

                assertThat(saga.awaitSettled(order, SETTLED).path("status").asText()).as(token).isEqualTo("CANCELLED");
                assertThat(saga.netCharge(order)).as(token).isEqualByComparingTo("0");
                assertThat(saga.charges(order)).as(token).hasSize(1);
            } finally {
                saga.paymentProviderSlow(0);
            }
        }
        awaitStock(sku, 5, 0, 0);
    }

    @Test
    void rule11PaymentSucceededAfterTheOrderWasCancelledIsRefundedAndTheOrderStaysCancelled() {
        String sku = stocked(5);
        UUID order = saga.place("late-success-" + UUID.randomUUID(), "tok_declined", "12 St James Square", new Line(sku, 1, PRICE));
        assertThat(saga.awaitSettled(order, SETTLED).path("status").asText()).isEqualTo("CANCELLED");
        String chargeId = saga.charges(order).get(0).path("chargeId").asText();

        saga.settleLate(chargeId);

        await().atMost(SETTLED).until(() -> saga.timelineTypes(order), t -> t.contains("PaymentSucceeded") && t.contains("PaymentRefunded")
                && t.lastIndexOf("PaymentRefunded") > t.indexOf("PaymentSucceeded"));
        await().atMost(SETTLED).until(() -> saga.netCharge(order).signum() == 0 && !saga.refunds(order).isEmpty());
        assertThat(saga.status(order)).isEqualTo("CANCELLED");
    }

    @Test
    void rule13FiftyOrdersRacingForTenUnitsConfirmExactlyTen() throws Exception {
        String sku = stocked(10);
        ExecutorService customers = Executors.newFixedThreadPool(10);
        List<Future<UUID>> placing = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            placing.add(customers.submit(() -> saga.place("race-" + UUID.randomUUID(), "tok_ok", "12 St James Square",
                    new Line(sku, 1, PRICE))));
        }
        List<UUID> orders = new ArrayList<>();
        for (Future<UUID> f : placing) {
            orders.add(f.get());
        }
        customers.shutdown();

        int confirmed = 0;
        for (UUID order : orders) {
            String status = saga.awaitSettled(order, Duration.ofSeconds(120)).path("status").asText();
            assertThat(status).isIn("CONFIRMED", "CANCELLED");
            if (status.equals("CONFIRMED")) {
                confirmed++;
            }
        }
        assertThat(confirmed).isEqualTo(10);
        awaitStock(sku, 0, 0, 10);
    }

    String stocked(int quantity) {
        String sku = SagaSystem.newSku();
        saga.stock(sku, quantity);
        return sku;
    }

    void awaitStock(String sku, int available, int reserved, int shipped) {
        await("stock of " + sku).atMost(SETTLED).untilAsserted(() -> {
            JsonNode stock = saga.stock(sku);
            assertThat(List.of(stock.path("available").asInt(), stock.path("reserved").asInt(), stock.path("shipped").asInt()))
                    .as("available, reserved, shipped of " + sku).containsExactly(available, reserved, shipped);
        });
    }

    static BigDecimal money(String amount) {
        return new BigDecimal(amount);
    }
}
