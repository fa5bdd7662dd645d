#!/usr/bin/env bash
# Everything the checks and the test suite need, on a fresh Debian/Ubuntu machine: scripts/setup.sh (Java,
# the package, Delta's jars), then with apt-get when missing PostgreSQL and its JDBC driver (JDBC sink and
# instance tests) and Chromium (browser tests: Playwright drives Debian's chromium, never `playwright
# install`), the dev and docs extras, every jar set (`streamt jars fetch --all`: Kafka and Avro connectors,
# S3A, a Kafka broker) and Apache Flink's venv for the reference tests (scripts/flink_venv.sh, built
# while the rest installs).
set -euo pipefail
cd "$(dirname "$0")/.."

# Flink's venv shares nothing with the steps below (its own python and pip; no apt, no jars): built
# meanwhile, it takes none of their time (~70 s alone on a fresh machine, mostly unpacking wheels)
flink_log="$(mktemp)"
bash scripts/flink_venv.sh >"$flink_log" 2>&1 &
flink_pid=$!

bash scripts/setup.sh

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

PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check -e '.[dev]'
streamt jars fetch --all
if wait "$flink_pid"; then
  cat "$flink_log"
else
  cat "$flink_log" >&2
  echo "setup-dev: Apache Flink's venv failed (above); the Flink reference tests (tests/flink) skip" >&2
fi
rm -f "$flink_log"
echo "setup-dev: done"
