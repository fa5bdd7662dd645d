#!/usr/bin/env bash
# What the example needs, on a fresh Debian/Ubuntu machine: Java 17 for Spark (with apt-get when missing),
# this package with its pinned dependencies, and Delta Lake's jars (`streamt jars fetch delta`: resolved
# once by Spark's own Ivy from Maven Central into ~/.cache/dagster-streamt/jars/; a run would fetch them on
# first use anyway). The test suite's tools (PostgreSQL, Chromium, Apache Flink, dev extras) are
# scripts/setup-dev.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
java_major() { java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1])}'; }
if ! command -v java >/dev/null 2>&1 || [ "$(java_major)" -lt 17 ]; then
  echo "setup: installing Java 17 (Spark needs it)"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: apt-get not available; install Java 17 or newer yourself" >&2
    exit 1
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check -e .
streamt jars fetch delta
echo "setup: done ($(java -version 2>&1 | head -1); $(python3 -c 'import pyspark; print("pyspark", pyspark.__version__)'))"
