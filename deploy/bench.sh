#!/usr/bin/env bash
# The saga benchmark: the whole system on this machine with PostgreSQL durable (fsync on), saturation throughput,
# POST -> CONFIRMED latency at half of it (open loop), outbox commit -> consumer latency, commits and CPU per saga, peak
# memory, and pgbench's limit for one saga step on the same PostgreSQL. Writes
# deploy/system-tests/target/benchmark/{benchmark.json,summary.txt,latency.png}.
#
# The services run with the JVM's default JIT (tiered, C2), as they do in production, and are warmed up before
# anything is measured: closed-loop rounds of 2000 orders until a round in which the JIT compiler threads of the
# stack took less than 0.1 of a core, or the most warm-up orders (the third argument) in all. C2 keeps compiling for
# many thousand orders (a third of a core after 12000 on a fast machine; on a slow one quiet only after 46000, and
# measured after 20000 that machine read 44 sagas/s where it reads 77 quiet); measured before it is done, a run
# measures the compiler. The summary reports the compilers' CPU in every phase (jitCompilerCpuSeconds).
# The services' collector is their images' (GC_CONTAINER_OPTIONS in each Dockerfile.jvm: the serial collector;
# ServiceImagesTest keeps the two the same). SAGA_JVM_OPTIONS overrides the services' JVM options (e.g.
# "-Xmx512m -XX:TieredStopAtLevel=1" for C1 only, which warms up within a few thousand orders and runs slower).
#
# Usage: deploy/bench.sh [saturation orders (default 2000)] [open-loop seconds (default 60)] [most warm-up orders (default 60000)]
# PostgreSQL is left durable afterwards; deploy/stack.sh up (without PG_DURABLE) makes it fast for tests again.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
. deploy/stack/one-run.sh bench.sh
PG_DURABLE=1 deploy/stack.sh up
./mvnw -B -ntp -q install -DskipTests
# exec, as in deploy/test.sh: a SIGTERM to the run reaches Maven, which would otherwise go on holding the run's lock;
# the benchmark prints its summary itself
exec ./mvnw -B -ntp verify -pl deploy/system-tests -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=BenchmarkIT -Dsaga.bench.warmup-orders="${3:-60000}" \
  -Dsaga.bench.warmup-round=2000 -Dsaga.bench.warmup-quiet-cores=0.1 -Dsaga.bench.saturation-orders="${1:-2000}" \
  -Dsaga.bench.concurrency=64 -Dsaga.bench.open-loop-warmup-seconds=15 -Dsaga.bench.open-loop-warmup-max-seconds=300 -Dsaga.bench.open-loop-seconds="${2:-60}" -Dsaga.bench.pgbench-seconds=30 -Dsaga.bench.require-durable=true \
  "-Dsaga.service.jvm-options=${SAGA_JVM_OPTIONS:--Xmx512m -XX:+UseSerialGC}"
