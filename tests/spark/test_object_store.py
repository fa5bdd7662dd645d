"""A warehouse on an object store: ``runtime.spark.warehouse: s3a://...`` against a local S3-compatible
server (moto's, from PyPI), written by ``streamt run`` processes as a user runs them (Hadoop's S3A
connector from the jar cache, the project's ``spark.hadoop.fs.s3a.*`` settings) and read back with delta-rs
and pyarrow: the same rows as a local warehouse gives, and nothing of the warehouse on the local disk."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from dagster_streamt.jars import sets
from dagster_streamt.jars.fetch import jars_for
from dagster_streamt.jars.sets import JarsUnavailable
from dagster_streamt.spark.delta.delta_table import current_commit
from dagster_streamt.spark.storage.store import ObjectPath, StoreOptions

from ..helpers import S3_BUCKET, delta_rows, export_rows, s3_conf, write_project

pytestmark = [pytest.mark.spark, pytest.mark.slow]

BUCKET = S3_BUCKET
GOOD_A = '{"customer": "ann", "amount": 10.0}\n{"customer": "bob", "amount": 5.0}\n{"customer": "ann", "amount": -1}\n'
BAD = '{"customer": "cy", "amount": "lots"}\n'
GOOD_B = '{"customer": "bob", "amount": 7.5}\n{"customer": "dee", "amount": 2.0}\n'


@pytest.fixture(scope="module")
def endpoint(s3_endpoint: str) -> str:
    """The session's moto S3 server, once Hadoop's S3A jars are in the cache."""
    try:
        jars_for(sets.s3())
    except JarsUnavailable as exc:
        pytest.skip(str(exc))
    return s3_endpoint


def _options(url: str) -> StoreOptions:
    return StoreOptions.from_spark_conf(s3_conf(url))


# Exports to the bucket: a Parquet snapshot, and streamt's own form of an S3 archive of a stream (its
# docs' IoT example: a Kafka Connect `s3-sink`), which Spark writes as JSON micro-batches
EXPORTS = [
    {"name": "revenue_export", "from": "revenue", "sink": {"format": "parquet", "path": f"s3a://{BUCKET}/exports/revenue"}},
    {"name": "big_orders_archive", "from": "big_orders", "connector": {"type": "s3-sink", "config": {
        "s3.bucket.name": BUCKET, "topics.dir": "archive", "flush.size": 1000,
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat"}}},
]


def _project(root: Path, url: str, prefix: str, exports: bool = False) -> Path:
    """Warehouse and checkpoints in the bucket (``exports``: and file exports too)."""
    project: dict[str, Any] = {
        "project": {"name": "s3t"},
        "runtime": {"spark": {"warehouse": f"s3a://{BUCKET}/{prefix}", "checkpoints": f"s3a://{BUCKET}/{prefix}-cp",
                              "conf": s3_conf(url)}},
        "sources": [{"name": "orders_raw", "format": "json", "path": "landing",
                     "columns": [{"name": "customer", "type": "string"}, {"name": "amount", "type": "double"}]}],
        "models": [
            {"name": "orders_clean", "materialized": "table",
             "sql": 'SELECT customer, amount FROM {{ source("orders_raw") }} WHERE amount > 0'},
            {"name": "revenue", "materialized": "table",
             "sql": 'SELECT customer, sum(amount) AS total, count(*) AS orders FROM {{ ref("orders_clean") }} '
                    "GROUP BY customer"},
            {"name": "big_orders", "materialized": "stream",  # micro-batches appended to a Delta table
             "sql": 'SELECT customer, amount FROM {{ source("orders_raw") }} WHERE amount > 6'},
        ],
    }
    if exports:
        project["models"] += EXPORTS
        project["tests"] = [{"name": "big_orders_live", "model": "big_orders", "type": "continuous", "severity": "warn",
                             "assertions": [{"accepted_values": {"column": "customer", "values": ["ann", "dee"]}}]}]
    return write_project(root, {"stream_project.yml": yaml.safe_dump(project, sort_keys=False),
                                "landing/a.json": GOOD_A + BAD})


def _streamt(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", *args, "-p", str(root)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _rows(url: str, table: str, version: int | None = None) -> list[tuple[Any, ...]]:
    return delta_rows(ObjectPath(table, _options(url)), version)


def _export(url: str, uri: str) -> list[tuple[Any, ...]]:
    return export_rows(ObjectPath(uri, _options(url)))


def test_tables_exports_and_quarantine_live_in_the_bucket(endpoint: str, tmp_path: Path) -> None:
    root = _project(tmp_path / "p", endpoint, "wh1", exports=True)
    wh = f"s3a://{BUCKET}/wh1"
    first = _streamt(root, "run")
    assert "5/5 model(s) succeeded" in first.stdout, first.stdout
    assert _export(endpoint, f"s3a://{BUCKET}/exports/revenue") == [("ann", 10.0, 1), ("bob", 5.0, 1)]
    assert _export(endpoint, f"s3a://{BUCKET}/archive/big_orders_archive") == [("ann", 10.0)]
    assert _rows(endpoint, f"{wh}/big_orders/data") == [("ann", 10.0)]
    assert _rows(endpoint, f"{wh}/orders_clean/data") == [("ann", 10.0), ("bob", 5.0)]
    assert _rows(endpoint, f"{wh}/revenue/data") == [("ann", 10.0, 1), ("bob", 5.0, 1)]
    quarantined = _rows(endpoint, f"{wh}/orders_raw__quarantine/data")
    assert [r[1] for r in quarantined] == [BAD.strip()]
    store = ObjectPath(wh, _options(endpoint))
    commit = current_commit(store / "orders_clean" / "data")  # the log in the bucket is the table's one record
    assert commit is not None and (commit.version, commit.rows) == (0, 2)
    assert not any(key.startswith("_registry") for key in store.files())
    assert not (root / "s3a:").exists() and not (root / ".streamt" / "warehouse").exists()  # nothing local
    assert not (root / ".streamt" / "checkpoints").exists() and not (root / ".streamt" / "violations").exists()
    checkpoints = ObjectPath(f"{wh}-cp", _options(endpoint))
    assert {"big_orders/commits/0", "big_orders_archive/commits/0", "orders_raw__quarantine/commits/0"} <= set(
        checkpoints.files()), sorted(checkpoints.files())

    (root / "landing" / "b.json").write_text(GOOD_B)
    second = _streamt(root, "run")
    assert "appended the rows of 1 new file" in second.stdout and "merged the aggregation" in second.stdout, \
        second.stdout
    assert _rows(endpoint, f"{wh}/orders_clean/data") == [("ann", 10.0), ("bob", 5.0), ("bob", 7.5), ("dee", 2.0)]
    assert _rows(endpoint, f"{wh}/revenue/data") == [("ann", 10.0, 1), ("bob", 12.5, 2), ("dee", 2.0, 1)]
    assert len(_rows(endpoint, f"{wh}/orders_raw__quarantine/data")) == 1  # the bad line once
    assert _rows(endpoint, f"{wh}/big_orders/data") == [("ann", 10.0), ("bob", 7.5)]  # the new file's row, once
    assert _export(endpoint, f"s3a://{BUCKET}/exports/revenue") == [("ann", 10.0, 1), ("bob", 12.5, 2), ("dee", 2.0, 1)]
    assert _export(endpoint, f"s3a://{BUCKET}/archive/big_orders_archive") == [("ann", 10.0), ("bob", 7.5)]
    assert "big_orders_live FAILED (warn): 1 failing rows" in second.stdout, second.stdout  # bob, in the new batch
    recorded = [k for k in store.files() if k.startswith("big_orders__violations/data/run_id=")]
    assert recorded and all(k.endswith(".parquet") or "/_" in k for k in recorded), recorded
    assert not (root / ".streamt" / "violations").exists()

    exported = set(ObjectPath(f"s3a://{BUCKET}", _options(endpoint)).files())
    third = _streamt(root, "run")  # nothing new: no commit, no export written
    assert "unchanged" in third.stdout, third.stdout
    assert set(ObjectPath(f"s3a://{BUCKET}", _options(endpoint)).files()) == exported
    history = _streamt(root, "status", "--history", "orders_clean", "--format", "json")
    shown = json.loads(history.stdout)
    assert shown["table"] == f"{wh}/orders_clean/data" and [v["version"] for v in shown["versions"]] == [1, 0]

    _streamt(root, "restore", "orders_clean", "--version", "0")
    assert _rows(endpoint, f"{wh}/orders_clean/data") == [("ann", 10.0), ("bob", 5.0)]
    restored = current_commit(store / "orders_clean" / "data")
    assert restored is not None and (restored.version, restored.rows) == (2, 2)

    files = set(store.files())  # the bucket's objects: version 1's data file is no longer referenced
    vacuumed = json.loads(_streamt(root, "vacuum", "-s", "orders_clean", "--retention-hours", "0",
                                   "--format", "json").stdout)["models"]
    gone = files - set(store.files())
    assert [m["files"] for m in vacuumed] == [1] and len(gone) == 1, (vacuumed, gone)
    assert next(iter(gone)).startswith("orders_clean/data/part-")
    assert _rows(endpoint, f"{wh}/orders_clean/data") == [("ann", 10.0), ("bob", 5.0)]


def test_validate_explains_a_file_export_and_refuses_a_filesystem_spark_cannot_reach(tmp_path: Path) -> None:
    """No server needed: what `streamt validate` says before anything runs."""
    from dagster_streamt.api import load

    root = _project(tmp_path / "p", "http://127.0.0.1:9", "wh2")
    (root / "models").mkdir()
    (root / "models" / "orders_export.yml").write_text(
        "models:\n  - name: orders_export\n    from: orders_clean\n"
        f"    sink: {{format: parquet, path: 's3a://{BUCKET}/exports/orders'}}\n")
    found = [d for d in load(root, use_cache=False).diagnostics if d.code == "STR085"]
    assert len(found) == 1 and f"s3a://{BUCKET}/exports/orders/_symlink_format_manifest/manifest" in found[0].message
    assert found[0].severity.value == "note" and found[0].file == "models/orders_export.yml"

    assert not load(root, use_cache=False).errors  # checkpoints in the bucket too
    text = (root / "stream_project.yml").read_text()
    (root / "stream_project.yml").write_text(text.replace("checkpoints: s3a://lake/wh2-cp", "checkpoints: nfs://x/cp"))
    errors = [d for d in load(root, use_cache=False).errors if d.code == "STR091"]
    assert len(errors) == 1 and "local or mounted folder, or an object store" in errors[0].message, errors


def test_two_drivers_at_once_share_the_buckets_locks_and_leave_every_table_consistent(
        endpoint: str, tmp_path: Path) -> None:
    """Two `streamt run` processes at once, as two machines would run them: each its own project folder (its
    own Dagster instance and local lock folder), the sources, warehouse and checkpoints shared in the bucket.
    A table's writer lock in the bucket makes the second wait for the first; a stream's checkpoint lock
    makes it fail clearly if the other still runs it. Each row is stored once whatever the timing."""
    prefix = "two"
    landing = ObjectPath(f"s3a://{BUCKET}/{prefix}-landing", _options(endpoint))
    (landing / "a.json").write_text(GOOD_A + BAD)
    roots = []
    for n in (1, 2):
        root = _project(tmp_path / f"driver{n}", endpoint, prefix)
        spec = yaml.safe_load((root / "stream_project.yml").read_text())
        spec["sources"][0]["path"] = landing.uri
        (root / "stream_project.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
        roots.append(root)
    runs = [subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(root)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for root in roots]
    outs = [run.communicate(timeout=600)[0] for run in runs]
    busy = "✗ big_orders                       failed   stream model big_orders is already running in another run"
    for run, out in zip(runs, outs, strict=True):
        # a run either did everything, or failed only where the other driver held the stream's checkpoint
        assert run.returncode == 0 or (busy in out and "2/3 model(s) succeeded" in out), out
    assert any(run.returncode == 0 for run in runs), outs
    wh = f"s3a://{BUCKET}/{prefix}"
    assert _rows(endpoint, f"{wh}/orders_clean/data") == [("ann", 10.0), ("bob", 5.0)]  # once, not twice
    assert _rows(endpoint, f"{wh}/revenue/data") == [("ann", 10.0, 1), ("bob", 5.0, 1)]
    assert _rows(endpoint, f"{wh}/big_orders/data") == [("ann", 10.0)]
    assert len(_rows(endpoint, f"{wh}/orders_raw__quarantine/data")) == 1
    store = ObjectPath(f"s3a://{BUCKET}", _options(endpoint))
    assert not [k for k in store.files() if "/_locks/" in k or k.startswith(f"{prefix}/_locks")]  # all released
