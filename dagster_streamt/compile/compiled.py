"""Result of compiling one model: rendered Spark SQL and what it reads.

A model's SQL is rendered by Jinja once: each ``ref()``/``source()`` call is left as a placeholder
(:func:`placeholder`), which :func:`bind` replaces with the names a reader needs: ``relation_name`` for
lineage and validation (the ``sql`` kept here), the views of a run for execution. So what runs is the
render that lineage and validation saw, with its relations named for the run.

Plain frozen dataclasses so that they pickle fast into the warm-load cache.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..sql.features import SqlFeatures


def relation_name(name: str) -> str:
    """SQL identifier that ``ref()``/``source()`` render to. Sources and models share this namespace:
    the Spark layer registers a source as a temporary view and a model as a table under this name."""
    return f"`{name}`"


def placeholder(kind: str, name: str) -> str:
    """What a relation renders to until bound: NUL cannot stand in YAML text, so no SQL holds it."""
    return f"\x00{kind}\x00{name}\x00"


def bind(template: str, calls: Sequence[tuple[str, str]], relation: Callable[[str, str], str]) -> str:
    """``template`` with each placeholder of ``calls`` replaced by ``relation(kind, name)``, called in
    ``calls``' order (the order the template called them).

    >>> bind(f"SELECT * FROM {placeholder('model', 'a')}", [("model", "a")], lambda kind, name: f"`{name}`")
    'SELECT * FROM `a`'
    """
    for kind, name in calls:
        template = template.replace(placeholder(kind, name), relation(kind, name))
    return template


@dataclass(frozen=True)
class CompiledModel:
    name: str
    materialized: str  # table | view | stream | sink
    sql: str | None  # rendered Spark SQL; None for a sink defined only by `from:`
    refs: tuple[str, ...] = ()  # upstream model names, sorted
    sources: tuple[str, ...] = ()  # upstream source names, sorted
    from_: str | None = None  # sink input model
    output_columns: tuple[str, ...] | None = None  # from the SELECT list when knowable statically
    sql_hash: str = ""
    config_hash: str = ""  # the model's YAML settings but its DESCRIPTIVE_KEYS: code version input
    features: SqlFeatures | None = None  # windows, aggregations, joins: None when the SQL did not parse
    spark_sql: str | None = None  # the Flink SQL translated for Spark; None when Spark runs `sql` as written
    time_columns: tuple[str, ...] = ()  # the columns windows and interval joins are computed on

    @property
    def upstream_models(self) -> tuple[str, ...]:
        names = set(self.refs)
        if self.from_:
            names.add(self.from_)
        return tuple(sorted(names))


@dataclass(frozen=True)
class CompiledProject:
    models: dict[str, CompiledModel] = field(default_factory=dict)
