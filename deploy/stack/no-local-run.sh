#!/usr/bin/env bash
# Refuses to go on while services of order-saga run on this machine (deploy/run.sh, or the system tests or the
# benchmark of another run): they would compete with this run for the relays' slots and the consumer groups, the
# system tests would empty their databases, and a build would replace the jars they run from.
# Reads /proc rather than relying on pgrep, which a minimal machine may lack.
#
# Usage: deploy/stack/no-local-run.sh <name of the calling script, for the message>
set -euo pipefail
# this project's four modules, each a whole name in the path: another project's Quarkus services are not its
service_jar='(^|[/ ])(order|inventory|payment|shipping)-service/target/quarkus-app/quarkus-run\.jar'
found=()
for cmdline in /proc/[0-9]*/cmdline; do
  args=$(tr '\0' ' ' < "$cmdline" 2>/dev/null) || continue
  if [[ $args =~ $service_jar ]]; then pid=${cmdline#/proc/}; found+=("${pid%/cmdline}"); fi
done
if [ "${#found[@]}" -gt 0 ]; then
  echo "${1:-order-saga}: services of order-saga are running (pids ${found[*]}: deploy/run.sh, or the tests or benchmark" \
    "of another run); stop them first" >&2
  exit 1
fi
