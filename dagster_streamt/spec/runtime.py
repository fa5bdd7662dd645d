"""``runtime:``: where models run (Spark), Kafka and lineage settings, and streamt's Flink, Connect,
Schema Registry and Conduktor blocks.

streamt's infrastructure blocks are typed here so a typo is still caught, but on Spark they do
nothing; :mod:`.compat` says so once per kind of key when the project is validated.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from .base import CommaList, Options, Strict


class ConnectServer(Strict):
    """The project's own long-lived Spark Connect server, which runs use instead of starting a JVM each.

    Nothing starts it behind the user's back: ``streamt server start`` does (or a run, with
    ``start: true``), and it stops after ``idle_minutes`` without a client (or ``streamt server stop``).

    ``start``: ``auto`` (default) runs connect to the project's server while it is up, and run
    embedded otherwise; ``true`` a run that finds none starts it first (and leaves it running);
    ``false`` every run starts its own embedded JVM, even while a server is up.
    ``port``: the server's port (default: a free one). ``warmup``: what ``streamt server start`` runs
    through a new server before returning, so the first runs find its JIT warm: ``quick`` (one small
    build of one model, a few seconds), ``full`` (a dozen larger refreshes, about a minute of both
    cores) or ``off``.
    """

    start: bool | Literal["auto"] = "auto"
    port: int | None = Field(default=None, ge=1, le=65535)
    idle_minutes: float = Field(default=10.0, gt=0)
    warmup: Literal["quick", "full", "off"] = "quick"

    @field_validator("warmup", mode="before")
    @classmethod
    def _yaml_off(cls, v: Any) -> Any:
        """YAML reads an unquoted ``off`` as false (and ``on`` as true)."""
        return {False: "off", True: "quick"}.get(v, v) if isinstance(v, bool) else v


class DeltaRuntime(Strict):
    """``runtime.spark.delta``: upkeep of the project's Delta tables (``streamt vacuum``; runs never vacuum).

    ``vacuum_retention_hours``: ``streamt vacuum`` deletes the data files no version younger than this
    needs (default 168, Delta's own safety floor). Below 168 the command turns off Delta's
    ``retentionDurationCheck`` for its own session, and says so: a reader or writer that started longer ago
    than the retention may then lose files it still needs, and older versions can no longer be restored.
    """

    vacuum_retention_hours: float = Field(default=168.0, ge=0)


class SparkRuntime(Strict):
    """``runtime.spark``: where and how models run on Spark.

    ``jars``: where the jars pyspark does not bundle come from (Delta Lake; Spark's Kafka and Avro
    connectors and Hadoop's S3A connector when the project uses them): ``fetch`` (default) resolves a
    missing set once with Spark's Ivy (``spark.jars.packages``) and caches it, ``cache`` never downloads
    (fill the cache with ``streamt jars fetch`` elsewhere), ``provided`` adds none because the platform
    ships them (Databricks, EMR, Glue, a cluster image). The ``STREAMT_JARS`` variable overrides it.
    """

    master: str = "local[2]"
    remote: str | None = None
    app_name: str | None = None
    conf: Options = Field(default_factory=dict)
    warehouse: str = ".streamt/warehouse"
    checkpoints: str = ".streamt/checkpoints"
    database: str = "default"
    connect_server: ConnectServer = Field(default_factory=ConnectServer)
    # local JVMs map a class-data-sharing archive of Spark's classes (a faster start; see spark/session/jvm_archive.py)
    class_archive: bool = True
    # a local driver's JIT compilers: auto picks C1 alone for a run with little new data (spark/session/jit.py)
    jit: Literal["auto", "quick", "full"] = "auto"
    # no longer has an effect (the parsed-source cache is gone); still accepted so projects that set it load
    parsed_cache_mb: float = Field(default=64.0, ge=0)
    delta: DeltaRuntime = Field(default_factory=DeltaRuntime)
    jars: Literal["fetch", "cache", "provided"] = "fetch"

    @field_validator("connect_server", mode="before")
    @classmethod
    def _start_shorthand(cls, v: Any) -> Any:
        """``connect_server: false`` (or ``true``, ``auto``) means ``{start: false}``."""
        return {"start": v} if isinstance(v, bool) or v == "auto" else v

    @field_validator("remote")
    @classmethod
    def _remote_url(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith("sc://"):
            raise ValueError(f"remote must be a Spark Connect URL like sc://host:15002, got {v!r}")
        return v


class OpenLineageRuntime(Strict):
    enabled: bool = True
    namespace: str | None = None
    transport: dict[str, Any] = Field(default_factory=lambda: {"type": "file"})
    sensor_interval_seconds: int = Field(default=30, ge=1)


class KafkaRuntime(Strict):
    """streamt's Kafka block; its security settings become Spark Kafka client options.

    ``local_dir`` (ours) replaces the broker on a laptop or in tests: each topic is the folder
    ``<local_dir>/<topic>/`` of JSON-lines files, relative to the project."""

    bootstrap_servers: CommaList | None = None
    local_dir: str | None = None
    bootstrap_servers_internal: CommaList | None = None
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] | None = None
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = None
    ssl_ca_location: str | None = None
    ssl_certificate_location: str | None = None
    ssl_key_location: str | None = None
    options: Options = Field(default_factory=dict)

    @model_validator(mode="after")
    def _where(self) -> KafkaRuntime:
        if self.bootstrap_servers is None and self.local_dir is None:
            raise ValueError("give `bootstrap_servers` (a Kafka cluster) or `local_dir` (topics as local folders)")
        return self


class RegistrySsl(Strict):
    ca_location: str | None = None
    certificate_location: str | None = None
    key_location: str | None = None


class SchemaRegistryRuntime(Strict):
    url: CommaList
    username: str | None = None
    password: str | None = None
    api_key: str | None = None  # Confluent Cloud's credentials (streamt's schema registry deployer)
    api_secret: str | None = None
    compatibility: str | None = None  # the subjects' compatibility level streamt sets when it registers
    ssl: RegistrySsl | None = None


class FlinkCluster(Strict):
    """Every key streamt documents for its REST, Docker, Kubernetes and Confluent Cloud clusters."""

    type: Literal["rest", "docker", "kubernetes", "confluent"] = "rest"
    rest_url: str | None = None
    sql_gateway_url: str | None = None
    version: str | None = None
    environment: str | None = None
    api_key: str | None = None
    api_secret: str | None = None
    network: str | None = None
    namespace: str | None = None
    service_account: str | None = None
    image: str | None = None
    image_pull_policy: str | None = None
    image_pull_secrets: list[Any] = Field(default_factory=list)
    pod_template: dict[str, Any] | None = None
    environment_id: str | None = None
    compute_pool_id: str | None = None
    region: str | None = None


class FlinkRuntime(Strict):
    default: str | None = None
    default_parallelism: int | None = Field(default=None, ge=1)  # streamt's jobs without their own
    clusters: dict[str, FlinkCluster] = Field(default_factory=dict)


class ConnectCluster(Strict):
    rest_url: str
    username: str | None = None
    password: str | None = None


class ConnectRuntime(Strict):
    default: str | None = None
    clusters: dict[str, ConnectCluster] = Field(default_factory=dict)


class GatewayRuntime(Strict):
    admin_url: str | None = None
    proxy_bootstrap: str | None = None
    username: str | None = None
    password: str | None = None
    virtual_cluster: str | None = None


class ConsoleRuntime(Strict):
    url: str
    api_key: str | None = None


class ConduktorRuntime(Strict):
    gateway: GatewayRuntime | None = None
    console: ConsoleRuntime | None = None


class AutomationsRuntime(Strict):
    """How the project's schedules and new-data sensors start in Dagster. ``stopped`` (Dagster's own
    convention) until turned on in the UI, or by ``enabled: true`` on one of them; ``running`` turns on
    every one that does not say ``enabled: false``."""

    default_status: Literal["stopped", "running"] = "stopped"

    def starts(self, enabled: bool | None) -> bool:
        """Whether a schedule or sensor with this ``enabled`` (None: not said) starts running."""
        return enabled if enabled is not None else self.default_status == "running"


class AlertsRuntime(Strict):
    webhook_url: str | None = None


class Runtime(Strict):
    spark: SparkRuntime = Field(default_factory=SparkRuntime)
    openlineage: OpenLineageRuntime = Field(default_factory=OpenLineageRuntime)
    kafka: KafkaRuntime | None = None
    schema_registry: SchemaRegistryRuntime | None = None
    flink: FlinkRuntime | None = None
    connect: ConnectRuntime | None = None
    conduktor: ConduktorRuntime | None = None
    alerts: AlertsRuntime = Field(default_factory=AlertsRuntime)
    automations: AutomationsRuntime = Field(default_factory=AutomationsRuntime)
    # when the `<project>_source_freshness` schedule runs the source freshness checks
    freshness_checks_cron: str = "*/15 * * * *"

    @field_validator("freshness_checks_cron")
    @classmethod
    def _cron(cls, v: str) -> str:
        from croniter import croniter

        if len(v.split()) != 5 or not croniter.is_valid(v):
            raise ValueError(f"invalid cron expression {v!r}; use five fields, e.g. \"*/15 * * * *\"")
        return v
