"""Records for the topics of streamt's projects, to run them in local mode (``-e local``).

Each record has the fields the project's models read, in the shapes a producer would send (ISO
timestamps, numbers, nulls). Deterministic: a seeded generator, so tests can compute expectations.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

START = datetime(2026, 1, 1, 10, 0, 0)
LOCAL_ENV = "runtime:\n  kafka:\n    local_dir: topics\n"


def _ts(rng: random.Random, minutes: int = 60) -> str:
    return (START + timedelta(seconds=rng.randrange(minutes * 60))).isoformat()


def _recent(rng: random.Random) -> str:
    """A time in the last three minutes (for projects whose tests check freshness)."""
    return (datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=rng.randrange(180))).isoformat()


def payments_example(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    return {"payments.raw.v1": [{
        "payment_id": f"p{i}", "customer_id": f"c{rng.randrange(6)}", "amount": round(rng.uniform(1, 200), 2),
        "currency": rng.choice(["EUR", "USD"]), "status": rng.choice(["CAPTURED", "PENDING", "FAILED", None]),
        "event_timestamp": _ts(rng)} for i in range(n)]}


def complete_project(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    return {"payments.raw.v1": [{
        "payment_id": f"p{i}", "customer_id": f"c{rng.randrange(5)}", "amount_cents": rng.randrange(100, 90000),
        "currency": "EUR", "status": rng.choice(["AUTHORIZED", "CAPTURED", "DECLINED"]), "event_time": _ts(rng),
        "card_number": f"4111{rng.randrange(10**12):012d}", "customer_email": f"u{i}@example.com"}
        for i in range(n)], "crm.customers.cdc": [{"customer_id": f"c{i}", "name": f"n{i}"} for i in range(5)]}


def docs_quickstart(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    return {"events.raw.v1": [{
        "event_id": f"e{i}" if i % 17 else None, "user_id": f"u{rng.randrange(9)}",
        "event_type": rng.choice(["click", "view", "purchase"]), "timestamp": _ts(rng)} for i in range(n)]}


def docs_first_pipeline(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    return {"orders.raw.v1": [{
        "order_id": f"o{i}", "customer_id": f"c{rng.randrange(8)}", "items": rng.randrange(1, 5),
        "total_amount": round(rng.uniform(-5, 300), 2), "currency": rng.choice(["usd", "eur"]),
        "status": rng.choice(["pending", "confirmed", "shipped", "lost"]), "created_at": _ts(rng)}
        for i in range(n)]}


def docs_ecommerce(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    products = [{"product_id": f"sku{i}", "name": f"Product {i}", "category": rng.choice(["books", "toys"]),
                 "subcategory": "misc", "price": round(rng.uniform(5, 50), 2), "brand": "acme"} for i in range(6)]
    events = [{
        "event_id": f"e{i}", "session_id": f"s{rng.randrange(10)}",
        "user_id": rng.choice([None, f"u{rng.randrange(5)}"]),
        "anonymous_id": f"a{rng.randrange(20)}", "event_type": rng.choice(["page_view", "click", "add_to_cart",
                                                                           "purchase", "search", "hover"]),
        "page_url": f"/p/{rng.randrange(6)}", "referrer_url": None, "product_id": rng.choice([None, *[p["product_id"]
                                                                                             for p in products]]),
        "search_query": None, "device_type": rng.choice(["desktop", "mobile"]), "browser": "firefox",
        "country": rng.choice(["FR", "US"]), "timestamp": _ts(rng)} for i in range(n)]
    return {"ecom.products.v1": products, "ecom.clickstream.v1": events}


def docs_iot(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    sensors = [{"sensor_id": f"s{i}", "device_type": rng.choice(["temperature", "pressure"]), "min_threshold": 10.0,
                "max_threshold": 80.0, "critical_min": 0.0, "critical_max": 95.0, "maintenance_schedule": "weekly"}
               for i in range(5)]
    readings = [{
        "reading_id": f"r{i}", "sensor_id": f"s{rng.randrange(5)}", "device_type": "temperature",
        "facility_id": rng.choice(["f1", "f2"]), "zone": "z1", "value": round(rng.uniform(-5, 100), 1), "unit": "C",
        "quality": rng.randrange(40, 100), "timestamp": _ts(rng, 20)} for i in range(n)]
    return {"iot.sensors.metadata.v1": sensors, "iot.sensors.readings.v1": readings}


def docs_payments(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    customers = [{"customer_id": f"c{i}", "tier": rng.choice(["bronze", "gold", "platinum"]),
                  "country": rng.choice(["US", "FR", "BR"]), "created_at": START.isoformat()} for i in range(6)]
    payments = [{
        "payment_id": f"p{i}", "customer_id": f"c{rng.randrange(8)}", "amount": rng.randrange(-100, 900000),
        "currency": rng.choice(["USD", "EUR", "CHF"]), "card_last_four": f"{rng.randrange(10000):04d}",
        "card_brand": "visa", "status": rng.choice(["pending", "completed", "failed", "unknown"]),
        "merchant_id": f"m{rng.randrange(3)}", "ip_address": "10.0.0.1", "device_fingerprint": "fp",
        "created_at": _ts(rng)} for i in range(n)]
    return {"customers.profiles.v1": customers, "payments.raw.v1": payments}


def guide_windowed(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    return {"orders.raw.v1": [{
        "order_id": f"o{i}", "customer_id": f"c{rng.randrange(9)}", "amount": round(rng.uniform(-10, 500), 2),
        "status": rng.choice(["pending", "confirmed", "shipped", "delivered", "returned"]),
        "region": rng.choice(["EU", "US"]), "order_timestamp": _ts(rng, 180)} for i in range(n)]}


def guide_joins(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    customers = [{"id": f"c{i}", "name": f"Customer {i}", "email": f"c{i}@example.com",
                  "tier": rng.choice(["bronze", "gold", "platinum"]), "updated_at": START.isoformat()}
                 for i in range(6)]
    orders = [{"order_id": f"o{i}", "customer_id": f"c{6 if i % 25 == 0 else rng.randrange(6)}",
               "amount": round(rng.uniform(5, 900), 2),
               "order_timestamp": _ts(rng, 120)} for i in range(n)]
    payments = [{"payment_id": f"pay{i}", "order_id": o["order_id"], "payment_method": "card",
                 "payment_status": "captured", "payment_timestamp": (datetime.fromisoformat(o["order_timestamp"])
                                                                     + timedelta(minutes=rng.randrange(1, 30 * 60))
                                                                     ).isoformat()}
                for i, o in enumerate(orders) if i % 3]
    return {"customers.cdc.v1": customers, "orders.raw.v1": orders, "payments.raw.v1": payments}


def guide_cdc(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    def version(i: int) -> str:
        return (START + timedelta(seconds=i)).isoformat()
    customers = [{"id": f"c{i}", "name": f"Customer {i}", "email": f"c{i}@example.com", "tier": "gold",
                  "created_at": START.isoformat(), "updated_at": version(i), "__deleted": i == 5} for i in range(6)]
    products = [{"id": f"sku{i}", "name": f"P{i}", "category": "toys", "price": 10.0 + i, "inventory_count": 100,
                 "updated_at": version(i), "__deleted": False} for i in range(4)]
    orders = [{"id": f"o{i}", "customer_id": f"c{rng.randrange(6)}", "product_id": f"sku{rng.randrange(4)}",
               "quantity": rng.randrange(1, 4), "total_amount": round(rng.uniform(10, 60), 2),
               "status": rng.choice(["pending", "completed", "cancelled"]), "created_at": _recent(rng),
               "updated_at": _recent(rng), "__deleted": False} for i in range(n)]
    return {"cdc.public.customers": customers, "cdc.public.products": products, "cdc.public.orders": orders}


def minimal_project(rng: random.Random, n: int) -> dict[str, list[dict[str, Any]]]:
    return {}


GENERATORS: dict[str, Callable[[random.Random, int], dict[str, list[dict[str, Any]]]]] = {
    f.__name__: f for f in (payments_example, complete_project, docs_quickstart, docs_first_pipeline,
                            docs_ecommerce, docs_iot, docs_payments, minimal_project, guide_windowed, guide_joins,
                            guide_cdc)}


def write_topics(root: Path, project: str, n: int = 200, seed: int = 7, part: str = "part-0") -> dict[str, list]:
    """Drop records into ``root/topics/<topic>/<part>.json`` and the local environment file; return them."""
    records = GENERATORS[project](random.Random(seed), n)
    for topic, rows in records.items():
        folder = root / "topics" / topic
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{part}.json").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "environments").mkdir(exist_ok=True)
    (root / "environments" / "local.yml").write_text(LOCAL_ENV, encoding="utf-8")
    return records


if __name__ == "__main__":  # python3 tests/compat/streamt_data.py <project folder> <project kind> [records]
    import sys

    if len(sys.argv) not in (3, 4) or sys.argv[2] not in GENERATORS:
        raise SystemExit(f"usage: streamt_data.py PROJECT_DIR {{{','.join(sorted(GENERATORS))}}} [RECORDS]")
    written = write_topics(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 200)
    for topic, rows in sorted(written.items()):
        print(f"{sys.argv[1]}/topics/{topic}/part-0.json: {len(rows)} records")
    print(f"{sys.argv[1]}/environments/local.yml: runtime.kafka.local_dir = topics")
