#!/usr/bin/env bash
# Runs the whole order-saga system on this machine: the stack (PostgreSQL, Kafka), then the four services,
# packaged, each as its own process. Waits until all are healthy, prints where to send an order, and on
# Ctrl-C stops the services and the stack.
#
# Usage: deploy/run.sh            Env: KEEP_STACK=1 leaves PostgreSQL and Kafka running on exit,
#                                      SKIP_BUILD=1 reuses the packaged services as they are.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
RUN_DIR="$REPO/.stack/run"
mkdir -p "$RUN_DIR"

command -v java >/dev/null || { echo "run.sh: a JDK 17+ is required (java not on PATH)" >&2; exit 1; }
command -v curl >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl; }

SERVICES=(order-service:8081 inventory-service:8082 payment-service:8083 shipping-service:8084)
PIDS=()

STOPPED=0
stop_all() {
  [ "$STOPPED" = 1 ] && return
  STOPPED=1
  echo
  echo "stopping the services..."
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ "${KEEP_STACK:-0}" != 1 ]; then
    deploy/stack.sh down
  fi
  echo "stopped."
}

deploy/stack.sh up
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "packaging the services (./mvnw package, tests skipped: deploy/test.sh runs them)..."
  ./mvnw -B -ntp -q package -DskipTests -pl order-service,inventory-service,payment-service,shipping-service -am
fi

trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for entry in "${SERVICES[@]}"; do
  name=${entry%%:*}; port=${entry##*:}
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "run.sh: port $port is taken; is order-saga already running?" >&2
    exit 1
  fi
  java -Xmx384m -Dquarkus.http.port="$port" -jar "$name/target/quarkus-app/quarkus-run.jar" \
    > "$RUN_DIR/$name.log" 2>&1 &
  PIDS+=($!)
  echo "started $name (pid $!) on port $port, log: .stack/run/$name.log"
done

for entry in "${SERVICES[@]}"; do
  name=${entry%%:*}; port=${entry##*:}
  ready=0
  for _ in $(seq 1 240); do
    if curl -sf "http://127.0.0.1:$port/q/health/ready" >/dev/null 2>&1; then ready=1; break; fi
    sleep 0.5
  done
  if [ "$ready" != 1 ]; then
    echo "run.sh: $name did not become ready; last lines of its log:" >&2
    tail -30 "$RUN_DIR/$name.log" >&2
    exit 1
  fi
  echo "$name is ready"
done

cat <<'EOT'

order-saga is running.
  Place an order:
    curl -si -X POST http://127.0.0.1:8081/orders -H 'Content-Type: application/json' \
      -H 'X-Correlation-Id: my-first-order' -d '{"customerId": "cust-1",
      "items": [{"sku": "SKU-MUG", "quantity": 2, "unitPrice": 10.50}], "currency": "EUR",
      "shippingAddress": {"name": "Ada Lovelace", "line1": "12 St James Square", "city": "London",
                          "postalCode": "SW1Y 4JH", "country": "GB"},
      "paymentToken": "tok_ok"}'
  Follow it:   curl -s http://127.0.0.1:8081/orders/<orderId>
               grep my-first-order .stack/run/*.log
  Health:      http://127.0.0.1:808{1,2,3,4}/q/health   metrics: /q/metrics
Ctrl-C stops everything.
EOT
wait -n "${PIDS[@]}" || true
echo "a service exited on its own; see .stack/run/*.log" >&2
exit 1
