#!/usr/bin/env bash
# The local stack of order-saga: PostgreSQL (one database per service, logical decoding on) and a
# single-node Kafka with the project's topics. The services, the tests and the benchmark expect it.
#
# Usage: deploy/stack.sh [up|down|status]          (default: up)
#   up      start PostgreSQL and Kafka, create the topics; safe to repeat
#   down    stop Kafka, then PostgreSQL (data is kept; Kafka's is under .stack/kafka)
#   status  print the state of both; exit 0 only when both are up
# Env: PG_DURABLE=1 runs PostgreSQL with fsync on (see deploy/stack/postgres.sh).
set -euo pipefail

STACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/stack"

where() {
  cat <<'EOF'
stack:
  PostgreSQL  127.0.0.1:5432  databases order_db inventory_db payment_db shipping_db,
              each owned by <service>_svc (password = role name); superuser postgres/postgres
  Kafka       127.0.0.1:9092  (KRaft controller 127.0.0.1:9093), topics from deploy/stack/topics.txt
EOF
}

case "${1:-up}" in
  up)
    "$STACK_DIR/postgres.sh" start
    "$STACK_DIR/kafka.sh" start
    "$STACK_DIR/topics.sh"
    where
    ;;
  down)
    # Reverse order of up.
    "$STACK_DIR/kafka.sh" stop
    "$STACK_DIR/postgres.sh" stop
    ;;
  status)
    rc=0
    "$STACK_DIR/postgres.sh" status || rc=1
    "$STACK_DIR/kafka.sh" status || rc=1
    exit "$rc"
    ;;
  *)
    echo "usage: $0 [up|down|status]" >&2
    exit 2
    ;;
esac
