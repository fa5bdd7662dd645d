"""Everything one run shares: session, project, paths, and memos so that each input is registered
once per session and each source's quarantine work happens once per run, even across threads; and
the pool of the work a run does in the background, which it waits for before it ends."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from pyspark.sql import SparkSession

from ...spec.envvars import EnvResolver, project_dotenv
from ...spec.models import Model
from ...spec.project import Project
from ..session.session import is_connect
from ..storage.paths import ProjectPaths
from ..storage.warehouse import Warehouse
from .observed_views import ObservedViews
from .partitions import PartitionScope

if TYPE_CHECKING:
    from ..up_to_date import Definitions

T = TypeVar("T")


class Memo:
    """Compute a value once per key; threads asking for the same key wait for the first one.
    Failures are not remembered, so a later caller retries and sees the error itself."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}
        self._values: dict[Hashable, object] = {}

    def known(self, key: Hashable) -> bool:
        """Whether ``key`` has a value already (a hint: another thread may be computing it)."""
        with self._lock:
            return key in self._values

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
    partition: PartitionScope | None = None  # the partitions this run writes (partitioned models only)
    up_to_date: Definitions | None = None  # given: each successful model's up-to-date record is kept
    timings: dict[str, float] = field(default_factory=dict)  # work beside the models: source -> its quarantine s
    observed: ObservedViews = field(default_factory=ObservedViews)  # views whose reads are observed
    # work beside the models (a source's quarantine query: a model needs its count only when it reports);
    # the runner leaves the run only once it has ended (shutdown on leaving its `with`)
    background: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(thread_name_prefix="streamt-background"))

    @classmethod
    def create(cls, spark: SparkSession, project: Project) -> RunContext:
        paths = ProjectPaths.from_project(project)
        return cls(spark=spark, project=project, paths=paths, warehouse=Warehouse(paths.warehouse, paths.locks),
                   resolver=EnvResolver(project_dotenv(project.root, project.env)),
                   run_id=uuid.uuid4().hex[:12])

    @property
    def connect(self) -> bool:
        return is_connect(self.spark)

    @contextmanager
    def scheduler_pool(self, name: str, description: str | None = None) -> Iterator[None]:
        """Jobs started inside run in the FAIR pool ``name``: concurrent models share the cores instead
        of queueing (a no-op on Spark Connect, which has no local properties)."""
        if self.connect:
            yield
            return
        sc = self.spark.sparkContext
        sc.setLocalProperty("spark.scheduler.pool", name)
        if description:
            sc.setJobDescription(description)
        try:
            yield
        finally:
            sc.setLocalProperty("spark.scheduler.pool", None)  # type: ignore[arg-type]
            if description:
                sc.setJobDescription(None)  # type: ignore[arg-type]

    def for_model(self, model: Model) -> RunContext:
        """The context a model runs in: a child session when it overrides Spark settings
        (``advanced.spark.conf`` / ``shuffle_partitions``, or a partition time zone), so other models keep
        theirs. Only a partitioned model sees the run's partitions."""
        base = self if model.partitioned_by is not None or self.partition is None else replace(self, partition=None)
        adv = model.advanced.spark
        conf = dict(adv.conf)
        if adv.shuffle_partitions:
            conf["spark.sql.shuffle.partitions"] = str(adv.shuffle_partitions)
        pb = model.partitioned_by
        if pb is not None and pb.values is None and self.spark.conf.get("spark.sql.session.timeZone") != pb.timezone:
            conf.setdefault("spark.sql.session.timeZone", pb.timezone)  # time keys are local dates/hours
        if not conf:
            return base
        child = self.spark.cloneSession() if self.connect else self.spark.newSession()  # type: ignore[attr-defined]
        for key, value in conf.items():
            child.conf.set(key, value)
        return replace(base, spark=child, per_session=Memo(), observed=ObservedViews())
