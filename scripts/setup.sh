#!/usr/bin/env bash
# What the example needs, on a fresh Debian/Ubuntu machine: Java 17 for Spark (with apt-get when missing),
# this package with its pinned dependencies (with uv when it can be had, else pip: scripts/py_install.sh),
# and Delta Lake's jars (`streamt jars fetch delta`: resolved once by Spark's own Ivy from Maven Central
# into ~/.cache/dagster-streamt/jars/; a run would fetch them on first use anyway). The test suite's tools
# (PostgreSQL, Chromium, Apache Flink, dev extras) are scripts/setup-dev.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
java_major() { java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1])}'; }
install_java() {
  if command -v java >/dev/null 2>&1 && [ "$(java_major)" -ge 17 ]; then return 0; fi
  echo "setup: installing Java 17 (Spark needs it)"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: apt-get not available; install Java 17 or newer yourself" >&2
    return 1
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
}
if [ "${1:-}" = "--java" ]; then  # only Java (scripts/setup-dev.sh installs it with its other apt packages)
  install_java
  exit
fi

# Java installs (apt) while the package does (pip needs no Java); the jars need both
install_java &
java_pid=$!
# shellcheck source=py_install.sh
. scripts/py_install.sh
py_install "$(command -v python3)" -e .
wait "$java_pid"
streamt jars fetch delta
echo "setup: done ($(java -version 2>&1 | head -1); $(python3 -c 'import pyspark; print("pyspark", pyspark.__version__)'))"
