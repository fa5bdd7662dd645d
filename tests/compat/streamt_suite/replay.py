"""Replay one harvested streamt case (see harvest.py) through our loader, validator and graph.

``verdict`` compares our outcome with streamt's: errors or not, DAG edges and order, inferred
materializations, the STREAMT_ENV warning. A case meaningless on Spark is listed in
``spark_notes.yml`` with the compatibility note (spec/compat.py) that says why; there our verdict is
checked against that file instead of streamt's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dagster_streamt.api import LoadedProject, ProjectError, load
from dagster_streamt.graph.graph import split_id
from dagster_streamt.spec.compat import STREAMT_KEYS
from dagster_streamt.spec.errors import Diagnostic

SUITE = Path(__file__).parent
CASES = SUITE / "cases"
# streamt's inferred materialization -> what runs on Spark (explicit ones map as LEGACY_MATERIALIZATIONS)
# why we infer `table` where streamt runs a Flink job (compat.py's `models[].materialized` says so)
TABLE_REASONS = ("without a time bound", "no input can be read as a stream")
MATERIALIZED = {"sink": {"sink"}, "flink": {"stream"}, "topic": {"stream"}, "virtual_topic": {"stream", "view"}}


@dataclass
class Outcome:
    """What we did with a case: errors (governance findings count as errors, as streamt's RULE_*)."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    loaded: LoadedProject | None = None

    @property
    def failing(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]

    def text(self) -> str:
        return "\n".join(d.format() for d in self.diagnostics)


def case_ids() -> list[str]:
    return sorted(p.relative_to(CASES).with_suffix("").as_posix() for p in CASES.rglob("*.yml"))


def read_case(case_id: str) -> dict[str, Any]:
    return yaml.safe_load((CASES / f"{case_id}.yml").read_text())


def spark_notes() -> dict[str, dict[str, str]]:
    """Cases whose verdict differs on purpose -> the compatibility note (spec/compat.py) that says so."""
    return yaml.safe_load((SUITE / "spark_notes.yml").read_text()) or {}


@contextmanager
def environ(values: dict[str, str]) -> Iterator[None]:
    names = {"STREAMT_ENV", *values}
    saved = {n: os.environ.get(n) for n in names}
    try:
        for n in names:
            os.environ.pop(n, None)
        os.environ.update(values)
        yield
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def run(case: dict[str, Any], root: Path) -> Outcome:
    for rel in case.get("empty_dirs") or []:
        (root / rel).mkdir(parents=True, exist_ok=True)
    for rel, text in case["files"].items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    with environ(case.get("environ") or {}):
        try:
            loaded = load(root, case.get("env"), use_cache=False)
        except ProjectError as exc:
            return Outcome(list(exc.diagnostics))
    return Outcome(list(loaded.diagnostics), loaded)


def differences(case: dict[str, Any], got: Outcome) -> tuple[list[str], list[str]]:
    """(differences, differences that a compatibility note explains: materializations Spark infers otherwise)."""
    want = case["expect"]
    failing = got.failing
    if not want["parsed"] or not want["valid"]:
        why = want.get("message") or "; ".join(want.get("error_messages") or want.get("errors") or [])
        return ([] if failing else [f"streamt rejects the project ({why}); we accept it"]), []
    if failing:
        return [f"streamt accepts the project; we reject it:\n{got.text()}"], []
    out: list[str] = []
    for text in want.get("warnings_text") or []:
        if "STREAMT_ENV" in text and not any("STREAMT_ENV" in d.message for d in got.diagnostics):
            out.append(f"streamt warns {text!r}; we do not")
    loaded = got.loaded
    assert loaded is not None
    ours = sorted([split_id(a)[1], split_id(b)[1]] for a, b in loaded.graph.edges()
                  if not (a.startswith("test.") or b.startswith("test.")))
    if "edges" in want and ours != want["edges"]:
        out.append(f"edges differ: streamt {want['edges']}, ours {ours}")
    order = [split_id(n)[1] for n in loaded.graph.topological_order() if not n.startswith("test.")]
    position = {n: i for i, n in enumerate(order)}
    late = [(a, b) for a, b in want.get("edges", []) if position.get(a, -1) > position.get(b, len(order))]
    if late:
        out.append(f"our order {order} runs a node before its input: {late}")
    noted: list[str] = []
    for name, mat in (want.get("materialized") or {}).items():
        model = loaded.project.models.get(name)
        if model is None:
            out.append(f"model {name} missing")
        elif model.materialized not in MATERIALIZED[mat]:
            why = loaded.project.inferred.get(name, "")
            note = f"{name}: streamt {mat}, ours {model.materialized} ({why})"
            (noted if model.materialized == "table" and any(r in why for r in TABLE_REASONS) else out).append(note)
    return out, noted


def by_note(case_id: str, got: Outcome) -> list[str]:
    """A case streamt decides otherwise on purpose: our verdict and the note that explains it."""
    spec = spark_notes()[case_id]
    out: list[str] = []
    entry = next((k for k in STREAMT_KEYS if k.pattern == spec["note"]), None)
    if entry is None or spec["says"] not in entry.text:
        out.append(f"no compatibility note `{spec['note']}` saying {spec['says']!r}")
    codes = {d.code for d in got.failing}
    if spec["ours"] == "valid" and codes:
        out.append(f"expected no error:\n{got.text()}")
    elif spec["ours"] != "valid" and spec["ours"] not in codes:
        out.append(f"expected error {spec['ours']}:\n{got.text()}")
    return out


def verdict(case_id: str, got: Outcome) -> tuple[str, list[str]]:
    """``agree``, ``note`` (differs where a note says why), ``stricter`` (we reject on purpose) or ``differ``."""
    if case_id in spark_notes():
        problems = by_note(case_id, got)
        kind = "stricter" if spark_notes()[case_id].get("stricter") else "note"
        return (kind if not problems else "differ"), problems
    problems, noted = differences(read_case(case_id), got)
    return ("differ" if problems else "note" if noted else "agree"), problems
