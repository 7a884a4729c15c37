package dev.ordersaga.payment.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.payment.domain.IllegalTransitionException;
import dev.ordersaga.payment.persistence.PaymentRepository;
import dev.ordersaga.payment.provider.PaymentProviderClient;
import dev.ordersaga.payment.provider.PaymentProviderClient.Settlement;
import dev.ordersaga.work.ProviderReport;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * Reads the provider's settlement report ({@link ProviderReport}) and applies every settlement of a charge the service
 * holds as declined or cancelled as its webhook would have been: refunded at once. A late settlement whose webhook was
 * lost and which came after the settlement watch's last look ({@code payment.settlement.*}) is learned here; before,
 * such a customer stayed charged for a cancelled order and nothing told. A settlement of a charge still CHARGING (its
 * answer and webhook lost, its status query failing) is its success: the saga goes on. The report reads each entry
 * about a minute after it settled, long before such a charge could be held for an operator
 * ({@link dev.ordersaga.payment.domain.Payment#chargeHeld}), whose key the provider may have forgotten by then. Each settlement is applied in a transaction
 * of its own under the payment's lock, so replicas reading the same page change each payment once.
 */
@ApplicationScoped
@Startup // its counter exists from the start, at zero, for the alert rule
public class SettlementReconciliation {

    private static final Logger LOG = Logger.getLogger(SettlementReconciliation.class);

    @Inject
    PaymentProviderClient provider;

    @Inject
    PaymentRepository payments;

    @Inject
    PaymentService service;

    @Inject
    TransactionalWrites writes;

    @Inject
    SurplusRefunds surplus;

    @Inject
    MeterRegistry meters;

    private ProviderReport<Settlement> report;
    private Counter unmatched;

    @PostConstruct
    void init() {
        report = ProviderReport.configured("payment.reconciliation", "payment-provider-settlements",
                provider::settlements, writes, meters);
        // registered up front, so that an alert on its increase sees the first incident
        unmatched = meters.counter("saga.payment.settlements.unmatched");
    }

    @PreDestroy
    void close() {
        report.removeGauge();
    }

    @Scheduled(every = "${payment.reconciliation.interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        report.readOnScheduled(page -> apply(page).size());
    }

    /**
     * Reads the report on from where it was read to; returns the payments it recorded a late settlement of (what the
     * service's own work did meanwhile is in it too, so a caller looks for the payments it knows).
     */
    public List<UUID> reconcile() {
        return report.readOnApplying(this::apply);
    }

    private List<UUID> apply(List<Settlement> settlements) {
        Map<UUID, String> chargeIds = new HashMap<>();
        List<Settlement> ours = new ArrayList<>();
        for (Settlement settlement : settlements) {
            try {
                // the payment's id is its charge's idempotency key; any other key is not this service's charge
                chargeIds.put(UUID.fromString(settlement.idempotencyKey()), settlement.chargeId());
                ours.add(settlement);
            } catch (IllegalArgumentException notOurs) {
                LOG.debugf("Settlement report: charge %s is not a payment's", settlement.chargeId());
            }
        }
        List<UUID> unheardOf = QuarkusTransaction.requiringNew()
                .call(() -> payments.notKnownChargedAmong(chargeIds.keySet()));
        List<UUID> applied = new ArrayList<>();
        for (UUID paymentId : unheardOf) {
            Optional<PaymentRepository.ChargeState> charge = payments.chargeState(paymentId);
            if (charge.isEmpty()) {
                continue;
            }
            String chargeId = chargeIds.get(paymentId);
            try (Correlation.Scope ignored = Correlation.open(charge.get().correlationId(), charge.get().causedByEventId())) {
                // a webhook, a look or a replica may have told meanwhile: counted only if it is news
                if (service.recordChargeSucceeded(paymentId, chargeId)) {
                    LOG.infof("Settlement report: charge %s of order %s is settled, and the payment was %s", chargeId,
                            charge.get().orderId(), charge.get().status());
                    meters.counter("saga.payment.settlements.reconciled").increment();
                    applied.add(paymentId);
                }
            } catch (IllegalTransitionException e) {
                LOG.warnf("Settlement report: charge %s not applied: %s", chargeId, e.getMessage());
            }
        }
        // after the charges just recorded: two settled under one key in this read are one recorded and one second charge
        otherCharges(ours, chargeIds.keySet());
        return applied;
    }

    /**
     * A settled charge under a payment's key that is not the charge the payment recorded: a second charge, which a
     * provider makes when it has forgotten the key (providers keep keys for a day or so; an operator's retry-payment
     * after a hold charges under the same key). The customer paid twice, so the surplus is refunded on its own
     * ({@link SurplusRefunds}), and it is an ALERT for a person all the same, with
     * {@code saga_payment_settlements_unmatched_total}, once for each such charge: the provider broke its promise.
     */
    private void otherCharges(List<Settlement> ours, Set<UUID> paymentIds) {
        Map<UUID, String> recorded = QuarkusTransaction.requiringNew()
                .call(() -> payments.recordedChargesAmong(paymentIds));
        for (Settlement settlement : ours) {
            UUID paymentId = UUID.fromString(settlement.idempotencyKey());
            String charge = recorded.get(paymentId);
            if (charge == null || charge.equals(settlement.chargeId())) {
                continue;
            }
            Optional<PaymentRepository.ChargeState> state = payments.chargeState(paymentId);
            if (state.isPresent() && surplus.found(state.get(), settlement.chargeId())) {
                try (Correlation.Scope ignored = Correlation.open(state.get().correlationId(), null)) {
                    LOG.errorf("ALERT settlement of another charge: the provider settled charge %s under the key of "
                                    + "payment %s (order %s), which recorded charge %s: the customer was charged twice; the "
                                    + "surplus charge is being refunded", settlement.chargeId(), paymentId,
                            state.get().orderId(), charge);
                }
                unmatched.increment();
            }
        }
    }
}
