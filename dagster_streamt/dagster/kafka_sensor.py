"""Kafka sources in Dagster: a new-data sensor on the topic's end offsets, and offsets and lag as
observations of the source's asset.

The ``<source>_new_data`` sensor of a Kafka source (with a broker: ``runtime.kafka.bootstrap_servers``
and no ``local_dir``) reads the end offsets of its topics each tick. When any partition moved past
the cursor (the JSON of the end offsets it last saw), it requests ONE run of the stream models the
source feeds and of every model downstream of them, keyed by the offsets: a retried tick asks for
the same run key, which Dagster drops. Each tick that finds the offsets or the lag changed records an
observation on the source's asset with ``kafka/end_offsets`` (per topic and partition) and
``kafka/lag`` (records the furthest-behind stream still has to read), so the asset page charts them.
The source's asset is also observable ("Observe" in the UI) with the same metadata. New records are
also reported as an update of the source (:mod:`.source_updates`), which Dagster's freshness reads.

No `from __future__ import annotations`: Dagster reads the runtime type hints of sensor functions.
"""

import hashlib
import json
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
from dagster import SensorEvaluationContext

from ..api import LoadedProject
from ..core import metadata as meta
from ..kafka.admin import KafkaAdminError
from ..kafka.lag import TIMEOUT, Offsets, SourceLag, broker_settings, kafka_sources, offsets_json, source_lag
from ..spec.models import Source
from ..spec.names import safe_identifier
from .key_map import KeyMap
from .new_data_sensor import new_data_sensor
from .run_history import md_value
from .source_updates import instance_of, source_states, update_events

NEW_RECORDS_TAG = "streamt/new_records"  # how many records arrived since the cursor
END_OFFSETS, LAG = "kafka/end_offsets", "kafka/lag"


def read_cursor(cursor: str | None) -> Offsets:
    """The end offsets a cursor holds; an unreadable cursor counts as empty (the run key still dedupes)."""
    try:
        raw = json.loads(cursor) if cursor else {}
        return {str(t): {int(p): int(o) for p, o in parts.items()} for t, parts in raw.items()}
    except (ValueError, TypeError, AttributeError):
        return {}


def write_cursor(end: Mapping[str, Mapping[int, int]]) -> str:
    return json.dumps(offsets_json(end), sort_keys=True, separators=(",", ":"))


def new_records(before: Offsets, end: Offsets) -> int:
    """Records past the cursor: per partition, how far its end offset moved (a partition the cursor does
    not know counts from 0; an end offset that went back, a recreated topic, counts nothing)."""
    return sum(max(o - before.get(t, {}).get(p, 0), 0) for t, parts in end.items() for p, o in parts.items())


def run_key(source: str, end: Offsets) -> str:
    """A stable hash of the offsets: the same end offsets always give the same key."""
    digest = hashlib.sha256(json.dumps([source, offsets_json(end)], sort_keys=True,
                                       separators=(",", ":")).encode()).hexdigest()
    return f"{source}:{digest[:32]}"


def lag_metadata(lag: SourceLag) -> dict[str, Any]:
    """The observation's metadata: end offsets per topic and partition, total and per-reader lag."""
    md: dict[str, Any] = {END_OFFSETS: dg.MetadataValue.json(offsets_json(lag.end_offsets)),
                          "kafka/messages": lag.messages, "kafka/mode": lag.mode}
    if lag.lag is not None:
        md[LAG] = lag.lag
    if lag.readers:
        md["kafka/lag_by_reader"] = dg.MetadataValue.json(
            {r.reader: {"batch": r.batch, "lag": r.total,
                        "partitions": {f"{p.topic}/{p.partition}": p.lag for p in r.partitions}}
             for r in lag.readers})
    return md


def _observed(md: Mapping[str, Any]) -> tuple[Any, Any]:
    """(end offsets, lag) of observation metadata, comparable across recorded and new events."""
    return md_value(md, END_OFFSETS), md_value(md, LAG)


def _changed(context: SensorEvaluationContext, key: dg.AssetKey, md: Mapping[str, Any]) -> bool:
    """Whether the offsets or lag differ from the asset's latest observation (record only changes: an
    idle topic does not add an event per tick)."""
    try:
        records = context.instance.fetch_observations(key, limit=1).records
    except Exception:  # no instance (a bare test context) or storage trouble: observe anyway
        return True
    if not records or records[0].asset_observation is None:
        return True
    return _observed(records[0].asset_observation.metadata) != _observed(md)


def build_kafka_sensor(loaded: LoadedProject, key_map: KeyMap, source: Source) -> dg.SensorDefinition:
    asset = key_map.sources.get(source.name)
    topics = source.topic or source.options.get("subscribe", "")
    models, keys, sensor = new_data_sensor(loaded, key_map, source,
                                           f"New records in Kafka topic {topics} (end offsets past the cursor)")

    @sensor
    def new_data(context: SensorEvaluationContext) -> dg.SensorResult:
        broker = broker_settings(loaded.project)
        if broker is None:
            return dg.SensorResult(skip_reason="no Kafka broker configured (runtime.kafka)")
        try:
            lag = source_lag(loaded, source, *broker, timeout=TIMEOUT)
        except KafkaAdminError as exc:  # cursor kept: retried next tick
            return dg.SensorResult(skip_reason=f"cannot read the offsets of source {source.name}: {exc}")
        if lag.error:
            return dg.SensorResult(skip_reason=lag.error)
        events: list[dg.AssetObservation | dg.AssetMaterialization] = []
        md = lag_metadata(lag)
        if asset is not None and _changed(context, asset, md):
            events.append(dg.AssetObservation(asset_key=asset, metadata=md))
        before = read_cursor(context.cursor)
        cursor = write_cursor(lag.end_offsets)
        arrived = new_records(before, lag.end_offsets)
        if not arrived:
            return dg.SensorResult(skip_reason="no new records", cursor=cursor, asset_events=events)
        events += update_events(loaded, key_map, instance_of(context), source_states(loaded, [source.name]),
                                f"sensor {safe_identifier(source.name)}_new_data")
        if not models:
            return dg.SensorResult(cursor=cursor, asset_events=events, skip_reason=(
                f"{arrived} new record(s), but source {source.name} feeds no stream model that can run on new "
                "data (tables re-read the whole topic: put them on a schedule)"))
        request = dg.RunRequest(run_key=run_key(source.name, lag.end_offsets), asset_selection=keys,
                                tags={meta.SOURCE_TAG: source.name, NEW_RECORDS_TAG: str(arrived)})
        context.log.info(f"streamt: {arrived} new record(s) in source {source.name}: running {', '.join(models)}")
        return dg.SensorResult(run_requests=[request], cursor=cursor, asset_events=events)

    return new_data


def build_kafka_sensors(loaded: LoadedProject, key_map: KeyMap,
                        sources: set[str] | None = None) -> list[dg.SensorDefinition]:
    """A new-data sensor per Kafka source, when the project has a broker (local topics have none)."""
    if broker_settings(loaded.project) is None:
        return []
    return [build_kafka_sensor(loaded, key_map, s) for s in kafka_sources(loaded.project)
            if sources is None or s.name in sources]


def observable_kafka_sources(loaded: LoadedProject, specs: list[dg.AssetSpec],
                             key_map: KeyMap) -> list[dg.AssetsDefinition | dg.AssetSpec]:
    """``specs`` with each Kafka source's spec made observable: observing it records its offsets and
    lag (the broker is asked then; a broker that does not answer fails the observation, saying why)."""
    if broker_settings(loaded.project) is None:
        return list(specs)
    by_key = {key_map.sources[s.name]: s for s in kafka_sources(loaded.project) if s.name in key_map.sources}
    return [_observable(loaded, by_key[spec.key], spec) if spec.key in by_key else spec for spec in specs]


def _observable(loaded: LoadedProject, source: Source, spec: dg.AssetSpec) -> dg.AssetsDefinition:
    name = f"{loaded.project.ident}_{safe_identifier(source.name)}_kafka_offsets"

    def observe() -> Iterator[dg.ObserveResult]:
        broker = broker_settings(loaded.project)
        assert broker is not None
        try:
            lag = source_lag(loaded, source, *broker, timeout=TIMEOUT)
        except KafkaAdminError as exc:
            raise dg.Failure(f"source {source.name}: {exc}") from None
        if lag.error:
            raise dg.Failure(f"source {source.name}: {lag.error}")
        yield dg.ObserveResult(asset_key=spec.key, metadata=lag_metadata(lag))

    with warnings.catch_warnings():  # beta in Dagster 1.13: not worth a warning at every code location load
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.multi_observable_source_asset(specs=[spec], name=name)(observe)
