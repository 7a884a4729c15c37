#!/usr/bin/env bash
# The long fault-injection run: the whole system as processes under a mixed load, with kill -9 of every service,
# Kafka and PostgreSQL restarts and a slow payment provider, round after round for as long as the load lasts, then
# the audit of the saga's invariants.
# (A small run of the same test is part of deploy/test.sh.)
#
# Usage: deploy/faults.sh [--replicas N] [orders (default 1000)] [seed (default: the time)]
#   --replicas N  run N instances of each service (default 1), as a deployment does: consumer groups rebalance when
#                 one is killed, a standby takes over the outbox stream, the replicas' workers compete for due calls
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPLICAS=1
if [ "${1:-}" = "--replicas" ]; then
  REPLICAS=${2:?--replicas needs a number}
  shift 2
fi
case "$REPLICAS" in
  [1-9]) ;;
  *) echo "faults.sh: --replicas takes 1 to 9, not $REPLICAS" >&2; exit 2 ;;
esac
ORDERS=${1:-1000}
SEED=${2:-$(date +%s)}
# the test reads both as decimal numbers: anything else must stop here, not run another seed than the line below names
[[ "$ORDERS" =~ ^[1-9][0-9]{0,8}$ ]] || { echo "faults.sh: orders is a whole number from 1, not $ORDERS" >&2; exit 2; }
[[ "$SEED" =~ ^-?[0-9]{1,18}$ ]] || { echo "faults.sh: the seed is a whole number, not $SEED" >&2; exit 2; }
. deploy/stack/sudo-ticket.sh faults.sh
. deploy/stack/one-run.sh faults.sh
deploy/stack.sh up
./mvnw -B -ntp -q install -DskipTests
echo "fault injection: $ORDERS orders, seed $SEED, $REPLICAS replica(s) of each service" \
  "(repeat with: deploy/faults.sh --replicas $REPLICAS $ORDERS $SEED)"
# exec, as in deploy/test.sh: a SIGTERM to the run reaches Maven, which would otherwise go on holding the run's lock
exec ./mvnw -B -ntp verify -pl deploy/system-tests -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=FaultInjectionIT -Dsaga.faults.orders="$ORDERS" -Dsaga.faults.seed="$SEED" -Dsaga.faults.rounds=0 \
  -Dsaga.faults.replicas="$REPLICAS"
