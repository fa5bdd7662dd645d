#!/usr/bin/env bash
# Install everything dagster-streamt needs on a fresh Debian/Ubuntu machine: Java 17 for Spark
# (when missing), Delta Lake's and Kafka's jars (with Maven), PostgreSQL + its JDBC driver for the JDBC sink tests, Chromium for the docs site's
# browser tests, and the Python package (its dev extras bring Playwright, which drives that Chromium:
# never `playwright install`, which downloads a browser of its own; and the docs extra: MkDocs, Material and
# mkdocstrings, which build the user guide in docs/).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
apt_updated=0
apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: apt-get not available; install $* yourself" >&2
    return 1
  fi
  if [ "$apt_updated" = 0 ]; then $SUDO apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

java_major() { java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1])}'; }
if ! command -v java >/dev/null 2>&1 || [ "$(java_major)" -lt 17 ]; then
  echo "setup: installing Java 17 (Spark needs it)"
  apt_install openjdk-17-jre-headless
fi

if [ ! -f /usr/share/java/postgresql.jar ] || ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
  echo "setup: installing PostgreSQL and its JDBC driver (JDBC sink tests)"
  apt_install postgresql libpostgresql-jdbc-java || echo "setup: PostgreSQL unavailable; JDBC tests will skip" >&2
fi

if [ ! -x /usr/bin/chromium ]; then
  echo "setup: installing Chromium (browser tests of streamt docs)"
  apt_install chromium || echo "setup: Chromium unavailable; the browser tests will skip" >&2
fi

PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check -e '.[dev]'

# Kafka's jars (Spark's connector for the pyspark just installed, a local broker), resolved with mvn into
# ~/.cache/dagster-streamt/jars once; later runs find them complete and skip (scripts/kafka_jars.sh).
if ! command -v mvn >/dev/null 2>&1; then
  echo "setup: installing Maven (resolves the Kafka jars)"
  apt_install maven || echo "setup: Maven unavailable; the Kafka tests will skip" >&2
fi
if command -v mvn >/dev/null 2>&1 && ! bash scripts/kafka_jars.sh; then
  echo "setup: some Kafka jars are missing (above); the Kafka tests that need them skip" >&2
fi
# Delta Lake's jars (delta-spark, delta-storage) for the same pyspark, into the same cache (scripts/delta_jars.sh):
# every table and stream output is a Delta table, so a missing Maven fails setup here rather than every run later.
if ! command -v mvn >/dev/null 2>&1 || ! bash scripts/delta_jars.sh; then
  echo "setup: Delta Lake's jars could not be resolved (above); runs that store tables will fail" >&2
  exit 1
fi
# Hadoop's S3A connector (hadoop-aws for pyspark's Hadoop client) into the same cache (scripts/object_store_jars.sh):
# only projects with s3a:// locations need it; without it their sessions fail with the fetch command
bash scripts/object_store_jars.sh || echo "setup: hadoop-aws could not be resolved (above); the S3 tests skip" >&2
bash scripts/flink_venv.sh || echo "setup: Apache Flink's venv failed (above); the Flink reference tests (tests/flink) skip" >&2
echo "setup: done ($(java -version 2>&1 | head -1); $(python3 -c 'import pyspark; print("pyspark", pyspark.__version__)'))"
