# Sourced, not run, by deploy/test.sh, bench.sh, faults.sh and run.sh: one run of order-saga at a time on a machine.
# They share the machine's PostgreSQL and Kafka's port, so a second run would compete with the first for the relays'
# slots and the consumer groups, the system tests would empty its databases, and a build would replace its jars.
#
# The run holds an flock for its whole life, which covers what the /proc check (no-local-run.sh) cannot see: the
# in-process Quarkus tests of another run. Processes launched from Java close every inherited descriptor, and
# postgres.sh, kafka.sh and run.sh close the lock's before they start their daemons and services, so a broker, a
# PostgreSQL or a service left up after a run does not keep the lock. A script sourcing this under a run that holds
# it already goes on.
#
# Usage: . deploy/stack/one-run.sh <name of the calling script, for the message>
# Env:   ORDER_SAGA_RUN_LOCK  the lock file (default /tmp/order-saga.run.lock)

# before the lock: services another run left up may hold it, and this names their pids where the lock cannot
deploy/stack/no-local-run.sh "${1:-order-saga}"
if command -v flock >/dev/null 2>&1 &&
  ! { [ -n "${ORDER_SAGA_RUN_LOCK_FD:-}" ] && [ -e "/proc/$$/fd/$ORDER_SAGA_RUN_LOCK_FD" ]; }; then
  ORDER_SAGA_RUN_LOCK=${ORDER_SAGA_RUN_LOCK:-/tmp/order-saga.run.lock}
  # readable by everyone, so that another user's run can take the same lock
  [ -e "$ORDER_SAGA_RUN_LOCK" ] || (umask 022 && : >>"$ORDER_SAGA_RUN_LOCK")
  exec {ORDER_SAGA_RUN_LOCK_FD}<"$ORDER_SAGA_RUN_LOCK"
  if ! flock -n "$ORDER_SAGA_RUN_LOCK_FD"; then
    echo "${1:-order-saga}: another run of order-saga (deploy/test.sh, bench.sh, faults.sh or run.sh) holds" \
      "$ORDER_SAGA_RUN_LOCK; wait for it to end" >&2
    exit 1
  fi
  export ORDER_SAGA_RUN_LOCK_FD
fi
