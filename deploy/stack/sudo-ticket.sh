# Sourced, not run, by deploy/test.sh and faults.sh, whose system tests stop and start PostgreSQL through
# deploy/stack/postgres.sh long after the run began. Not run as root, postgres.sh manages the cluster through sudo,
# and from the tests it runs sudo -n: a password prompt there would wait unseen under the tests' output and read what
# is typed next. So sudo is asked here, once, at the terminal, and its ticket kept fresh for as long as the run lasts.
#
# Usage: . deploy/stack/sudo-ticket.sh <name of the calling script, for the message>   (before one-run.sh: the loop
#        below must not hold the run's lock)
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
  sudo -v || { echo "${1:-order-saga}: the system tests restart PostgreSQL through sudo, which refused" >&2; exit 1; }
  # $$ is the run, and stays so once it execs Maven: the loop ends with it
  (run=$$; while kill -0 "$run" 2>/dev/null; do sudo -n -v || true; sleep 50; done) </dev/null >/dev/null 2>&1 &
fi
