# Shared by scripts/kafka_jars.sh and scripts/delta_jars.sh (sourced, not run): resolve a pom's runtime
# dependencies with mvn into the user's jar cache, ${XDG_CACHE_HOME:-$HOME/.cache}/dagster-streamt/jars/<name>/,
# complete once its .complete marker exists (written last, so a half-copied folder never counts).
# A rerun finds the marker and skips (no mvn, no network) unless the pom changed since.
# mvn tries its local repository first (-o) and the registry only for what is missing.
# The caller sets JARS_TAG (the prefix of messages) before sourcing.

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
    echo "$JARS_TAG: mvn could not resolve $name ($pom, $prop):" >&2
    { grep -m1 -E 'ERROR' "$log" || tail -3 "$log"; } | sed -e 's/\x1b\[[0-9;]*m//g' | cut -c1-400 >&2
    rm -rf "$tmp" "$log"
    return 1
  fi
  rm -f "$log"
  if [ "${4:-}" = "no-bundled" ]; then
    for jar in "$tmp"/*.jar; do
      if compgen -G "$PYSPARK_JARS/$(artifact "$jar")-[0-9]*.jar" >/dev/null; then
        echo "$JARS_TAG: dropping $(basename "$jar"): pyspark bundles $(artifact "$jar")"
        rm -f "$jar"
      fi
    done
  fi
  echo "$stamp" >"$tmp/.complete"
  rm -rf "$dest"
  mv "$tmp" "$dest"
  echo "$JARS_TAG: $name: $(find "$dest" -name '*.jar' | wc -l) jars, $(du -sh "$dest" | cut -f1) in $dest"
}
