#!/usr/bin/env bash
# The saga benchmark: the whole system on this machine with PostgreSQL durable (fsync on), saturation throughput,
# POST -> CONFIRMED latency at half of it (open loop), commit -> consumer latency, commits and CPU per saga, peak
# memory, and pgbench's limit for one saga step on the same PostgreSQL. Writes
# deploy/system-tests/target/benchmark/{benchmark.json,summary.txt,latency.png}.
#
# The services are warmed up with 3000 orders first, and run with the C1 JIT only (-XX:TieredStopAtLevel=1): on two
# cores shared by four services, Kafka and PostgreSQL, C2 compiling took 35-45 % of the services' CPU for minutes on
# end (jstat: 300 s of compile time per service in its first 5 minutes), and C1-only code gave 40.8 confirmed
# sagas/s where C2 gave 28.1 (same machine, same run shape). Where each service has cores of its own, C2 pays off;
# SAGA_JVM_OPTIONS overrides the choice.
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
  -Dsaga.bench.concurrency=64 -Dsaga.bench.open-loop-warmup-seconds=15 -Dsaga.bench.open-loop-seconds="${2:-60}" -Dsaga.bench.pgbench-seconds=30 \
  "-Dsaga.service.jvm-options=${SAGA_JVM_OPTIONS:--Xmx512m -XX:TieredStopAtLevel=1}"
cat deploy/system-tests/target/benchmark/summary.txt
