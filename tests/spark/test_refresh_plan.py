"""How a table model is refreshed (:func:`dagster_streamt.spark.tables.refresh_plan.decide`), rule by rule, from
hand-built snapshots (a source's files), table changes (a stored model's Delta log) and records; the
snapshot comparison and file listing rules of :mod:`dagster_streamt.spark.delta.input_files`; and the refresh
record kept in a table version. Pure Python: nothing here starts Spark."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from dagster_streamt.spark.delta.delta_table import Appended
from dagster_streamt.spark.delta.input_files import Snapshot, appended, hidden, listed_by_python
from dagster_streamt.spark.delta.refresh_record import (
    FORMAT,
    RefreshRecord,
    config_hash,
    input_key,
    record_from_json,
    record_json,
)
from dagster_streamt.spark.tables.refresh_plan import Refresh, RefreshInputs, decide
from dagster_streamt.sql.incremental import IncrementalPlan, incremental_plan

SRC = ("source", "orders_raw")
MOD = ("model", "customers")
VIEWS = {SRC: "orders_raw", MOD: "customers"}
RELATIONS = list(VIEWS.values())
ROOT = Path("/data/orders")  # the source's folder: its snapshot keys are absolute paths
TABLE = Path("/warehouse/customers/data")  # a folder whose files are keyed relative to it
READ = ("table-id-1", 7)  # the Delta table and version of model customers the previous build read

JOIN = incremental_plan("SELECT o.id, c.tier FROM orders_raw o JOIN customers c ON o.cid = c.id", RELATIONS)
LEFT = incremental_plan("SELECT o.id, c.tier FROM orders_raw o LEFT JOIN customers c ON o.cid = c.id", RELATIONS)
AGG = incremental_plan("SELECT c.tier, count(*) AS n FROM orders_raw o JOIN customers c ON o.cid = c.id "
                       "GROUP BY c.tier", RELATIONS)
RECOMPUTE = incremental_plan("SELECT c.tier, percentile_approx(o.amount, 0.5) AS p FROM orders_raw o "
                             "JOIN customers c ON o.cid = c.id GROUP BY c.tier", RELATIONS)
VOLATILE = incremental_plan("SELECT o.id, rand() AS r FROM orders_raw o JOIN customers c ON o.cid = c.id",
                            RELATIONS)

SOURCE_FILES = {f"{ROOT}/part-0.json": (100, 1_000, 7, 1_100), f"{ROOT}/part-1.json": (200, 2_000, 8, 2_100)}
TABLE_FILES = {"part-00000.parquet": (500, 10, 20, 0), "part-00001.parquet": (600, 11, 21, 0)}


def test_the_plans_are_the_kinds_these_tests_need() -> None:
    assert [p.kind for p in (JOIN, LEFT, AGG, RECOMPUTE, VOLATILE)] == \
        ["append", "append", "aggregate", "recompute", "volatile"]
    assert dict(LEFT.blockers) == {"customers": "the right side of a LEFT JOIN"}
    assert dict(JOIN.blockers) == {} and dict(AGG.blockers) == {}


def source(files: Mapping[str, tuple[int, int]]) -> Snapshot:
    return Snapshot(ROOT, dict(files), relative=False)


def table(files: Mapping[str, tuple[int, int]]) -> Snapshot:
    return Snapshot(TABLE, dict(files), relative=True)


def record(kind: str = "append", config: str = "cfg", files_at_rebuild: int = 2, refreshes: int = 0,
           inputs: Mapping[str, Mapping[str, tuple[int, int]]] | None = None,
           tables: Mapping[str, tuple[str, int]] | None = None) -> RefreshRecord:
    read = {input_key(*SRC): SOURCE_FILES} if inputs is None else inputs
    return RefreshRecord(config, kind, read, files_at_rebuild, refreshes,  # type: ignore[arg-type]
                         tables={input_key(*MOD): READ} if tables is None else tables)


def given(plan: IncrementalPlan = JOIN, src: Mapping[str, tuple[int, int]] | None = None,
          mod: Appended | str | None = None, rec: RefreshRecord | None = None,
          snapshots: Mapping[tuple[str, str], Snapshot | None] | None = None, **kw: object) -> RefreshInputs:
    """The model joins source orders_raw and model customers; by default nothing changed since ``record()``.
    ``mod``: what model customers' Delta log says happened since the recorded version."""
    tables: dict[tuple[str, str], Appended | str | None] = {}
    if snapshots is None:
        snapshots = {SRC: source(SOURCE_FILES if src is None else src)}
        tables = {MOD: mod}
    return RefreshInputs(plan, "cfg", VIEWS, snapshots, record(kind=plan.kind) if rec is None else rec, tables,
                         **kw)  # type: ignore[arg-type]


NEW_SOURCE = {**SOURCE_FILES, f"{ROOT}/part-3.json": (50, 3_000, 9, 3_100),
              f"{ROOT}/part-2.json": (40, 3_001, 10, 3_101)}
NEW_TABLE = Appended(7, 8, 3)  # one blind append since version 7 (3 rows)


# --- decide: reasons for a full rebuild before any input is looked at ----------------------------------------------

def test_full_refresh_requested_wins_over_everything() -> None:
    assert decide(given(), full_refresh=True) == Refresh("full", "full refresh requested")
    assert decide(given(rec=None, snapshots={SRC: None}), full_refresh=True).note == "full refresh requested"


def test_first_build_without_a_record() -> None:
    inputs = RefreshInputs(JOIN, "cfg", VIEWS, {SRC: source(SOURCE_FILES)}, None)
    assert decide(inputs) == Refresh("full", "first build (no record of the inputs it read)")


def test_config_changed() -> None:
    assert decide(given(rec=record(config="other"))) == \
        Refresh("full", "its SQL, settings or input declarations changed")


def test_volatile_plan_is_rebuilt_even_when_nothing_changed() -> None:
    assert decide(given(plan=VOLATILE)) == \
        Refresh("full", "rebuilt on every run: it calls rand(), whose value changes from run to run")


# --- decide: comparing each input with the record -----------------------------------------------------------------

def test_an_input_that_is_not_a_set_of_files() -> None:
    refresh = decide(given(snapshots={SRC: source(SOURCE_FILES), MOD: None}))
    assert refresh == Refresh("full", "model customers is not a set of files whose changes can be followed")


def test_an_input_the_previous_build_did_not_read() -> None:
    rec = record(inputs={})
    assert decide(given(rec=rec)) == Refresh("full", "source orders_raw was not read by the previous build")
    assert decide(given(rec=record(tables={}))) == Refresh("full", "model customers was not read by the previous build")


def test_inputs_are_checked_in_sorted_order() -> None:  # ("model", ...) before ("source", ...)
    rec = record(inputs={}, tables={})
    assert decide(given(rec=rec, src=NEW_SOURCE)).note == "model customers was not read by the previous build"


@pytest.mark.parametrize("why", ["was deleted and built again", "went back from version 7 to 5",
                                 "was rewritten at version 8 (MERGE)", "keeps no change feed "
                                 "(delta.enableChangeDataFeed is off)"])
def test_a_table_whose_log_says_it_was_not_only_appended(why: str) -> None:
    assert decide(given(mod=why)) == Refresh("full", f"model customers {why}")


@pytest.mark.parametrize("files", [
    {**SOURCE_FILES, f"{ROOT}/part-0.json": (101, 1_000, 7, 1_100)},  # size changed
    {**SOURCE_FILES, f"{ROOT}/part-0.json": (100, 1_001, 7, 1_100)},  # modification time changed
    {**SOURCE_FILES, f"{ROOT}/part-0.json": (100, 1_000, 7, 1_200)},  # rewritten, its mtime set back
    {**SOURCE_FILES, f"{ROOT}/part-0.json": (100, 1_000, 99, 1_100)},  # another file renamed into place
    {f"{ROOT}/part-1.json": (200, 2_000, 8, 2_100)},  # removed
    {f"{ROOT}/part-1.json": (200, 2_000, 8, 2_100), f"{ROOT}/part-9.json": (100, 1_000, 7, 1_100)},  # renamed
])
def test_a_rewritten_input(files: dict[str, tuple[int, int, int, int]]) -> None:
    assert decide(given(src=files)) == \
        Refresh("full", "source orders_raw was rewritten (a file it had changed or disappeared)")


@pytest.mark.parametrize("plan", [JOIN, LEFT, AGG, RECOMPUTE])
def test_nothing_changed(plan: IncrementalPlan) -> None:
    assert decide(given(plan=plan, has_state=False, files_now=10_000)) == \
        Refresh("unchanged", "no input changed since the previous build")


# --- decide: one input appended -----------------------------------------------------------------------------------

def test_source_appended_with_an_append_plan() -> None:
    refresh = decide(given(src=NEW_SOURCE, files_now=3))
    assert refresh == Refresh("append", "appended the rows of 2 new files of source orders_raw",
                              {SRC: (f"{ROOT}/part-2.json", f"{ROOT}/part-3.json")})


def test_table_appended_deltas_are_joined_to_its_version() -> None:
    refresh = decide(given(mod=NEW_TABLE))
    assert refresh == Refresh("append", "appended the rows of 1 new version of model customers", {MOD: NEW_TABLE})
    assert decide(given(mod=Appended(7, 10, None))).note == "appended the rows of 3 new versions of model customers"


def test_two_inputs_appended_at_once() -> None:
    assert decide(given(src=NEW_SOURCE, mod=NEW_TABLE)) == \
        Refresh("full", "model customers, source orders_raw changed at once")


def test_appended_input_blocked_by_the_plan() -> None:
    assert decide(given(plan=LEFT, mod=NEW_TABLE)) == Refresh(
        "full", "rows were appended to model customers, which the query reads through the right side of a LEFT JOIN")
    assert decide(given(plan=LEFT, src=NEW_SOURCE)).mode == "append"  # the preserved side is fine


def test_recompute_plan_with_a_change() -> None:
    assert decide(given(plan=RECOMPUTE, src=NEW_SOURCE)) == Refresh(
        "full", "source orders_raw changed; rebuilt because of aggregate percentile_approx() cannot be merged")


def test_aggregate_plan_without_state() -> None:
    assert decide(given(plan=AGG, src=NEW_SOURCE, has_state=False)) == Refresh(
        "full", "2 new files of source orders_raw, but the previous build kept no aggregation state")


def test_aggregate_plan_with_state_merges() -> None:
    refresh = decide(given(plan=AGG, mod=NEW_TABLE, has_state=True, files_now=10_000))  # no compaction for merges
    assert refresh == Refresh("merge", "merged the aggregation of 1 new version of model customers",
                              {MOD: NEW_TABLE})


def test_aggregate_plan_recorded_as_recompute_is_recomputed() -> None:
    rec = record(kind="recompute")
    assert decide(given(plan=AGG, src=NEW_SOURCE, rec=rec, has_state=True)) == Refresh(
        "full", "source orders_raw changed; rebuilt because of an aggregation whose state does not reproduce its "
                "column types")
    assert decide(given(plan=AGG, rec=rec, has_state=True)).mode == "unchanged"


def test_aggregate_blocked_input_is_rebuilt_before_looking_at_state() -> None:
    left = incremental_plan("SELECT c.tier, count(*) AS n FROM orders_raw o LEFT JOIN customers c ON o.cid = c.id "
                            "GROUP BY c.tier", RELATIONS)
    assert left.kind == "aggregate"
    assert decide(given(plan=left, mod=NEW_TABLE, has_state=True)) == Refresh(
        "full", "rows were appended to model customers, which the query reads through the right side of a LEFT JOIN")


@pytest.mark.parametrize(("at_rebuild", "files_now", "mode"), [
    (2, 99, "append"), (2, 100, "full"),  # at least 100 files ...
    (30, 119, "append"), (30, 120, "full"),  # ... and at least 4 times those of the last full build
    (0, 100, "full"),
])
def test_compaction_threshold(at_rebuild: int, files_now: int, mode: str) -> None:
    refresh = decide(given(src=NEW_SOURCE, rec=record(files_at_rebuild=at_rebuild), files_now=files_now))
    assert refresh.mode == mode
    if mode == "full":
        assert refresh.note == f"2 new files of source orders_raw; rebuilt to compact its {files_now} files"
        assert dict(refresh.deltas) == {}


# --- input_files --------------------------------------------------------------------------------------------------

def test_appended() -> None:
    now = source(NEW_SOURCE)
    assert appended(SOURCE_FILES, now) == [f"{ROOT}/part-2.json", f"{ROOT}/part-3.json"]
    assert appended(SOURCE_FILES, source(SOURCE_FILES)) == []
    assert appended({}, now) == sorted(NEW_SOURCE)
    before_json = {k: list(v) for k, v in SOURCE_FILES.items()}  # as a record's JSON holds them
    assert appended(before_json, now) == [f"{ROOT}/part-2.json", f"{ROOT}/part-3.json"]  # type: ignore[arg-type]
    assert appended({**SOURCE_FILES, f"{ROOT}/gone.json": (1, 1, 1, 1)}, now) is None
    assert appended({f"{ROOT}/part-0.json": (100, 999, 7, 1_100)}, now) is None


def test_snapshot_paths() -> None:
    files = {**TABLE_FILES, "k=1/part-00002.parquet": (70, 12, 22, 0)}
    assert table(files).paths() == [f"{TABLE}/k=1/part-00002.parquet", f"{TABLE}/part-00000.parquet",
                                    f"{TABLE}/part-00001.parquet"]
    assert table(files).paths(["part-00001.parquet", "part-00000.parquet"]) == \
        [f"{TABLE}/part-00000.parquet", f"{TABLE}/part-00001.parquet"]
    assert source(NEW_SOURCE).paths([f"{ROOT}/part-3.json", f"{ROOT}/part-2.json"]) == \
        [f"{ROOT}/part-2.json", f"{ROOT}/part-3.json"]


@pytest.mark.parametrize(("name", "is_hidden"), [
    ("part-00000.parquet", False), ("data.json", False), ("k=1", False), ("_k=1", False),
    ("_SUCCESS", True), ("_streamt_refresh.json", True), ("_streamt_state", True), ("_metadata", True),
    (".part-00000.parquet.crc", True), (".hidden", True), ("part-0.json._COPYING_", True),
])
def test_hidden(name: str, is_hidden: bool) -> None:
    assert hidden(name) is is_hidden


def _write(path: Path, text: str, mtime_ns: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_listed_by_python(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    _write(folder / "a.json", "{}", 7_000)
    _write(folder / "_SUCCESS", "", 8_000)
    st = (folder / "a.json").stat()
    assert listed_by_python(folder, {}) == {str(folder / "a.json"): (2, 7_000, st.st_ino, st.st_ctime_ns)}
    assert listed_by_python(folder / "a.json", {}) == {str(folder / "a.json"): (2, 7_000, st.st_ino, st.st_ctime_ns)}
    assert listed_by_python(folder, {"pathGlobFilter": "*.json"}) is None  # Spark lists such sources
    assert listed_by_python(tmp_path / "src" / "*.json", {}) is None
    assert listed_by_python(tmp_path / "absent", {}) is None
    _write(folder / "k=1" / "b.json", "{}", 9_000)
    assert listed_by_python(folder, {}) is None  # partition folders: only Spark can say


# --- refresh record -----------------------------------------------------------------------------------------------

def test_record_round_trip() -> None:
    rec = RefreshRecord("abc123", "aggregate", {"source:orders_raw": SOURCE_FILES},
                        files_at_rebuild=4, refreshes=2, states={"_streamt_state": 3},
                        tables={"model:customers": ("table-id-1", 7)})
    text = record_json(rec)  # the userMetadata of the Delta commit that writes the version
    assert record_from_json(text, files_now=9) == rec
    data = json.loads(text)
    assert data == {"format": FORMAT, "config": "abc123", "kind": "aggregate", "files_at_rebuild": 4, "refreshes": 2,
                    "states": {"_streamt_state": 3}, "tables": {"model:customers": ["table-id-1", 7]},
                    "inputs": {"source:orders_raw": {f"{ROOT}/part-0.json": [100, 1_000, 7, 1_100],
                                                     f"{ROOT}/part-1.json": [200, 2_000, 8, 2_100]}}}
    older = {**data, "inputs": {"source:orders_raw": {f"{ROOT}/part-0.json": [100, 1_000]}}}  # size + mtime only
    assert record_from_json(json.dumps(older), 0) is None  # a full rebuild, never a rewrite taken for unchanged
    built = record_from_json(json.dumps({**data, "files_at_rebuild": -1, "states": None}), files_now=9)
    assert built is not None and built.files_at_rebuild == 9 and built.states is None  # a full build's commit


@pytest.mark.parametrize("text", [
    "", "{not json", "null", "[]", '"text"',
    json.dumps({"format": FORMAT + 1, "config": "c", "kind": "append", "inputs": {}, "files_at_rebuild": 1,
                "refreshes": 0}),
    json.dumps({"config": "c", "kind": "append", "inputs": {}, "files_at_rebuild": 1, "refreshes": 0}),
    json.dumps({"format": FORMAT, "config": "c", "kind": "append", "inputs": {}, "files_at_rebuild": 1}),
    json.dumps({"format": FORMAT, "config": "c", "kind": "append", "inputs": {"source:x": {"f": [1]}},
                "files_at_rebuild": 1, "refreshes": 0}),
    json.dumps({"format": FORMAT, "config": "c", "kind": "append", "inputs": {"source:x": {"f": ["a", 1]}},
                "files_at_rebuild": 1, "refreshes": 0}),
    json.dumps({"format": FORMAT, "config": "c", "kind": "append", "inputs": [], "files_at_rebuild": 1,
                "refreshes": 0}),
    json.dumps({"format": FORMAT, "config": "c", "kind": "append", "inputs": {}, "files_at_rebuild": "many",
                "refreshes": 0}),
])
def test_unreadable_record(text: str) -> None:
    assert record_from_json(text, 0) is None


def test_input_key_and_config_hash() -> None:
    assert input_key("source", "orders_raw") == "source:orders_raw"
    h = config_hash({"sql": "SELECT 1", "conf": {"a": "1", "b": "2"}})
    assert len(h) == 24 and all(c in "0123456789abcdef" for c in h)
    assert h == config_hash({"conf": {"b": "2", "a": "1"}, "sql": "SELECT 1"})  # key order does not matter
    assert h != config_hash({"sql": "SELECT 2", "conf": {"a": "1", "b": "2"}})
