"""How a pydantic validation error becomes a diagnostic at the YAML line, with a fix.

Union branches are dropped from the error path (it must index the user's data), an unknown key
gets "did you mean" against the keys of the model at that path, a bad name gets the naming rule.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from .base import Strict
from .errors import Diagnostics
from .models import KIND_OF_SECTION, NAME_HINT
from .suggest import did_you_mean
from .yaml_loader import LineMap


def validate_model(diags: Diagnostics, cls: type[BaseModel], raw: Any, lm: LineMap, base: tuple[str | int, ...],
               fallback: LineMap | None = None) -> Any:
    """``cls`` from ``raw``, or None; every pydantic error becomes a located STR010-STR012 diagnostic.
    An entity with bad keys is kept without them, so its SQL is still checked and refs to it do not
    cascade into more errors."""
    try:
        return cls.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            _report(diags, cls, raw, err, lm, base, fallback)
        bad = {e["loc"][0] for e in exc.errors() if e.get("loc")}
        if isinstance(raw, dict) and bad and "name" not in bad and bad <= raw.keys():
            try:
                return cls.model_validate({k: v for k, v in raw.items() if k not in bad})
            except ValidationError:
                return None
        return None


def _report(diags: Diagnostics, cls: type[BaseModel], raw: Any, err: Any, lm: LineMap, base: tuple[str | int, ...],
        fallback: LineMap | None) -> None:
    loc = _clean_loc(raw, tuple(err.get("loc", ())))
    path = (*base, *loc)
    use = lm if path in lm.lines or fallback is None else fallback
    line = use.line(path)
    what = _describe(cls, raw, base)
    kind = err.get("type", "")
    dotted = ".".join(str(p) for p in loc) or "(entry)"
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else "?"
        model = _model_at(cls, loc[:-1])
        allowed = sorted((f.alias or n) for n, f in model.model_fields.items()) if model else []
        hint = did_you_mean(key, allowed) or (f"allowed keys: {', '.join(allowed)}" if allowed else "remove it")
        diags.add("STR010", f"{what}: unknown key {dotted!r}", file=use.file, line=line, hint=hint)
    elif kind == "missing":
        diags.add("STR011", f"{what}: missing required key {dotted!r}", file=use.file, line=line,
                       hint=f"add `{loc[-1] if loc else dotted}:`")
    else:
        msg = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
        hint = "fix the value"
        if kind == "string_pattern_mismatch" and loc and loc[-1] == "name":
            hint = NAME_HINT
        diags.add("STR012", f"{what}: {dotted}: {msg}", file=use.file, line=line, hint=hint)


def _clean_loc(raw: Any, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop pydantic's union-branch labels so the path indexes the YAML data."""
    out: list[Any] = []
    cur = raw
    for part in loc:
        in_list = isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur)
        if (isinstance(cur, dict) and part in cur) or in_list:
            out.append(part)
            cur = cur[part]
        elif isinstance(cur, dict) and isinstance(part, str) and part not in cur and part[:1].islower() \
                and "[" not in part and part not in ("str", "int", "float", "bool", "list", "dict"):
            out.append(part)  # a missing or extra key: keep it as the leaf
            cur = None
    return tuple(out)


def _describe(cls: type[BaseModel], raw: Any, base: tuple[str | int, ...]) -> str:
    kind = KIND_OF_SECTION.get(str(base[0]), base[0]) if base else cls.__name__
    name = raw.get("name") if isinstance(raw, dict) else None
    return f"{kind} {name!r}" if name else str(kind)


def _model_at(cls: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model class at a key path (following nested model fields and lists)."""
    model: Any = cls
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        fld = next((f for n, f in model.model_fields.items() if part in (n, f.alias)), None)
        if fld is None:
            return None
        model = _first_model(fld.annotation)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _first_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, Strict):
        return annotation
    found = (_first_model(arg) for arg in typing.get_args(annotation))
    return next((m for m in found if m is not None), None)
