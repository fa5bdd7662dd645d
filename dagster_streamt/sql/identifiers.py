"""Names and paths quoted for the Spark SQL the package writes itself (MERGE, RESTORE, VACUUM, checks).

One place, through sqlglot's Spark dialect, so every statement quotes a column named ``order`` or
``a`b``, or a table folder with a backtick in its path, the same way.
"""

from __future__ import annotations

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
