"""Run model SQL on Apache Flink and print each result as JSON: the reference side of the harness.

Runs under the Flink venv's python (scripts/flink_venv.sh), never in the suite's interpreter:
apache-flink pins a py4j that pyspark cannot share. One process, one TableEnvironment, every case:
Flink's start-up costs far more than a query on a few hundred rows.

Streaming mode over bounded files, as streamt runs its models: at the end of the files Flink emits
the final watermark, which closes every window; an updating result is folded from its changelog
(+I/+U add a row, -U/-D take one away) into the final multiset.

Input (stdin, JSON): ``{"sources": [{"name", "path", "columns": [[name, flink_type]], "event_time",
"delay_ms", "primary_key"}], "views": [{"name", "sql"}], "cases": [{"name", "sql"}]}``.
Output (stdout, one JSON line per case): ``{"name", "columns", "rows"}`` or ``{"name", "error"}``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sys
from collections import Counter
from typing import Any


def plain(value: Any) -> Any:
    """A JSON value for a Flink field (timestamps as ISO text, decimals as floats: compared rounded)."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):  # a MULTISET (COLLECT): value -> count
        return [plain(k) for k, n in value.items() for _ in range(int(n))]
    return value


def ddl(source: dict[str, Any]) -> str:
    cols = [f"`{name}` {kind}" for name, kind in source["columns"]]
    if source.get("event_time"):
        ts, delay = source["event_time"], int(source.get("delay_ms") or 0)
        cols.append(f"WATERMARK FOR `{ts}` AS `{ts}` - INTERVAL '{delay / 1000:.3f}' SECOND")
    if source.get("primary_key"):
        cols.append(f"PRIMARY KEY ({', '.join(source['primary_key'])}) NOT ENFORCED")
    return (f"CREATE TEMPORARY TABLE `{source['name']}` (\n  " + ",\n  ".join(cols) + "\n) WITH ("
            f"'connector' = 'filesystem', 'path' = '{source['path']}', 'format' = 'json', "
            "'json.timestamp-format.standard' = 'ISO-8601', 'json.ignore-parse-errors' = 'false')")


def run_case(t_env: Any, sql: str) -> dict[str, Any]:
    from pyflink.common import RowKind

    table = t_env.sql_query(sql)
    columns = table.get_schema().get_field_names()
    rows: Counter[str] = Counter()
    with table.execute().collect() as results:
        for row in results:
            key = json.dumps(plain(list(row)))
            if row.get_row_kind() in (RowKind.UPDATE_BEFORE, RowKind.DELETE):
                rows[key] -= 1
            else:
                rows[key] += 1
    return {"columns": list(columns), "rows": [json.loads(k) for k, n in rows.items() for _ in range(n)]}


def reason(exc: Exception) -> str:
    """The Java exception's own message (the first line of a py4j error only names the call)."""
    lines = [line.strip() for line in str(exc).splitlines()]
    found = [line for line in lines if "Exception:" in line and not line.startswith("at ")]
    return (found[-1] if found else lines[0] if lines else type(exc).__name__)[:500]


def main() -> None:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    spec = json.load(sys.stdin)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = t_env.get_config()
    conf.set("parallelism.default", "1")
    conf.set("table.local-time-zone", "UTC")
    for source in spec["sources"]:
        t_env.execute_sql(ddl(source))
    for view in spec.get("views", []):
        t_env.execute_sql(f"CREATE TEMPORARY VIEW `{view['name']}` AS {view['sql']}")
    for case in spec["cases"]:
        try:
            out = {"name": case["name"], **run_case(t_env, case["sql"])}
        except Exception as exc:  # a case Flink rejects is reported, the others still run
            out = {"name": case["name"], "error": reason(exc)}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
