# Sourced, not run, by deploy/run.sh and deploy/test.sh: installs a missing command with Debian's apt-get, as root or
# through sudo (as postgres.sh manages the cluster), and names the package when neither is at hand rather than fail in
# apt-get's words.
#
# Usage: install_command <command> <Debian package that provides it>
install_command() {
  command -v "$1" >/dev/null 2>&1 && return 0
  local as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "$1 is missing: install the Debian package $2 (this needs root, and sudo is not available)" >&2
      return 1
    }
    as_root=(sudo)
  fi
  command -v apt-get >/dev/null 2>&1 || { echo "$1 is missing and apt-get is not available: install $2" >&2; return 1; }
  "${as_root[@]}" apt-get update -qq &&
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2"
}
