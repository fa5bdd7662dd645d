#!/usr/bin/env bash
# Resolve, with mvn, the JVM jars that Kafka needs and pyspark does not ship, into the user's cache
# (dagster_streamt/kafka/jars.py reads the same folders):
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dagster-streamt/jars/spark-kafka-<spark>/   Spark's Kafka + Avro connectors
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dagster-streamt/jars/kafka-broker-<kafka>/  a Kafka broker (KRaft)
# A folder is complete once its .complete marker exists; a rerun skips it (no mvn, no network) unless
# its pom changed since.
# mvn tries its local repository first (-o) and the registry only for what is missing. scripts/setup.sh
# runs this after installing pyspark; run it alone to refetch (delete a folder to force it).
set -euo pipefail
cd "$(dirname "$0")/.."

# The broker version: the newest Kafka 4.x served (4.4.0). Brokers 4.x speak to clients from 2.1 on,
# so Spark's kafka-clients (3.9.x in Spark 4.2) works with it. Keep in step with jars.py's KAFKA_VERSION.
KAFKA_VERSION="${STREAMT_KAFKA_VERSION:-4.4.0}"
SPARK_VERSION="${STREAMT_SPARK_VERSION:-$(python3 -c 'import pyspark; print(pyspark.__version__)')}"
PYSPARK_JARS="$(python3 -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/dagster-streamt/jars"

# jar file name -> artifact name (kafka-clients-3.9.2.jar -> kafka-clients; zstd-jni-1.5.7-17.jar -> zstd-jni)
artifact() { basename "$1" .jar | sed -E 's/-[0-9][0-9A-Za-z.]*(-[0-9A-Za-z.]+)?$//'; }

# resolve NAME POM PROPERTY=VALUE [no-bundled]: copy POM's runtime dependencies into $CACHE/NAME, marked
# complete; no-bundled drops any jar pyspark bundles (at whatever version), so none sits twice on Spark's
# classpath: the pom excludes those it knows, this catches what a later Spark adds.
resolve() {
  local name="$1" pom="$2" prop="$3" dest="$CACHE/$1" tmp log stamp
  stamp="$prop pom:$(sha1sum "$pom" | cut -c1-12)"  # a changed pom (exclusions) resolves again
  [ "$(cat "$dest/.complete" 2>/dev/null)" = "$stamp" ] && return 0
  mkdir -p "$CACHE"
  tmp="$(mktemp -d "$CACHE/.$name.XXXXXX")"
  log="$tmp.log"
  local args=(-B -q -f "$pom" "-D$prop" dependency:copy-dependencies -DincludeScope=runtime
              "-DoutputDirectory=$tmp")
  if ! mvn -o "${args[@]}" >"$log" 2>&1 && ! mvn "${args[@]}" >"$log" 2>&1; then
    echo "kafka_jars: mvn could not resolve $name ($pom, $prop):" >&2
    { grep -m1 -E 'ERROR' "$log" || tail -3 "$log"; } | sed -e 's/\x1b\[[0-9;]*m//g' | cut -c1-400 >&2
    rm -rf "$tmp" "$log"
    return 1
  fi
  rm -f "$log"
  if [ "${4:-}" = "no-bundled" ]; then
    for jar in "$tmp"/*.jar; do
      if compgen -G "$PYSPARK_JARS/$(artifact "$jar")-[0-9]*.jar" >/dev/null; then
        echo "kafka_jars: dropping $(basename "$jar"): pyspark bundles $(artifact "$jar")"
        rm -f "$jar"
      fi
    done
  fi
  echo "$stamp" >"$tmp/.complete"
  rm -rf "$dest"
  mv "$tmp" "$dest"
  echo "kafka_jars: $name: $(find "$dest" -name '*.jar' | wc -l) jars, $(du -sh "$dest" | cut -f1) in $dest"
}

status=0
if ! resolve "spark-kafka-$SPARK_VERSION" scripts/maven/spark-kafka.xml "spark.version=$SPARK_VERSION" no-bundled; then
  echo "kafka_jars: no Spark Kafka connector for pyspark $SPARK_VERSION; Kafka runs on Spark will fail" >&2
  status=1
fi
resolve "kafka-broker-$KAFKA_VERSION" scripts/maven/kafka-broker.xml "kafka.version=$KAFKA_VERSION" || status=1
exit $status
