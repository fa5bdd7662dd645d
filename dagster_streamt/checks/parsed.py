"""An assertion as parsed from a test's ``assertions:`` list, and the problems parsing found."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .params import Params


@dataclass(frozen=True)
class ParsedAssertion:
    index: int  # position in the test's `assertions:` list
    name: str  # canonical name (aliases resolved)
    written: str  # the key as written in YAML, for locating it
    params: Params
    label: str = ""  # unique within a test: ``not_null``, then ``not_null_2`` for a second one


IssueKind = Literal["unknown_assertion", "unknown_key", "missing_key", "bad_value"]


@dataclass(frozen=True)
class AssertionIssue:
    index: int
    written: str
    kind: IssueKind
    key: tuple[str | int, ...]  # path inside the parameters, () for the assertion itself
    message: str
    hint: str = ""
