"""Building blocks shared by every part of the schema: the strict base class, names, option maps.

Names follow streamt, which accepts ``payments-pipeline`` or ``orders.v1``: letters, digits, ``_``,
``-`` and ``.``. Where a name must become a Spark identifier or a Dagster op/check name it goes
through :mod:`.names`, which also reports two names that would collide.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$"
NAME_HINT = "names use letters, digits, `_`, `-` and `.`, and start with a letter, digit or `_`"
Name = Annotated[str, Field(pattern=NAME_PATTERN, min_length=1, max_length=200)]


def stringify_options(v: Any) -> Any:
    """Spark options and conf are strings: YAML's ``true``/``4`` become ``"true"``/``"4"``."""
    if isinstance(v, dict):
        return {str(k): ("true" if x is True else "false" if x is False else str(x)) for k, x in v.items()}
    return v


Options = Annotated[dict[str, str], BeforeValidator(stringify_options)]


def _iso(v: Any) -> Any:
    """YAML reads ``2026-01-01`` as a date; the field keeps the text."""
    return v.isoformat() if hasattr(v, "isoformat") else v


IsoText = Annotated[str, BeforeValidator(_iso)]


def _join_list(v: Any) -> Any:
    """streamt accepts a list of brokers or registry URLs where clients want one comma-separated string."""
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    return v


CommaList = Annotated[str, BeforeValidator(_join_list)]


def _text(v: Any) -> Any:
    """A number written where streamt documents free text (``availability: 99.9``) is kept as text."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return str(v)
    return v


Text = Annotated[str, BeforeValidator(_text)]


class Strict(BaseModel):
    """Unknown keys are errors with a did-you-mean hint (streamt dropped them silently)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class OneOf(Strict):
    """A block that is exactly one of its keys (``{ref: x}`` or ``{source: y}``); ``one_of_error`` says which."""

    one_of_error: ClassVar[str]

    @model_validator(mode="after")
    def _one(self) -> OneOf:
        if sum(getattr(self, name) is not None for name in type(self).model_fields) != 1:
            raise ValueError(self.one_of_error)
        return self
