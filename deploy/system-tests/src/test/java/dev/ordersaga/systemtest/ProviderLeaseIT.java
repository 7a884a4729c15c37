package dev.ordersaga.systemtest;

import org.junit.jupiter.api.Test;

import java.util.Map;

/**
 * A provider's timeout raised without the workers' lease: a call could then outlast its lease, and another worker,
 * taking the row for one with no call under way, call again. The packaged services refuse to start, and say which
 * lease would do.
 */
class ProviderLeaseIT {

    @Test
    void shippingRefusesACarrierTimeoutItsLeaseCannotOutlast() throws Exception {
        ServiceProcess.assertRefusesToStart("shipping-service", "lease-shipping", 18184, Map.of(),
                Map.of("CARRIER_TIMEOUT", "3s"), "shipping.worker.lease=30s is too short");
    }

    @Test
    void paymentRefusesAProviderTimeoutItsLeaseCannotOutlast() throws Exception {
        ServiceProcess.assertRefusesToStart("payment-service", "lease-payment", 18183, Map.of(),
                Map.of("PAYMENT_PROVIDER_TIMEOUT", "3s"), "make the lease longer than 36s");
    }
}
