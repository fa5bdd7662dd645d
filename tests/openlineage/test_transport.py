"""Transport configuration, and durable delivery through a backend outage: every event arrives
exactly once and in order, across several ``emit_all`` calls."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.transport.console import ConsoleTransport
from openlineage.client.transport.file import FileTransport
from openlineage.client.transport.http import HttpTransport

from dagster_streamt.openlineage.transport import (
    backoff_seconds,
    build_transport,
    emit_all,
    legs,
    normalize,
    resolve_transport_config,
    state_dir,
)

from .backend import Backend, free_port
from .conftest import EXAMPLE, MakeProject


def event(i: int, **extra: Any) -> dict[str, Any]:
    return {"eventType": "START", "eventTime": "2026-03-01T10:00:00.000Z", "producer": "https://example.com/p",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.UUID(int=i))}, "job": {"namespace": "t", "name": f"job{i}"}, **extra}


@pytest.fixture
def backend() -> Iterator[Backend]:
    b = Backend(free_port())
    yield b
    b.stop()


def http_config(backend: Backend, root: Path) -> dict[str, Any]:
    return normalize({"type": "http", "url": backend.url, "timeout": 2}, root)


# -- configuration -------------------------------------------------------------------------------
def test_config_precedence(make_project: MakeProject, tmp_path: Path) -> None:
    explicit = make_project({"runtime": {"openlineage": {"transport": {"type": "console"}}}}, "a")
    assert resolve_transport_config(explicit.project, env={"OPENLINEAGE_URL": "http://x"}) == (
        {"type": "console"}, "runtime.openlineage")
    plain = make_project({}, "b")
    root = plain.project.root.resolve()
    conf, origin = resolve_transport_config(plain.project, env={})
    assert origin == "default" and conf == {"type": "file", "log_file_path": str(root / ".streamt/openlineage.jsonl"),
                                            "append": True}
    env = {"OPENLINEAGE__TRANSPORT__TYPE": "http", "OPENLINEAGE__TRANSPORT__URL": "http://ol:5000",
           "OPENLINEAGE__TRANSPORT__AUTH": '{"type": "api_key", "api_key_env": "OL_KEY"}'}
    conf, origin = resolve_transport_config(plain.project, env=env)
    assert origin == "OPENLINEAGE__TRANSPORT" and conf["url"] == "http://ol:5000" and conf["retry"] == {"total": 0}
    conf, origin = resolve_transport_config(plain.project, env={"OPENLINEAGE_URL": "http://m:5000",
                                                                "OPENLINEAGE_API_KEY": "k"})
    assert origin == "OPENLINEAGE_URL" and conf["auth"] == {"type": "api_key", "api_key_env": "OPENLINEAGE_API_KEY"}
    (root / "openlineage.yml").write_text("transport:\n  type: file\n  log_file_path: lineage/out.jsonl\n")
    conf, origin = resolve_transport_config(plain.project, env=env)
    assert origin == "openlineage.yml" and conf["log_file_path"] == str(root / "lineage/out.jsonl")
    assert resolve_transport_config(plain.project, env={"OPENLINEAGE_DISABLED": "true"})[0] == {"type": "noop"}
    off = make_project({"runtime": {"openlineage": {"enabled": False}}}, "c")
    assert resolve_transport_config(off.project, env={})[1] == "disabled"


def test_example_project_config(example: Any) -> None:
    conf, origin = resolve_transport_config(example.project, env={})
    assert origin == "runtime.openlineage"
    assert conf["log_file_path"] == str(EXAMPLE.resolve() / ".streamt/openlineage.jsonl")
    assert state_dir(example.project) == EXAMPLE.resolve() / ".streamt/openlineage"


def test_build_transports(tmp_path: Path) -> None:
    assert isinstance(build_transport(normalize({"type": "file"}, tmp_path)), FileTransport)
    assert isinstance(build_transport({"type": "console"}), ConsoleTransport)
    http = {"type": "http", "url": "http://h:1", "auth": {"type": "api_key", "api_key_env": "OL_KEY"}}
    t = build_transport(http, env={"OL_KEY": "s3cret"})
    assert isinstance(t, HttpTransport) and t.config.auth.get_bearer() == "Bearer s3cret"
    with pytest.raises(ValueError, match="OL_KEY"):
        build_transport(http, env={})
    composite = normalize({"type": "composite", "transports": {"copy": {"type": "file"}, "marquez": http}}, tmp_path)
    assert [name for name, _ in legs(composite)] == ["copy", "marquez"]
    assert legs(normalize({"type": "composite", "transports": [{"type": "console"}]}, tmp_path))[0][0] == "console_0"


# -- delivery ------------------------------------------------------------------------------------
def test_file_transport_delivery(tmp_path: Path) -> None:
    conf = normalize({"type": "file", "log_file_path": "out/ol.jsonl"}, tmp_path)
    report = emit_all([event(1), event(2)], conf, tmp_path / "state")
    assert (report.delivered, report.pending, report.ok) == (2, 0, True)
    emit_all([event(3)], conf, tmp_path / "state")
    lines = [json.loads(x) for x in (tmp_path / "out/ol.jsonl").read_text().splitlines()]
    assert [e["job"]["name"] for e in lines] == ["job1", "job2", "job3"]
    assert not list((tmp_path / "state").glob("file.[0-9]*.jsonl")) or all(
        p.stat().st_size == 0 for p in (tmp_path / "state").glob("file.[0-9]*.jsonl"))


def test_delivery_through_an_outage(tmp_path: Path, backend: Backend) -> None:
    conf, state = http_config(backend, tmp_path), tmp_path / "state"
    sent = [event(i) for i in range(12)]
    # the backend is down: connection refused; everything stays queued, a retry is scheduled
    r = emit_all(sent[:4], conf, state, now=1000.0)
    assert (r.delivered, r.pending, r.enqueued) == (0, 4, 4)
    assert r.legs[0].last_error and r.next_attempt_at is not None and r.next_attempt_at.timestamp() == 1001.0
    # during the backoff new events are only queued
    r = emit_all(sent[4:6], conf, state, now=1000.5)
    assert r.legs[0].deferred and (r.delivered, r.pending) == (0, 6) and backend.requests == 0
    # the backend comes back but answers 500 to the next three requests
    backend.refuse = 3
    backend.start()
    now, rest, calls = 1002.0, sent[6:], 0
    while True:
        batch, rest = rest[:2], rest[2:]
        r = emit_all(batch, conf, state, now=now)
        calls += 1
        if r.pending == 0 and not rest:
            break
        now += 60.0
        assert calls < 20
    assert calls >= 4  # three refusals, each followed by a backoff
    assert backend.received == sent  # every event exactly once, in order
    assert backend.requests == len(sent) + 3
    assert r.legs[0].last_error is None and r.next_attempt_at is None
    assert emit_all([], conf, state, now=now).delivered == 0 and backend.received == sent


def test_backoff_grows_and_is_capped() -> None:
    assert [backoff_seconds(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 8.0]
    assert backoff_seconds(30) == 300.0


def test_malformed_events_are_set_aside(tmp_path: Path, backend: Backend) -> None:
    backend.start()
    conf, state = http_config(backend, tmp_path), tmp_path / "state"
    r = emit_all([event(1), event(2, reject=True), event(3)], conf, state)
    assert (r.delivered, r.rejected, r.pending) == (2, 1, 0)
    assert [e["job"]["name"] for e in backend.received] == ["job1", "job3"]
    assert json.loads((state / "http.rejected.jsonl").read_text())["job"]["name"] == "job2"


def test_composite_legs_are_independent(tmp_path: Path, backend: Backend) -> None:
    conf = normalize({"type": "composite", "transports": {
        "copy": {"type": "file", "log_file_path": "copy.jsonl"},
        "marquez": {"type": "http", "url": backend.url, "timeout": 2}}}, tmp_path)
    state = tmp_path / "state"
    r = emit_all([event(1), event(2)], conf, state, now=10.0)  # marquez is down
    by_leg = {leg.name: leg for leg in r.legs}
    assert (by_leg["copy"].delivered, by_leg["marquez"].pending) == (2, 2)
    backend.start()
    r = emit_all([event(3)], conf, state, now=100.0)
    assert r.ok and [e["job"]["name"] for e in backend.received] == ["job1", "job2", "job3"]
    assert len((tmp_path / "copy.jsonl").read_text().splitlines()) == 3


def test_concurrent_emitters_lose_and_repeat_nothing(tmp_path: Path, backend: Backend) -> None:
    backend.start()
    conf, state = http_config(backend, tmp_path), tmp_path / "state"

    def emit(worker: int) -> None:
        for i in range(10):
            emit_all([event(worker * 100 + i)], conf, state)

    threads = [threading.Thread(target=emit, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert emit_all([], conf, state, force=True).pending == 0  # a final tick sends what a busy drainer left
    got = [int(uuid.UUID(e["run"]["runId"])) for e in backend.received]
    assert sorted(got) == sorted(w * 100 + i for w in range(4) for i in range(10))
    for w in range(4):
        mine = [g for g in got if g // 100 == w]
        assert mine == sorted(mine)  # each emitter's events stay in order


def test_built_events_round_trip_through_the_outbox(example: Any, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from dagster_streamt.core.results import ModelResult
    from dagster_streamt.openlineage import DagsterRun, EventBuilder

    from .spec import assert_valid

    builder, run, at = EventBuilder(example), DagsterRun(str(uuid.UUID(int=7))), datetime(2026, 3, 1, tzinfo=UTC)
    result = ModelResult(model="orders_clean", materialized="stream", status="success", rows_written=5)
    events = builder.model_events(run, result, at, at)  # event objects, not dicts
    conf = normalize({"type": "file", "log_file_path": "ol.jsonl"}, tmp_path)
    assert emit_all(events, conf, tmp_path / "state").delivered == 2
    written = [json.loads(x) for x in (tmp_path / "ol.jsonl").read_text().splitlines()]
    assert [e["eventType"] for e in written] == ["START", "COMPLETE"]
    assert_valid(written)
