"""Strict parameter models for every data-test assertion (one pydantic model per assertion).

Each assertion in a test is a one-key mapping ``{name: params}``. Parameters are validated with
pydantic (``extra="forbid"``, strict types) so a typo is an error with a suggestion, never a
silently ignored key (streamt's fault). streamt's spellings (``unique_key``, ``foreign_key``,
``key``, ``ref_model``/``ref_key``, ``sql`` + ``expect``) are accepted and normalized here.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ..core.durations import parse_duration

Bound = int | float | datetime | date | str
Scalar = str | int | float | bool | datetime | date


def _missing(message: str) -> PydanticCustomError:
    """A 'one of these keys is required' error, reported as a missing key rather than a bad value."""
    return PydanticCustomError("missing_one_of", message)


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    def columns_used(self) -> list[str]:
        """Columns of the tested relation this assertion reads (for definition-time schema checks):
        by default its ``column`` parameter, when it has one (an empty name is checked too)."""
        column = getattr(self, "column", None)
        return [] if column is None else [column]


class NotNull(Params):
    columns: list[str] = Field(min_length=1)

    def columns_used(self) -> list[str]:
        return list(self.columns)


class Unique(Params):
    """Duplicate rows (rows beyond the first per key; NULL keys ignored) over total rows <= tolerance."""

    columns: list[str] | None = Field(default=None, min_length=1)
    key: str | list[str] | None = None  # streamt's spelling
    tolerance: float = Field(default=0.0, ge=0.0, le=1.0)
    window: str | None = None  # streamt's streaming window: accepted, ignored for batch tests

    @model_validator(mode="after")
    def _one(self) -> Unique:
        if (self.columns is None) == (self.key is None):
            raise _missing("give exactly one of `columns: [..]` or `key: col`")
        if isinstance(self.key, list) and not self.key:
            raise ValueError("`key` must name at least one column")
        return self

    @property
    def keys(self) -> list[str]:
        if self.columns is not None:
            return list(self.columns)
        return [self.key] if isinstance(self.key, str) else list(self.key or [])

    def columns_used(self) -> list[str]:
        return self.keys


class AcceptedValues(Params):
    column: str
    values: list[Scalar] = Field(min_length=1)
    quote: bool = True  # false: compare values as SQL literals (numbers, booleans), not as strings

    @model_validator(mode="after")
    def _literals(self) -> AcceptedValues:
        if not self.quote:
            bad = [v for v in self.values if isinstance(v, str)]
            if bad:
                raise ValueError(f"with `quote: false` values must be numbers or booleans, got {bad[0]!r}")
        return self


class Range(Params):
    column: str
    min: Bound | None = None
    max: Bound | None = None
    inclusive: bool = True

    @model_validator(mode="after")
    def _bounds(self) -> Range:
        if self.min is None and self.max is None:
            raise _missing("give `min:`, `max:` or both")
        return self


class AcceptedTypes(Params):
    types: dict[str, str | list[str]] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        """streamt also writes the columns directly: ``accepted_types: {payment_id: string}``."""
        if isinstance(data, dict) and "types" not in data and data \
                and all(isinstance(v, str | list) for v in data.values()):
            return {"types": data}
        return data

    def columns_used(self) -> list[str]:
        return list(self.types)


_TARGET = re.compile(r"""^\s*(ref|source)\(\s*(['"])([A-Za-z_][A-Za-z0-9_]*)\2\s*\)\s*$""")


class Relationships(Params):
    """Every non-null ``column`` value exists in ``field`` of ``to`` (at least ``match_rate`` of them)."""

    column: str
    to: str | None = None  # 'ref("customers")' or 'source("customers_raw")'
    field: str | None = None
    ref_model: str | None = None  # streamt's spelling of `to: ref(...)`
    ref_key: str | None = None  # streamt's spelling of `field`
    match_rate: float = Field(default=1.0, ge=0.0, le=1.0)
    window: str | None = None  # streamt's streaming join window: accepted, ignored for batch tests

    @field_validator("to")
    @classmethod
    def _to(cls, v: str | None) -> str | None:
        if v is not None and not _TARGET.match(v):
            raise ValueError(f"must be 'ref(\"model\")' or 'source(\"name\")', got {v!r}")
        return v

    @model_validator(mode="after")
    def _target(self) -> Relationships:
        if (self.to is None) == (self.ref_model is None):
            raise _missing("give exactly one of `to: 'ref(\"model\")'` or `ref_model: model`")
        if (self.field is None) == (self.ref_key is None):
            raise _missing("give exactly one of `field:` or `ref_key:` (the referenced column)")
        return self

    @property
    def target(self) -> tuple[Literal["model", "source"], str]:
        if self.ref_model is not None:
            return "model", self.ref_model
        m = _TARGET.match(self.to or "")
        assert m is not None
        return ("model" if m.group(1) == "ref" else "source"), m.group(3)

    @property
    def target_field(self) -> str:
        return self.field if self.field is not None else str(self.ref_key)


class Positive(Params):
    """streamt's ``positive: {column, allow_zero}``: read as ``range: {column, min: 0}``."""

    column: str
    allow_zero: bool = False

    def as_range(self) -> Range:
        return Range(column=self.column, min=0, inclusive=self.allow_zero)


class RowCount(Params):
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> RowCount:
        if self.min is None and self.max is None:
            raise _missing("give `min:`, `max:` or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"`min` ({self.min}) is greater than `max` ({self.max})")
        return self


class Freshness(Params):
    """The newest value of ``column`` is at most ``max_age`` old (relative to the run's ``now``)."""

    column: str
    max_age: str | int | float

    @model_validator(mode="before")
    @classmethod
    def _minutes(cls, data: Any) -> Any:
        """streamt's guides write ``max_age_minutes: 5``."""
        if isinstance(data, dict) and "max_age_minutes" in data and "max_age" not in data:
            minutes = data["max_age_minutes"]
            rest = {k: v for k, v in data.items() if k != "max_age_minutes"}
            return {**rest, "max_age": f"{minutes}m" if isinstance(minutes, int | float) else minutes}
        return data

    @field_validator("max_age")
    @classmethod
    def _age(cls, v: str | int | float) -> str | int | float:
        if parse_duration(v) <= 0:
            raise ValueError("max_age must be positive")
        return v

    @property
    def max_age_seconds(self) -> float:
        return parse_duration(self.max_age)


_EXPECT = re.compile(r"^\s*(\d+)\s*(rows?)?\s*$")


class CustomSql(Params):
    """``where``: a predicate true for VIOLATING rows. Or streamt's ``sql`` (a query returning the
    violating rows, or a single count) with ``expect`` (the expected count, default 0) or
    ``max_failures`` (the most failures allowed). streamt's continuous-test spelling names the
    assertion (``name``) and may add a ``detail_column`` shown with each violating row."""

    where: str | None = Field(default=None, min_length=1)
    sql: str | None = Field(default=None, min_length=1)
    expect: int | None = Field(default=None, ge=0)
    max_failures: int | None = Field(default=None, ge=0)
    name: str | None = None
    detail_column: str | None = None

    @field_validator("expect", mode="before")
    @classmethod
    def _expect(cls, v: Any) -> Any:
        if isinstance(v, str):
            m = _EXPECT.match(v)
            if not m:
                raise ValueError(f"`expect` must be a count like 0 or '0 rows', got {v!r}")
            return int(m.group(1))
        return v

    @model_validator(mode="after")
    def _one(self) -> CustomSql:
        if (self.where is None) == (self.sql is None):
            raise _missing("give exactly one of `where:` (true for violating rows) or `sql:` (+ `expect:`)")
        if self.where is not None and (self.expect is not None or self.max_failures is not None):
            raise ValueError("`expect`/`max_failures` go with `sql:`; a `where:` predicate expects 0 violating rows")
        if self.expect is not None and self.max_failures is not None:
            raise ValueError("give `expect:` (an exact count) or `max_failures:` (an upper bound), not both")
        return self

    @property
    def expected(self) -> int:
        return self.expect or 0


class ExpressionIsTrue(Params):
    expression: str = Field(min_length=1)  # true for valid rows; NULL counts as a violation


class Expression(Params):
    """streamt's ``expression: {sql, description}``: a SQL boolean condition every row must meet.

    streamt accepts it but only checks its shape (its runners skip it); here it runs per row like
    ``expression_is_true``: a row where ``sql`` is false or NULL is a violation."""

    sql: str = Field(min_length=1)
    description: str | None = None


class Bucket(Params):
    value: Scalar | None = None
    min: Bound | None = None  # inclusive
    max: Bound | None = None  # exclusive, so adjacent buckets never count a row twice
    expected_ratio: float = Field(ge=0.0, le=1.0)
    tolerance: float | None = Field(default=None, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _kind(self) -> Bucket:
        if (self.value is None) == (self.min is None and self.max is None):
            raise _missing("a bucket needs `value:` or `min:`/`max:` (not both)")
        return self


class Distribution(Params):
    """Share of non-null ``column`` values in each bucket within ``tolerance`` of ``expected_ratio``."""

    column: str
    buckets: list[Bucket] = Field(min_length=1)
    tolerance: float = Field(default=0.05, ge=0.0, le=1.0)


class MaxLag(Params):
    """``column`` defaults to the event-time column of the tested model or its inputs (streamt's
    examples write only ``seconds:``)."""

    column: str | None = None
    max_seconds: float = Field(gt=0)

    @model_validator(mode="before")
    @classmethod
    def _seconds(cls, data: Any) -> Any:
        if isinstance(data, dict) and "seconds" in data and "max_seconds" not in data:
            return {("max_seconds" if k == "seconds" else k): v for k, v in data.items()}
        return data

    def columns_used(self) -> list[str]:
        return [self.column] if self.column else []  # empty: the event-time column is found at run time


class Throughput(Params):
    """Rows per second; streamt's examples give the bounds per minute."""

    min_per_second: float | None = Field(default=None, ge=0)
    max_per_second: float | None = Field(default=None, ge=0)
    min_per_minute: float | None = Field(default=None, ge=0)
    max_per_minute: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> Throughput:
        if self.low is None and self.high is None:
            raise _missing("give `min_per_second:`/`max_per_second:` (or streamt's `min_per_minute:`/"
                           "`max_per_minute:`)")
        if (self.min_per_second is not None and self.min_per_minute is not None) or \
                (self.max_per_second is not None and self.max_per_minute is not None):
            raise ValueError("give each bound once: per second or per minute")
        return self

    @property
    def low(self) -> float | None:
        """The minimum in rows per second."""
        return self.min_per_second if self.min_per_minute is None else self.min_per_minute / 60

    @property
    def high(self) -> float | None:
        return self.max_per_second if self.max_per_minute is None else self.max_per_minute / 60
