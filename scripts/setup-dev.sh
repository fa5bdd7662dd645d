#!/usr/bin/env bash
# Everything the checks and the test suite need, on a fresh Debian/Ubuntu machine: what scripts/setup.sh
# installs (Java, the package, Delta's jars), with apt-get when missing PostgreSQL and its JDBC driver
# (JDBC sink and instance tests) and Chromium (browser tests: Playwright drives Debian's chromium, never
# `playwright install`), the dev and docs extras, every jar set (`streamt jars fetch --all`: Kafka and
# Avro connectors, S3A, a Kafka broker) and Apache Flink's venv for the reference tests (scripts/flink_venv.sh).
#
# Three things share nothing and install side by side: Flink's venv (its own python), the system packages
# (apt: Java, PostgreSQL, Chromium, one after the other) and the Python packages (uv, else pip:
# scripts/py_install.sh, the package with its dev extras); then every jar set, Delta's included.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--apt" ]; then  # the system packages only (run in the background below)
  bash scripts/setup.sh --java
  SUDO=""
  if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
  apt_updated=0
  apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
      echo "setup-dev: apt-get not available; install $* yourself" >&2
      return 1
    fi
    if [ "$apt_updated" = 0 ]; then $SUDO apt-get update -qq; apt_updated=1; fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
  }
  if [ ! -f /usr/share/java/postgresql.jar ] || ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    echo "setup-dev: installing PostgreSQL and its JDBC driver (JDBC sink tests)"
    apt_install postgresql libpostgresql-jdbc-java || echo "setup-dev: PostgreSQL unavailable; JDBC tests will skip" >&2
  fi
  if [ ! -x /usr/bin/chromium ]; then
    echo "setup-dev: installing Chromium (browser tests)"
    apt_install chromium || echo "setup-dev: Chromium unavailable; the browser tests will skip" >&2
  fi
  exit 0
fi

flink_log="$(mktemp)"
bash scripts/flink_venv.sh >"$flink_log" 2>&1 &
flink_pid=$!
apt_log="$(mktemp)"
bash scripts/setup-dev.sh --apt >"$apt_log" 2>&1 &
apt_pid=$!

# shellcheck source=py_install.sh
. scripts/py_install.sh
py_install "$(command -v python3)" -e '.[dev]'
apt_ok=1
wait "$apt_pid" || apt_ok=0
cat "$apt_log"
rm -f "$apt_log"
if [ "$apt_ok" = 0 ]; then
  echo "setup-dev: installing the system packages failed (above)" >&2
  exit 1
fi
streamt jars fetch --all
if wait "$flink_pid"; then
  cat "$flink_log"
else
  cat "$flink_log" >&2
  echo "setup-dev: Apache Flink's venv failed (above); the Flink reference tests (tests/flink) skip" >&2
fi
rm -f "$flink_log"
echo "setup-dev: done"
