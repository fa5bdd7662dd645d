"""The shared input of the differential harness: orders, customer versions and shipments as JSON lines,
read by Flink (filesystem tables) and by our Spark run (the same files as local topic folders).

Every stream is in event-time order up to a jitter smaller than its watermark delay, so neither engine
ever has a late row to drop: lateness is where a streaming engine and a batch reading differ, and it is
not what the harness compares. A few orders carry NULLs (status, discount, customer) for the NULL cases.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

START = datetime(2026, 3, 2, 9, 0, 0)
DELAY_MS = 5000  # every source's watermark: max out-of-orderness 5 s; the jitter stays under 3 s
SOURCES: dict[str, dict[str, Any]] = {
    "orders": {"topic": "orders.raw.v1", "event_time": "order_ts", "columns": [
        ("order_id", "STRING"), ("customer_id", "STRING"), ("product", "STRING"), ("region", "STRING"),
        ("amount", "DECIMAL(10,2)"), ("qty", "INT"), ("discount", "DOUBLE"), ("status", "STRING"),
        ("order_ts", "TIMESTAMP(3)")]},
    "customers": {"topic": "customers.cdc.v1", "event_time": "updated_at", "primary_key": ["id"], "columns": [
        ("id", "STRING"), ("name", "STRING"), ("tier", "STRING"), ("email", "STRING"), ("updated_at", "TIMESTAMP(3)")]},
    "shipments": {"topic": "shipments.v1", "event_time": "shipped_at", "columns": [
        ("shipment_id", "STRING"), ("order_id", "STRING"), ("carrier", "STRING"), ("weight_g", "INT"),
        ("shipped_at", "TIMESTAMP(3)")]},
}
TIERS = ("bronze", "silver", "gold", "platinum")


def _iso(ts: datetime) -> str:
    return ts.isoformat(timespec="milliseconds")


def generate(n: int = 240, seed: int = 26) -> dict[str, list[dict[str, Any]]]:
    """Orders over about four hours (one every ~61 s), customers updated over the same span, and a
    shipment for most orders within the next 90 minutes."""
    rng = random.Random(seed)
    orders, shipments = [], []
    for i in range(n):
        ts = START + timedelta(seconds=61 * i, milliseconds=rng.randrange(3000))
        orders.append({
            "order_id": f"o{i:04d}", "customer_id": None if i % 53 == 7 else f"c{rng.randrange(8)}",
            "product": rng.choice(["Widget", "gadget", " Gizmo ", "doohickey"]),
            "region": rng.choice(["EU", "US", "APAC"]), "amount": round(rng.uniform(-20, 400), 2),
            "qty": rng.randrange(1, 9), "discount": None if i % 5 == 0 else round(rng.uniform(0, 0.3), 3),
            "status": None if i % 11 == 0 else rng.choice(["pending", "confirmed", "shipped", "cancelled"]),
            "order_ts": _iso(ts)})
        if i % 4 != 3:
            shipped = ts + timedelta(minutes=rng.randrange(2, 90), seconds=rng.randrange(60))
            shipments.append({"shipment_id": f"s{i:04d}", "order_id": f"o{i:04d}",
                              "carrier": rng.choice(["dhl", "ups", "fedex"]), "weight_g": rng.randrange(100, 5000),
                              "shipped_at": _iso(shipped)})
    shipments.sort(key=lambda s: s["shipped_at"])
    customers = []
    for k in range(40):  # 8 customers, 5 versions each, the first at the start (before any order)
        cid = k % 8
        at = START - timedelta(minutes=1) if k < 8 else START + timedelta(minutes=6 * k, seconds=rng.randrange(50))
        customers.append({"id": f"c{cid}", "name": f"Customer {cid}", "tier": TIERS[(cid + k // 8) % 4],
                          "email": f"c{cid}.v{k // 8}@example.com", "updated_at": _iso(at)})
    customers.sort(key=lambda c: c["updated_at"])
    return {"orders": orders, "customers": customers, "shipments": shipments}


def write(root: Path, records: dict[str, list[dict[str, Any]]]) -> dict[str, Path]:
    """One JSON-lines file per source under ``root/topics/<topic>/``; the folder of each source."""
    folders = {}
    for name, rows in records.items():
        folder = root / "topics" / SOURCES[name]["topic"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        folders[name] = folder
    return folders


def watermark(records: dict[str, list[dict[str, Any]]], source: str) -> datetime:
    """Where the source's watermark stands after all its rows: the latest event time less the delay."""
    ts = SOURCES[source]["event_time"]
    return max(datetime.fromisoformat(r[ts]) for r in records[source]) - timedelta(milliseconds=DELAY_MS)
