"""New-data sensors: one ``<source>_new_data`` sensor per file source, stopped until turned on (in the UI,
by ``sensor: {enabled: true}`` or ``runtime.automations.default_status: running``).

Each tick lists the source's data files and compares them with the cursor (``{path: [size,
mtime_ns]}``); new or grown files are reported as an update of the source (see
:mod:`.source_updates`) and request ONE run of the stream models the source feeds and of every
model downstream of them. The run key hashes exactly that batch of files, so a batch never triggers
two runs (Dagster drops a repeated run key), even when a tick is retried before its cursor is saved.

Kafka, JDBC, table and rate sources have no files to watch: they get no sensor (use ``schedules:``).

No `from __future__ import annotations`: Dagster reads the runtime type hints of sensor functions.
"""

import hashlib
import json
from collections.abc import Callable

import dagster as dg
from dagster import SensorEvaluationContext

from ..api import LoadedProject
from ..core import metadata as meta
from ..graph.graph import split_id
from ..graph.streams import stream_readers
from ..source_files import DataFile, data_files, is_file_source, source_location
from ..spec.models import Source
from ..spec.names import safe_identifier
from .key_map import KeyMap
from .source_updates import instance_of, source_states, update_events

Snapshot = dict[str, tuple[int, int]]  # relative path -> (size, mtime_ns)


def fed_models(loaded: LoadedProject, source: str) -> list[str]:
    """The stream models reading ``source`` (directly or through views), and every model downstream of
    them; without partitioned models (separate assets that need a partition key) or disabled ones.

    Only streams start the selection: a stream run processes exactly the new files, while a table fed
    directly by the source re-reads all of it, which belongs on a schedule."""
    g, models = loaded.graph, loaded.project.models
    streams = {f"model.{name}" for name in stream_readers(g, models, source)}
    ids = sorted(streams | g.downstream_all(streams))
    return [name for kind, name in map(split_id, ids) if kind == "model" and name in models
            and models[name].enabled and models[name].partitioned_by is None and name in loaded.compiled.models]


def read_cursor(cursor: str | None) -> Snapshot:
    """The cursor's snapshot; an unreadable cursor counts as empty (the next run key still dedupes)."""
    try:
        raw = json.loads(cursor) if cursor else {}
        return {str(p): (int(v[0]), int(v[1])) for p, v in raw.items()}
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return {}


def write_cursor(files: list[DataFile]) -> str:
    return json.dumps({f.path: [f.size, f.mtime_ns] for f in files}, sort_keys=True, separators=(",", ":"))


def new_or_grown(before: Snapshot, files: list[DataFile]) -> list[DataFile]:
    """Files not in ``before``, or larger than they were (appended to). Deleted or rewritten-smaller
    files are not new data."""
    return [f for f in files if f.path not in before or f.size > before[f.path][0]]


def run_key(source: str, changed: list[DataFile]) -> str:
    """A stable hash of the batch: the same files (path, size, mtime) always give the same key."""
    entries = sorted((f.path, f.size, f.mtime_ns) for f in changed)
    digest = hashlib.sha256(json.dumps([source, entries], separators=(",", ":")).encode()).hexdigest()
    return f"{source}:{digest[:32]}"


def new_data_sensor(loaded: LoadedProject, key_map: KeyMap, source: Source,
                    watches: str) -> tuple[list[str], list[dg.AssetKey], Callable[..., dg.SensorDefinition]]:
    """The models the ``<source>_new_data`` sensor runs (those of the code location), their keys, and its
    ``@dg.sensor`` decorator; ``watches`` starts its description."""
    models = [m for m in fed_models(loaded, source.name) if m in key_map.assets]
    keys = [key_map.model(m) for m in models]
    config = source.sensor
    target = (f"runs {', '.join(models)}" if models
              else "feeds no stream model, so it never requests a run (schedule table models instead)")
    running = loaded.project.runtime.automations.starts(config.enabled)
    status = dg.DefaultSensorStatus.RUNNING if running else dg.DefaultSensorStatus.STOPPED
    # the watched source is in the selection too, so its asset page lists the sensor among its automations;
    # each run request names only the models
    watched = [key_map.sources[source.name]] if source.name in key_map.sources else []
    sensor = dg.sensor(name=f"{safe_identifier(source.name)}_new_data", default_status=status,
                       minimum_interval_seconds=config.minimum_interval_seconds,
                       asset_selection=[*watched, *keys] or None, description=f"{watches}: {target}.")
    return models, keys, sensor


def build_new_data_sensor(loaded: LoadedProject, key_map: KeyMap, source: Source) -> dg.SensorDefinition:
    location = source_location(loaded.project, source)
    models, keys, sensor = new_data_sensor(loaded, key_map, source, f"New or grown files under {location}")

    @sensor
    def new_data(context: SensorEvaluationContext) -> dg.SensorResult:
        try:
            files = data_files(location)
        except OSError as exc:
            return dg.SensorResult(skip_reason=f"cannot list {location}: {exc}")  # cursor kept: retried next tick
        changed = new_or_grown(read_cursor(context.cursor), files)
        cursor = write_cursor(files)
        if not changed:
            why = "no new files" if location.exists() else f"no new files ({location} does not exist yet)"
            return dg.SensorResult(skip_reason=why, cursor=cursor)
        events = update_events(loaded, key_map, instance_of(context), source_states(loaded, [source.name]),
                               f"sensor {safe_identifier(source.name)}_new_data")
        if not models:
            return dg.SensorResult(cursor=cursor, asset_events=events, skip_reason=(
                f"{len(changed)} new file(s), but source {source.name} feeds no stream model that can run on new "
                "data (tables re-read the whole source: put them on a schedule)"))
        request = dg.RunRequest(run_key=run_key(source.name, changed), asset_selection=keys,
                                tags={meta.SOURCE_TAG: source.name, meta.NEW_FILES_TAG: str(len(changed))})
        context.log.info(f"streamt: {len(changed)} new file(s) in source {source.name}: running {', '.join(models)}")
        return dg.SensorResult(run_requests=[request], cursor=cursor, asset_events=events)

    return new_data


def build_new_data_sensors(loaded: LoadedProject, key_map: KeyMap,
                           sources: set[str] | None = None) -> list[dg.SensorDefinition]:
    return [build_new_data_sensor(loaded, key_map, s) for _, s in sorted(loaded.project.sources.items())
            if is_file_source(s) and (sources is None or s.name in sources)]
