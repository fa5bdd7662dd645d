"""A run's definition record read back as the base of `streamt plan` (no JVM, no instance): the project
against its own record is unchanged everywhere; a record from an earlier package version is judged by
Dagster's code version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dagster_streamt.api import load
from dagster_streamt.changes import classify
from dagster_streamt.changes.facets import facets_of
from dagster_streamt.changes.record import definition_record, facets_from_records, readable
from dagster_streamt.dagster.change_plan import without_record
from dagster_streamt.dagster.last_definitions import LastDefinition
from dagster_streamt.dagster.translator import StreamtTranslator

from ..helpers import EXAMPLE


def test_a_project_against_its_own_records_is_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))
    loaded = load(root)
    head = facets_of(loaded, use_cache=False)
    # as stored in a materialization: JSON text and back
    records = {n: json.loads(json.dumps(definition_record(head, n))) for n in sorted(head.models)}
    assert all(readable(r) for r in records.values())
    assert records["orders_clean"]["sources"] == {"orders_raw": head.sources["orders_raw"]}
    base = facets_from_records(loaded, head, records)
    changes = classify(loaded, loaded, base_facets=base, head_facets=head)
    assert {c.change for c in changes.changes} == {"unchanged"} and changes.order == ()
    # a record's column lineage still names the readers of a column it had
    text = (root / "models/staging/orders_clean.yml").read_text()
    (root / "models/staging/orders_clean.yml").write_text(text.replace("        customer_id,\n", ""))
    edited = load(root)
    changed = classify(edited, edited, base_facets=facets_from_records(edited, head, records),
                       head_facets=facets_of(edited, use_cache=False))
    clean = next(c for c in changed.changes if c.name == "orders_clean")
    assert clean.change == "breaking" and "orders_export.customer_id" in clean.columns
    assert not readable({"format": 0, "model": {}}) and not readable(None)


def test_a_run_without_a_record_is_judged_by_its_code_version() -> None:
    loaded = load(EXAMPLE)
    head = facets_of(loaded)
    change = next(c for c in classify(loaded, loaded, base_facets=facets_from_records(loaded, head, {}),
                                      head_facets=head).changes if c.name == "customer_orders")
    assert change.change == "new"  # no record at all
    now = StreamtTranslator(loaded.project.name).get_code_version(loaded.project.models["customer_orders"],
                                                                  loaded.compiled.models["customer_orders"])
    same = without_record(loaded, change, LastDefinition(None, now, "r1"))
    assert (same.change, same.refresh) == ("unchanged", "none")
    other = without_record(loaded, change, LastDefinition(None, "0" * 16, "r1"))
    assert (other.change, other.refresh) == ("breaking", "full") and "rebuilt to be sure" in other.reason
