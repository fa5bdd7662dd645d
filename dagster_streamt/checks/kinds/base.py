"""One class per assertion kind, registered once: its parameters, its SQL, its verdict, and how a
continuous test evaluates it.

Adding an assertion means one params model in ``params`` and one kind here::

    class NonNegativeParams(Params):
        column: str  # a ``column`` parameter is what the definition-time schema check looks for


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
    """One assertion kind (``not_null``, ``range``, ...): its parameters, its SQL and its verdict.

    The extension point for a new assertion: subclass it with ``name`` and ``params`` (a pydantic
    ``Params`` model whose fields are the assertion's YAML keys) and decorate the class with
    ``register_assertion``. Parsing, ``streamt validate``, sample and continuous
    tests, violation records and the docs all read the registry
    (``ASSERTION_KINDS``). A data-judged kind implements ``sql`` (its part of
    the test's one aggregate statement) and ``verdict``.

    Attributes:
        name: The assertion's key in a test's ``assertions:`` list.
        params: Its parameters model.
        aliases: Other spellings accepted for it.
        evaluated_from: ``data`` (SQL over the rows), ``schema`` or ``progress`` (continuous tests only).
        record_violation: Continuous tests record each offending record under this violation type.

    Examples:
        >>> from dagster_streamt import ASSERTION_KINDS
        >>> kind = ASSERTION_KINDS["not_null"]
        >>> kind.name, type(kind).__name__
        ('not_null', 'NotNullKind')
        >>> kind.describe(kind.params(columns=["order_id"]))
        'not_null: order_id never null'
    """

    name: ClassVar[str]
    params: ClassVar[type[Params]]
    aliases: ClassVar[tuple[str, ...]] = ()
    evaluated_from: ClassVar[Literal["data", "schema", "progress"]] = "data"
    needs_rows: ClassVar[bool] = False  # True: a schema-only test cannot judge it
    record_violation: ClassVar[str | None] = None  # continuous: offending records get this violation type
    record_check: ClassVar[RecordCheck] = "predicate"  # how a micro-batch singles out those records
    batch_violation: ClassVar[str | None] = None  # continuous: a failing micro-batch is recorded as this

    def describe(self, p: P) -> str:
        """One human sentence saying what the assertion requires (the check's description).

        Args:
            p: The assertion's parameters as written in the test.

        Returns:
            The sentence.

        Examples:
            >>> from dagster_streamt import ASSERTION_KINDS
            >>> kind = ASSERTION_KINDS["range"]
            >>> kind.describe(kind.params(column="amount", min=0))
            'range: 0 <= amount'
        """
        return self.name

    def sql(self, ctx: SqlContext, a: ParsedAssertion, p: P) -> AssertionSql | None:
        """Its part of the test's one aggregate statement.

        Args:
            ctx: The test's SQL builder: the tested ``relation``, ``counted()`` for a row predicate
                counted with ``count_if``, ``resolve()`` for another model or source.
            a: The parsed assertion (its position in the test, its label).
            p: Its parameters.

        Returns:
            Its aggregate columns (and the predicate singling out failing rows); None when the kind is
                not judged from data.

        Examples:
            >>> from dagster_streamt import ASSERTION_KINDS
            >>> from dagster_streamt.checks.parsed import ParsedAssertion
            >>> from dagster_streamt.checks.sql import build_test_sql
            >>> kind = ASSERTION_KINDS["not_null"]
            >>> a = ParsedAssertion(0, "not_null", "not_null", kind.params(columns=["order_id"]))
            >>> print(build_test_sql([a], "`orders`").statement)
            SELECT
              count(*) AS total,
              count_if(`order_id` IS NULL) AS a0_failing
            FROM `orders` AS `__t`
        """
        return None

    def verdict(self, a: AssertionSql, e: Evidence) -> Verdict:
        """Judge the assertion from the values its SQL computed.

        Args:
            a: What ``sql`` built for it.
            e: The statement's values, the row total, column types, the clock and stream progress.

        Returns:
            Whether it passed, the failing row count and a message.

        Examples:
            >>> from dagster_streamt import ASSERTION_KINDS
            >>> from dagster_streamt.checks.kinds import Evidence
            >>> from dagster_streamt.checks.parsed import ParsedAssertion
            >>> from dagster_streamt.checks.sql import build_test_sql
            >>> kind = ASSERTION_KINDS["not_null"]
            >>> a = ParsedAssertion(0, "not_null", "not_null", kind.params(columns=["order_id"]))
            >>> built = build_test_sql([a], "`orders`").assertions[0]
            >>> kind.verdict(built, Evidence(values={"a0_failing": 2}, total=10))
            Verdict(passed=False, failing_rows=2, message='2 of 10 rows fail', observed={})
        """
        raise NotImplementedError

    def canonical(self, p: P) -> tuple[str, Params]:
        """The assertion it is checked as: a kind that is sugar for another rewrites itself.

        Args:
            p: Its parameters.

        Returns:
            ``(name, params)`` of the assertion to check; ``(self.name, p)`` by default.

        Examples:
            >>> from dagster_streamt import ASSERTION_KINDS
            >>> kind = ASSERTION_KINDS["positive"]
            >>> kind.canonical(kind.params(column="amount"))[0]
            'range'
        """
        return self.name, p

    def mode(self, p: P) -> Mode:
        """How a continuous test evaluates it.

        Args:
            p: Its parameters.

        Returns:
            ``row`` (each offending record is recorded), ``batch`` (per micro-batch) or ``progress``
                (from the stream's progress: ``max_lag``, ``throughput``).

        Examples:
            >>> from dagster_streamt import ASSERTION_KINDS
            >>> kind = ASSERTION_KINDS["not_null"]
            >>> kind.mode(kind.params(columns=["order_id"]))
            'row'
        """
        if self.evaluated_from == "progress":
            return "progress"
        return "row" if self.record_violation is not None else "batch"

    @property
    def continuous_only(self) -> bool:
        """Whether only a continuous test can judge it (it reads the stream's progress).

        Returns:
            True for ``max_lag`` and ``throughput``.

        Examples:
            >>> from dagster_streamt import ASSERTION_KINDS
            >>> ASSERTION_KINDS["throughput"].continuous_only, ASSERTION_KINDS["not_null"].continuous_only
            (True, False)
        """
        return self.evaluated_from == "progress"


KINDS: dict[str, AssertionKind[Any]] = {}
ALIASES: dict[str, str] = {}


def register(cls: type[AssertionKind[P]]) -> type[AssertionKind[P]]:
    """Class decorator: make ``cls`` the assertion named ``cls.name`` (and its aliases).

    Args:
        cls: An ``AssertionKind`` subclass with ``name`` and ``params``.

    Returns:
        ``cls`` itself; one instance of it is now in ``ASSERTION_KINDS``.

    Raises:
        ValueError: When the name or an alias is already registered.

    Examples:
        >>> from dagster_streamt import ASSERTION_KINDS, AssertionKind, register_assertion
        >>> from dagster_streamt.checks.params import Params
        >>> class NonNegativeParams(Params):
        ...     column: str
        >>> @register_assertion
        ... class NonNegative(AssertionKind[NonNegativeParams]):
        ...     name = "non_negative"
        ...     params = NonNegativeParams
        ...     def describe(self, p):
        ...         return f"non_negative: {p.column} >= 0"
        >>> ASSERTION_KINDS["non_negative"].describe(NonNegativeParams(column="amount"))
        'non_negative: amount >= 0'
        >>> del ASSERTION_KINDS["non_negative"]  # this example leaves the registry as it found it
    """
    if cls.name in KINDS or cls.name in ALIASES:
        raise ValueError(f"assertion {cls.name!r} is registered twice")
    KINDS[cls.name] = cls()
    for alias in cls.aliases:
        ALIASES[alias] = cls.name
    return cls


def as_int(value: Any) -> int:
    return int(value or 0)


def pct(x: float) -> str:
    return f"{x * 100:g}%"


def counted_verdict(a: AssertionSql, e: Evidence, observed: dict[str, Any] | None = None) -> Verdict:
    """Row-level rules: the failing rows counted by ``count_if(<violation>)``."""
    failing = as_int(e.of(a).get("failing"))
    return Verdict(failing == 0, failing, f"{failing} of {e.total} rows fail" if failing else "", observed or {})
