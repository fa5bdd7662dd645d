#!/usr/bin/env bash
# Resolve, with mvn, Delta Lake's jars for the installed pyspark into the user's cache
# (dagster_streamt/spark/delta_jars.py reads the same folder):
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dagster-streamt/jars/delta-<delta>-spark-<spark>/
# delta-spark is built per Spark minor (delta-spark_4.2_2.13 for Spark 4.2.x); which jars and why:
# scripts/maven/delta.xml. How a folder is resolved and marked complete: scripts/jar_cache.sh.
# scripts/setup.sh runs this after installing pyspark; run it alone to refetch (delete the folder to force it).
set -euo pipefail
cd "$(dirname "$0")/.."

# Keep in step with delta_jars.py's DELTA_VERSION and pyproject's delta-spark pin.
DELTA_VERSION="${STREAMT_DELTA_VERSION:-4.4.0}"
SPARK_VERSION="${STREAMT_SPARK_VERSION:-$(python3 -c 'import pyspark; print(pyspark.__version__)')}"
JARS_TAG=delta_jars
# shellcheck source=scripts/jar_cache.sh
source scripts/jar_cache.sh

if ! resolve "delta-$DELTA_VERSION-spark-$SPARK_VERSION" scripts/maven/delta.xml "delta.version=$DELTA_VERSION" no-bundled; then
  echo "delta_jars: no Delta Lake $DELTA_VERSION jars; tables cannot be written on Spark" >&2
  exit 1
fi
