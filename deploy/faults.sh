#!/usr/bin/env bash
# The long fault-injection run: the whole system as processes under a mixed load, with kill -9 of every service,
# Kafka and PostgreSQL restarts and a slow payment provider, round after round for as long as the load lasts, then
# the audit of the saga's invariants.
# (A small run of the same test is part of deploy/test.sh.)
#
# Usage: deploy/faults.sh [orders (default 1000)] [seed (default: the time)]
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
ORDERS=${1:-1000}
SEED=${2:-$(date +%s)}
deploy/stack.sh up
./mvnw -B -ntp -q install -DskipTests
echo "fault injection: $ORDERS orders, seed $SEED (repeat with: deploy/faults.sh $ORDERS $SEED)"
./mvnw -B -ntp verify -pl deploy/system-tests -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=FaultInjectionIT -Dsaga.faults.orders="$ORDERS" -Dsaga.faults.seed="$SEED" -Dsaga.faults.rounds=0
