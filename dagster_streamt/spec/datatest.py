"""``tests:``: data tests (asset checks on Spark) and what happens when they fail, in streamt's
list form (``on_failure: [- alert: ...]``) and its mapping form (``{severity, actions}``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from .base import Name, OneOf, Strict


class AlertAction(Strict):
    """A notification; ``webhook``/``url`` receive a JSON POST when the check fails."""

    channel: str | None = None
    type: str | None = None  # streamt's mapping form names the channel `type`
    webhook: str | None = None
    url: str | None = None
    routing_key: str | None = None
    severity: str | None = None
    message: str | None = None

    @property
    def target_url(self) -> str | None:
        return self.webhook or self.url


class PauseAction(Strict):
    model: str


class DlqAction(Strict):
    topic: str | None = None
    model: str | None = None
    include_error: bool | None = None
    include_metadata: bool | None = None


class Action(OneOf):
    """One of ``alert``, ``pause``, ``dlq`` or ``block_deploy``."""

    one_of_error = "an on_failure action is one of `alert:`, `pause:`, `dlq:` or `block_deploy:`"
    alert: AlertAction | None = None
    pause: PauseAction | None = None
    dlq: DlqAction | None = None
    block_deploy: bool | None = None


class OnFailure(Strict):
    severity: Literal["error", "warn", "warning"] | None = None
    actions: list[Action] = Field(default_factory=list)


class Test(Strict):
    name: Name
    model: str | None = None  # streamt also names a source here
    source: str | None = None
    type: Literal["schema", "sample", "continuous"] = "sample"
    severity: Literal["error", "warn", "warning"] | None = None
    description: str | None = None
    assertions: list[dict[str, Any]] = Field(default_factory=list)  # streamt accepts an empty list
    sample_size: int | None = Field(default=None, ge=1)
    timeout: str | int | None = None
    tags: list[str] = Field(default_factory=list)
    enabled: bool = True
    on_failure: OnFailure | list[Action] | None = None
    flink_cluster: str | None = None
    # set by the loader for tests written as `columns[].tests` on a source or model
    column: str | None = None

    @model_validator(mode="after")
    def _target(self) -> Test:
        if (self.model is None) == (self.source is None):
            raise ValueError("a test targets exactly one of `model:` or `source:`")
        for i, a in enumerate(self.assertions):
            if len(a) != 1:
                raise ValueError(
                    f"assertion #{i + 1} must be a mapping with one key (the assertion name), got {sorted(a)}"
                )
        return self

    @property
    def actions(self) -> list[Action]:
        if self.on_failure is None:
            return []
        return list(self.on_failure) if isinstance(self.on_failure, list) else list(self.on_failure.actions)

    @property
    def declared_severity(self) -> str | None:
        """``severity``, else ``on_failure.severity``; ``block_deploy: true`` means blocking (error)."""
        sev = self.severity
        if sev is None and not isinstance(self.on_failure, list) and self.on_failure is not None:
            sev = self.on_failure.severity
        if sev is None and any(a.block_deploy for a in self.actions):
            sev = "error"
        return None if sev is None else ("warn" if sev == "warning" else sev)

    @property
    def alerts(self) -> list[AlertAction]:
        return [a.alert for a in self.actions if a.alert is not None]
