"""Decide how a table model is refreshed this run: rebuilt, left as it is, or brought up to date
from only the rows appended to one of its inputs. Plain data in, a decision out (no Spark), so every
rule is testable on its own and each decision says why in one line.

An input is followed by its files (a source: :mod:`..delta.input_files`) or by its Delta log (a
stored model: :func:`..delta.delta_table.change_since`). The increment is exact or it is not taken: any
doubt (no record of what the table read, changed SQL or settings, an input that is neither, a file
rewritten or removed, a table commit that was not a blind append, two inputs grown at once, an input
read where appends do not simply add rows) means a full rebuild.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ...sql.incremental import IncrementalPlan
from ..delta.delta_table import Appended
from ..delta.input_files import Snapshot, appended
from ..delta.refresh_record import RefreshRecord, input_key

Mode = Literal["full", "unchanged", "append", "merge", "upsert"]
InputId = tuple[str, str]  # (kind, name): ("source", "orders_raw"), ("model", "orders_clean")
COMPACT_MIN_FILES = 100  # an appended table is rebuilt once it has this many files ...
COMPACT_FACTOR = 4  # ... and this many times the files of its last full build
Increment = tuple[str, ...] | Appended  # a source's appended files, or a table's appended versions


@dataclass(frozen=True)
class Refresh:
    mode: Mode
    note: str  # why a full rebuild, or what the increment is (shown in run metadata)
    deltas: Mapping[InputId, Increment] = field(default_factory=dict)  # input -> its appended part


@dataclass(frozen=True)
class RefreshInputs:
    """What the decision needs to know about the model and its inputs now."""

    plan: IncrementalPlan
    config: str
    views: Mapping[InputId, str]  # each input's relation name in the model's SQL
    snapshots: Mapping[InputId, Snapshot | None]  # file inputs (None: an input that is not followed)
    record: RefreshRecord | None  # of the model's current version
    tables: Mapping[InputId, Appended | str | None] = field(default_factory=dict)  # table inputs: what their
    # logs say happened since the version the record names (None: nothing; a str: why it cannot be followed)
    versions: Mapping[InputId, tuple[str, int]] = field(default_factory=dict)  # table inputs: (id, version) now
    has_state: bool = False  # the current version keeps an aggregation state
    files_now: int = 0  # data files of the current version
    keyed: bool = False  # a key: appended rows are upserted (a row of a known key replaces it)


def _label(inp: InputId) -> str:
    return f"{inp[0]} {inp[1]}"


def decide(given: RefreshInputs, full_refresh: bool = False) -> Refresh:
    """How to refresh; see the module docstring for the rules."""
    plan, record = given.plan, given.record
    if full_refresh:
        return Refresh("full", "full refresh requested")
    if record is None:
        return Refresh("full", "first build (no record of the inputs it read)")
    if record.config != given.config:
        return Refresh("full", "its SQL, settings or input declarations changed")
    if plan.kind == "volatile":
        return Refresh("full", f"rebuilt on every run: {plan.reason}")
    kind = plan.kind
    if kind == "aggregate" and record.kind == "recompute":  # its state did not reproduce the columns' types
        kind, plan = "recompute", IncrementalPlan("recompute", "an aggregation whose state does not reproduce "
                                                               "its column types")
    changed: dict[InputId, Increment] = {}
    for inp in sorted({*given.snapshots, *given.tables}):
        if inp in given.tables:
            if input_key(*inp) not in record.tables:
                return Refresh("full", f"{_label(inp)} was not read by the previous build")
            change = given.tables[inp]
            if isinstance(change, str):
                return Refresh("full", f"{_label(inp)} {change}")
            if change is not None:
                changed[inp] = change
            continue
        snapshot = given.snapshots[inp]
        if snapshot is None:
            return Refresh("full", f"{_label(inp)} is not a set of files whose changes can be followed")
        before = record.inputs.get(input_key(*inp))
        if before is None:
            return Refresh("full", f"{_label(inp)} was not read by the previous build")
        new = appended(before, snapshot)
        if new is None:
            return Refresh("full", f"{_label(inp)} was rewritten (a file it had changed or disappeared)")
        if new:
            changed[inp] = tuple(snapshot.paths(new))
    if not changed:
        return Refresh("unchanged", "no input changed since the previous build")
    names = ", ".join(_label(i) for i in sorted(changed))
    if kind == "recompute":
        return Refresh("full", f"{names} changed; rebuilt because of {plan.reason}")
    if len(changed) > 1:
        return Refresh("full", f"{names} changed at once")
    (inp, part), = changed.items()
    why = plan.blockers.get(given.views[inp])
    if why:
        return Refresh("full", f"rows were appended to {_label(inp)}, which the query reads through {why}")
    what = _what(inp, part)
    if kind == "aggregate":
        if not given.has_state:
            return Refresh("full", f"{what}, but the previous build kept no aggregation state")
        return Refresh("merge", f"merged the aggregation of {what}", changed)
    if given.files_now >= max(COMPACT_MIN_FILES, COMPACT_FACTOR * record.files_at_rebuild):
        return Refresh("full", f"{what}; rebuilt to compact its {given.files_now} files")
    if given.keyed:
        return Refresh("upsert", f"upserted the rows of {what} by key", changed)
    return Refresh("append", f"appended the rows of {what}", changed)


def _what(inp: InputId, part: Increment) -> str:
    """The increment in words: ``2 new files of source x``, ``1 new version of model y``."""
    if isinstance(part, Appended):
        n, unit = part.upto - part.after, "version"
    else:
        n, unit = len(part), "file"
    return f"{n} new {unit}{'s' if n != 1 else ''} of {_label(inp)}"
