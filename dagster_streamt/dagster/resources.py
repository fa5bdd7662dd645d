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

    keep_alive: bool = Field(default=False, description="Leave the session running after the run "
                                                        "(tests, notebooks); a run process stops it by default.")

    @contextmanager
    def session(self, project: Any) -> Iterator[Any]:
        from ..spark.session import SparkSettings, create_session, stop_session

        settings = SparkSettings.from_project(project, master=self.master, remote=self.remote,
                                              conf=self.conf or None)
        spark = create_session(project, settings)
        try:
            yield spark
        finally:
            if not self.keep_alive:
                stop_session(spark)
