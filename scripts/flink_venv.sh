#!/usr/bin/env bash
# Apache Flink from PyPI in a venv of its own (~/.cache/dagster-streamt/flink-venv): apache-flink pins
# py4j and pandas/pyarrow versions that conflict with pyspark's, so it cannot share our environment.
# The differential tests (tests/flink) run Flink through this venv's python; they skip without it.
# Idempotent: a venv whose pyflink imports is left as it is.
set -euo pipefail
FLINK_VERSION="${FLINK_VERSION:-1.20.3}"
VENV="${STREAMT_FLINK_VENV:-$HOME/.cache/dagster-streamt/flink-venv}"
PY="$VENV/bin/python"
if [ -x "$PY" ] && "$PY" -c 'import pyflink.table' >/dev/null 2>&1; then
  echo "flink_venv: $VENV present (apache-flink $("$PY" -c 'import importlib.metadata as m; print(m.version("apache-flink"))'))"
  exit 0
fi
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV"
# shellcheck source=py_install.sh
. "$(dirname "$0")/py_install.sh"
py_install "$PY" "apache-flink==$FLINK_VERSION"
"$PY" -c 'import pyflink.table' && echo "flink_venv: apache-flink $FLINK_VERSION installed in $VENV"
