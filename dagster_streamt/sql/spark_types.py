"""Spark type names normalized to Spark's own ``simpleString`` spelling, so that a declared
``integer`` matches a live ``int`` and streamt's ``number`` matches any numeric type.

Pure Python (no pyspark import): definition-time validation uses it without starting a JVM.
"""

from __future__ import annotations

import re

_ALIASES = {
    "int": "int", "integer": "int", "int32": "int",
    "bigint": "bigint", "long": "bigint", "int64": "bigint",
    "smallint": "smallint", "short": "smallint", "int16": "smallint",
    "tinyint": "tinyint", "byte": "tinyint", "int8": "tinyint",
    "double": "double", "float8": "double", "double precision": "double",
    "float": "float", "real": "float", "float4": "float",
    "string": "string", "text": "string", "str": "string",
    "boolean": "boolean", "bool": "boolean",
    "timestamp": "timestamp", "timestamp_ltz": "timestamp", "datetime": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
    "date": "date", "binary": "binary", "bytes": "binary", "void": "void", "null": "void",
    "variant": "variant", "time": "time(6)",
    "decimal": "decimal(10,0)", "dec": "decimal(10,0)", "numeric": "decimal(10,0)",
}
# streamt's abstract type names: one accepted name stands for a family of Spark types.
FAMILIES: dict[str, frozenset[str]] = {
    "number": frozenset({"tinyint", "smallint", "int", "bigint", "float", "double", "decimal"}),
    "integral": frozenset({"tinyint", "smallint", "int", "bigint"}),
}
_PARAM = re.compile(r"^(decimal|dec|numeric|varchar|char|time)\s*\((.*)\)$")


def normalize_type(name: str) -> str | None:
    """``simpleString`` of a type name (``Integer`` -> ``int``, ``numeric(5, 2)`` -> ``decimal(5,2)``);
    None when the name is not a Spark type. Complex types are compared by their normalized text."""
    text = re.sub(r"\s+", " ", name.strip().lower())
    if text in _ALIASES:
        return _ALIASES[text]
    if text in FAMILIES:
        return text
    m = _PARAM.match(text)
    if m:
        base = {"dec": "decimal", "numeric": "decimal"}.get(m.group(1), m.group(1))
        args = ",".join(a.strip() for a in m.group(2).split(","))
        if base == "decimal" and "," not in args:
            args += ",0"
        return f"{base}({args})"
    if text.startswith(("array<", "map<", "struct<")):
        return text.replace(" ", "")
    return None


def family(simple: str) -> str:
    """``decimal(10,2)`` -> ``decimal``; other names unchanged (for matching against FAMILIES)."""
    return simple.split("(", 1)[0]


def type_matches(accepted: str, actual: str) -> bool:
    """Does the live or declared type ``actual`` satisfy the accepted type name ``accepted``?"""
    want, have = normalize_type(accepted), normalize_type(actual)
    if want is None or have is None:
        return False
    if want in FAMILIES:
        return family(have) in FAMILIES[want]
    if want == "decimal(10,0)" and accepted.strip().lower() in ("decimal", "dec", "numeric"):
        return family(have) == "decimal"  # a bare `decimal` accepts any precision and scale
    # Spark reads char/varchar columns back as string, so the two spellings are interchangeable.
    if "string" in (want, have) and {family(want), family(have)} <= {"string", "varchar", "char"}:
        return True
    return want == have


def is_known_type(name: str) -> bool:
    return normalize_type(name) is not None


__all__ = ["FAMILIES", "family", "is_known_type", "normalize_type", "type_matches"]
