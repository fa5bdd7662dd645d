"""Names, paths and values quoted for the Spark SQL the package writes itself (MERGE, RESTORE, VACUUM, checks).

One place, through sqlglot's Spark dialect, so every statement quotes a column named ``order`` or
``a`b``, or a table folder with a backtick in its path, the same way.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any

from sqlglot import exp

DIALECT = "spark"


def quote(name: str) -> str:
    """One identifier, always quoted (a column may be named like a keyword or hold any character).

    >>> quote("order"), quote("a`b"), quote("a.b")
    ('`order`', '`a``b`', '`a.b`')
    """
    return exp.to_identifier(name, quoted=True).sql(dialect=DIALECT)


def quote_path(column: str) -> str:
    """A dotted column path (``address.city``: a struct's field), each part quoted.

    >>> quote_path("address.city")
    '`address`.`city`'
    """
    return ".".join(quote(part) for part in column.split("."))


def delta_path(location: object) -> str:
    """The Delta table at a folder, as Spark SQL names it: ``delta.`<path>```.

    >>> delta_path("/w/orders/data")
    'delta.`/w/orders/data`'
    """
    return exp.Table(this=exp.to_identifier(str(location), quoted=True),
                     db=exp.to_identifier("delta")).sql(dialect=DIALECT)


def literal(value: Any) -> str:
    """A Spark SQL literal for a YAML scalar (strings escaped; YAML dates become DATE/TIMESTAMP)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be compared in SQL")
        return repr(value)
    if isinstance(value, datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, date):
        return f"DATE '{value.isoformat()}'"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"
