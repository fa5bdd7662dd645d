"""``SparkResource``: one Spark session per run, configured from ``runtime.spark`` and overridable
in Dagster run config (master, remote, conf)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg
from pydantic import Field


class SparkResource(dg.ConfigurableResource):
    """Gives the run its Spark session: embedded local (default), Spark Connect, or a cluster."""

    project_dir: str = Field(description="Project folder (holds stream_project.yml).")
    env: str | None = Field(default=None, description="Environment overlay name.")
    master: str | None = Field(default=None, description="Override runtime.spark.master, e.g. spark://host:7077.")
    remote: str | None = Field(default=None, description="Override runtime.spark.remote (sc://host:15002).")
    conf: dict[str, str] = Field(default_factory=dict, description="Extra Spark conf for this run.")

    @contextmanager
    def session(self, project: Any) -> Iterator[Any]:
        from ..spark.session import SparkSettings, create_session, stop_session

        settings = SparkSettings.from_runtime(project.runtime.spark)
        overrides: dict[str, Any] = {}
        if self.master:
            overrides["master"] = self.master
        if self.remote:
            overrides["remote"] = self.remote
        if self.conf:
            overrides["conf"] = {**settings.conf, **self.conf}
        if overrides:
            settings = settings.model_copy(update=overrides) if hasattr(settings, "model_copy") else \
                type(settings)(**{**settings.__dict__, **overrides})
        spark = create_session(project, settings)
        try:
            yield spark
        finally:
            stop_session(spark)
