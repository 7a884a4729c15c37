package dev.ordersaga.payment.application;

import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.payment.domain.PaymentStatus;
import dev.ordersaga.payment.testing.OrderSaga;
import dev.ordersaga.payment.testing.OrderSagas;
import dev.ordersaga.payment.testing.PaymentSandboxResource;
import dev.ordersaga.payment.testing.ProviderLedger;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.ordersaga.payment.testing.PaymentFixtures.orderCreated;
import static dev.ordersaga.payment.testing.PaymentFixtures.stockReserved;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * DESIGN's rule that no external call is made inside a database transaction, seen from the database: while the
 * provider holds a charge call's answer back, no session of the service has a transaction open that began before the
 * call reached the provider. A worker that called inside one would hold it open, idle in transaction, for as long as
 * the provider takes: the row locked, a pooled connection taken, the provider's latency become the database's.
 */
@QuarkusTest
@TestProfile(ProviderCallOutsideTransactionTest.PatientClient.class)
@WithTestResource(StackTestResource.class)
@WithTestResource(PaymentSandboxResource.class)
class ProviderCallOutsideTransactionTest {

    private static final Duration PATIENCE = Duration.ofSeconds(90);
    /**
     * How long the provider holds the charge call's answer back: a transaction wrapping the call stays open at least
     * as long. Below the client's timeout here, so that the call stays under way until it is answered.
     */
    private static final Duration HELD = Duration.ofSeconds(10);
    /**
     * How long the transactions open at the call's arrival may take to end: a short one of the service's own (a
     * sweep's claim) ends in milliseconds even on a busy machine, one wrapping the call not before {@link #HELD}.
     */
    private static final Duration SHORT = Duration.ofSeconds(7);

    /**
     * The client waits longer than the provider holds the answer (by default it gives up after 1 s). Enough workers
     * that the calls the earlier test classes' rows still have due (settlement looks, recoveries), each held as long
     * while the provider is slow, leave one free for this test's charge; with the default four they took them all and
     * the charge was put off past the test's patience.
     */
    public static class PatientClient implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // a lease the patient calls cannot outlast, or the service refuses to start
            return Map.of("payment.provider.timeout", "15s", "payment.worker.lease", "200s",
                    "payment.worker.threads", "64");
        }
    }

    @RegisterExtension
    static final OrderSagas sagas = new OrderSagas();

    @Inject
    PaymentService payments;

    @Inject
    DataSource dataSource;

    @ConfigProperty(name = "payment.provider.url")
    String providerUrl;

    @Test
    void noTransactionIsOpenWhileTheProviderHoldsTheChargeCall() throws Exception {
        OrderSaga saga = sagas.saga("payment-call-outside-tx");
        ProviderLedger.slow(providerUrl, HELD);
        try {
            saga.publish(orderCreated("tok_ok"));
            saga.publish(stockReserved());

            // the sandbox books the charge when the call arrives and holds the answer back after that
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(10))
                    .until(() -> !ProviderLedger.of(providerUrl, saga.orderId()).charges().isEmpty());
            OffsetDateTime arrived = databaseNow();
            List<String> openAtArrival = transactionsOpenSince(arrived);
            // a transaction begun before the call and still open while it is held would be one wrapping it
            await().atMost(SHORT).pollInterval(Duration.ofMillis(20))
                    .untilAsserted(() -> assertThat(transactionsOpenSince(arrived))
                            .as("transactions of the service open since before the call reached the provider "
                                    + "(at its arrival: %s)", openAtArrival)
                            .isEmpty());
            assertThat(payments.findByOrderId(saga.orderId()).orElseThrow().status())
                    .as("looked while the call was still held").isEqualTo(PaymentStatus.CHARGING);
        } finally {
            ProviderLedger.slow(providerUrl, Duration.ZERO);
        }

        await().atMost(PATIENCE).until(() -> !saga.published(PaymentSucceeded.class).isEmpty());
        assertThat(ProviderLedger.of(providerUrl, saga.orderId()).charges()).singleElement()
                .satisfies(charge -> assertThat(charge.chargeCalls()).isEqualTo(1));
    }

    private OffsetDateTime databaseNow() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT clock_timestamp()");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getObject(1, OffsetDateTime.class);
        }
    }

    /** The service's sessions (its database, its user) with a transaction begun at or before {@code since}. */
    private List<String> transactionsOpenSince(OffsetDateTime since) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("""
                     SELECT pid, xact_start FROM pg_stat_activity
                     WHERE datname = current_database() AND usename = current_user
                       AND backend_type = 'client backend' AND pid <> pg_backend_pid()
                       AND xact_start IS NOT NULL AND xact_start <= ?""")) {
            ps.setObject(1, since);
            List<String> open = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    // the session and its transaction's start: the same transaction at both looks
                    open.add(rs.getInt("pid") + " in a transaction since " + rs.getObject("xact_start", OffsetDateTime.class));
                }
            }
            return open;
        }
    }
}
