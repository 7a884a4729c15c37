#!/usr/bin/env bash
# Runs the whole order-saga system on this machine: the stack (PostgreSQL, Kafka), the sandboxes of the payment
# provider (127.0.0.1:9101) and the carrier (127.0.0.1:9102), then the four services, packaged, each as its own
# process. Waits until all are healthy, prints where to send an order, and on
# Ctrl-C stops the services, and the stack if this run started it.
#
# Usage: deploy/run.sh            Env: KEEP_STACK=1 leaves PostgreSQL and Kafka running on exit,
#                                      SKIP_BUILD=1 reuses the packaged services as they are.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
RUN_DIR="$REPO/.stack/run"
mkdir -p "$RUN_DIR"

command -v java >/dev/null || { echo "run.sh: a JDK 17+ is required (java not on PATH)" >&2; exit 1; }
. deploy/stack/install-command.sh
install_command curl curl

SERVICES=(order-service:8081 inventory-service:8082 payment-service:8083 shipping-service:8084)
# each service's /q/ (health, metrics, OpenAPI) is on its management port: its HTTP port + 1000, the default of its
# configuration (MANAGEMENT_PORT)
MANAGEMENT=()
for entry in "${SERVICES[@]}"; do MANAGEMENT+=("${entry%%:*}:$((${entry##*:} + 1000))"); done
SANDBOXES=(payment-provider-sandbox:9101 carrier-sandbox:9102)
PIDS=()
NAMES=()

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# before anything is started or built: a second run would replace the jars the first runs from
for entry in "${SANDBOXES[@]}" "${SERVICES[@]}" "${MANAGEMENT[@]}"; do
  if port_taken "${entry##*:}"; then
    echo "run.sh: port ${entry##*:} (${entry%%:*}) is taken; is order-saga already running?" >&2
    exit 1
  fi
done
. deploy/stack/one-run.sh run.sh

# what was up before this run (the tests' stack, a KEEP_STACK run's, the machine's own PostgreSQL) is left up:
# something else may use it
PG_WAS_UP=0
KAFKA_WAS_UP=0
deploy/stack/postgres.sh status >/dev/null 2>&1 && PG_WAS_UP=1
deploy/stack/kafka.sh status >/dev/null 2>&1 && KAFKA_WAS_UP=1

STOPPED=0
stop_all() {
  # a second Ctrl-C would end the stop midway, and leave the stack and the services up
  trap '' INT TERM
  [ "$STOPPED" = 1 ] && return
  STOPPED=1
  echo
  echo "stopping the services..."
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  done
  if [ "${KEEP_STACK:-0}" != 1 ]; then
    # in the order of deploy/stack.sh down
    if [ "$KAFKA_WAS_UP" != 1 ]; then deploy/stack/kafka.sh stop; fi
    if [ "$PG_WAS_UP" != 1 ]; then deploy/stack/postgres.sh stop; fi
  fi
  if [ "$PG_WAS_UP" = 1 ] || [ "$KAFKA_WAS_UP" = 1 ]; then
    echo "what was up before this run is left up (deploy/stack.sh down stops the stack)"
  fi
  echo "stopped."
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

deploy/stack.sh up
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "packaging the services (./mvnw package, tests skipped: deploy/test.sh runs them)..."
  ./mvnw -B -ntp -q package -DskipTests -pl deploy/sandboxes,order-service,inventory-service,payment-service,shipping-service -am
fi

# Waits until url answers, and gives up at once if the process is gone (a missing jar, a port taken meanwhile).
await_ready() {
  local name=$1 url=$2 pid=$3
  for _ in $(seq 1 240); do
    if curl -sf "$url" >/dev/null 2>&1; then echo "$name is ready"; return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  echo "run.sh: $name did not become ready; last lines of its log:" >&2
  tail -30 "$RUN_DIR/$name.log" >&2
  exit 1
}

# The run's lock (one-run.sh) is not for the processes started here to keep: left up after a run killed without its
# trap, they would hold it, and the next run would wait for them without naming them. As postgres.sh and kafka.sh do.
without_run_lock() {
  if [ -n "${ORDER_SAGA_RUN_LOCK_FD:-}" ]; then exec {ORDER_SAGA_RUN_LOCK_FD}<&-; fi
  unset ORDER_SAGA_RUN_LOCK_FD
  exec "$@"
}

# the outside world: a payment provider that calls payment-service back, and a carrier. The provider signs its
# webhooks with a secret it shares with payment-service (PAYMENT_PROVIDER_WEBHOOK_SECRET): a new one for each run,
# handed to both in the environment, which another user's ps does not show, as it would an argument.
PAYMENT_PROVIDER_WEBHOOK_SECRET=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export PAYMENT_PROVIDER_WEBHOOK_SECRET
without_run_lock java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar deploy/sandboxes/target/sandboxes.jar \
  payment --port 9101 --webhook-url http://127.0.0.1:8083/webhooks/payment-provider \
  > "$RUN_DIR/payment-provider-sandbox.log" 2>&1 &
PIDS+=($!); NAMES+=(payment-provider-sandbox)
without_run_lock java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar deploy/sandboxes/target/sandboxes.jar \
  carrier --port 9102 > "$RUN_DIR/carrier-sandbox.log" 2>&1 &
PIDS+=($!); NAMES+=(carrier-sandbox)
await_ready payment-provider-sandbox http://127.0.0.1:9101/sandbox/ledger "${PIDS[0]}"
await_ready carrier-sandbox http://127.0.0.1:9102/sandbox/ledger "${PIDS[1]}"
echo "started the sandboxes: payment provider on 127.0.0.1:9101, carrier on 127.0.0.1:9102"
# On the loopback, as PostgreSQL, Kafka and the sandboxes are: the local run is for this machine, and a packaged
# Quarkus listens on every interface. A packaged service has no operator account unless it is given one (common-events'
# configuration): this run's is "operator", with OPERATOR_PASSWORD if set, else "operator", in a file the services
# read as Kubernetes' pods read theirs (QUARKUS_CONFIG_LOCATIONS). Nor has a packaged service a database password: the
# local stack's role of each service has its own name as password (deploy/stack/postgres.sh).
printf %s "${OPERATOR_PASSWORD:-operator}" | deploy/operator-account.sh operator > "$RUN_DIR/operators.properties"
for entry in "${SERVICES[@]}"; do
  name=${entry%%:*}; port=${entry##*:}
  DB_PASSWORD="${name%-service}_svc" QUARKUS_CONFIG_LOCATIONS="$RUN_DIR/operators.properties" \
    without_run_lock java -Xmx384m -XX:+UseSerialGC -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" \
    -Dquarkus.management.host=127.0.0.1 -jar "$name/target/quarkus-app/quarkus-run.jar" > "$RUN_DIR/$name.log" 2>&1 &
  PIDS+=($!); NAMES+=("$name")
  echo "started $name (pid $!) on 127.0.0.1:$port, log: .stack/run/$name.log"
done
for i in "${!SERVICES[@]}"; do
  entry=${SERVICES[$i]}
  management=${MANAGEMENT[$i]}
  await_ready "${entry%%:*}" "http://127.0.0.1:${management##*:}/q/health/ready" "${PIDS[$((i + 2))]}"
done

cat <<'EOT'

order-saga is running.
  Stock a SKU:
    curl -s -u "operator:${OPERATOR_PASSWORD:-operator}" -X PUT http://127.0.0.1:8082/stock/SKU-MUG \
      -H 'Content-Type: application/json' -d '{"quantity": 100}'
  Place an order:
    curl -si -X POST http://127.0.0.1:8081/orders -H 'Content-Type: application/json' \
      -H 'X-Correlation-Id: my-first-order' -d '{"customerId": "cust-1",
      "items": [{"sku": "SKU-MUG", "quantity": 2, "unitPrice": 10.50}], "currency": "EUR",
      "shippingAddress": {"name": "Ada Lovelace", "line1": "12 St James Square", "city": "London",
                          "postalCode": "SW1Y 4JH", "country": "GB"},
      "paymentToken": "tok_ok"}'
  Follow it:   curl -s http://127.0.0.1:8081/orders/<orderId>
               curl -s http://127.0.0.1:8081/orders/<orderId>/timeline
               grep my-first-order .stack/run/*.log
  Operators:   curl -s -u "operator:${OPERATOR_PASSWORD:-operator}" 'http://127.0.0.1:8081/operator/orders?waiting=true'
  Sandboxes:   curl -s http://127.0.0.1:9101/sandbox/ledger ; curl -s http://127.0.0.1:9102/sandbox/ledger
               payment tokens tok_ok, tok_declined, tok_timeout_succeeds, tok_timeout_declined,
               tok_refund_fails_twice; shipping address line1 UNDELIVERABLE; carrier outage:
               curl -s -X POST http://127.0.0.1:9102/sandbox/carrier/outage -d '{"failures": 10}'
  API:         http://127.0.0.1:9081/q/openapi   Health: /q/health   Metrics: /q/metrics (management ports 9081-9084)
EOT
if [ "$PG_WAS_UP" = 1 ] || [ "$KAFKA_WAS_UP" = 1 ] || [ "${KEEP_STACK:-0}" = 1 ]; then
  echo "Ctrl-C stops the services and the sandboxes, and leaves up what was up before (deploy/stack.sh down stops the stack)."
else
  echo "Ctrl-C stops everything."
fi
# `wait -n` would miss a process that ended before it was called; a look a second misses none
while :; do
  for i in "${!PIDS[@]}"; do
    if ! kill -0 "${PIDS[$i]}" 2>/dev/null; then
      echo "run.sh: ${NAMES[$i]} exited on its own; see .stack/run/${NAMES[$i]}.log" >&2
      exit 1
    fi
  done
  sleep 1
done
