"""'Did you mean ...' suggestions for unknown names and keys."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """Return ' Did you mean "x"?' or '' when nothing is close."""
    matches = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f'did you mean "{matches[0]}"?' if matches else ""
