"""One class per assertion kind, registered once: its parameters, its SQL, its verdict, and how a
continuous test evaluates it.

Adding an assertion means one params model in :mod:`..params` and one kind here::

    class NonNegativeParams(Params):
        column: str

        def columns_used(self) -> list[str]:
            return [self.column]


    @register
    class NonNegative(AssertionKind[NonNegativeParams]):
        name = "non_negative"
        params = NonNegativeParams
        record_violation = "negative_value"  # continuous tests flag each offending record

        def describe(self, p: NonNegativeParams) -> str:
            return f"non_negative: {p.column} >= 0"

        def sql(self, ctx: SqlContext, a: ParsedAssertion, p: NonNegativeParams) -> AssertionSql:
            return ctx.counted(a, f"({ident(p.column)} < 0)", self.describe(p))

        def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
            return counted_verdict(a, e)

Parsing, validation, batch and sample tests, continuous tests, violation records and the docs all
read this registry; nothing else lists assertion names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Generic, Literal, TypeVar

from ..params import Params
from ..parsed import ParsedAssertion
from ..results import Verdict
from ..sql_text import AssertionSql, SqlContext

P = TypeVar("P", bound=Params)
Mode = Literal["row", "batch", "progress"]
RecordCheck = Literal["predicate", "duplicates", "references"]


@dataclass(frozen=True)
class StreamProgress:
    """Numbers from a streaming query's progress, for ``throughput`` and ``max_lag``."""

    rows_per_second: float | None = None
    max_event_time: datetime | float | None = None
    processing_time: datetime | float | None = None


@dataclass(frozen=True)
class Evidence:
    """Everything a verdict may look at: the test statement's values, the row total, the relation's
    column types, the run's clock and (continuous tests) the stream's progress."""

    values: Mapping[str, Any] = field(default_factory=dict)
    total: int = 0
    types: Mapping[str, str] = field(default_factory=dict)
    now: datetime | None = None
    progress: StreamProgress | None = None

    def of(self, a: AssertionSql) -> dict[str, Any]:
        """This assertion's values by their own keys (``failing``, ``nonnull``, ...)."""
        prefix = f"a{a.assertion.index}_"
        return {alias.removeprefix(prefix): self.values.get(alias) for alias, _ in a.aggregates}


class Unevaluable(Exception):
    """The evidence cannot judge this assertion (a progress check outside a running stream)."""


class AssertionKind(Generic[P]):
    name: ClassVar[str]
    params: ClassVar[type[Params]]
    aliases: ClassVar[tuple[str, ...]] = ()
    evaluated_from: ClassVar[Literal["data", "schema", "progress"]] = "data"
    needs_rows: ClassVar[bool] = False  # True: a schema-only test cannot judge it
    record_violation: ClassVar[str | None] = None  # continuous: offending records get this violation type
    record_check: ClassVar[RecordCheck] = "predicate"  # how a micro-batch singles out those records
    batch_violation: ClassVar[str | None] = None  # continuous: a failing micro-batch is recorded as this

    def describe(self, p: P) -> str:
        """One human sentence saying what the assertion requires (the check's description)."""
        return self.name

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: P) -> AssertionSql | None:
        """Its part of the test's one aggregate statement; None when not judged from data."""
        return None

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        raise NotImplementedError

    def canonical(self, p: P) -> tuple[str, Params]:
        """The assertion it is checked as: a kind that is sugar for another (``positive``) rewrites."""
        return self.name, p

    def mode(self, p: P) -> Mode:
        """How a continuous test evaluates it: per offending record, per micro-batch, from progress."""
        if self.evaluated_from == "progress":
            return "progress"
        return "row" if self.record_violation is not None else "batch"

    @property
    def continuous_only(self) -> bool:
        return self.evaluated_from == "progress"


KINDS: dict[str, AssertionKind[Any]] = {}
ALIASES: dict[str, str] = {}


def register(cls: type[AssertionKind[P]]) -> type[AssertionKind[P]]:
    """Class decorator: make ``cls`` the assertion named ``cls.name`` (and its aliases)."""
    if cls.name in KINDS or cls.name in ALIASES:
        raise ValueError(f"assertion {cls.name!r} is registered twice")
    KINDS[cls.name] = cls()
    for alias in cls.aliases:
        ALIASES[alias] = cls.name
    return cls


def kind_of(name: str) -> AssertionKind[Any]:
    return KINDS[ALIASES.get(name, name)]


def as_int(value: Any) -> int:
    return int(value or 0)


def pct(x: float) -> str:
    return f"{x * 100:g}%"


def counted_verdict(a: AssertionSql, e: Evidence, observed: dict[str, Any] | None = None) -> Verdict:
    """Row-level rules: the failing rows counted by ``count_if(<violation>)``."""
    failing = as_int(e.of(a).get("failing"))
    return Verdict(failing == 0, failing, f"{failing} of {e.total} rows fail" if failing else "", observed or {})
