"""Differential harness: the same model SQL on Apache Flink (the reference) and through our translation on
Spark, over the same files, results compared as multisets.

Flink runs every case in one subprocess of the Flink venv (``flink_runner.py``); Spark runs every case
as a model of one streamt project in local mode (topics are folders), through the product's own run
path (render, translate, stream or table), then the stored rows are read back. Values are normalized
so that equal results compare equal and only real differences remain: timestamps as ISO text,
decimals and doubles rounded to 6 places (both are "a number with a fraction"), integers kept apart
from them (``INT / INT`` is an integer in Flink), multisets (Flink's COLLECT) and arrays as sorted lists.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

import yaml

from .cases import BASE, Case
from .data import DELAY_MS, SOURCES, watermark

RUNNER = Path(__file__).with_name("flink_runner.py")
VENV = Path(os.environ.get("STREAMT_FLINK_VENV", Path.home() / ".cache" / "dagster-streamt" / "flink-venv"))
LOCAL_ENV = "runtime:\n  kafka:\n    local_dir: topics\n"
_CALL = re.compile(r"\{\{\s*(source|ref)\(\s*[\"'](\w+)[\"']\s*\)\s*\}\}")


@dataclass(frozen=True)
class Result:
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    error: str | None = None


def flink_python() -> Path | None:
    python = VENV / "bin" / "python"
    return python if python.is_file() else None


def flink_sql(sql: str) -> str:
    """A model's SQL as Flink reads it: ``{{ source("x") }}`` / ``{{ ref("x") }}`` become the table/view x."""
    return _CALL.sub(lambda m: f"`{m.group(2)}`", sql)


@dataclass
class FlinkRun:
    """A started Flink process and the files it writes its results (stdout) and log (stderr) to; or, when
    Flink already ran on exactly these inputs, its stored results (``cached``) and no process."""

    proc: subprocess.Popen[str] | None
    stdout: IO[str] | None
    stderr: IO[str] | None
    key: Path
    cached: str | None = None


RESULTS = Path(__file__).with_name("results")
"""Flink's recorded results, one gzipped JSON-lines file named by the key of its inputs (:func:`_cache_file`)."""


def _cache_file(spec: dict[str, Any], folders: dict[str, Path]) -> Path:
    """Where Flink's results for ``spec`` are recorded: keyed by everything they depend on (the cases' and
    views' SQL, the sources' schemas and data files, the runner's code, the installed Flink), never by time
    or path. Flink is the reference, not the code under test: its answer for the same inputs does not
    change, and running it costs a minute or more of both cores. The record lives in the repository
    (``tests/flink/results/``) so that a fresh machine (CI) reads it too; a change to any input misses
    it, runs Flink and records its answer in place of the old one, to be committed with the change. The
    Spark side always runs."""
    digest = hashlib.sha256()
    digest.update(json.dumps({**spec, "sources": [{**s, "path": None} for s in spec["sources"]]},
                             sort_keys=True).encode())
    for name in sorted(folders):
        for f in sorted(folders[name].rglob("*")):
            if f.is_file():
                digest.update(f"{name}/{f.relative_to(folders[name])}".encode() + f.read_bytes())
    digest.update(RUNNER.read_bytes())
    digest.update(json.dumps(installed_flink()).encode())
    return RESULTS / f"{digest.hexdigest()[:24]}.jsonl.gz"


def installed_flink() -> list[str]:
    """The Flink venv's apache-flink distribution (name and version), part of the results' key."""
    return sorted(p.name for p in VENV.glob("lib/python*/site-packages/apache_flink-*.dist-info"))


def _read(f: IO[str]) -> str:
    f.seek(0)
    text = f.read()
    f.close()
    return text


def flink_spec(cases: tuple[Case, ...], folders: dict[str, Path]) -> dict[str, Any]:
    """What the Flink runner is given: the sources (schema, folder, watermark), the base views and the cases."""
    return {"sources": [{"name": name, "path": str(folders[name]), "columns": [list(c) for c in src["columns"]],
                         "event_time": src["event_time"], "delay_ms": DELAY_MS,
                         "primary_key": src.get("primary_key")} for name, src in SOURCES.items()],
            "views": [{"name": name, "sql": flink_sql(sql)} for name, sql in BASE.items()],
            "cases": [{"name": c.name, "sql": flink_sql(c.sql)} for c in cases]}


def recorded(cases: tuple[Case, ...], folders: dict[str, Path]) -> Path:
    """The file Flink's results for these cases over these folders are recorded in (present or not)."""
    return _cache_file(flink_spec(cases, folders), folders)


def start_flink(cases: tuple[Case, ...], folders: dict[str, Path]) -> FlinkRun:
    """Start every case on Flink in one process; Spark's side runs meanwhile (two JVMs, two cores). Its
    input and output go through files, so that nothing waits on a pipe nobody reads meanwhile."""
    python = flink_python()
    assert python is not None
    spec = flink_spec(cases, folders)
    key = _cache_file(spec, folders)
    if key.is_file():
        return FlinkRun(None, None, None, key, gzip.decompress(key.read_bytes()).decode("utf-8"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_"))}
    streams = [tempfile.TemporaryFile("w+", encoding="utf-8") for _ in range(3)]  # noqa: SIM115 (closed by flink_results)
    streams[0].write(json.dumps(spec))
    streams[0].seek(0)
    proc = subprocess.Popen([str(python), str(RUNNER)], stdin=streams[0], stdout=streams[1], stderr=streams[2],
                            text=True, env=env)
    streams[0].close()
    return FlinkRun(proc, streams[1], streams[2], key)


def flink_results(run: FlinkRun, cases: tuple[Case, ...], timeout: float = 600) -> dict[str, Result]:
    """The results of :func:`start_flink`'s process, once it has run every case (kept for the same inputs)."""
    if run.cached is not None:
        stdout, stderr = run.cached, ""
    else:
        assert run.proc is not None and run.stdout is not None and run.stderr is not None
        try:
            run.proc.wait(timeout)
        finally:
            if run.proc.poll() is None:
                run.proc.kill()
        stdout, stderr = _read(run.stdout), _read(run.stderr)
    out: dict[str, Result] = {}
    for line in stdout.splitlines():
        item = json.loads(line)
        if "error" in item:
            out[item["name"]] = Result(error=item["error"])
        else:
            out[item["name"]] = Result(tuple(item["columns"]), tuple(tuple(r) for r in item["rows"]))
    if len(out) < len(cases):
        raise RuntimeError(f"Flink stopped after {len(out)} of {len(cases)} cases:\n{stderr[-3000:]}")
    if run.cached is None and run.proc is not None and run.proc.returncode == 0:
        run.key.parent.mkdir(parents=True, exist_ok=True)
        tmp = run.key.with_name(f".{run.key.name}.{os.getpid()}")
        tmp.write_bytes(gzip.compress(_sorted_rows(stdout).encode("utf-8"), mtime=0))
        tmp.replace(run.key)
        for old in run.key.parent.glob("*.jsonl.gz"):  # the record of inputs that no longer exist
            if old != run.key:
                old.unlink()
    return out


def _sorted_rows(stdout: str) -> str:
    """Flink's output with each case's rows in a fixed order (Flink's own order varies from run to run,
    and results compare as multisets), so that the same answer is recorded as the same bytes."""
    lines = []
    for line in stdout.splitlines():
        item = json.loads(line)
        if "rows" in item:
            item["rows"] = sorted(item["rows"], key=lambda r: json.dumps(r, sort_keys=True))
        lines.append(json.dumps(item) + "\n")
    return "".join(lines)


def run_flink(cases: tuple[Case, ...], folders: dict[str, Path], timeout: float = 600) -> dict[str, Result]:
    """Every case on Flink in one process (the caller holds the machine's JVM lock)."""
    return flink_results(start_flink(cases, folders), cases, timeout)


def write_project(root: Path) -> Path:
    """A streamt project holding the sources, the base models and one model per case."""
    sources = [{"name": name, "topic": src["topic"],
                "event_time": {"column": src["event_time"], "watermark": {"max_out_of_orderness_ms": DELAY_MS}},
                "columns": [{"name": n, "type": t} for n, t in src["columns"]]} for name, src in SOURCES.items()]
    config = {"project": {"name": "flink_reference"}, "sources": sources}
    (root / "stream_project.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "environments").mkdir(exist_ok=True)
    (root / "environments" / "local.yml").write_text(LOCAL_ENV, encoding="utf-8")
    (root / "models").mkdir(exist_ok=True)
    (root / "models" / "base.yml").write_text(yaml.safe_dump(
        {"models": [{"name": n, "sql": s} for n, s in BASE.items()]}, sort_keys=False), encoding="utf-8")
    return root


def write_cases(root: Path, cases: tuple[Case, ...]) -> None:
    models = [{"name": c.name, "sql": c.sql + "\n"} for c in cases]
    (root / "models" / "cases.yml").write_text(yaml.dump({"models": models}, sort_keys=False, width=200,
                                                         default_style=None), encoding="utf-8")


def run_spark(spark: Any, root: Path, cases: tuple[Case, ...]) -> dict[str, Result]:
    """Every case (and the base models) in one run of the project; each case's stored rows."""
    from dagster_streamt.api import load
    from dagster_streamt.core.ids import names_of
    from dagster_streamt.spark import run_models
    from dagster_streamt.spark.storage.warehouse import Warehouse

    loaded = load(root, "local", use_cache=False)
    errors = {d.message.split(":")[0].removeprefix("model ").strip("'"): d.format() for d in loaded.errors}
    plan = loaded.graph.run_plan(n for n in names_of(loaded.graph.of_type("model")) if n not in errors)
    results = {r.model: r for r in run_models(spark, loaded.project, plan.order, plan.levels, plan.upstream)}
    warehouse = Warehouse(root / ".streamt" / "warehouse")
    out: dict[str, Result] = {}
    for case in cases:
        if case.name in errors:
            out[case.name] = Result(error=errors[case.name])
            continue
        result = results[case.name]
        location = warehouse.table_location(case.name)
        if not result.ok or location is None:
            out[case.name] = Result(error=result.error or "stored nothing")
            continue
        df = spark.read.parquet(str(location))
        out[case.name] = Result(tuple(df.columns), tuple(tuple(r) for r in df.collect()))
    return out


def normalize(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, datetime):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float | Decimal):
        return ("num", round(float(value), 6))
    if isinstance(value, dict):  # Flink's MULTISET: value -> count
        return ("list", tuple(sorted(((normalize(k) for k, n in value.items() for _ in range(n))), key=repr)))
    if isinstance(value, list | tuple):
        return ("list", tuple(sorted((normalize(v) for v in value), key=repr)))
    return repr(value)


def _flink_value(value: Any) -> Any:
    """Flink's JSON text back to Python: ISO timestamps as datetimes (Spark's come as datetimes)."""
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?", value):
        return datetime.fromisoformat(value)
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\d", value):
        return date.fromisoformat(value)
    return value


def closed_rows(case: Case, result: Result, records: dict[str, list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    """Flink's rows that are final on a stream (see cases.py): the others are still open in Spark."""
    rows = [tuple(_flink_value(v) for v in r) for r in result.rows]
    if case.closed is None:
        return rows
    i = result.columns.index(case.closed)
    mark = watermark(records, case.source)
    return [r for r in rows if r[i] is not None and r[i] + case.grace <= mark]


def compare(case: Case, flink: Result, spark: Result, records: dict[str, list[dict[str, Any]]]) -> str | None:
    """None when both engines give the same multiset of rows; else what differs, briefly."""
    if flink.error or spark.error:
        return f"flink error: {flink.error}" if flink.error else f"spark error: {spark.error}"
    if tuple(c.lower() for c in flink.columns) != tuple(c.lower() for c in spark.columns):
        return f"columns differ: flink {flink.columns}, spark {spark.columns}"
    want = Counter(tuple(normalize(v) for v in r) for r in closed_rows(case, flink, records))
    got = Counter(tuple(normalize(v) for v in r) for r in spark.rows)
    if want == got:
        return None
    missing, extra = list((want - got).elements()), list((got - want).elements())
    return (f"{sum(want.values())} rows on Flink, {sum(got.values())} on Spark; only on Flink "
            f"({len(missing)}): {missing[:3]}; only on Spark ({len(extra)}): {extra[:3]}")


def report(diffs: dict[str, str | None]) -> str:
    agree = sum(1 for d in diffs.values() if d is None)
    lines = [f"{agree} of {len(diffs)} cases agree"] + [f"  {n}: {d}" for n, d in diffs.items() if d]
    return "\n".join(lines)


if __name__ == "__main__":  # print the agreement of every case: python3 -m tests.flink.harness DIR
    from dagster_streamt.spark import SparkSettings, create_session
    from dagster_streamt.spec.loader import load_project

    from .cases import CASES
    from .data import generate, write

    work = Path(sys.argv[1])
    work.mkdir(parents=True, exist_ok=True)
    data = generate()
    folders = write(write_project(work), data)
    write_cases(work, CASES)
    import time

    began = time.monotonic()
    flink = run_flink(CASES, folders)
    print(f"flink: {time.monotonic() - began:.0f} s")
    began = time.monotonic()
    project, _ = load_project(work)
    assert project is not None
    session = create_session(project, SparkSettings.from_project(project, master="local[2]", conf={
        "spark.sql.shuffle.partitions": "2"}))
    spark_results = run_spark(session, work, CASES)
    print(f"spark: {time.monotonic() - began:.0f} s")
    print(report({c.name: compare(c, flink[c.name], spark_results[c.name], data) for c in CASES}))
