#!/usr/bin/env bash
# Runs the whole order-saga system on this machine: the stack (PostgreSQL, Kafka), the sandboxes of the payment
# provider (127.0.0.1:9101) and the carrier (127.0.0.1:9102), then the four services, packaged, each as its own
# process. Waits until all are healthy, prints where to send an order, and on
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
  ./mvnw -B -ntp -q package -DskipTests -pl deploy/sandboxes,order-service,inventory-service,payment-service,shipping-service -am
fi

trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for port in 9101 9102; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "run.sh: port $port is taken; is order-saga already running?" >&2
    exit 1
  fi
done
# the outside world: a payment provider that calls payment-service back, and a carrier. The provider signs its
# webhooks with a secret it shares with payment-service (PAYMENT_PROVIDER_WEBHOOK_SECRET): a new one for each run.
PAYMENT_PROVIDER_WEBHOOK_SECRET=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export PAYMENT_PROVIDER_WEBHOOK_SECRET
java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar deploy/sandboxes/target/sandboxes.jar payment --port 9101 \
  --webhook-url http://127.0.0.1:8083/webhooks/payment-provider --webhook-secret "$PAYMENT_PROVIDER_WEBHOOK_SECRET" \
  > "$RUN_DIR/payment-provider-sandbox.log" 2>&1 &
PIDS+=($!)
java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar deploy/sandboxes/target/sandboxes.jar carrier --port 9102 > "$RUN_DIR/carrier-sandbox.log" 2>&1 &
PIDS+=($!)
echo "started the sandboxes: payment provider on 127.0.0.1:9101, carrier on 127.0.0.1:9102"
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
  Stock a SKU:
    curl -s -X PUT http://127.0.0.1:8082/stock/SKU-MUG -H 'Content-Type: application/json' -d '{"quantity": 100}'
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
  Operators:   curl -s -u operator:operator 'http://127.0.0.1:8081/operator/orders?waiting=true'
  Sandboxes:   curl -s http://127.0.0.1:9101/sandbox/ledger ; curl -s http://127.0.0.1:9102/sandbox/ledger
               payment tokens tok_ok, tok_declined, tok_timeout_succeeds, tok_timeout_declined,
               tok_refund_fails_twice; shipping address line1 UNDELIVERABLE; carrier outage:
               curl -s -X POST http://127.0.0.1:9102/sandbox/carrier/outage -d '{"failures": 3}'
  API:         http://127.0.0.1:8081/q/openapi   Health: /q/health   Metrics: /q/metrics (ports 8081-8084)
Ctrl-C stops everything.
EOT
wait -n "${PIDS[@]}" || true
echo "a service exited on its own; see .stack/run/*.log" >&2
exit 1
