"""Everything one run shares: session, project, paths, and memos so that each input is registered
once per session and each source's quarantine work happens once per run, even across threads."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import TypeVar

from pyspark.sql import SparkSession

from ..spec.envvars import EnvResolver, project_dotenv
from ..spec.models import Model
from ..spec.project import Project
from .paths import ProjectPaths
from .session import is_connect
from .warehouse import Warehouse

T = TypeVar("T")


class Memo:
    """Compute a value once per key; threads asking for the same key wait for the first one.
    Failures are not remembered, so a later caller retries and sees the error itself."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}
        self._values: dict[Hashable, object] = {}

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            if key not in self._values:
                self._values[key] = compute()
            return self._values[key]  # type: ignore[return-value]


@dataclass
class RunContext:
    spark: SparkSession
    project: Project
    paths: ProjectPaths
    warehouse: Warehouse
    resolver: EnvResolver
    run_id: str
    per_run: Memo = field(default_factory=Memo)  # source quarantine and row counts
    per_session: Memo = field(default_factory=Memo)  # temporary views registered in `spark`

    @classmethod
    def create(cls, spark: SparkSession, project: Project) -> RunContext:
        paths = ProjectPaths.from_project(project)
        return cls(spark=spark, project=project, paths=paths, warehouse=Warehouse(paths.warehouse),
                   resolver=EnvResolver(project_dotenv(project.root, project.env)),
                   run_id=uuid.uuid4().hex[:12])

    @property
    def connect(self) -> bool:
        return is_connect(self.spark)

    def for_model(self, model: Model) -> RunContext:
        """The context a model runs in: a child session when it overrides Spark settings
        (``advanced.spark.conf`` / ``shuffle_partitions``), so other models keep theirs."""
        adv = model.advanced.spark
        conf = dict(adv.conf)
        if adv.shuffle_partitions:
            conf["spark.sql.shuffle.partitions"] = str(adv.shuffle_partitions)
        if not conf:
            return self
        child = self.spark.cloneSession() if self.connect else self.spark.newSession()  # type: ignore[attr-defined]
        for key, value in conf.items():
            child.conf.set(key, value)
        return replace(self, spark=child, per_session=Memo())
