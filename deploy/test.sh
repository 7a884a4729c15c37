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
. deploy/stack/install-command.sh
install_command kubectl kubernetes-client

. deploy/stack/sudo-ticket.sh test.sh
. deploy/stack/one-run.sh test.sh
deploy/stack.sh up
# exec: Maven takes this shell's place, so that a SIGTERM to the run stops Maven rather than orphaning it with the
# run's lock held; the run's exit status is Maven's
exec ./mvnw -B -ntp verify "$@"
