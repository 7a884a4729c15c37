#!/usr/bin/env bash
# Audits the saga's invariants once the system has gone quiet: the four databases, the four event topics and the
# sandboxes' ledgers (deploy/audit). Prints a summary and every violation with its order id.
#
# Usage: deploy/audit.sh (--since <ISO instant> | --orders <file>) [--pg-host h] [--pg-port p] [--pg-user u]
#                        [--pg-password pw] [--kafka servers] [--payment-provider url] [--carrier url] [--json file]
# Exit status: 0 no violation, 1 violations, 2 usage or connection error.
# The first use builds it (deploy/run.sh builds the services only); after a change to it:
#   ./mvnw -B -q package -pl deploy/audit -am
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAR="$REPO/deploy/audit/target/audit.jar"
if [ ! -f "$JAR" ]; then
  echo "audit.sh: building the audit (deploy/audit) first" >&2
  (cd "$REPO" && ./mvnw -B -q -ntp package -pl deploy/audit -am -DskipTests) >&2 \
    || { echo "audit.sh: the build failed" >&2; exit 2; }
fi
exec java -jar "$JAR" "$@"
