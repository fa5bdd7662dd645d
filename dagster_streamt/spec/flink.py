"""``advanced.flink``: streamt's Flink job settings, every documented key (including the ones streamt
marks as planned), typed so a misspelt key is caught.

On Spark, ``parallelism`` sets the model's shuffle partitions, ``state_backend: rocksdb`` picks
Spark's RocksDB state store, and the checkpoint interval paces continuous mode; the rest is kept for
streamt compatibility (see :mod:`.compat`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Strict


class ExternalizedCheckpoints(Strict):
    enabled: bool | None = None
    cleanup: str | None = None


class UnalignedCheckpoints(Strict):
    enabled: bool | None = None


class CheckpointSettings(Strict):
    interval_ms: int | None = Field(default=None, ge=1)
    timeout_ms: int | None = Field(default=None, ge=1)
    min_pause_ms: int | None = Field(default=None, ge=0)
    max_concurrent: int | None = Field(default=None, ge=1)
    mode: Literal["exactly_once", "at_least_once"] | None = None
    incremental: bool | None = None
    externalized: ExternalizedCheckpoints | None = None
    unaligned: UnalignedCheckpoints | None = None


class IncrementalCleanup(Strict):
    enabled: bool | None = None
    records_per_cleanup: int | None = Field(default=None, ge=1)


class RocksDbSettings(Strict):
    block_cache_size_mb: int | None = Field(default=None, ge=1)
    max_write_buffer_number: int | None = Field(default=None, ge=1)
    predefined_options: str | None = None
    write_buffer_size_mb: int | None = Field(default=None, ge=1)


class StateSettings(Strict):
    backend: Literal["hashmap", "rocksdb"] | None = None
    ttl_ms: int | None = Field(default=None, ge=0)
    incremental_cleanup: IncrementalCleanup | None = None
    rocksdb: RocksDbSettings | None = None


class FixedDelay(Strict):
    attempts: int | None = Field(default=None, ge=0)
    delay_ms: int | None = Field(default=None, ge=0)


class ExponentialDelay(Strict):
    initial_delay_ms: int | None = Field(default=None, ge=0)
    max_delay_ms: int | None = Field(default=None, ge=0)
    multiplier: float | None = Field(default=None, gt=0)


class FailureRate(Strict):
    delay_ms: int | None = Field(default=None, ge=0)
    failure_interval_ms: int | None = Field(default=None, ge=0)
    max_failures_per_interval: int | None = Field(default=None, ge=0)


class RestartSettings(Strict):
    strategy: str | None = None
    fixed_delay: FixedDelay | None = None
    exponential_delay: ExponentialDelay | None = None
    failure_rate: FailureRate | None = None


class ManagerResources(Strict):
    cpu_cores: float | None = Field(default=None, gt=0)
    memory_mb: int | None = Field(default=None, ge=1)
    slots: int | None = Field(default=None, ge=1)


class ResourceSettings(Strict):
    job_manager: ManagerResources | None = None
    task_manager: ManagerResources | None = None


class SavepointSettings(Strict):
    enabled: bool | None = None
    on_cancel: str | None = None
    on_upgrade: str | None = None
    path: str | None = None


class FlinkJob(Strict):
    parallelism: int | None = Field(default=None, ge=1)
    checkpoint_interval_ms: int | None = Field(default=None, ge=1)
    checkpoint_interval: int | None = Field(default=None, ge=1)  # milliseconds, the examples' spelling
    checkpoint_timeout: int | None = Field(default=None, ge=1)
    checkpoint_timeout_ms: int | None = Field(default=None, ge=1)
    checkpoint_min_pause_ms: int | None = Field(default=None, ge=0)
    max_concurrent_checkpoints: int | None = Field(default=None, ge=1)
    state_backend: Literal["hashmap", "rocksdb"] | None = None
    state_ttl_ms: int | None = Field(default=None, ge=0)
    restart_strategy: str | None = None
    cluster: str | None = None
    checkpoint: CheckpointSettings | None = None
    state: StateSettings | None = None
    restart: RestartSettings | None = None
    resources: ResourceSettings | None = None
    savepoint: SavepointSettings | None = None

    @property
    def interval_ms(self) -> int | None:
        """The checkpoint interval whichever way streamt spelled it."""
        nested = self.checkpoint.interval_ms if self.checkpoint else None
        return self.checkpoint_interval_ms or self.checkpoint_interval or nested

    @property
    def backend(self) -> str | None:
        return self.state_backend or (self.state.backend if self.state else None)
