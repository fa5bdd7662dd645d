"""`streamt lineage --format openlineage`: the parsed graph as valid, deterministic OpenLineage events."""

from __future__ import annotations

import json
from pathlib import Path

from ..helpers import EXAMPLE, streamt
from ..openlineage.spec import assert_valid


def test_static_export_is_valid_and_deterministic(tmp_path: Path) -> None:
    out = tmp_path / "lineage.jsonl"
    r = streamt("lineage", "-p", str(EXAMPLE), "--format", "openlineage", "-o", str(out))
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert_valid(events)
    jobs = {e["job"]["name"]: e for e in events if "job" in e}
    assert set(jobs) >= {"shop.orders_clean", "shop.customer_orders", "shop.exposure.ops_dashboard"}
    inputs = {i["name"].rsplit("/", 1)[-1] for i in jobs["shop.customer_orders"]["inputs"]}
    assert inputs == {"orders_clean", "customers"}
    col = jobs["shop.customer_orders"]["outputs"][0]["facets"]["columnLineage"]["fields"]["total_spent"]
    assert [f["field"] for f in col["inputFields"]] == ["amount"]
    assert streamt("lineage", "-p", str(EXAMPLE), "--format", "openlineage").stdout.strip() == \
        out.read_text().strip()
