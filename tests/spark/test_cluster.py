"""The example on a real distributed engine: a Spark standalone master and a worker on localhost
(executors in their own JVMs, the worker in a working folder of its own), with exactly the results of
the embedded local run; and a Spark Connect server whose master is that cluster. Each run is a whole
``streamt run`` process.

The example's run on the cluster shares no path with it: its sources, warehouse, checkpoints and export
are in a bucket (moto's S3 server), as on a cluster whose machines share no disk. Its first run's driver
is killed mid-run; new input arrives; the rerun streams only that and catches up, and every table read
back from the bucket with delta-rs equals the same project run locally; nothing but the Dagster instance,
run records and locks is on the disk. (One killed and one whole run: each whole run of the example on
the cluster against moto costs about two minutes.)

Through the cluster's Connect server runs a small project (a source, a table, a stream), not the whole
example again: what that mode adds is where the session lives (the server is the cluster's
application), and the example's every feature through a Connect server is test_spark_modes.py's
(the project's own server and a remote one). A second example run on the cluster cost 87 s of the
file's 260 s alone."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest

from dagster_streamt.api import load
from dagster_streamt.jars import sets
from dagster_streamt.jars.fetch import jars_for
from dagster_streamt.jars.sets import JarsUnavailable
from dagster_streamt.spark import Warehouse
from dagster_streamt.spark.session.project_server import stop_project_server
from dagster_streamt.spark.storage.store import ObjectPath, StoreOptions

from ..conftest import run_here, write_project
from ..helpers import S3_BUCKET, delta_rows, export_rows, s3_conf
from .helpers import jsonl

ROOT = Path(__file__).parents[2]
pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(what: str, ok: Any, log: Path, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():
            return
        time.sleep(0.5)
    raise AssertionError(f"{what} did not come up; its log ends with:\n{log.read_text()[-2000:]}")


def _master_state(ui_port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as resp:
        state: dict[str, Any] = json.load(resp)
    return state


def _workers(ui_port: int) -> int:
    try:
        return int(_master_state(ui_port).get("aliveworkers") or 0)
    except OSError:  # the UI answers 404 for a moment while it starts
        return 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, Path]]:
    """``(spark://127.0.0.1:PORT, master web UI port, the worker's working folder)`` of a standalone master with
    one 2-core worker."""
    home = Path(pyspark.__file__).resolve().parent
    logs = tmp_path_factory.mktemp("standalone")
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    env = {**os.environ, "SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable}
    spark_class = str(home / "bin" / "spark-class")
    url = f"spark://127.0.0.1:{port}"
    procs = []
    try:
        with (logs / "master.log").open("w") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                 "--webui-port", str(ui)], env=env, stdout=out, stderr=subprocess.STDOUT))
        _wait_for("the master", lambda: _listening(ui), logs / "master.log")
        with (logs / "worker.log").open("w") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "2",
                 "--memory", "2g", "--webui-port", str(worker_ui), "--work-dir", str(logs / "work"), url],
                env=env, stdout=out, stderr=subprocess.STDOUT))
        _wait_for("the worker", lambda: _workers(ui) > 0, logs / "worker.log")
        yield url, ui, logs / "work"
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _generate(data: Path, *args: str) -> None:
    subprocess.run([sys.executable, str(ROOT / "project" / "generate.py"), "--out", str(data), *args], check=True,
                   capture_output=True)


def _project(tmp: Path, name: str, runtime: str | None = None) -> Path:
    """A copy of the example with the same generated data and, when given, environments/cluster.yml."""
    dst = tmp / name
    shutil.copytree(ROOT / "project", dst, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))
    _generate(dst / "data", "--orders", "4000", "--customers", "200")
    if runtime is not None:
        (dst / "environments" / "cluster.yml").write_text(runtime)
    return dst


def _run(project: Path, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(project), *args],
                       capture_output=True, text=True, timeout=900, env={**os.environ, "DAGSTER_HOME": ""})
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def _value(v: Any) -> Any:
    return round(v, 6) if isinstance(v, float) else v


def _snapshot(spark: Any, project: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored model's rows, sorted, floats rounded (partial sums may meet in another order)."""
    loaded = load(project)
    warehouse = Warehouse.for_project(loaded.project)
    out: dict[str, list[tuple[Any, ...]]] = {}
    for name in sorted(loaded.compiled.models):
        location = warehouse.table_location(name)
        if location is None:
            continue
        rows = spark.read.format("delta").load(str(location)).collect()
        out[name] = sorted((tuple(_value(v) for v in r) for r in rows), key=repr)
    return out


def _bucket_snapshot(project: Path, env: str | None = None) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored model's rows as delta-rs reads them where the project keeps them (a folder or a bucket),
    floats rounded (partial sums may meet in another order), and the export's rows as its readers see it."""
    loaded = load(project, env, use_cache=False)
    warehouse = Warehouse.for_project(loaded.project)
    out = {name: [tuple(_value(v) for v in r) for r in delta_rows(location)]
           for name in sorted(loaded.compiled.models) if (location := warehouse.table_location(name)) is not None}
    path = loaded.project.models["orders_export"].sink_config.path  # type: ignore[union-attr]
    if path.startswith("s3a://"):
        export = export_rows(ObjectPath(path, StoreOptions.from_spark_conf(loaded.project.runtime.spark.conf)))
    else:
        import pyarrow.parquet as pq

        export = [tuple(r.values()) for r in pq.read_table(project / path).to_pylist()]
    out["orders_export"] = sorted(tuple(_value(v) for v in r) for r in export)
    return out


def _upload(folder: Path, to: ObjectPath) -> None:
    fs = to.options.filesystem(to.uri)
    for file in sorted(f for f in folder.rglob("*") if f.is_file()):
        with fs.open_output_stream(f"{to.uri.split('://', 1)[1]}/{file.relative_to(folder)}") as out:
            out.write(file.read_bytes())


def _log_versions(table: ObjectPath) -> int:
    return len([k for k in (table / "_delta_log").files() if k.endswith(".json") and "/" not in k])


def test_with_no_shared_path_the_example_runs_survives_kill_9_and_equals_a_local_run(
        spark: Any, cluster: tuple[str, int, Path], s3_endpoint: str, tmp_path: Path) -> None:
    url, ui, work = cluster
    try:
        jars_for(sets.s3())
    except JarsUnavailable as exc:
        pytest.skip(str(exc))
    local = _project(tmp_path, "local")  # the reference: the same project and data, run locally
    bucket = f"s3a://{S3_BUCKET}/{tmp_path.name}"
    conf = s3_conf(s3_endpoint)
    store = ObjectPath(bucket, StoreOptions.from_spark_conf(conf))
    runtime = {"runtime": {"spark": {"master": url, "warehouse": f"{bucket}/warehouse",
                                     "checkpoints": f"{bucket}/checkpoints", "conf": conf}}}
    remote = _project(tmp_path, "remote", json.dumps(runtime))
    _upload(remote / "data", store / "data")
    shutil.rmtree(remote / "data")
    for yml, key, where in (("sources/orders.yml", "path: data/orders", "data/orders"),
                            ("sources/customers.yml", "path: data/customers", "data/customers"),
                            ("models/marts/orders_export.yml", "path: exports/orders", "exports/orders")):
        text = (remote / yml).read_text()
        assert key in text
        (remote / yml).write_text(text.replace(key, f"path: {bucket}/{where}"))

    # the first run's driver killed right after the stream's first commit, before the models reading it
    orders_clean = store / "warehouse" / "orders_clean" / "data"
    cmd = [sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(remote), "-e", "cluster"]
    killed = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                              env={**os.environ, "DAGSTER_HOME": ""})
    deadline = time.monotonic() + 300
    while not _log_versions(orders_clean) and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(killed.pid, 9)
    assert killed.wait(timeout=60) == -9, "the run ended before the stream committed"
    assert _log_versions(orders_clean)

    # new input, then a rerun: the stream reads only the new file, the rest catches up
    before = {p.name for p in (local / "data" / "orders").iterdir()}
    _generate(local / "data", "--orders", "500", "--append", "--seed", "11")
    new = [p for p in (local / "data" / "orders").iterdir() if p.name not in before]
    assert len(new) == 1
    _upload(new[0].parent, store / "data" / "orders")
    rerun = _run(remote, "-e", "cluster")
    streamed = next(line.split() for line in rerun.splitlines() if line.startswith("orders_clean "))
    assert streamed[1] == "success" and 0 < int(streamed[2].replace(",", "")) <= 500, rerun
    assert run_here(spark, "run", "-p", str(local)).returncode == 0
    expected = _bucket_snapshot(local)
    assert _bucket_snapshot(remote, "cluster") == expected and all(expected.values())
    apps = _master_state(ui)["completedapps"]
    assert [a["name"] for a in apps] == ["streamt-shop"] * 2  # both drivers used the cluster's executors

    # on the local disk: the Dagster instance, the run records (up-to-date memos, OpenLineage's own file
    # transport and delivery state, the project's root) and locks (writers', the project server's start);
    # no table, checkpoint or export
    kept = {p.name for p in (remote / ".streamt").iterdir()}
    assert kept <= {"dagster", "up_to_date", "openlineage", "openlineage.jsonl", "locks", "connect-server",
                    "state.json"}, kept
    def data(folder: Path) -> list[Path]:
        return [f for f in folder.rglob("*") if f.suffix in (".parquet", ".crc") or f.name in ("_delta_log", "commits")]

    assert data(remote) == [], data(remote)
    # the executors' working folder: the application's jars and logs (caches), no table or checkpoint either
    assert work.is_dir() and data(work) == [], data(work)
    assert not [key for key in store.files() if "/_locks/" in key]  # the writer locks in the bucket: released


def test_a_connect_server_on_the_cluster_runs_a_project(spark: Any, cluster: tuple[str, int, Path],
                                                        tmp_path: Path) -> None:
    url, ui, _ = cluster
    port = _free_port()
    via_connect = _small_project(tmp_path / "connect", f"runtime:\n  spark:\n    master: {url}\n"
                                                       f"    connect_server: {{start: true, port: {port}}}\n")
    try:
        _run(via_connect, "-e", "cluster")
        assert _snapshot(spark, via_connect) == SMALL_EXPECTED
        running = [a["name"] for a in _master_state(ui)["activeapps"]]
        assert running == ["Spark Connect server"], running  # the server is the cluster's application
    finally:
        stop_project_server(load(via_connect, "cluster").project)


SMALL = {
    "project": {"name": "small"},
    "sources": [{"name": "raw", "format": "json", "path": "in",
                 "columns": [{"name": "id", "type": "bigint"}, {"name": "kind", "type": "string"}]}],
    "models": [
        {"name": "clean", "materialized": "stream", "sql": 'SELECT id, kind FROM {{ source("raw") }} WHERE id >= 0'},
        {"name": "by_kind", "materialized": "table",
         "sql": 'SELECT kind, count(*) AS n, sum(id) AS s FROM {{ ref("clean") }} GROUP BY kind'},
    ],
}
SMALL_EXPECTED = {
    "by_kind": [("a", 10, 90), ("b", 10, 100)],
    "clean": sorted(((i, "ab"[i % 2]) for i in range(20)), key=repr),
}


def _small_project(root: Path, runtime: str) -> Path:
    """A stream and the table aggregating it, over 20 records and one negative id the stream drops."""
    return write_project(root, SMALL, {"in/a.json": jsonl({"id": i, "kind": "ab"[i % 2]} for i in [*range(20), -1]),
                                       "environments/cluster.yml": runtime})
