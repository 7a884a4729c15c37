package dev.ordersaga.systemtest;

/**
 * The suite's small fault run again with two instances of every service, as deployed: kills then move partitions
 * between the replicas and hand the outbox stream over, and the replicas' workers race for the same calls.
 */
class FaultInjectionReplicasIT extends FaultInjectionIT {

    @Override
    int replicas() {
        return 2;
    }

    @Override
    String runName() {
        return "faults-replicas";
    }
}
