#!/usr/bin/env bash
# Resolve, with mvn, Hadoop's S3A connector for the Hadoop client the installed pyspark bundles into the
# user's cache (dagster_streamt/spark/object_store_jars.py reads the same folder):
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dagster-streamt/jars/hadoop-aws-<hadoop>/
# hadoop-aws must match Hadoop's exact version; which jars and why: scripts/maven/hadoop-aws.xml. How a
# folder is resolved and marked complete: scripts/jar_cache.sh. scripts/setup.sh runs this.
set -euo pipefail
cd "$(dirname "$0")/.."

HADOOP_VERSION="${STREAMT_HADOOP_VERSION:-$(python3 -c 'from dagster_streamt.spark.object_store_jars import hadoop_version; print(hadoop_version())')}"
JARS_TAG=object_store_jars
# shellcheck source=scripts/jar_cache.sh
source scripts/jar_cache.sh

if ! resolve "hadoop-aws-$HADOOP_VERSION" scripts/maven/hadoop-aws.xml "hadoop.version=$HADOOP_VERSION" no-bundled; then
  echo "object_store_jars: no hadoop-aws $HADOOP_VERSION; s3a:// warehouses and paths cannot be used" >&2
  exit 1
fi
