"""streamt's newer DSL (``apiVersion: streamt.dev/v1alpha1``): a model's ``contract:`` and the
``ownership:`` of a source or model.

An enforced contract declares the whole output of a model: every run compares the schema the model
produces with ``columns`` (names and types) and fails the model naming the column and the
contract's ``file:line`` (see :mod:`dagster_streamt.spark.contract_check`). A contract that is not enforced
is documentation, shown with the model. ``ownership.mode`` (external/managed/adopted) is streamt's
deployment lifecycle; here it is Dagster metadata, as dagster-streamt never deletes a topic.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from .base import Strict


class ContractColumn(Strict):
    name: str = Field(min_length=1)
    type: str | None = None  # Flink or Spark SQL type; mapped like `columns[].type`
    data_type: str | None = None  # dbt's spelling
    nullable: bool = True
    description: str | None = None
    constraints: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def declared_type(self) -> str | None:
        return self.type or self.data_type


class ModelContract(Strict):
    enforced: bool = False
    columns: list[ContractColumn] = Field(default_factory=list)

    @field_validator("columns")
    @classmethod
    def _distinct(cls, v: list[ContractColumn]) -> list[ContractColumn]:
        names = [c.name.lower() for c in v]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"contract column {twice[0]!r} is declared twice")
        return v


class Ownership(Strict):
    mode: Literal["external", "managed", "adopted"] = "managed"


__all__ = ["ContractColumn", "ModelContract", "Ownership"]
