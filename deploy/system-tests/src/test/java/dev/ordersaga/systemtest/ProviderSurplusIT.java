package dev.ordersaga.systemtest;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Providers that forgot one of our idempotency keys and took a second effect under it, a charge and a parcel, on the
 * packaged services: each service finds the surplus in its provider's report and undoes it on its own, the order stays
 * CONFIRMED with its own charge and parcel, and the audit passes the order, naming what was undone. The services'
 * tests show the undoing step by step; this shows that the audit, which reads the providers' books, tells a surplus
 * the services undid from an effect taken twice.
 */
class ProviderSurplusIT {

    private static final Duration SAGA = Duration.ofSeconds(60);
    /** Reports read every second; a refund or cancel made at once when found, else by the 10 s sweep. */
    private static final Duration UNDONE = Duration.ofSeconds(60);
    private static final Map<String, String> REPORTS_EVERY_SECOND = Map.of(
            "payment.reconciliation.interval", "1s", "payment.reconciliation.min-gap", "1s",
            "shipping.reconciliation.interval", "1s", "shipping.reconciliation.min-gap", "1s");

    @Test
    void secondEffectsUnderOurKeysAreUndoneAndTheAuditPassesTheOrder() throws Exception {
        try (SagaSystem saga = SagaSystem.start("provider-surplus", REPORTS_EVERY_SECOND)) {
            String sku = SagaSystem.newSku();
            saga.stock(sku, 5);
            UUID order = saga.place("surplus-" + sku, "tok_ok", "1 Main St", new SagaSystem.Line(sku, 2, "10.50"));
            saga.awaitStatus(order, "CONFIRMED", SAGA);
            JsonNode firstCharge = saga.charges(order).get(0);
            JsonNode firstParcel = saga.carrierShipments(order).get(0);

            String secondCharge = saga.chargeAgainUnderForgottenKey(firstCharge);
            String secondParcel = saga.createAgainUnderForgottenKey(firstParcel);
            assertThat(saga.netCharge(order)).as("charged twice").isEqualByComparingTo("42.00");

            await("the second charge refunded and the second parcel cancelled").atMost(UNDONE)
                    .pollInterval(Duration.ofMillis(250))
                    .until(() -> saga.metric(SagaSystem.PAYMENT, "saga_payment_surplus_refunds_total", "") == 1
                            && saga.metric(SagaSystem.SHIPPING, "saga_shipping_surplus_cancels_total", "") == 1);

            assertThat(saga.refunds(order)).singleElement().satisfies(refund -> {
                assertThat(refund.path("chargeId").asText()).isEqualTo(secondCharge);
                assertThat(refund.path("idempotencyKey").asText()).isEqualTo("refund-surplus-" + secondCharge);
                assertThat(refund.path("amount").decimalValue()).isEqualByComparingTo(new BigDecimal("21.00"));
            });
            assertThat(saga.netCharge(order)).isEqualByComparingTo("21.00");
            assertThat(saga.carrierShipments(order)).extracting(s -> s.path("shipmentId").asText() + " "
                    + s.path("status").asText()).containsExactlyInAnyOrder(
                    firstParcel.path("shipmentId").asText() + " created", secondParcel + " cancelled");
            assertThat(saga.status(order)).isEqualTo("CONFIRMED");
            assertThat(saga.metric(SagaSystem.PAYMENT, "saga_payment_settlements_unmatched_total", "")).isEqualTo(1);
            assertThat(saga.metric(SagaSystem.SHIPPING, "saga_shipping_shipments_unmatched_total", "")).isEqualTo(1);

            SagaSystem.AuditRun audit = saga.audit(List.of(order));
            assertThat(audit.exitCode()).as(audit.report()).isZero();
            assertThat(audit.report())
                    .contains("second effects a provider made under our keys, undone by the services (info): 2")
                    .contains("charge " + secondCharge + " of order " + order)
                    .contains("shipment " + secondParcel + " of order " + order)
                    .contains("OK: no violation");
        }
    }
    /**
     * The providers refuse to undo the second effects (a disputed charge's refund, the cancel of a parcel handed to the
     * courier): each service retries with alerts and shows the refusal to the operator, who settles both outside the
     * providers' APIs and confirms. The order stays CONFIRMED, the books still show both effects, and the audit passes
     * the order on the operator's word, listing it.
     */
    @Test
    void secondEffectsTheProvidersRefuseToUndoAreEndedOnAnOperatorsWord() throws Exception {
        try (SagaSystem saga = SagaSystem.start("provider-surplus-refused", REPORTS_EVERY_SECOND)) {
            String sku = SagaSystem.newSku();
            saga.stock(sku, 5);
            UUID order = saga.place("surplus-refused-" + sku, "tok_refund_refused", "UNCANCELLABLE",
                    new SagaSystem.Line(sku, 2, "10.50"));
            saga.awaitStatus(order, "CONFIRMED", SAGA);
            String secondCharge = saga.chargeAgainUnderForgottenKey(saga.charges(order).get(0), "tok_refund_refused");
            String secondParcel = saga.createAgainUnderForgottenKey(saga.carrierShipments(order).get(0),
                    "UNCANCELLABLE");
            String charges = "/operator/payments/{orderId}/surplus-charges";
            String parcels = "/operator/shipments/{orderId}/surplus-parcels";

            await("both undos refused, as the operator sees them").atMost(UNDONE).pollInterval(Duration.ofMillis(250))
                    .until(() -> saga.operatorRead(SagaSystem.PAYMENT, charges, order).path(0).path("undoRefused")
                            .asBoolean() && saga.operatorRead(SagaSystem.SHIPPING, parcels, order).path(0)
                            .path("undoRefused").asBoolean());
            assertThat(saga.operatorRead(SagaSystem.PAYMENT, charges, order).path(0).path("providerRef").asText())
                    .isEqualTo(secondCharge);
            assertThat(saga.operatorRead(SagaSystem.SHIPPING, parcels, order).path(0).path("providerRef").asText())
                    .isEqualTo(secondParcel);

            JsonNode refunded = saga.operatorConfirm(SagaSystem.PAYMENT, charges + "/{chargeId}/confirm-refunded",
                    Map.of("reason", "bank transfer TX-9"), order, secondCharge);
            JsonNode cancelled = saga.operatorConfirm(SagaSystem.SHIPPING, parcels + "/{id}/confirm-cancelled",
                    Map.of("reason", "carrier ticket 77: returned to sender"), order, secondParcel);
            assertThat(refunded.path("undoneBy").asText()).isEqualTo("operator");
            assertThat(cancelled.path("undoneBy").asText()).isEqualTo("operator");

            assertThat(saga.refunds(order)).as("the provider refunded nothing").isEmpty();
            assertThat(saga.netCharge(order)).isEqualByComparingTo("42.00");
            assertThat(saga.carrierShipments(order)).extracting(s -> s.path("status").asText())
                    .containsExactly("created", "created");
            assertThat(saga.status(order)).isEqualTo("CONFIRMED");

            SagaSystem.AuditRun audit = saga.audit(List.of(order));
            assertThat(audit.exitCode()).as(audit.report()).isZero();
            assertThat(audit.report())
                    .contains("order " + order + " confirm-surplus-refunded by operator: charge " + secondCharge
                            + ": bank transfer TX-9")
                    .contains("order " + order + " confirm-surplus-cancelled by operator: shipment " + secondParcel
                            + ": carrier ticket 77: returned to sender")
                    .doesNotContain("undone by the services")
                    .contains("OK: no violation");
        }
    }
}
