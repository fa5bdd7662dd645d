"""Small helpers to write throwaway projects for tests."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).parents[1]
EXAMPLE = REPO / "project"

ROOT = """\
project:
  name: t
"""


def write_project(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: YAML text}``; adds a minimal root file when none is given."""
    root.mkdir(parents=True, exist_ok=True)
    if "stream_project.yml" not in files and "stream_project.yaml" not in files:
        files = {"stream_project.yml": ROOT, **files}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def codes(diags: list) -> list[str]:
    return [d.code for d in diags]


def streamt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: a separate process."""
    return subprocess.run([sys.executable, "-m", "dagster_streamt.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def graphql(port: int, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """A query against a running Dagster webserver's GraphQL endpoint; errors fail the test."""
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        data = json.loads(resp.read())
    assert not data.get("errors"), data["errors"]
    return data["data"]


S3_BUCKET = "lake"  # the bucket of the session's moto S3 server (conftest's ``s3_endpoint``)


def s3_conf(url: str) -> dict[str, str]:
    """The project's Spark conf that reaches the moto S3 server at ``url``."""
    return {"spark.hadoop.fs.s3a.endpoint": url, "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.access.key": "test", "spark.hadoop.fs.s3a.secret.key": "test",
            "spark.hadoop.fs.s3a.endpoint.region": "us-east-1"}


def sorted_rows(rows: Any) -> list[tuple[Any, ...]]:
    """Rows in their natural order; by their text where values cannot be compared (None beside a number)."""
    rows = list(rows)
    try:
        return sorted(rows)
    except TypeError:
        return sorted(rows, key=repr)


def delta_rows(table: Any, version: int | None = None) -> list[tuple[Any, ...]]:
    """A Delta table (a local path or an ``ObjectPath``) as another engine reads it: delta-rs, no JVM, nothing
    of streamt but the address; rows sorted, values as JSON gives them (timestamps as text). In a child
    process: delta-rs' S3 client may abort an interpreter at exit."""
    from dagster_streamt.spark.storage.store import delta_rs_args

    uri, options = delta_rs_args(table)
    code = ("import json, sys; from deltalake import DeltaTable; a = json.loads(sys.argv[1]); "
            "t = DeltaTable(a[0], version=a[1], storage_options=a[2]).to_pyarrow_table().to_pylist(); "
            "print(json.dumps([list(r.values()) for r in t], default=str), flush=True)")
    done = subprocess.run([sys.executable, "-c", code, json.dumps([uri, version, options])], capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.strip(), done.stderr
    return sorted_rows(tuple(r) for r in json.loads(done.stdout.strip().splitlines()[-1]))


def export_rows(export: Any) -> list[tuple[Any, ...]]:
    """A file export on an object store (an ``ObjectPath``) as a reader of the bucket sees it: the files its
    manifest lists, read with pyarrow; rows sorted."""
    import pyarrow as pa
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    from dagster_streamt.core.object_stores import EXPORT_MANIFEST

    fs, tables = export.options.filesystem(export.uri), []
    for file in (export / EXPORT_MANIFEST).read_text().split():
        key = file.split("://", 1)[1]
        if file.endswith(".parquet"):
            tables.append(pq.read_table(key, filesystem=fs))
        else:
            with fs.open_input_stream(key) as stream:
                tables.append(pj.read_json(stream))
    return sorted_rows(tuple(r.values()) for r in pa.concat_tables(tables).to_pylist()) if tables else []


def stopped_streams(instance: Any, run_id: str, models: list[str]) -> set[str]:
    """Which of ``models`` the continuous run ``run_id`` reported stopped: in its own event log, or runless and
    naming the run (``streamt/run_id``), as when Dagster raised the interruption between two of the op's steps."""
    import dagster as dg

    found = set()
    for model in models:
        key = dg.AssetKey(model)
        for record in instance.fetch_observations(key, limit=50).records:
            md = {k: getattr(v, "value", v) for k, v in record.asset_observation.metadata.items()}
            mine = record.run_id == run_id or md.get("streamt/run_id") == run_id
            if mine and md.get("streamt/status") == "stopped":
                found.add(model)
    return found
