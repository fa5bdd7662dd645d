"""Continuous tests over exactly the rows a stream model committed, with a violations table.

The model's file sink commits each micro-batch in ``_spark_metadata``; a file-source stream over that
folder sees every committed row exactly once. So each continuous test runs as a *side query* (its own
checkpoint, ``availableNow``, ``foreachBatch``) instead of inside the model's query: a slow or broken
test never holds back or fails the model, and a test added later simply starts from the first row.
Each micro-batch's violations are written before its checkpoint commits, and the check reads back the
rows of its run, so a violation is kept even when the check fails, and nothing goes unchecked: when a
test cannot be evaluated its query fails and the same rows are checked again by the next run.

Where the violations are stored, and how replays stay exact, is :mod:`.violation_store`.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import reduce
from time import perf_counter
from typing import Any
from urllib.parse import unquote, urlparse

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..compile.modes import appends
from ..core.results import ModelResult
from ..spark.delta.delta_table import DELTA, file_modification_times, is_delta_table
from ..spark.storage.object_lock import lock_at
from ..spark.storage.paths import ProjectPaths, partition_folder
from ..spark.storage.store import Loc, ObjectPath
from ..spark.storage.warehouse import Warehouse
from ..spec.models import Test
from ..spec.project import Project
from .assertions import parse_assertions
from .continuous import VIOLATION_TYPES, evaluate_batch, evaluation_mode, violations_frame
from .evaluate import check_max_lag, check_throughput
from .kinds import KINDS
from .params import MaxLag, Throughput
from .parsed import ParsedAssertion
from .results import AssertionResult, Severity, TestResult, Verdict, severity_of, standing_only
from .runner import _issue_result, short_error
from .sql import build_test_sql, describe, ident
from .violation_store import (
    FILE_TIME,
    LAST_ERROR,
    LEDGER_KEEP,
    PROGRESS,
    STREAM_FILE,
    TABLE_SCHEMA,
    discard,
    ledger_path,
    literal_frame,
    parse_record,
    read_json,
    run_part,
    store,
    stream_id,
    summary_row,
    test_rel,
    violations_dir,
    violations_name,
    write_json,
)

Resolve = Callable[[str, str], str]

# Violation types of failing micro-batches and progress checks; offending records get the kind's
# record_violation (continuous.VIOLATION_TYPES).
AGGREGATE_VIOLATIONS: dict[str, str] = {n: k.batch_violation for n, k in sorted(KINDS.items()) if k.batch_violation}

# -- relations other assertions read (relationships, custom SQL) -----------------------------------
def stored_relations(spark: SparkSession, project: Project) -> Resolve:
    """Default ``resolve`` inside a micro-batch: other models as stored now, sources read in batch
    (valid rows), as temporary views of ``spark`` (the micro-batch's session)."""
    from ..spark.sources.relations import quote, register_model_view
    from ..spark.sources.sources import read_source, valid_rows

    warehouse = Warehouse.for_project(project)

    def resolve(kind: str, name: str) -> str:
        view = f"__streamt_{kind}_{name}"
        if kind == "source":
            source = project.sources.get(name)
            if source is None:
                raise ValueError(f"unknown source {name!r}")
            valid_rows(read_source(spark, project, source, streaming=False)).createOrReplaceTempView(view)
            return quote(view)
        model = project.models.get(name)
        if model is not None and model.materialized == "view":
            return quote(register_model_view(spark, project, name))
        location = warehouse.data_dir(name)
        if not is_delta_table(location):
            raise ValueError(f"model {name} has not been materialized yet (nothing in the warehouse)")
        spark.read.format(DELTA).load(str(location)).createOrReplaceTempView(view)
        return quote(view)

    return resolve


# -- the side query's foreachBatch -------------------------------------------------------------
@dataclass(frozen=True)
class _BatchCheck:
    """foreachBatch function of one test's side query; plain fields, so Spark Connect can pickle it."""

    project: Project
    test: Test
    run_id: str
    call_id: str
    data: Loc  # the table's data/ folder
    staging: Loc
    checkpoint: Loc
    stream_id: str
    now: datetime | None
    resolve: Resolve | None
    delta_table: Loc | None  # the stream carries each row's file path (for max_lag), timed by this table's log

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        checkpoint, data, staging = self.checkpoint, self.data, self.staging
        ledger = ledger_path(checkpoint, batch_id)
        previous = list((read_json(ledger) or {}).get("written", []))
        rel = f"{test_rel(self.run_id, self.test.name)}/batch-{batch_id}-{self.stream_id}-{definition_tag(self.test)}"
        # Before writing: name every folder this batch may have (a crashed attempt's), for the cleanup.
        write_json(ledger, {"batch_id": batch_id, "state": "writing", "written": sorted({*previous, rel})})
        now = self.now or datetime.now(UTC)
        batch.persist()
        try:
            rows = batch.drop(FILE_TIME) if self.delta_table else batch
            count = rows.count()
            store(self._violations(batch, rows, batch_id, now, count), data / rel, staging)
        except Exception as exc:
            write_json(checkpoint / LAST_ERROR, {"call": self.call_id, "batch_id": batch_id,
                                                   "error": short_error(exc)})
            raise
        finally:
            batch.unpersist()
        for old in previous:
            if old != rel:
                discard(data / old, staging)
        write_json(ledger, {"batch_id": batch_id, "state": "done", "written": [rel], "run_id": self.run_id,
                             "call": self.call_id, "rows": count, "checked_at": now.isoformat()})
        stale = ledger_path(checkpoint, batch_id - LEDGER_KEEP)
        if (read_json(stale) or {}).get("call") not in (None, self.call_id):  # this call reads its own back
            stale.unlink(missing_ok=True)

    def _violations(self, batch: DataFrame, rows: DataFrame, batch_id: int, now: datetime,
                    count: int) -> DataFrame:
        spark = rows.sparkSession
        parsed, _ = parse_assertions(self.test)  # tests with invalid assertions never start a query
        resolve = self.resolve or stored_relations(spark, self.project)
        modes = {evaluation_mode(a) for a in parsed}
        frames: list[DataFrame] = []
        if "row" in modes:
            frames.append(violations_frame(rows, self.test, batch_id, now, resolve=resolve))
        summaries: list[tuple[Any, ...]] = []
        if count and "batch" in modes:
            summaries += self._aggregates(rows, batch_id, now, count, resolve)
        for a in parsed:
            if count and isinstance(a.params, MaxLag) and lag_column(self.project, self.test, a.params):
                summaries += self._lag(batch, a, a.params, batch_id, now, count)
        if summaries:
            frames.append(literal_frame(spark, summaries))
        return reduce(DataFrame.unionByName, frames) if frames else literal_frame(spark, [])

    def _aggregates(self, rows: DataFrame, batch_id: int, now: datetime, count: int,
                    resolve: Resolve) -> list[tuple[Any, ...]]:
        """unique/row_count/distribution/... hold per micro-batch; a failing one is one violation row.
        An assertion that cannot be evaluated fails the batch, so its rows are checked again later."""
        result = evaluate_batch(rows, self.test, batch_id, resolve=resolve, now=now, sample_rows=0,
                                variables=self.project.vars, select=lambda a: evaluation_mode(a) == "batch")
        out = []
        for r in result.assertions:
            if r.error or result.error:
                raise RuntimeError(f"test {self.test.name}: {r.label}: {r.error or result.error}")
            if not r.passed:
                out.append(summary_row(self.test.name, r.label, AGGREGATE_VIOLATIONS.get(r.name, f"{r.name}_failed"),
                                    batch_id, now, {"batch_id": batch_id, "rows": count, "failing": r.failing_rows,
                                                    "message": r.message, "observed": r.observed}))
        return out

    def _lag(self, batch: DataFrame, a: ParsedAssertion, p: MaxLag, batch_id: int, now: datetime,
             count: int) -> list[tuple[Any, ...]]:
        """Lag = when the model wrote the newest file of this micro-batch (its modification time, so a
        later re-check gives the same answer) - the newest event time in the micro-batch."""
        column = lag_column(self.project, self.test, p)
        assert column is not None
        newest = F.expr(f"unix_micros(CAST(max({ident(column)}) AS TIMESTAMP))")
        row = batch.agg(newest.alias("event")).first()
        event_us = row["event"] if row is not None else None
        written_us = _delta_written_us(self.delta_table, batch) if self.delta_table is not None else None
        event = event_us / 1e6 if event_us is not None else None
        processing = written_us / 1e6 if written_us is not None else now.timestamp()
        verdict = check_max_lag(event, processing, p)
        if verdict.passed:
            return []
        return [summary_row(self.test.name, a.label, AGGREGATE_VIOLATIONS["max_lag"], batch_id, now, {
            "batch_id": batch_id, "rows": count, "max_event_time": _iso(event), "processing_time": _iso(processing),
            "processing_time_from": "check_time" if written_us is None else "file_modification_time",
            "max_seconds": p.max_seconds, "message": verdict.message, **verdict.observed})]


def _delta_written_us(table: Loc, batch: DataFrame) -> int | None:
    """When the newest file of a Delta micro-batch was written (its log's modification time), in µs."""
    times = file_modification_times(table)
    files = [str(r[0]) for r in batch.select(FILE_TIME).distinct().collect() if r[0]]
    if isinstance(table, ObjectPath):  # s3a://bucket/key/part-... relative to the table's URI
        rels = [unquote(f).removeprefix(str(table) + "/") for f in files]
    else:
        rels = [os.path.relpath(unquote(urlparse(f).path), table) for f in files]
    found = [times[rel] for rel in rels if rel in times]
    return max(found) * 1000 if found else None


def _iso(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch, UTC).isoformat() if epoch is not None else None


def lag_column(project: Project, test: Test, p: MaxLag) -> str | None:
    """The event-time column max_lag measures: its own ``column``, else the model's event time. None:
    the lag is the run's arrival lag (newest input record's arrival to the end of its micro-batch)."""
    return p.column or project.event_columns.get(test.model or "")


def _arrival_lag(a: ParsedAssertion, p: MaxLag, model: str, progress: ModelResult | None) -> tuple[Verdict, bool]:
    if progress is None or progress.model != model or not progress.ok:
        return Verdict(False, message=f"{a.label} has no event-time column, so it is judged from the model run's "
                                      "arrival lag, and no successful run of the model is given"), False
    if progress.arrival_lag_s is None:
        return Verdict(True, message="the model processed no new data in this run: nothing to judge"), False
    lag = progress.arrival_lag_s
    ok = lag <= p.max_seconds
    return Verdict(ok, 0, f"arrival lag {lag:.1f}s" + ("" if ok else f" exceeds {p.max_seconds:g}s"),
                   {"arrival_lag_seconds": lag}), True


# -- progress (throughput): judged from the model run's ModelResult ------------------------------
def _throughput(a: ParsedAssertion, p: Throughput, model: str, progress: ModelResult | None) -> tuple[Verdict, bool]:
    """(verdict, judged). Not judged: no progress to judge (an error), or nothing processed (a pass)."""
    if progress is None:
        return Verdict(False, message=f"{a.label} is judged from the model run's progress: pass "
                                      f"progress=<the ModelResult of model {model} in this run>"), False
    if progress.model != model or not progress.ok:
        why = f"of model {progress.model}" if progress.model != model else f"of a {progress.status} run"
        return Verdict(False, message=f"{a.label}: the progress given is {why}, cannot judge"), False
    if progress.processed_rows_per_second is None:
        return Verdict(True, message="the model processed no data in this run: nothing to judge"), False
    return check_throughput(progress.processed_rows_per_second, p), True


# -- the entry points ---------------------------------------------------------------------------
def run_continuous_tests(spark: SparkSession, project: Project, model: str, tests: Iterable[Test], run_id: str, *,
                         now: datetime | None = None, progress: ModelResult | None = None, sample_rows: int = 5,
                         resolve: Resolve | None = None) -> dict[str, TestResult]:
    """Check the rows stream model ``model`` committed since each test's last run; record violations
    under ``run_id``; return a result per test built from what was read back.

    ``now`` fixes ``detected_at`` and the freshness clock (default: each micro-batch's wall clock);
    ``progress`` is the model's ModelResult of this run (throughput); ``resolve`` maps other
    models/sources to relations visible in the micro-batch session (default: read them as stored).
    A test passes iff this run recorded no violation for it, no violation an earlier run recorded is still
    in the output (same checkpoint generation), and nothing failed to evaluate.
    """
    if not run_id:
        raise ValueError("run_continuous_tests needs a run id")
    paths = ProjectPaths.from_project(project)
    warehouse = Warehouse(paths.warehouse, paths.locks)
    name = violations_name(model)
    results: dict[str, TestResult] = {}
    with lock_at(paths.checkpoint_lock(name), wait=True, model=model):  # one writer per checkpoint
        output = _stream_output(project, warehouse, model)
        for test in tests:
            results[test.name] = _run_one(spark, project, paths, warehouse, model, output, test, run_id, now=now,
                                          progress=progress, sample_rows=sample_rows, resolve=resolve)
    return results


def _stream_output(project: Project, warehouse: Warehouse, model: str) -> Loc | str:
    """The committed output table of ``model``, or why there is none."""
    found = project.models.get(model)
    if found is not None and not appends(project, found):
        return (f"continuous tests read the rows a stream model appends, but model {model} is a "
                f"{found.materialized} whose rows are replaced (e.g. output_mode complete); use a `type: sample` "
                "test")
    data = warehouse.data_dir(model)
    if not is_delta_table(data):
        return f"model {model} has not been materialized yet; run it first, e.g. `streamt run -s {model}`"
    return data


def _run_one(spark: SparkSession, project: Project, paths: ProjectPaths, warehouse: Warehouse, model: str,
             output: Loc | str, test: Test, run_id: str, *, now: datetime | None,
             progress: ModelResult | None, sample_rows: int, resolve: Resolve | None) -> TestResult:
    started = perf_counter()
    parsed, issues = parse_assertions(test)
    severity = severity_of(test, project.defaults.tests.severity)
    if test.model != model:
        reason = f"test {test.name} targets {test.model or f'source {test.source}'}, not model {model}"
    elif issues:
        reason = (f"test {test.name} was not run: fix its invalid assertion(s) first (its rows stay unchecked "
                  "until then, and are checked by the first run after the fix)")
    else:
        reason = output if isinstance(output, str) else ""
    sql = _describe_sql(project, test, parsed, model, paths)
    if reason or isinstance(output, str):
        failed = [_issue_result(i) for i in issues] + [
            AssertionResult(a.index, a.name, a.label, False, 0, 0, describe(a), sql.get(a.label, ""), reason,
                            error=reason) for a in parsed]
        return TestResult(test.name, f"model.{model}", severity, False, tuple(sorted(failed, key=lambda r: r.index)),
                          perf_counter() - started, sql=sql["*"], error=reason)
    root = violations_dir(project, model)
    data, staging = root / "data", root / "_staging"
    rels: list[str] = []
    total, error = 0, None
    if not all(isinstance(a.params, Throughput) for a in parsed):  # throughput alone needs no rows
        checkpoint = paths.checkpoint(violations_name(model)) / test.name
        rels, total, error = _check_rows(spark, project, output, test, parsed, run_id, data, staging, checkpoint,
                                         now, resolve)
    notes = _record_progress(spark, project, test, parsed, model, run_id, progress, data, staging, now)
    rels.append(f"{test_rel(run_id, test.name)}/{PROGRESS}")
    earlier = _standing(data, test, run_id, paths.checkpoint(violations_name(model)) / test.name)
    return _result(spark, test, parsed, severity, model, data, rels, total, error, notes, sql, sample_rows, started,
                   _counts(spark, data, earlier))


def _check_rows(spark: SparkSession, project: Project, source_dir: Loc, test: Test,
                parsed: list[ParsedAssertion], run_id: str, data: Loc, staging: Loc, checkpoint: Loc,
                now: datetime | None, resolve: Resolve | None) -> tuple[list[str], int, str | None]:
    """Run the test's side query; return the folders this call wrote, the rows it checked, its error."""
    call_id = uuid.uuid4().hex
    stream = spark.readStream.format(DELTA).load(str(source_dir))
    delta_table = None
    if any(isinstance(a.params, MaxLag) for a in parsed):  # Delta's stream has no _metadata: the file's path,
        stream, delta_table = stream.withColumn(FILE_TIME, F.input_file_name()), source_dir  # timed by the log
    check = _BatchCheck(project, test, run_id, call_id, data, staging, checkpoint,
                        stream_id(checkpoint), now, resolve, delta_table)
    error: str | None = None
    batch_ids: list[int] = []
    query = None
    try:
        query = (stream.writeStream.queryName(f"{checkpoint.parent.name}__{test.name}__{call_id[:8]}")
                 .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).foreachBatch(check)
                 .start())
        query.awaitTermination()
    except Exception as exc:
        last = read_json(checkpoint / LAST_ERROR) or {}
        detail = last["error"] if last.get("call") == call_id else short_error(exc)
        error = f"continuous test {test.name}: {detail} (the rows of that micro-batch are checked again next run)"
    finally:
        if query is not None:
            batch_ids = sorted({int(p.batchId) for p in query.recentProgress})
    rels: list[str] = []
    total = 0
    for batch_id in batch_ids:
        done = read_json(ledger_path(checkpoint, batch_id)) or {}
        if done.get("call") == call_id and done.get("state") == "done":
            rels += done.get("written", [])
            total += int(done.get("rows") or 0)
    return rels, total, error


def _record_progress(spark: SparkSession, project: Project, test: Test, parsed: list[ParsedAssertion], model: str,
                     run_id: str, progress: ModelResult | None, data: Loc, staging: Loc,
                     now: datetime | None) -> dict[str, Verdict]:
    """Judge throughput; violations go to ``progress/`` of (run, test), replaced on each call."""
    notes: dict[str, Verdict] = {}
    rows = []
    at = now or datetime.now(UTC)
    for a in parsed:
        if isinstance(a.params, MaxLag) and lag_column(project, test, a.params) is None:
            verdict, judged = _arrival_lag(a, a.params, model, progress)
            kind = AGGREGATE_VIOLATIONS["max_lag"]
        elif isinstance(a.params, Throughput):
            verdict, judged = _throughput(a, a.params, model, progress)
            kind = AGGREGATE_VIOLATIONS["throughput"]
        else:
            continue
        notes[a.label] = verdict
        if judged and not verdict.passed:
            assert progress is not None
            detail = {"model": model, "processed_rows_per_second": progress.processed_rows_per_second,
                      "batches": progress.batches, "rows_written": progress.rows_written,
                      "message": verdict.message}
            if isinstance(a.params, MaxLag):
                detail["arrival_lag_seconds"] = progress.arrival_lag_s
            rows.append(summary_row(test.name, a.label, kind, None, at, detail))
    final = data / test_rel(run_id, test.name) / PROGRESS
    if rows:
        store(literal_frame(spark, rows), final, staging)
    else:
        discard(final, staging)
    return notes


def _describe_sql(project: Project, test: Test, parsed: list[ParsedAssertion], model: str,
                  paths: ProjectPaths) -> dict[str, str]:
    """What runs on each micro-batch, per assertion label, and for the whole test under ``"*"``."""
    relation = f"`{model}__microbatch`"
    built = {b.assertion.label: b for b in build_test_sql(parsed, relation, resolve=lambda _k, n: ident(n)).assertions}
    out: dict[str, str] = {}
    for a in parsed:
        b = built[a.label]
        mode = evaluation_mode(a)
        if isinstance(a.params, MaxLag):
            column = lag_column(project, test, a.params)
            out[a.label] = (f"SELECT max({ident(column)}), collect_set(input_file_name()) FROM {relation}  "
                            "-- processing time: when the model's Delta log says the newest of those files was written"
                            if column else f"-- arrival lag of model {model}'s run: end of its last micro-batch - "
                                           "newest arrival time of its input records")
        elif isinstance(a.params, Throughput):
            out[a.label] = f"-- processedRowsPerSecond of model {model}'s run (its ModelResult)"
        elif mode == "row" and b.violation_predicate is not None:
            out[a.label] = f"SELECT * FROM {relation} WHERE {b.violation_predicate}"
        else:
            out[a.label] = b.sql or b.error or ""
    head = (f"-- continuous test {test.name}: each micro-batch of what model {model} committed, as {relation}\n"
            f"-- (side query, checkpoint {paths.checkpoint(violations_name(model)) / test.name})")
    out["*"] = "\n".join([head, *(f"-- {a.label}\n{out[a.label]};" for a in parsed)])
    return out


def definition_tag(test: Test) -> str:
    """A digest of what the test asserts, in its violation folders' names: violations found under an
    earlier definition (a widened ``accepted_values``) no longer count against it."""
    body = json.dumps([test.model, test.assertions], sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:8]


def _standing(data: Loc, test: Test, run_id: str, checkpoint: Loc) -> list[str]:
    """The violation folders earlier runs wrote for rows the output still holds: those of the test's
    current checkpoint generation (a full refresh rebuilds the output and starts a new one: see
    :func:`~dagster_streamt.spark.storage.reset.reset_model`) and current definition. A stream's output
    only grows, so a row found bad once stays bad until then; a folder exists only for a micro-batch
    that had violations."""
    generation = (read_json(checkpoint / STREAM_FILE) or {}).get("stream")
    if not generation:
        return []
    mine, test_dir = run_part(run_id), partition_folder("test", test.name)
    pattern = f"batch-*-{generation}-{definition_tag(test)}"
    return sorted(f"{run.name}/{test_dir}/{batch.name}" for run in data.glob("run_id=*") if run.name != mine
                  for batch in (run / test_dir).glob(pattern) if batch.is_dir())


def _counts(spark: SparkSession, data: Loc, rels: list[str]) -> dict[str, int]:
    """Offending records per assertion label in ``rels`` (one small read). Only records: a micro-batch that
    failed as a whole (a row count, a lag) said so about that batch, not about rows the table holds."""
    if not rels:
        return {}
    df = spark.read.schema(TABLE_SCHEMA).option("basePath", str(data)).parquet(*(str(data / r) for r in rels))
    records = df.where(F.col("violation").isin(sorted(set(VIOLATION_TYPES.values()))))
    return {r["assertion"]: int(r["count"]) for r in records.groupBy("assertion").count().collect()}


def _result(spark: SparkSession, test: Test, parsed: list[ParsedAssertion], severity: Severity, model: str,
            data: Loc, rels: list[str], total: int, error: str | None, notes: dict[str, Verdict],
            sql: dict[str, str], sample_rows: int, started: float, standing: dict[str, int]) -> TestResult:
    """Build the result from the violations read back (the table is the record, not memory). A test
    judges the rows added since its last run, and fails while violations earlier runs found (``standing``,
    per assertion) are still in the output: a rerun with no new rows never turns known bad rows green."""
    counts: dict[str, dict[str, int]] = {}
    samples: dict[str, list[dict[str, Any]]] = {}
    paths = [str(data / r) for r in rels if (data / r).is_dir()]
    if paths:  # one job: counts per (assertion, violation) and the first rows of each, by batch
        df = spark.read.schema(TABLE_SCHEMA).option("basePath", str(data)).parquet(*paths)
        key = Window.partitionBy("assertion", "violation")
        picked = (df.withColumn("__n", F.row_number().over(key.orderBy(F.col("batch_id").asc_nulls_last(), "record")))
                  .withColumn("__count", F.count(F.lit(1)).over(key)).where(F.col("__n") <= max(sample_rows, 1))
                  .orderBy(F.col("batch_id").asc_nulls_last(), "record").collect())
        for r in picked:
            counts.setdefault(r["assertion"], {})[r["violation"]] = int(r["__count"])
            kept = samples.setdefault(r["assertion"], [])
            if len(kept) < sample_rows:
                kept.append(parse_record(r["record"]))
    out: list[AssertionResult] = []
    for a in parsed:
        by_type = counts.get(a.label, {})
        failing = sum(by_type.values())
        before = standing.get(a.label, 0)
        note = notes.get(a.label)
        problem = error or (note.message if note is not None and not note.passed and not failing else None)
        message = "; ".join(filter(None, [
            f"{failing} violation(s) in the {total} row(s) added since the last run" if failing else "",
            f"{before} violation(s) found by earlier runs still in {model} (until a full refresh)" if before else "",
        ])) or (note.message if note else "")
        observed = {"violations": failing, "standing_violations": before, "by_type": by_type,
                    **(note.observed if note else {})}
        out.append(AssertionResult(a.index, a.name, a.label, failing == 0 and before == 0 and problem is None,
                                   failing + before, total, describe(a), sql.get(a.label, ""), problem or message,
                                   samples.get(a.label, []), observed, problem))
    result = TestResult(test.name, f"model.{model}", severity, error is None and all(r.passed for r in out),
                        tuple(out), perf_counter() - started, total, sql["*"], error)
    return replace(result, severity="warn") if standing_only(result) else result  # known rows: not a new alarm


__all__ = ["AGGREGATE_VIOLATIONS", "run_continuous_tests", "stored_relations"]
