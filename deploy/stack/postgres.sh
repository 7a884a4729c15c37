#!/usr/bin/env bash
# Local PostgreSQL 15 for order-saga: the Debian cluster 15/main on 127.0.0.1:5432, with logical
# decoding on (every service streams its outbox through a replication slot) and one database plus
# one login role per service.
#
# Usage: deploy/stack/postgres.sh [start|stop|status]        (default: start)
# Env:   PG_DURABLE=1  keep fsync and full_page_writes on (the benchmark must measure a durable
#                      database); by default both are off because the tests throw the data away.
#
# Idempotent: start on a running, correctly configured cluster changes nothing and restarts nothing.
# The passwords below are local development defaults, never production credentials.
set -euo pipefail

# the lock of the run that called this (one-run.sh) is not for the daemons started here to keep
if [ -n "${ORDER_SAGA_RUN_LOCK_FD:-}" ] && [ -e "/proc/$$/fd/$ORDER_SAGA_RUN_LOCK_FD" ]; then
  exec {ORDER_SAGA_RUN_LOCK_FD}<&-
fi
unset ORDER_SAGA_RUN_LOCK_FD

PG_VERSION=15
PG_CLUSTER=main
PG_HOST=127.0.0.1
PG_PORT=5432
PG_CONF="/etc/postgresql/$PG_VERSION/$PG_CLUSTER/conf.d/90-order-saga.conf"
PG_HBA="/etc/postgresql/$PG_VERSION/$PG_CLUSTER/order-saga-pg_hba.conf"
SERVICES=(order inventory payment shipping)

die() { echo "postgres.sh: $*" >&2; exit 1; }
log() { echo "postgres.sh: $*"; }

# postgresql-15 comes from Debian 12's (bookworm) own archive; another release carries another version (Debian 13:
# 17), and apt-get would fail half-way through. So the release is checked before installing; a machine that has
# postgresql-15 already (from PGDG, say) runs it whatever its release.
check_release_for_install() {
  local os_id="" os_codename="" os_name=""
  if [ -r /etc/os-release ]; then
    os_id=$(. /etc/os-release && echo "${ID:-}")
    os_codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    os_name=$(. /etc/os-release && echo "${PRETTY_NAME:-${ID:-}}")
  fi
  [ "$os_id" = debian ] && [ "$os_codename" = bookworm ] ||
    die "PostgreSQL $PG_VERSION is not installed, and only Debian 12 (bookworm) has postgresql-$PG_VERSION to install; this is ${os_name:-a system without /etc/os-release}: install postgresql-$PG_VERSION"
}

# The cluster is managed with Debian's tools and its files are owned by root/postgres, so we
# need root; sudo is accepted so that a developer can run this without a root shell.
if [ "$(id -u)" -eq 0 ]; then
  AS_ROOT=()
elif command -v sudo >/dev/null 2>&1; then
  # Without a terminal (the system tests restart PostgreSQL from Java, long after the sudo password was given) a
  # prompt would wait unseen and read what is typed next: sudo must then fail at once instead.
  if [ -t 0 ]; then AS_ROOT=(sudo); else AS_ROOT=(sudo -n); fi
else
  die "needs root (or sudo) to manage the PostgreSQL $PG_VERSION cluster"
fi

# A start or stop that hangs ends here, as root: the system tests give up on this script after 3 minutes, and what runs
# under sudo is beyond their reach, so it must not go on to stop or start the cluster under the next test.
PG_CTL_TIMEOUT=150

# Superuser access over the Unix socket uses peer authentication, which works before the
# postgres password is set. cd / so that psql running as postgres can read its working directory.
psql_admin() {
  (cd / && "${AS_ROOT[@]}" runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$PG_PORT" "$@")
}

installed() {
  command -v pg_ctlcluster >/dev/null 2>&1 && [ -x "/usr/lib/postgresql/$PG_VERSION/bin/postgres" ]
}

# Prints the Debian cluster status (online/down), or nothing when the cluster does not exist.
cluster_status() {
  pg_lsclusters -h 2>/dev/null | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1 == v && $2 == c { print $4 }'
}

ensure_installed() {
  installed && return 0
  command -v apt-get >/dev/null 2>&1 ||
    die "PostgreSQL $PG_VERSION is not installed and apt-get is not available: install postgresql-$PG_VERSION"
  check_release_for_install
  log "installing postgresql-$PG_VERSION with apt-get"
  "${AS_ROOT[@]}" apt-get update -qq
  "${AS_ROOT[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    "postgresql-$PG_VERSION" "postgresql-client-$PG_VERSION" >/dev/null
  installed || die "postgresql-$PG_VERSION still missing after apt-get install"
}

ensure_cluster() {
  [ -n "$(cluster_status)" ] && return 0
  log "creating cluster $PG_VERSION/$PG_CLUSTER"
  "${AS_ROOT[@]}" pg_createcluster "$PG_VERSION" "$PG_CLUSTER" --port "$PG_PORT" >/dev/null
}

# The desired settings, rendered to stdout so that they can be compared with what is installed.
render_conf() {
  cat <<EOF
# Managed by order-saga deploy/stack/postgres.sh: edits are overwritten on the next start.
listen_addresses = '$PG_HOST'
port = $PG_PORT
# Debian's client authentication and one rule more (render_hba says which).
hba_file = '$PG_HBA'
EOF
  cat <<'EOF'
# Debezium reads each service's outbox through a pgoutput replication slot.
wal_level = logical
# One slot and one walsender per service, plus headroom for test engines and hot standbys.
max_replication_slots = 20
max_wal_senders = 20
# Four services, each with a JDBC pool, plus the test suites connecting to every database.
max_connections = 300
# An abandoned slot (a service that never came back) must not fill the disk with WAL.
max_slot_wal_keep_size = 2GB
# A relay whose host vanished keeps its slot active until its walsender gives up on it: 60 s by
# default, where the relay's lock frees after about 20 s (TCP keepalive), so a standby took the lock
# and then waited for the slot. Debezium answers the walsender at least every 10 s.
wal_sender_timeout = 20s
# synchronous_commit stays on: the walsender ships only flushed WAL, so asynchronous commit
# would add about wal_writer_delay (~200 ms) to every outbox event's latency.
# Sized for a write-heavy load rather than Debian's defaults (128MB, 1GB, 5min). With 128 MB the
# sessions evicted dirty pages themselves (pg_stat_bgwriter's buffers_backend: a write call
# each), and with a checkpoint every few minutes the WAL was mostly full-page images (pg_stat_wal's
# wal_fpi; about 50 KB of WAL a saga), which each commit flushes and every walsender reads and checks.
# None of this weakens durability: fsync, full_page_writes and synchronous_commit are untouched;
# a crash replays more WAL.
shared_buffers = 1GB
max_wal_size = 4GB
checkpoint_timeout = 15min
EOF
  # Full-page images compress well; lz4 costs least CPU where the build has it.
  if "/usr/lib/postgresql/$PG_VERSION/bin/pg_config" --configure 2>/dev/null | grep -q -- '--with-lz4'; then
    echo "wal_compression = lz4"
  else
    echo "wal_compression = pglz"
  fi
  # The benchmark counts each service's statements per saga from pg_stat_statements: a hash lookup
  # per statement, and a count that repeats from run to run where throughput does not. Debian's
  # postgresql-15 ships it; a build without it would not start with it preloaded.
  if [ -f "/usr/lib/postgresql/$PG_VERSION/lib/pg_stat_statements.so" ]; then
    echo "# Statement counts for the benchmark (deploy/stack/postgres.sh says why)."
    echo "shared_preload_libraries = 'pg_stat_statements'"
  fi
  if [ "${PG_DURABLE:-0}" != 1 ]; then
    cat <<'EOF'
# Test mode: the data is disposable, so trade crash safety for speed (PG_DURABLE=1 removes this).
fsync = off
full_page_writes = off
EOF
  fi
}

# Client authentication: Debian's rules, and before them one that refuses the services' roles a physical replication
# connection. They have REPLICATION for the logical decoding of their own database (REVOKE CONNECT keeps them to it,
# ensure_roles_and_databases), and with it Debian's rules would let them stream the whole cluster's WAL, every
# database's (pg_basebackup). A logical replication connection names its database and matches the "all" rules.
render_hba() {
  local svc
  echo "# Managed by order-saga deploy/stack/postgres.sh: edits are overwritten on the next start."
  for svc in "${SERVICES[@]}"; do
    echo "host    replication     ${svc}_svc    all                     reject"
  done
  cat <<'EOF'
local   all             postgres                                peer
local   all             all                                     peer
host    all             all             127.0.0.1/32            scram-sha-256
host    all             all             ::1/128                 scram-sha-256
local   replication     all                                     peer
host    replication     all             127.0.0.1/32            scram-sha-256
host    replication     all             ::1/128                 scram-sha-256
EOF
}

# Installs a managed file from stdin; returns 0 when the file on disk changed, 1 when it was as desired, 2 when it
# could not be written (each step checked: called from an if, set -e does not stop at a failing one).
install_managed() {
  local path=$1 desired
  desired=$(cat)
  if [ -f "$path" ] && [ "$(cat "$path")" = "$desired" ]; then
    return 1
  fi
  "${AS_ROOT[@]}" install -d -o postgres -g postgres "$(dirname "$path")" || return 2
  printf '%s\n' "$desired" | "${AS_ROOT[@]}" tee "$path" >/dev/null || return 2
  "${AS_ROOT[@]}" chown postgres:postgres "$path" || return 2
  log "wrote $path"
  return 0
}

# Writes what a render function prints to a managed file, as install_managed does; a file that could not be written
# stops the script before the cluster is restarted on what it holds.
write_managed() {
  local rc=0
  "$1" | install_managed "$2" || rc=$?
  [ "$rc" -le 1 ] || die "could not write $2"
  return "$rc"
}

# Installs the settings and the client authentication; returns 0 when either changed on disk.
write_conf() {
  local changed=1
  write_managed render_hba "$PG_HBA" && changed=0
  write_managed render_conf "$PG_CONF" && changed=0
  return "$changed"
}

wait_ready() {
  local deadline=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$deadline" ]; do
    pg_isready -q -h "$PG_HOST" -p "$PG_PORT" && return 0
    sleep 0.25
  done
  die "PostgreSQL not accepting connections on $PG_HOST:$PG_PORT after 30 s (see /var/log/postgresql/postgresql-$PG_VERSION-$PG_CLUSTER.log)"
}

# Roles and databases converge to the desired state whether or not they exist already.
ensure_roles_and_databases() {
  local svc role db sql=""
  # The tests read every service's database with one account, over TCP (scram-sha-256 in
  # Debian's pg_hba.conf), so the superuser needs a password.
  sql+="ALTER ROLE postgres PASSWORD 'postgres';"$'\n'
  for svc in "${SERVICES[@]}"; do
    role="${svc}_svc"
    db="${svc}_db"
    # REPLICATION lets the service's embedded Debezium engine create and read its own slot.
    sql+="SELECT format('CREATE ROLE %I', '$role') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$role')"$'\n'
    sql+="\\gexec"$'\n'
    sql+="ALTER ROLE $role WITH LOGIN REPLICATION PASSWORD '$role';"$'\n'
    # CREATE DATABASE cannot run in a transaction block (so not in a DO block): \gexec instead.
    sql+="SELECT format('CREATE DATABASE %I OWNER %I', '$db', '$role') WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$db')"$'\n'
    sql+="\\gexec"$'\n'
    # Owning the database lets the service create its schema (Flyway) and its publication.
    sql+="ALTER DATABASE $db OWNER TO $role;"$'\n'
    # Only its owner (and the superuser) may connect: PostgreSQL lets every role connect to every database, and a role
    # with REPLICATION could decode another service's database through a slot of its own, whatever its tables' grants.
    sql+="REVOKE CONNECT, TEMPORARY ON DATABASE $db FROM PUBLIC;"$'\n'
  done
  printf '%s' "$sql" | psql_admin -d postgres
}

summary() {
  PGPASSWORD=postgres psql -X -h "$PG_HOST" -p "$PG_PORT" -U postgres -d postgres -tAc "
    SELECT format('postgres ready on %s:%s  wal_level=%s max_replication_slots=%s slots_in_use=%s max_connections=%s fsync=%s  databases: %s',
      '$PG_HOST', '$PG_PORT',
      current_setting('wal_level'), current_setting('max_replication_slots'),
      (SELECT count(*) FROM pg_replication_slots), current_setting('max_connections'),
      current_setting('fsync'),
      (SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database WHERE datname LIKE '%\\_db'))"
}

start() {
  ensure_installed
  ensure_cluster
  local changed=0
  if write_conf; then changed=1; fi

  if [ "$(cluster_status)" != online ]; then
    log "starting cluster $PG_VERSION/$PG_CLUSTER"
    "${AS_ROOT[@]}" timeout "$PG_CTL_TIMEOUT" pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" start
  elif [ "$changed" = 1 ] || [ "$(psql_admin -tAc 'SHOW wal_level')" != logical ]; then
    # wal_level, max_connections and the slot limits only take effect on a restart.
    log "restarting cluster $PG_VERSION/$PG_CLUSTER to apply settings"
    "${AS_ROOT[@]}" timeout "$PG_CTL_TIMEOUT" pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" restart
  fi
  wait_ready

  [ "$(psql_admin -tAc 'SHOW wal_level')" = logical ] ||
    die "wal_level is not logical although $PG_CONF sets it: is it overridden by postgresql.auto.conf (ALTER SYSTEM)?"
  # RelaySlotLostIT lowers this with ALTER SYSTEM for a moment; a run killed meanwhile must not leave every idle
  # slot a checkpoint away from being invalidated.
  if [ -n "$(psql_admin -tAc "SELECT 1 FROM pg_file_settings WHERE name = 'max_slot_wal_keep_size' AND sourcefile LIKE '%postgresql.auto.conf'")" ]; then
    log "resetting max_slot_wal_keep_size left by ALTER SYSTEM"
    psql_admin -tAc 'ALTER SYSTEM RESET max_slot_wal_keep_size' >/dev/null
    psql_admin -tAc 'SELECT pg_reload_conf()' >/dev/null
  fi
  ensure_roles_and_databases
  summary
}

stop() {
  installed || { log "not installed, nothing to stop"; return 0; }
  if [ "$(cluster_status)" = online ]; then
    "${AS_ROOT[@]}" timeout "$PG_CTL_TIMEOUT" pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" stop
    log "stopped cluster $PG_VERSION/$PG_CLUSTER"
  else
    log "cluster $PG_VERSION/$PG_CLUSTER is not running"
  fi
}

status() {
  if installed && [ "$(cluster_status)" = online ] && pg_isready -q -h "$PG_HOST" -p "$PG_PORT"; then
    echo "postgres: online on $PG_HOST:$PG_PORT (cluster $PG_VERSION/$PG_CLUSTER)"
    return 0
  fi
  echo "postgres: not running"
  return 1
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 [start|stop|status]" >&2; exit 2 ;;
esac
