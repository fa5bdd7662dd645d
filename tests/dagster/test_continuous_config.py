"""The continuous job's config errors (no JVM: they fail before Spark starts): a misspelt selection names the
model it could mean, a selection without a stream model says so, a misspelt full refresh is refused."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import dagster as dg

from dagster_streamt import build_definitions

ROOT = Path(__file__).parents[2]


def _failure(tmp_path: Path, run_config: dict[str, Any]) -> str:
    shop = tmp_path / "shop"
    if not shop.exists():
        shutil.copytree(ROOT / "project", shop, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))
    job = build_definitions(shop).resolve_job_def("shop_continuous")
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(instance=instance, run_config=run_config, raise_on_error=False)
        assert not result.success
        failed = [e.step_failure_data for e in result.all_events if e.is_step_failure]
        errors = [d.error.message if d.error else "" for d in failed]
        described = [d.user_failure_data.description or "" for d in failed if d.user_failure_data]
        return "\n".join(errors + described)


def test_config_errors_fail_before_spark(tmp_path: Path) -> None:
    op = "shop_streams"
    assert "orders_clen" in _failure(tmp_path, {"ops": {op: {"config": {"select": "orders_clen"}}}})
    assert "no enabled stream model" in _failure(tmp_path, {"ops": {op: {"config": {"select": "customer_orders"}}}})
    refused = _failure(tmp_path, {"resources": {"run_options": {"config": {"full_refresh": ["orders_clen"]}}}})
    assert "did you mean" in refused.lower() and "orders_clean" in refused
