#!/usr/bin/env bash
# The saga benchmark: the whole system on this machine with PostgreSQL durable (fsync on), saturation throughput,
# POST -> CONFIRMED latency at half of it (open loop), commit -> consumer latency, commits and CPU per saga, peak
# memory, and pgbench's limit for one saga step on the same PostgreSQL. Writes
# deploy/system-tests/target/benchmark/{benchmark.json,summary.txt,latency.png}.
#
# The services run as in production (C2 JIT, not the tests' fast-starting C1) and are warmed up with 3000 orders
# first: on two cores the JIT compilers alone take about a third of the CPU for the first minutes of load, which
# would be measured as the saga's cost.
#
# Usage: deploy/bench.sh [saturation orders (default 2000)] [open-loop seconds (default 60)] [warm-up orders (default 3000)]
# PostgreSQL is left durable afterwards; deploy/stack.sh up (without PG_DURABLE) makes it fast for tests again.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
PG_DURABLE=1 deploy/stack.sh up
./mvnw -B -ntp -q install -DskipTests
./mvnw -B -ntp verify -pl deploy/system-tests -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=BenchmarkIT -Dsaga.bench.warmup-orders="${3:-3000}" -Dsaga.bench.saturation-orders="${1:-2000}" \
  -Dsaga.bench.concurrency=64 -Dsaga.bench.open-loop-seconds="${2:-60}" -Dsaga.bench.pgbench-seconds=30 \
  "-Dsaga.service.jvm-options=-Xmx512m"
cat deploy/system-tests/target/benchmark/summary.txt
