package dev.ordersaga.audit.load;

import dev.ordersaga.audit.Snapshot.CarrierShipment;
import dev.ordersaga.audit.Snapshot.ProviderCharge;
import dev.ordersaga.audit.Snapshot.ProviderRefund;
import dev.ordersaga.audit.Snapshot.UnmatchedEntry;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.net.URI;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LedgersTest {

    static final String ORDER = "0b7c7c0e-8a55-4d6e-9a62-2f0d1b0e4a11";
    static final String OTHER = "5d0a3c5e-1111-4d6e-9a62-2f0d1b0e4a11";

    /** The shape of deploy/sandboxes' PaymentLedger.ledgerView (Charge.ledgerView, Refund.ledgerView). */
    static final String PAYMENT_LEDGER = """
            {"charges": [
               {"chargeId": "ch_1", "idempotencyKey": "pay-1", "reference": "%1$s", "amount": 21.00, "currency": "EUR",
                "status": "succeeded", "token": "tok_ok"},
               {"chargeId": "ch_2", "idempotencyKey": "pay-2", "reference": "%2$s", "amount": 5.25, "currency": "EUR",
                "status": "declined", "token": "tok_declined"}],
             "refunds": [
               {"refundId": "re_1", "idempotencyKey": "refund-pay-1", "chargeId": "ch_1", "reference": "%1$s",
                "amount": 21.00, "currency": "EUR"}]}
            """.formatted(ORDER, OTHER);

    /** The shape of CarrierLedger.ledgerView (Shipment.view). */
    static final String CARRIER_LEDGER = """
            {"shipments": [
               {"shipmentId": "shp_1", "idempotencyKey": "s-1", "reference": "%1$s", "status": "created"},
               {"shipmentId": "shp_2", "idempotencyKey": "s-2", "reference": "%2$s", "status": "cancelled"}]}
            """.formatted(ORDER, OTHER);

    @Test
    void thePaymentLedgerKeepsTheEntriesOfOrdersInScopeWithTheirAmountsExact() {
        Ledgers.PaymentLedger ledger = Ledgers.parsePaymentLedger(PAYMENT_LEDGER, Set.of(ORDER));
        assertThat(ledger.charges()).containsExactly(
                new ProviderCharge("ch_1", "pay-1", ORDER, new java.math.BigDecimal("21.00"), "EUR", "succeeded"));
        assertThat(ledger.charges().get(0).amount().toPlainString()).isEqualTo("21.00");
        assertThat(ledger.refunds()).containsExactly(
                new ProviderRefund("re_1", "refund-pay-1", "ch_1", ORDER, new java.math.BigDecimal("21.00"), "EUR"));
    }

    @Test
    void theCarrierLedgerKeepsTheShipmentsOfOrdersInScope() {
        List<CarrierShipment> shipments = Ledgers.parseCarrierLedger(CARRIER_LEDGER, Set.of(ORDER, OTHER)).shipments();
        assertThat(shipments).extracting(CarrierShipment::shipmentId).containsExactly("shp_1", "shp_2");
        assertThat(shipments).extracting(CarrierShipment::live).containsExactly(true, false);
    }

    @Test
    void theOtherPaymentEntriesAreKeptWithWhetherTheyCameAfterAnEntryOfAnOrderInScope() {
        String ledger = """
                {"charges": [
                   {"chargeId": "ch_0", "idempotencyKey": "k0", "reference": "manual-test", "amount": 5.00,
                    "currency": "EUR", "status": "succeeded"},
                   {"chargeId": "ch_1", "idempotencyKey": "k1", "reference": "%1$s", "amount": 21.00, "currency": "EUR",
                    "status": "succeeded"},
                   {"chargeId": "ch_2", "idempotencyKey": "k2", "reference": "%2$s", "amount": 5.25, "currency": "EUR",
                    "status": "declined"}],
                 "refunds": [
                   {"refundId": "re_0", "idempotencyKey": "r0", "chargeId": "ch_0", "reference": "manual-test",
                    "amount": 5.00, "currency": "EUR"},
                   {"refundId": "re_2", "idempotencyKey": "r2", "chargeId": "ch_2", "reference": "%2$s",
                    "amount": 1.00, "currency": "EUR"}]}
                """.formatted(ORDER, OTHER);
        Ledgers.PaymentLedger parsed = Ledgers.parsePaymentLedger(ledger, Set.of(ORDER));
        assertThat(parsed.charges()).extracting(ProviderCharge::chargeId).containsExactly("ch_1");
        assertThat(parsed.unmatched()).containsExactly(
                new UnmatchedEntry("payment provider charge ch_0", "manual-test", null, "5.00 EUR, succeeded", false),
                new UnmatchedEntry("payment provider charge ch_2", OTHER, null, "5.25 EUR, declined", false),
                new UnmatchedEntry("payment provider refund re_0", "manual-test", "ch_0", "5.00 EUR of charge ch_0", false),
                new UnmatchedEntry("payment provider refund re_2", OTHER, "ch_2", "1.00 EUR of charge ch_2", false));
    }

    @Test
    void theOtherCarrierShipmentsAreKept() {
        String ledger = """
                {"shipments": [
                   {"shipmentId": "shp_0", "idempotencyKey": "s-0", "reference": "%2$s", "status": "cancelled"},
                   {"shipmentId": "shp_1", "idempotencyKey": "s-1", "reference": "%1$s", "status": "created"},
                   {"shipmentId": "shp_2", "idempotencyKey": "s-2", "status": "created"}]}
                """.formatted(ORDER, OTHER);
        Ledgers.CarrierLedger parsed = Ledgers.parseCarrierLedger(ledger, Set.of(ORDER));
        assertThat(parsed.shipments()).extracting(CarrierShipment::shipmentId).containsExactly("shp_1");
        assertThat(parsed.unmatched()).containsExactly(
                new UnmatchedEntry("carrier shipment shp_0", OTHER, null, "cancelled", false),
                new UnmatchedEntry("carrier shipment shp_2", null, null, "created", false));
    }

    @Test
    void somethingThatIsNoLedgerIsAnError() {
        assertThatThrownBy(() -> Ledgers.parsePaymentLedger("{\"shipments\": []}", Set.of(ORDER)))
                .isInstanceOf(LoadException.class).hasMessageContaining("no \"charges\" array");
        assertThatThrownBy(() -> Ledgers.parseCarrierLedger("<html>", Set.of(ORDER)))
                .isInstanceOf(LoadException.class).hasMessageContaining("not JSON");
    }

    @Test
    void anUnreachableLedgerIsAClearErrorNotAnEmptyLedger() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        URI nobody = URI.create("http://127.0.0.1:" + port);
        assertThatThrownBy(() -> new Ledgers().paymentLedger(nobody, Set.of(ORDER)))
                .isInstanceOf(LoadException.class)
                .hasMessageContaining("the payment provider's ledger at " + nobody + "/sandbox/ledger is unreachable")
                .hasMessageContaining("sandboxes' memory");
        assertThatThrownBy(() -> new Ledgers().carrierLedger(nobody, Set.of(ORDER)))
                .isInstanceOf(LoadException.class)
                .hasMessageContaining("the carrier's ledger");
    }
}
