#!/usr/bin/env bash
# Runs every test of order-saga on the real stack: starts PostgreSQL and Kafka (deploy/stack.sh), then the
# Maven build with all tests: the contract and unit tests, the in-process Quarkus tests (*Test) and the system
# tests that run the packaged services as separate processes (*IT).
#
# Usage: deploy/test.sh [extra Maven arguments, e.g. -pl order-service -am]
# The stack stays up afterwards (deploy/stack.sh down stops it).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

command -v java >/dev/null || { echo "test.sh: a JDK 17+ is required (java not on PATH)" >&2; exit 1; }
# KubernetesManifestsTest renders deploy/kubernetes with kubectl kustomize (Debian's kubectl is old; the manifests keep to its kustomize)
command -v kubectl >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client; }

deploy/stack.sh up
# a service of the local run (deploy/run.sh) would compete with the tests for the relay slots and consumer groups
if pgrep -f 'quarkus-app/quarkus-run.jar' >/dev/null; then
  echo "test.sh: services of order-saga are running (deploy/run.sh?); stop them first" >&2
  exit 1
fi
./mvnw -B -ntp verify "$@"
