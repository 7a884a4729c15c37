#!/usr/bin/env bash
# Prints the configuration of one operator's account (HTTP basic, role operator, every service), to go into the file
# the services read their operator accounts from: on Kubernetes the key operators.properties of the Secret
# order-saga-operators (deploy/kubernetes/README.md). The password is kept as the digest Quarkus' embedded realm
# checks (realm "Quarkus", digest-sha-512, as common-events configures it): HEX(SHA-512(name:Quarkus:password)).
#
# Usage: deploy/operator-account.sh <name>           asks for the password twice (not echoed)
#        printf %s "$PASSWORD" | deploy/operator-account.sh <name>      reads it from standard input
# The name is what the order's log of actions and the events' requestedBy record: one account for each person.
set -euo pipefail
if [ $# -ne 1 ] || ! [[ $1 =~ ^[a-z0-9][a-z0-9._-]{0,63}$ ]]; then
  echo "usage: $0 <name>: lower-case letters, digits, '.', '_' and '-', at most 64 (it is a configuration key)" >&2
  exit 2
fi
name=$1
if [ -t 0 ]; then
  read -r -s -p "password for $name: " password; echo >&2
  read -r -s -p "again: " again; echo >&2
  [ "$password" = "$again" ] || { echo "$0: the passwords differ" >&2; exit 1; }
  # the digest is fast to compute, so a short password read off a leaked configuration is soon guessed
  if [ ${#password} -lt 16 ]; then
    echo "$0: a password of ${#password} characters: 16 or more, e.g. from openssl rand -base64 24" >&2
    exit 1
  fi
else
  password=$(cat)
fi
[ -n "$password" ] || { echo "$0: empty password" >&2; exit 1; }
digest=$(printf '%s:Quarkus:%s' "$name" "$password" | sha512sum | cut -d' ' -f1)
echo "quarkus.security.users.embedded.users.$name=$digest"
echo "quarkus.security.users.embedded.roles.$name=operator"
