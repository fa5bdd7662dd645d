#!/usr/bin/env bash
# Resolve, with mvn, the JVM jars that Kafka needs and pyspark does not ship, into the user's cache
# (dagster_streamt/kafka/jars.py reads the same folders):
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dagster-streamt/jars/spark-kafka-<spark>/   Spark's Kafka + Avro connectors
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dagster-streamt/jars/kafka-broker-<kafka>/  a Kafka broker (KRaft)
# How a folder is resolved and marked complete: scripts/jar_cache.sh. scripts/setup.sh runs this after
# installing pyspark; run it alone to refetch (delete a folder to force it).
set -euo pipefail
cd "$(dirname "$0")/.."

# The broker version: the newest Kafka 4.x served (4.4.0). Brokers 4.x speak to clients from 2.1 on,
# so Spark's kafka-clients (3.9.x in Spark 4.2) works with it. Keep in step with jars.py's KAFKA_VERSION.
KAFKA_VERSION="${STREAMT_KAFKA_VERSION:-4.4.0}"
SPARK_VERSION="${STREAMT_SPARK_VERSION:-$(python3 -c 'import pyspark; print(pyspark.__version__)')}"
JARS_TAG=kafka_jars
# shellcheck source=scripts/jar_cache.sh
source scripts/jar_cache.sh

status=0
if ! resolve "spark-kafka-$SPARK_VERSION" scripts/maven/spark-kafka.xml "spark.version=$SPARK_VERSION" no-bundled; then
  echo "kafka_jars: no Spark Kafka connector for pyspark $SPARK_VERSION; Kafka runs on Spark will fail" >&2
  status=1
fi
resolve "kafka-broker-$KAFKA_VERSION" scripts/maven/kafka-broker.xml "kafka.version=$KAFKA_VERSION" || status=1
exit $status
