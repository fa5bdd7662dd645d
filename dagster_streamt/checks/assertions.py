"""The parser that validates a test's ``assertions:`` list against the registry of :mod:`.kinds`.

Each assertion is a one-key mapping ``{name: params}``; the parameters are checked by the strict
models of :mod:`.params`. Problems come back as :class:`AssertionIssue` (with the key path inside the
assertion) so that validation can point at the YAML line, and runs can report them as errors.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from ..spec.models import Test
from ..spec.suggest import did_you_mean
from .kinds import ALIASES, KINDS
from .params import Bucket, Params, Relationships
from .parsed import AssertionIssue, ParsedAssertion
from .results import AssertionResult, TestResult, severity_of

KNOWN_NAMES = tuple(sorted({*KINDS, *ALIASES}))


def _fields(model: type[BaseModel]) -> list[str]:
    return list(model.model_fields)


_TYPE_TAGS = frozenset({"int", "float", "str", "bool", "datetime", "date", "none"})


def _is_tag(part: str | int) -> bool:
    """pydantic appends the union member (``int``, ``list[str]``) to the location of a union's errors."""
    return isinstance(part, str) and (part in _TYPE_TAGS or "[" in part)


def _merged(errors: list[Any]) -> list[Any]:
    """One error per location: a wrong-typed union value gives one error per member in pydantic."""
    out: dict[tuple[Any, ...], Any] = {}
    for err in errors:
        loc = tuple(err["loc"])
        while loc and _is_tag(loc[-1]):
            loc = loc[:-1]
        if loc != tuple(err["loc"]) or str(err["type"]).endswith("_type"):
            expected = [str(p) for p in err["loc"][len(loc):]] or [str(err["type"]).removesuffix("_type")]
            prev = out.get(loc)
            if prev is not None and prev.get("expected") is not None:
                prev["expected"].extend(expected)
                continue
            err = {**err, "loc": loc, "expected": expected}
            err["msg"] = ""
        out.setdefault(loc, err)
    for err in out.values():
        if err.get("expected") is not None:
            err["msg"] = f"expected {' or '.join(err['expected'])}, got {type(err['input']).__name__}"
    return list(out.values())


def _issues(index: int, written: str, model: type[Params], exc: ValidationError) -> list[AssertionIssue]:
    out: list[AssertionIssue] = []
    for err in _merged(exc.errors()):
        loc = tuple(err["loc"])
        where = ".".join(str(p) for p in loc)
        if err["type"] == "extra_forbidden":
            sub: type[BaseModel] = Bucket if "buckets" in loc else model
            hint = did_you_mean(str(loc[-1]), _fields(sub)) or f"known keys: {', '.join(_fields(sub))}"
            out.append(AssertionIssue(index, written, "unknown_key", loc,
                                      f"{written}: unknown key {loc[-1]!r}", hint))
        elif err["type"] in ("missing", "missing_one_of"):
            msg = f"{written}: missing key {where!r}" if err["type"] == "missing" else f"{written}: {err['msg']}"
            out.append(AssertionIssue(index, written, "missing_key", loc, msg,
                                      f"add `{loc[-1]}:`" if err["type"] == "missing" else ""))
        else:
            msg = str(err["msg"]).removeprefix("Value error, ")
            prefix = f"{written}.{where}: " if where else f"{written}: "
            out.append(AssertionIssue(index, written, "bad_value", loc, prefix + msg,
                                      f"see the `{written}` parameters: {', '.join(_fields(model))}"))
    return out


def parse_assertions(test: Test) -> tuple[list[ParsedAssertion], list[AssertionIssue]]:
    """Validate every assertion of ``test``; return the good ones and every problem (never the first only)."""
    parsed: list[ParsedAssertion] = []
    issues: list[AssertionIssue] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(test.assertions):
        ((written, raw),) = item.items()
        written = str(written)
        name = ALIASES.get(written, written)
        kind = KINDS.get(name)
        if kind is None:
            hint = did_you_mean(written, KNOWN_NAMES) or f"known assertions: {', '.join(KNOWN_NAMES)}"
            issues.append(AssertionIssue(index, written, "unknown_assertion", (), f"unknown assertion {written!r}",
                                         hint))
            continue
        model = kind.params
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            issues.append(AssertionIssue(index, written, "bad_value", (),
                                         f"{written}: parameters must be a mapping, got {type(raw).__name__}",
                                         f"write `- {written}: {{{', '.join(_fields(model)[:2])}: ...}}`"))
            continue
        try:
            params = model.model_validate(raw)
        except ValidationError as exc:
            issues.extend(_issues(index, written, model, exc))
            continue
        name, params = kind.canonical(params)  # sugar (`positive`) is checked and reported as what it means
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name}_{seen[name]}"
        parsed.append(ParsedAssertion(index, name, written, params, label))
    return parsed, issues


def relations_read(test: Test) -> set[tuple[str, str]] | None:
    """The models and sources ``test`` compares its target with (``relationships``), as (kind, name);
    None when its SQL may read any (a custom SQL assertion calling ``ref``/``source``).

    >>> relations_read(Test(name="t", model="orders", type="sample", assertions=[
    ...     {"relationships": {"column": "customer_id", "to": 'source("customers")', "field": "id"}}]))
    {('source', 'customers')}
    """
    out: set[tuple[str, str]] = set()
    for assertion in parse_assertions(test)[0]:
        if isinstance(assertion.params, Relationships):
            out.add(assertion.params.target)
        elif "{{" in json.dumps(assertion.params.model_dump(mode="json"), default=str):
            return None
    return out


CLOCK_OR_PROGRESS = frozenset({"freshness", "max_lag", "throughput"})  # judged against now or a run's progress


def decided_by_data(test: Test) -> bool:
    """Whether ``test``'s verdict depends only on the data it reads: no assertion judged against the
    clock or a run's progress (``freshness``, ``max_lag``, ``throughput``) and no SQL calling a function
    whose value changes from run to run (``current_timestamp()``, ``rand()``...). Such a test's last
    verdict still holds for unchanged data.

    >>> decided_by_data(Test(name="t", model="m", type="sample", assertions=[
    ...     {"expression_is_true": {"expression": "ts >= current_timestamp() - INTERVAL 1 DAY"}}]))
    False
    """
    from ..sql import parse_query
    from ..sql.appends import volatile

    for assertion in parse_assertions(test)[0]:
        if assertion.name in CLOCK_OR_PROGRESS:
            return False
        for value in assertion.params.model_dump(mode="json").values():
            if not isinstance(value, str):
                continue
            tree = parse_query(value).tree or parse_query(f"SELECT {value}").tree
            if tree is not None and volatile(tree) is not None:
                return False
    return True


def nothing_to_judge(test: Test, target: str, severity: str, why: str) -> TestResult:
    """The result of a continuous test in a run that gave it no new rows (what its run on Spark gives:
    a continuous test judges only the rows committed since its last run): every assertion passes."""
    return TestResult(test.name, target, severity_of(test, severity), True, tuple(
        AssertionResult(a.index, a.name, a.label, True, 0, 0, KINDS[a.name].describe(a.params), message=why)
        for a in parse_assertions(test)[0]), 0.0)
