#!/usr/bin/env bash
# Audits the saga's invariants once the system has gone quiet: the four databases, the four event topics and the
# sandboxes' ledgers (deploy/audit). Prints a summary and every violation with its order id.
#
# Usage: deploy/audit.sh (--since <ISO instant> | --orders <file>) [--pg-host h] [--pg-port p] [--pg-user u]
#                        [--pg-password pw] [--kafka servers] [--payment-provider url] [--carrier url] [--json file]
# Exit status: 0 no violation, 1 violations, 2 usage or connection error.
# Build it first: ./mvnw -B -q package -pl deploy/audit -am
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAR="$REPO/deploy/audit/target/audit.jar"
if [ ! -f "$JAR" ]; then
  echo "audit.sh: $JAR is missing; build it: ./mvnw -B -q package -pl deploy/audit -am" >&2
  exit 2
fi
exec java -jar "$JAR" "$@"
