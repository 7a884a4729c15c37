#!/usr/bin/env bash
# Creates the Kafka topics listed in deploy/stack/topics.txt on the local broker (kafka.sh).
# The broker has auto.create.topics.enable=false, so this must run before any service starts.
#
# Usage: deploy/stack/topics.sh [topics-file]        (default: deploy/stack/topics.txt)
#
# Idempotent: existing topics are left alone. A topic that exists with another partition count
# is reported as an error and not altered: adding partitions silently would move keys (order
# ids) to other partitions and break per-order ordering for events already written.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
KAFKA_HOME="$REPO/.stack/kafka"   # written by kafka.sh
LIBS="$KAFKA_HOME/libs"
BOOTSTRAP=127.0.0.1:9092
REPLICATION_FACTOR=1              # single-node broker
TOPICS_FILE=${1:-"$SCRIPT_DIR/topics.txt"}

die() { echo "topics.sh: $*" >&2; exit 1; }
log() { echo "topics.sh: $*"; }

[ -f "$TOPICS_FILE" ] || die "topics file not found: $TOPICS_FILE"
command -v java >/dev/null 2>&1 || die "java not found on PATH"
ls "$LIBS"/kafka-tools-*.jar >/dev/null 2>&1 || die "no Kafka tools in $LIBS: run deploy/stack/kafka.sh start first"
"$SCRIPT_DIR/kafka.sh" status >/dev/null || die "Kafka is not running on $BOOTSTRAP: run deploy/stack/kafka.sh start first"

topic_command() {
  # The metric-name warning about '.' in topic names is noise here: no topic uses '_'.
  java -cp "$LIBS/*" org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" "$@" |
    { grep -v "^WARNING: Due to limitations in metric names" || true; }
}

# Parse first, so that a bad line fails before anything is created.
declare -A wanted=()
names=()
line_no=0
while IFS= read -r line || [ -n "$line" ]; do
  line_no=$((line_no + 1))
  line=${line%%#*}
  read -r name partitions extra <<<"$line" || true
  [ -z "${name:-}" ] && continue
  [[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "$TOPICS_FILE:$line_no: invalid topic name '$name'"
  [[ "${partitions:-}" =~ ^[1-9][0-9]*$ ]] || die "$TOPICS_FILE:$line_no: expected '<name> <partitions>', got '$line'"
  [ -z "${extra:-}" ] || die "$TOPICS_FILE:$line_no: unexpected text after the partition count: '$extra'"
  [ -z "${wanted[$name]:-}" ] || die "$TOPICS_FILE:$line_no: topic '$name' listed twice"
  wanted[$name]=$partitions
  names+=("$name")
done <"$TOPICS_FILE"
[ "${#names[@]}" -gt 0 ] || die "no topics in $TOPICS_FILE"

# One JVM for the whole check (each TopicCommand run costs ~1 s): the describe header lines
# look like "Topic: <name>\tTopicId: ...\tPartitionCount: <n>\t...".
described=$(topic_command --describe) || die "could not list the topics on $BOOTSTRAP"
declare -A existing=()
while IFS=$'\t' read -r topic_field _ count_field _; do
  existing[${topic_field#Topic: }]=${count_field#PartitionCount: }
done < <(grep '^Topic: ' <<<"$described" || true)

created=0
mismatched=()
for name in "${names[@]}"; do
  if [ -z "${existing[$name]:-}" ]; then
    # --if-not-exists: another run (or a service's test) may have created it meanwhile.
    topic_command --create --if-not-exists --topic "$name" \
      --partitions "${wanted[$name]}" --replication-factor "$REPLICATION_FACTOR" >/dev/null
    log "created $name (partitions=${wanted[$name]})"
    created=$((created + 1))
  elif [ "${existing[$name]}" != "${wanted[$name]}" ]; then
    mismatched+=("$name has ${existing[$name]} partitions, $(basename "$TOPICS_FILE") says ${wanted[$name]}")
  fi
done

if [ "${#mismatched[@]}" -gt 0 ]; then
  printf 'topics.sh: %s\n' "${mismatched[@]}" >&2
  die "fix $(basename "$TOPICS_FILE"), or delete the topic (TopicCommand --delete) or the local data (deploy/stack.sh down; rm -rf .stack/kafka/data)"
fi
log "${#names[@]} topics present on $BOOTSTRAP ($created created)"
