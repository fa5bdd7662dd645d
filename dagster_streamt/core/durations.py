"""Durations as users write them in YAML: ``90s``, ``30m``, ``1h``, ``2d``, ``1 hour``, ``45 minutes``."""

from __future__ import annotations

import re

_UNITS = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600),
    **dict.fromkeys(("d", "day", "days"), 86400),
    **dict.fromkeys(("w", "week", "weeks"), 604800),
}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$")


def parse_duration(value: str | int | float) -> float:
    """Seconds in ``value`` (a bare number is seconds); ValueError with an example otherwise."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    m = _DURATION.match(str(value).lower())
    if not m or m.group(2) not in _UNITS:
        raise ValueError(f"cannot read duration {value!r}; write e.g. 45s, 30m, 1h, 2d or '1 hour'")
    return float(m.group(1)) * _UNITS[m.group(2)]


def optional_seconds(value: str | int | float | None) -> float | None:
    return None if value is None else parse_duration(value)
