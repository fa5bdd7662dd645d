"""``SparkResource``: one Spark session per run, configured from ``runtime.spark`` and overridable
in Dagster run config (master, remote, conf).

A team's dagster-pyspark resource plugs in: ``as_spark_resource`` turns a ``PySparkResource`` or
``LazyPySparkResource`` into a ``SparkResource`` whose ``base_conf`` is its ``spark_config``, laid
under the project's ``runtime.spark.conf``. The session itself stays ours (not dagster-pyspark's
``getOrCreate`` of the raw config): the project's warehouse, the in-memory catalog, the log settings
and Spark Connect need it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import dagster as dg
from pydantic import Field, PrivateAttr

if TYPE_CHECKING:  # imported when used: dagster_pyspark imports pyspark, which `streamt status` never needs
    from dagster_pyspark import LazyPySparkResource, PySparkResource

    from ..spark.session.jit import Jit

_shared_sessions = 0  # > 0 while keep_sessions_alive() is active


@contextmanager
def keep_sessions_alive() -> Iterator[None]:
    """Runs executed in this process inside the block leave their session running, so several runs
    (``streamt backfill --per-partition``) pay for one JVM whatever resource the code location binds."""
    global _shared_sessions
    _shared_sessions += 1
    try:
        yield
    finally:
        _shared_sessions -= 1


class RunOptions(dg.ConfigurableResource):
    """What one run does besides bringing the selected models up to date, as typed run config (bound as
    ``run_options``), so the launchpad validates it and shows it: a typo is an error, not a tag ignored.

    Run config, not a tag: a tag is an untyped string every reader splits by hand; and run config, not
    op config: a selection may span several model ops (one per partitioning), while resource config is
    one entry whatever the selection.

    Attributes:
        full_refresh: Models that start over: a stream's checkpoint and output, a table's stored
            data and refresh record (``streamt run --full-refresh SEL`` sets it).

    Examples:
        In the launchpad, ``resources: {run_options: {config: {full_refresh: [orders_clean]}}}``;
        in Python:

        >>> from dagster_streamt import load
        >>> from dagster_streamt.dagster.resources import RunOptions
        >>> sorted(RunOptions(full_refresh=["orders_clean"]).models(load("project").project))
        ['orders_clean']
    """

    full_refresh: list[str] = Field(default_factory=list, description=(
        "Models to start over in this run: a stream's checkpoint and output, a table's data "
        "(what `streamt run --full-refresh SEL` sets)."))

    def models(self, project: Any) -> frozenset[str]:
        """The models to start over, checked against ``project``: an unknown name fails the run with
        a did-you-mean rather than running without the refresh the user asked for."""
        from ..spec.suggest import did_you_mean

        unknown = sorted(set(self.full_refresh) - set(project.models))
        if unknown:
            hints = "; ".join(f"{u!r}: {did_you_mean(u, project.models) or 'no such model'}" for u in unknown)
            raise dg.Failure(f"run config resources.run_options.config.full_refresh names no model of project "
                             f"{project.name!r} ({hints})")
        return frozenset(self.full_refresh)


class SparkResource(dg.ConfigurableResource):
    """Gives the run its Spark session: embedded local (default), Spark Connect, or a cluster.

    ``build_definitions`` binds one as the ``spark`` resource; pass your own to override
    ``runtime.spark`` for every run of the code location, or set its fields in Dagster run config.

    Attributes:
        project_dir: Informational: each asset passes the project it runs.
        env: Informational: the environment overlay name.
        master: Overrides ``runtime.spark.master`` (``local[4]``, ``spark://host:7077``, ``yarn``).
        remote: Overrides ``runtime.spark.remote`` (``sc://host:15002``).
        conf: Spark conf that wins over ``runtime.spark.conf``.
        base_conf: Spark conf laid under ``runtime.spark.conf`` (a dagster-pyspark ``spark_config``).
        keep_alive: Leave the session running after the run (tests, notebooks).

    Examples:
        >>> from dagster_streamt import SparkResource, build_definitions
        >>> spark = SparkResource(master="spark://spark-master:7077", conf={"spark.executor.memory": "4g"})
        >>> defs = build_definitions("project", spark=spark)
        >>> defs.resources["spark"].master
        'spark://spark-master:7077'
    """

    project_dir: str | None = Field(default=None, description="Project folder (informational: each asset "
                                                               "passes the project it runs).")
    env: str | None = Field(default=None, description="Environment overlay name (informational).")
    master: str | None = Field(default=None, description="Override runtime.spark.master, e.g. spark://host:7077.")
    remote: str | None = Field(default=None, description="Override runtime.spark.remote (sc://host:15002).")
    conf: dict[str, str] = Field(default_factory=dict, description="Extra Spark conf for this run (wins over "
                                                                  "runtime.spark.conf).")
    base_conf: dict[str, str] = Field(default_factory=dict, description=(
        "Spark conf laid under runtime.spark.conf (a dagster-pyspark resource's spark_config); its spark.master / "
        "spark.remote apply when runtime.spark sets no master / remote."))

    keep_alive: bool = Field(default=False, description="Leave the session running after the run "
                                                        "(tests, notebooks); a run process stops it by default.")
    _pending: list[Callable[[], None]] = PrivateAttr(default_factory=list)

    def on_teardown(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Have ``fn`` run when Dagster tears the resource down, unless the returned function is called first.

        Why: Dagster raises a run's interruption (the UI's terminate, Ctrl-C, SIGTERM) at an op's next step
        when it arrived between two, without resuming or closing the op's generator: its ``finally``
        blocks run only when the garbage collector gets to it, after the run. The resource's teardown is
        the moment Dagster does guarantee, so what must not outlive the run (running queries, a session)
        registers here, newest first, and unregisters once it ended by itself.

        Args:
            fn: What to run, with no arguments; an exception it raises is logged, and the others still run.

        Returns:
            A function that unregisters ``fn`` (idempotent).

        Examples:
            >>> spark = SparkResource()
            >>> done = spark.on_teardown(lambda: print("stopped"))
            >>> spark.teardown_after_execution(None)
            stopped
            >>> spark.teardown_after_execution(None)  # once only
        """
        self._pending.append(fn)

        def done() -> None:
            if fn in self._pending:
                self._pending.remove(fn)

        return done

    def teardown_after_execution(self, context: Any) -> None:
        """Dagster's hook after the run's steps, however they ended: runs what ``on_teardown`` registered.

        Args:
            context: Dagster's ``InitResourceContext`` (None when called by hand): failures go to its log.

        Examples:
            >>> spark = SparkResource()
            >>> _ = spark.on_teardown(lambda: print("first registered, last run"))
            >>> _ = spark.on_teardown(lambda: print("newest first"))
            >>> spark.teardown_after_execution(None)
            newest first
            first registered, last run
        """
        while self._pending:
            fn = self._pending.pop()
            try:
                fn()
            except Exception as exc:  # one failing clean-up must not skip the others
                if context is not None:
                    context.log.warning(f"streamt: clean-up after the run failed: {exc}")

    @classmethod
    def from_pyspark(cls, resource: PySparkResource | LazyPySparkResource, **fields: Any) -> SparkResource:
        """A ``SparkResource`` on a dagster-pyspark resource's ``spark_config``.

        Args:
            resource: A dagster-pyspark ``PySparkResource`` or ``LazyPySparkResource``; nested keys
                are flattened as dagster-pyspark does (``{"spark": {"executor": {"memory": "2g"}}}``).
            **fields: Other ``SparkResource`` fields.

        Returns:
            A resource whose ``base_conf`` is that config (the project's ``runtime.spark.conf`` wins).

        Examples:
            >>> from dagster_pyspark import PySparkResource
            >>> from dagster_streamt import SparkResource
            >>> team = PySparkResource(spark_config={"spark": {"executor": {"memory": "2g"}}})
            >>> SparkResource.from_pyspark(team).base_conf
            {'spark.executor.memory': '2g'}
        """
        from dagster_spark.utils import flatten_dict

        base = {key: str(value).lower() if isinstance(value, bool) else str(value)  # Spark spells booleans lowercase
                for key, value in flatten_dict(dict(resource.spark_config or {}))}
        return cls(base_conf=base, **fields)

    def settings(self, project: Any) -> Any:
        """The Spark settings a run of ``project`` uses: base conf < ``runtime.spark`` < this resource.

        Args:
            project: The loaded project's ``Project`` (``LoadedProject.project``).

        Returns:
            The ``SparkSettings`` (master or remote, conf, Connect server and class-archive options).

        Examples:
            >>> from dagster_streamt import SparkResource, load
            >>> project = load("project").project
            >>> SparkResource(master="local[1]").settings(project).master
            'local[1]'
        """
        from ..spark.session.session import SparkSettings

        rt = project.runtime.spark
        given = rt.model_fields_set
        base = dict(self.base_conf)
        master = self.master or (None if "master" in given else base.get("spark.master"))
        remote = self.remote or (None if "remote" in given else base.get("spark.remote"))
        under = {k: v for k, v in base.items() if k not in ("spark.master", "spark.remote") and k not in rt.conf}
        return SparkSettings.from_project(project, master=master, remote=remote,
                                          conf={**under, **self.conf} or None)

    def engine_key(self) -> str:
        """What this resource changes about the engine (master, remote, conf), as one string: a run
        decides a model is up to date without Spark only for the engine settings it was built with.

        Returns:
            The master, remote, base conf and conf, as sorted JSON.

        Examples:
            >>> SparkResource(conf={"spark.sql.session.timeZone": "UTC"}).engine_key()
            '[null, null, {}, {"spark.sql.session.timeZone": "UTC"}]'
        """
        from ..spark.up_to_date import engine_key

        return engine_key(self.master, self.remote, self.base_conf, self.conf)

    @contextmanager
    def session(self, project: Any, jit: Jit | None = None) -> Iterator[Any]:
        """A Spark session for one run of ``project``, stopped afterwards unless ``keep_alive`` or this
        process already had an embedded session (a notebook's): that one is reused and left running.

        Args:
            project: The loaded project's ``Project``.
            jit: The compilers of a local driver JVM this call starts (``quick``, ``full``), as the run
                chose them from what it reads (``dagster_streamt.spark.new_data.choose_jit``); None:
                the project's ``runtime.spark.jit``, whose ``auto`` is then the JVM's default.

        Returns:
            A context manager yielding a ``pyspark.sql.SparkSession`` (classic or Spark Connect).

        Examples:
            Starts a JVM, so not run here::

                with SparkResource().session(load("project").project) as spark:
                    spark.table("orders_clean").count()
        """
        from ..spark.session.session import already_running, create_session, stop_session

        borrowed = already_running()  # a notebook's or a test session's: not ours to stop
        settings = self.settings(project)
        spark = create_session(project, settings if jit is None else replace(settings, jit=jit))
        ours = not (self.keep_alive or _shared_sessions or borrowed)
        stopped: list[bool] = []

        def stop() -> None:  # once: by this block's end, or by the teardown when an interruption skipped it
            if ours and not stopped:
                stopped.append(True)
                stop_session(spark)

        done = self.on_teardown(stop)
        try:
            yield spark
        finally:
            done()
            stop()


def as_spark_resource(resource: SparkResource | PySparkResource | LazyPySparkResource | None,
                      project_dir: str | None = None, env: str | None = None) -> SparkResource:
    """The resource the models run with: ours as given, a dagster-pyspark one adapted, or the default."""
    if resource is None:
        return SparkResource(project_dir=project_dir, env=env)
    if isinstance(resource, SparkResource):
        return resource
    from dagster_pyspark import LazyPySparkResource, PySparkResource

    if isinstance(resource, PySparkResource | LazyPySparkResource):
        return SparkResource.from_pyspark(resource, project_dir=project_dir, env=env)
    raise TypeError(f"spark must be a dagster_streamt SparkResource or a dagster_pyspark PySparkResource / "
                    f"LazyPySparkResource, not {type(resource).__name__}")

