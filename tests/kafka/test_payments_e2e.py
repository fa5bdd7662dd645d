"""streamt's own ``examples/payments`` project against a real broker and real Spark, run as a user runs it
(``streamt run``, here in the test's process on the shared session), its topics read back with a plain Kafka
consumer and compared with what plain Python computes from the records produced.

The project is the copy in ``tests/compat/streamt_projects/payments_example`` (streamt, Apache-2.0; see that
folder's NOTICE.md), unchanged but for ``runtime.kafka.bootstrap_servers``: ``payments_clean`` (a ``topic``
model: filter) publishes topic ``payments_clean`` (6 partitions, replication 3 declared), ``customer_balances``
(a ``flink`` model: ``TUMBLE`` window of 5 minutes over ``payments_clean``) publishes ``customer_balances``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.kafka import admin
from dagster_streamt.kafka.broker import KafkaBroker

from ..conftest import StreamtHere
from ..helpers import REPO
from .topics import read_topic

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

PAYMENTS = REPO / "tests" / "compat" / "streamt_projects" / "payments_example" / "stream_project.yml"
RAW = "payments.raw.v1"
T0 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
WINDOW = timedelta(minutes=5)
DELAY = timedelta(seconds=5)  # streamt's default watermark bound, which Spark applies to the window's column
STATUSES = ["PENDING", "CAPTURED", "FAILED", "REFUNDED", None]


def _iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def payments(start: int, count: int, first: datetime, rng: random.Random) -> list[dict[str, Any]]:
    """``count`` payments every 9 s from ``first``: 200 of them span 29 min 51 s."""
    return [{"payment_id": f"p{start + i:05d}", "customer_id": f"c{rng.randint(1, 7)}",
             "amount": round(rng.uniform(1, 500), 2), "currency": rng.choice(["EUR", "USD", "GBP"]),
             "status": rng.choices(STATUSES, weights=[3, 5, 2, 1, 1])[0],
             "event_timestamp": _iso(first + timedelta(seconds=9 * i))} for i in range(count)]


def produce(servers: str, records: list[dict[str, Any]]) -> None:
    admin.produce(servers, RAW, [(r["payment_id"], json.dumps(r)) for r in records])


def multiset(rows: Iterable[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(r, sort_keys=True) for r in rows)


def clean(records: list[dict[str, Any]]) -> Counter[str]:
    """``payments_clean``: the records with a status, every field as produced."""
    return multiset(r for r in records if r["status"] is not None)


def balances(records: list[dict[str, Any]], watermark: datetime) -> dict[tuple[str, datetime], tuple[float, int]]:
    """``customer_balances`` as Spark appends it: (customer, window end) -> (SUM(amount), COUNT(*)) of the
    CAPTURED payments, for the 5-minute windows whose end the watermark has reached."""
    out: dict[tuple[str, datetime], tuple[float, int]] = {}
    for r in records:
        if r["status"] != "CAPTURED":
            continue
        ts = datetime.fromisoformat(r["event_timestamp"])
        end = T0 + WINDOW * ((ts - T0) // WINDOW + 1)
        if end <= watermark:
            total, n = out.get((r["customer_id"], end), (0.0, 0))
            out[(r["customer_id"], end)] = (total + r["amount"], n + 1)
    return out


def published_balances(servers: str) -> dict[tuple[str, datetime], tuple[float, int]]:
    out: dict[tuple[str, datetime], tuple[float, int]] = {}
    for v in read_topic(servers, "customer_balances"):
        key = (v["customer_id"], datetime.fromisoformat(v["window_end"]))
        assert key not in out, f"window published twice: {v}"
        out[key] = (v["total_amount"], v["transaction_count"])
    return out


def assert_balances(got: dict[tuple[str, datetime], tuple[float, int]],
                    want: dict[tuple[str, datetime], tuple[float, int]]) -> None:
    assert sorted(got) == sorted(want)
    for key, (total, n) in want.items():
        assert got[key][1] == n, key
        assert got[key][0] == pytest.approx(total, abs=1e-6), key


def copy_project(root: Path, servers: str) -> Path:
    text = PAYMENTS.read_text(encoding="utf-8")
    changed = text.replace("bootstrap_servers: localhost:9092", f"bootstrap_servers: {servers}")
    assert [(a, b) for a, b in zip(text.splitlines(), changed.splitlines(), strict=True) if a != b] == [
        ("    bootstrap_servers: localhost:9092", f"    bootstrap_servers: {servers}")]
    root.mkdir(parents=True)
    (root / "stream_project.yml").write_text(changed, encoding="utf-8")
    return root


def test_payments_example_runs_on_a_real_broker(kafka_broker: KafkaBroker, tmp_path: Path,
                                                streamt_here: StreamtHere) -> None:
    """Two runs of streamt's payments example over a raw topic of 3 partitions.

    Windows and watermark: ``customer_balances`` reads ``payments_clean`` as a stream and groups it by
    ``TUMBLE(event_timestamp, INTERVAL '5' MINUTE)``; no input declares an event time, so the product
    watermarks ``event_timestamp`` with streamt's default bound of 5 s (note STR045) and the stream
    appends a window once the watermark (the latest event time seen minus 5 s) has passed its end; open
    windows stay in the checkpoint's state for the next run.

    - Run 1: payments at 10:00:00 + 9 s * i, i < 200, so the latest is 10:29:51 and the watermark ends at
      10:29:46: the windows ending 10:05 ... 10:25 are published; 10:25-10:30 stays open.
    - Run 2: 100 more payments from 10:30:00 (latest 10:44:51, watermark 10:44:46): the windows ending
      10:30 (its payments from run 1, held in state), 10:35 and 10:40 are added; 10:40-10:45 stays open.
    - Run 3, with nothing new: nothing is added to either topic.
    """
    servers = kafka_broker.bootstrap_servers
    rng = random.Random(24)
    admin.create_topic(servers, RAW, partitions=3)
    first = payments(0, 200, T0, rng)
    assert {r["status"] for r in first} == set(STATUSES)  # some null, every status present
    produce(servers, first)
    root = copy_project(tmp_path / "payments", servers)
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")

    r = streamt_here("run", "-p", str(root), env={"DAGSTER_HOME": str(home)})
    assert r.returncode == 0, r.stdout + r.stderr
    topics = admin.list_topics(servers)
    assert topics["payments_clean"] == admin.TopicInfo("payments_clean", partitions=6, replication=1)
    assert topics["customer_balances"].partitions == 12
    warning = next((line for line in r.stderr.splitlines() if "replication" in line), "")
    assert "payments_clean" in warning and "3" in warning and "1" in warning, r.stderr
    assert multiset(read_topic(servers, "payments_clean")) == clean(first)
    assert_balances(published_balances(servers), balances(first, datetime(2026, 1, 1, 10, 29, 46, tzinfo=UTC)))

    second = payments(200, 100, T0 + timedelta(minutes=30), rng)
    produce(servers, second)
    r = streamt_here("run", "-p", str(root), env={"DAGSTER_HOME": str(home)})
    assert r.returncode == 0, r.stdout + r.stderr
    everything = first + second
    assert multiset(read_topic(servers, "payments_clean")) == clean(everything)  # the new ones, once
    closed = balances(everything, datetime(2026, 1, 1, 10, 44, 46, tzinfo=UTC))
    assert max(end for _, end in closed) == datetime(2026, 1, 1, 10, 40, tzinfo=UTC)
    assert_balances(published_balances(servers), closed)

    r = streamt_here("run", "-p", str(root), env={"DAGSTER_HOME": str(home)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert multiset(read_topic(servers, "payments_clean")) == clean(everything)
    assert_balances(published_balances(servers), closed)
