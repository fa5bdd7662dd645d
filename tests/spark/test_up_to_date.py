"""When a run can leave a model as it is without Spark (:mod:`dagster_streamt.spark.up_to_date`): real
files, real Delta tables (written with delta-rs) and real records; every input that can change a model's
rows or its tests' verdicts must make it run again. Pure Python: nothing here starts Spark (the run
through Dagster with Spark made impossible is tests/dagster/test_no_spark_rerun.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

from dagster_streamt.api import load
from dagster_streamt.dagster.unchanged import definitions
from dagster_streamt.spark.delta.delta_table import current_commit
from dagster_streamt.spark.storage.paths import ProjectPaths
from dagster_streamt.spark.storage.warehouse import Warehouse
from dagster_streamt.spark.up_to_date import InputState, own_state, python_listing, unchanged_models, write_record

from ..helpers import write_project

FILES = {
    "sources/s.yml": """
        sources:
          - name: orders
            format: json
            path: data/orders
            columns: [{name: customer_id, type: bigint}, {name: amount, type: double}]
          - name: customers
            format: json
            path: data/customers
            columns: [{name: customer_id, type: bigint}]
        """,
    "models/m.yml": """
        models:
          - name: totals
            materialized: table
            sql: SELECT customer_id, count(*) AS n FROM {{ source("orders") }} GROUP BY customer_id
          - name: repeat_buyers
            materialized: view
            sql: SELECT customer_id FROM {{ ref("totals") }} WHERE n > 1
          - name: sampled
            materialized: table
            sql: SELECT customer_id, rand() AS r FROM {{ source("orders") }}
          - name: to_crm
            materialized: sink
            from: totals
            sink: {format: jdbc, options: {url: "jdbc:postgresql://crm/db", dbtable: totals}}
        """,
    "tests/t.yml": """
        tests:
          - name: totals_known
            model: totals
            type: sample
            assertions:
              - relationships: {column: customer_id, to: 'source("customers")', field: customer_id}
        """,
}
MODELS = ["totals", "repeat_buyers", "sampled", "to_crm"]


def _project(tmp_path: Path) -> Path:
    root = write_project(tmp_path / "p", dict(FILES))
    for folder, line in (("orders", '{"customer_id": 1, "amount": 2.0}'), ("customers", '{"customer_id": 1}')):
        (root / "data" / folder).mkdir(parents=True)
        (root / "data" / folder / "a.json").write_text(line + "\n")
    return root


def _warehouse(root: Path) -> Warehouse:
    paths = ProjectPaths.from_project(load(root).project)
    return Warehouse(paths.warehouse, paths.locks)


def _write_table(root: Path, name: str, mode: str = "overwrite") -> None:
    location = _warehouse(root).data_dir(name)
    write_deltalake(str(location), pa.table({"customer_id": [1], "n": [1]}), mode=mode)


def _record_run(root: Path, engine: str = "") -> None:
    """What a successful run of every model records (as the runner does after each one)."""
    loaded = load(root)
    project = loaded.project
    paths = ProjectPaths.from_project(project)
    warehouse = Warehouse(paths.warehouse, paths.locks)
    state = InputState(project, definitions(loaded, engine), python_listing(project),
                       lambda m: current_commit(warehouse.data_dir(m)))
    for name in MODELS:
        digest, own = state.digest(name), own_state(project, paths, warehouse, name)
        if digest is not None and own is not None:
            write_record(paths, name, digest, own, "run-1")


def _unchanged(root: Path, names: list[str] = MODELS, engine: str = "", refresh: tuple[str, ...] = ()) -> list[str]:
    loaded = load(root)
    return sorted(unchanged_models(loaded.project, definitions(loaded, engine), names, refresh))


def test_only_what_nothing_reaches_stays_unchanged(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert _unchanged(root) == []  # never run: no record
    _write_table(root, "totals")
    _write_table(root, "sampled")
    _record_run(root)
    # rand(): its rows change every run; a JDBC snapshot sink republishes (and so repairs) its target each run
    assert _unchanged(root) == ["repeat_buyers", "totals"]
    assert _unchanged(root, refresh=("totals",)) == []  # a full refresh, and the view reading it
    assert _unchanged(root, engine='["local[1]"]') == []  # another engine setting

    new = root / "data" / "orders" / "b.json"
    new.write_text('{"customer_id": 2, "amount": 1.0}\n')
    assert _unchanged(root) == []  # a new file: the table, and the view reading it, go to Spark
    new.unlink()
    assert _unchanged(root) == ["repeat_buyers", "totals"]

    customers = root / "data" / "customers" / "b.json"  # only the test on totals reads it
    customers.write_text('{"customer_id": 2}\n')
    assert _unchanged(root) == []
    customers.unlink()

    _write_table(root, "totals", mode="append")  # someone else wrote the table
    assert _unchanged(root) == []
    assert _unchanged(root, ["repeat_buyers"]) == []  # the view reads another version now
    _record_run(root)
    assert _unchanged(root) == ["repeat_buyers", "totals"]


def test_a_definition_change_is_a_change(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _write_table(root, "totals")
    _record_run(root)
    assert _unchanged(root, ["totals"]) == ["totals"]
    models = root / "models" / "m.yml"
    models.write_text(models.read_text().replace("count(*) AS n", "count(*) AS n, sum(amount) AS s"))
    assert _unchanged(root, ["totals"]) == []
    _record_run(root)
    tests = root / "tests" / "t.yml"  # a test edited: its last result is not this test's
    tests.write_text(tests.read_text().replace("type: sample", "type: sample\n    severity: warn"))
    assert _unchanged(root, ["totals"]) == []


def test_a_removed_table_or_record_sends_the_model_to_spark(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _write_table(root, "totals")
    _record_run(root)
    paths = ProjectPaths.from_project(load(root).project)
    (paths.state_dir / "up_to_date" / "totals.json").write_text("not json")  # a damaged record is no record
    assert _unchanged(root, ["totals"]) == []
    _record_run(root)
    shutil.rmtree(_warehouse(root).data_dir("totals"))
    assert _unchanged(root, ["totals"]) == []


def test_what_a_test_reads_and_whether_time_decides_it() -> None:
    from dagster_streamt.checks.assertions import decided_by_data, nothing_to_judge, relations_read
    from dagster_streamt.spec.models import Test

    def test(*assertions: dict[str, object]) -> Test:
        return Test(name="t", model="m", type="sample", assertions=list(assertions))

    assert relations_read(test({"not_null": {"columns": ["a"]}})) == set()
    assert relations_read(test({"relationships": {"column": "a", "ref_model": "other", "field": "b"}})) \
        == {("model", "other")}
    assert relations_read(test({"custom_sql": {"sql": 'SELECT count(*) FROM {{ ref("x") }}'}})) is None
    assert decided_by_data(test({"range": {"column": "a", "min": 0}}, {"expression_is_true": {"expression": "a > b"}}))
    assert not decided_by_data(test({"freshness": {"column": "ts", "max_age": "1h"}}))
    assert not decided_by_data(test({"custom_sql": {"where": "ts < now() - INTERVAL 1 DAY"}}))
    judged = nothing_to_judge(test({"not_null": {"columns": ["a"]}}, {"unique": {"columns": ["a"]}}), "model.m",
                              "warn", "nothing new")
    assert judged.passed and [a.passed for a in judged.assertions] == [True, True] and judged.severity == "warn"
