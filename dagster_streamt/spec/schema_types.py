"""Column types from what a streamt project declares, as Spark SQL types.

streamt writes Flink SQL types on columns (``STRING``, ``TIMESTAMP(3)``, ``DECIMAL(10, 2)``,
``ROW<a INT>``) and may give a whole inline schema (``schema.definition``: Avro or JSON Schema). Both
become Spark DDL type strings here, so validation, column lineage, the Dagster column schema and the
Spark reader agree. Pure Python: no pyspark import.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from .source import Column, SchemaRef

_SIMPLE = {
    "string": "string", "varchar": "string", "char": "string", "text": "string", "str": "string",
    "bytes": "binary", "varbinary": "binary", "binary": "binary",
    "boolean": "boolean", "bool": "boolean",
    "tinyint": "tinyint", "smallint": "smallint", "int": "int", "integer": "int",
    "bigint": "bigint", "long": "bigint", "float": "float", "real": "float", "double": "double",
    "double precision": "double", "number": "double", "numeric": "decimal(10,0)", "decimal": "decimal(10,0)",
    "dec": "decimal(10,0)", "date": "date", "time": "string", "timestamp": "timestamp",
    "timestamp_ltz": "timestamp", "timestamp with local time zone": "timestamp",
    "timestamp with time zone": "timestamp", "timestamp_ntz": "timestamp_ntz", "datetime": "timestamp",
}
_PARAM = re.compile(r"^([a-z_ ]+?)\s*\((.*)\)$", re.S)


class SchemaError(ValueError):
    """A type or inline schema that cannot be read; the message says what and how to fix it."""


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside ``<>``/``()``."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def spark_type(declared: str) -> str:
    """``TIMESTAMP(3)`` -> ``timestamp``, ``DECIMAL(10, 2)`` -> ``decimal(10,2)``, ``ROW<a INT>`` ->
    ``struct<a:int>``; Spark type names pass through. Raises :class:`SchemaError`."""
    text = re.sub(r"\s+", " ", declared.strip())
    text = re.sub(r"\s+NOT NULL$", "", text, flags=re.I)
    low = text.lower()
    if low in _SIMPLE:
        return _SIMPLE[low]
    generic = re.match(r"^(array|multiset|map|row|struct)\s*[<(](.*)[>)]$", text, re.I | re.S)
    if generic:
        kind, inner = generic.group(1).lower(), generic.group(2)
        if kind in ("array", "multiset"):
            return f"array<{spark_type(inner)}>"
        if kind == "map":
            parts = _split_top(inner)
            if len(parts) != 2:
                raise SchemaError(f"MAP needs a key and a value type, got {declared!r}")
            return f"map<{spark_type(parts[0])},{spark_type(parts[1])}>"
        fields = []
        for part in _split_top(inner):
            m = re.match(r"^`?([A-Za-z_][A-Za-z0-9_]*)`?(?:\s*:\s*|\s+)(.+)$", part, re.S)
            if not m:
                raise SchemaError(f"cannot read the field {part!r} of {declared!r}; write `name TYPE`")
            fields.append(f"{m.group(1)}:{spark_type(m.group(2))}")
        return f"struct<{','.join(fields)}>"
    param = _PARAM.match(low)
    if param:
        base, args = param.group(1).strip(), [a.strip() for a in param.group(2).split(",")]
        if base in ("decimal", "numeric", "dec"):
            return f"decimal({args[0]},{args[1] if len(args) > 1 else 0})"
        if base in ("varchar", "char", "string", "timestamp", "timestamp_ltz", "time", "varbinary", "binary"):
            return _SIMPLE[base]
        if base.startswith("timestamp"):  # TIMESTAMP(3) WITH LOCAL TIME ZONE
            return "timestamp"
    if re.match(r"^timestamp\s*\(\d+\)\s+with(out)? (local )?time zone$", low):
        return "timestamp"
    raise SchemaError(f"unknown column type {declared!r}; use a Spark or Flink SQL type such as STRING, BIGINT, "
                      "DOUBLE, DECIMAL(10, 2), TIMESTAMP(3), ARRAY<STRING>")


# -- Avro -----------------------------------------------------------------------------------------
_AVRO = {"string": "string", "int": "int", "long": "bigint", "float": "float", "double": "double",
         "boolean": "boolean", "bytes": "binary", "null": "void"}
_LOGICAL = {"timestamp-millis": "timestamp", "timestamp-micros": "timestamp", "local-timestamp-millis": "timestamp_ntz",
            "local-timestamp-micros": "timestamp_ntz", "date": "date", "time-millis": "int", "time-micros": "bigint",
            "uuid": "string"}


def _avro_type(t: Any) -> str:
    if isinstance(t, list):  # a union: ["null", X] is a nullable X
        kinds = [x for x in t if x != "null"]
        if len(kinds) != 1:
            return "string" if all(_avro_type(k) == "string" for k in kinds) else "binary"
        return _avro_type(kinds[0])
    if isinstance(t, str):
        if t not in _AVRO:
            raise SchemaError(f"Avro type {t!r} is not a primitive; named types must be defined inline")
        return _AVRO[t]
    if not isinstance(t, dict) or "type" not in t:
        raise SchemaError(f"cannot read Avro type {t!r}")
    logical = t.get("logicalType")
    if logical == "decimal":
        return f"decimal({t.get('precision', 10)},{t.get('scale', 0)})"
    if logical in _LOGICAL:
        return _LOGICAL[logical]
    kind = t["type"]
    if kind == "record":
        return "struct<" + ",".join(f"{f['name']}:{_avro_type(f['type'])}" for f in t.get("fields", [])) + ">"
    if kind == "array":
        return f"array<{_avro_type(t['items'])}>"
    if kind == "map":
        return f"map<string,{_avro_type(t['values'])}>"
    if kind in ("enum", "fixed"):  # named types: an enum's symbols are text, a fixed value is bytes
        return "string" if kind == "enum" else "binary"
    return _avro_type(kind)


# -- JSON Schema ----------------------------------------------------------------------------------
_JSON_SCALARS = {"integer": "bigint", "number": "double", "boolean": "boolean"}


def _json_type(node: dict[str, Any]) -> str:
    kind = node.get("type", "string")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else "string"
    fmt = node.get("format")
    if kind == "string":
        return {"date-time": "timestamp", "date": "date"}.get(str(fmt), "string")
    if kind in _JSON_SCALARS:
        return _JSON_SCALARS[kind]
    if kind == "array":
        return f"array<{_json_type(node.get('items') or {})}>"
    if kind == "object":
        props = node.get("properties") or {}
        if not props:
            return "map<string,string>"
        return "struct<" + ",".join(f"{k}:{_json_type(v)}" for k, v in props.items()) + ">"
    raise SchemaError(f"JSON Schema type {kind!r} is not supported")


def definition_columns(definition: str | dict[str, Any], fmt: str | None) -> list[tuple[str, str]]:
    """The top-level fields of an inline Avro record or JSON Schema object, as (name, Spark type)."""
    doc: Any = definition
    if isinstance(definition, str):
        try:
            doc = json.loads(definition)
        except json.JSONDecodeError:
            try:
                doc = yaml.safe_load(definition)
            except yaml.YAMLError as exc:
                raise SchemaError(f"schema.definition is neither JSON nor YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise SchemaError("schema.definition must be an Avro record or a JSON Schema object")
    if fmt == "protobuf":
        raise SchemaError("protobuf definitions are not read; declare typed `columns:` instead")
    if doc.get("type") == "record" or (fmt == "avro" and "fields" in doc):
        fields = doc.get("fields")
        if not isinstance(fields, list) or not all(isinstance(f, dict) and "name" in f and "type" in f
                                                   for f in fields):
            raise SchemaError("the Avro record's `fields` must be a list of {name, type}")
        return [(str(f["name"]), _avro_type(f["type"])) for f in fields]
    props = doc.get("properties")
    if doc.get("type", "object") == "object" and isinstance(props, dict):
        return [(str(k), _json_type(v if isinstance(v, dict) else {})) for k, v in props.items()]
    raise SchemaError("schema.definition is not an Avro record (type: record, fields) or a JSON Schema object "
                      "(type: object, properties)")


def effective_columns(columns: list[Column], schema: SchemaRef | None
                      ) -> tuple[list[Column], list[tuple[tuple[str | int, ...], str]]]:
    """Declared columns with Spark types, completed by the fields of an inline ``schema.definition``.

    Returns the columns and the problems, each with the key path (within the entity) it concerns. A
    column's own ``type`` wins over the definition; its description, classification and tests stay.
    """
    problems: list[tuple[tuple[str | int, ...], str]] = []
    out: list[Column] = []
    for i, col in enumerate(columns):
        if col.type is None:
            out.append(col)
            continue
        try:
            out.append(col.model_copy(update={"type": spark_type(col.type)}))
        except SchemaError as exc:
            problems.append((("columns", i, "type"), str(exc)))
            out.append(col.model_copy(update={"type": None}))
    if schema is None or schema.definition is None:
        return out, problems
    try:
        fields = definition_columns(schema.definition, schema.format)
    except SchemaError as exc:
        problems.append((("schema", "definition"), str(exc)))
        return out, problems
    by_name = {c.name.lower(): c for c in out}
    merged = [by_name[n.lower()].model_copy(update={"type": by_name[n.lower()].type or t}) if n.lower() in by_name
              else Column(name=n, type=t) for n, t in fields]
    known = {n.lower() for n, _ in fields}
    merged.extend(c for c in out if c.name.lower() not in known)  # e.g. a proctime column
    return merged, problems
