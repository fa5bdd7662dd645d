"""Where lineage goes, and getting it there even when the backend is down.

Configuration, first found wins:

1. ``runtime.openlineage.transport`` written in the project (``environments/*.yml`` overlays it
   per deployment, ``${VAR}`` interpolation works there);
2. ``openlineage.yml`` in the project directory, then the file named by ``$OPENLINEAGE_CONFIG``
   (openlineage-python's format: a ``transport:`` key);
3. ``OPENLINEAGE__TRANSPORT__*`` variables, then ``OPENLINEAGE_URL`` (+ ``OPENLINEAGE_ENDPOINT``,
   ``OPENLINEAGE_API_KEY``), read as openlineage-python reads them;
4. a JSON-lines file at ``.streamt/openlineage.jsonl``.

``runtime.openlineage.enabled: false`` or ``OPENLINEAGE_DISABLED=true`` turn it off. Types: ``file``
(relative paths resolve against the project, one appended JSON-lines file by default), ``console``,
``http`` (``url``, ``endpoint``; ``auth: {type: api_key, api_key_env: VAR}`` reads the key from the
environment when sending, so it is never stored in the project cache), ``composite`` (each child
is its own leg with its own queue: a dead HTTP backend does not hold back the file copy). Any
other openlineage-python transport type is passed to its factory as is.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from openlineage.client.transport import get_default_factory
from openlineage.client.transport.transport import Transport

from ..spec.project import Project
from .events import to_dict
from .outbox import LegState, Outbox

DEFAULT_FILE = ".streamt/openlineage.jsonl"
STATE_DIR = ".streamt/openlineage"
ENV_PREFIX = "OPENLINEAGE__"
# The backend says the event itself is bad: retrying cannot help, so it is set aside, not retried.
PERMANENT_HTTP = frozenset({400, 413, 415, 422})


def state_dir(project: Project) -> Path:
    return project.root.resolve() / STATE_DIR


# -- configuration -------------------------------------------------------------------------------
def resolve_transport_config(project: Project, env: Mapping[str, str] | None = None) -> tuple[dict[str, Any], str]:
    """(transport config with absolute paths, where it came from)."""
    env = os.environ if env is None else env
    ol = project.runtime.openlineage
    if not ol.enabled or env.get("OPENLINEAGE_DISABLED", "").strip().lower() == "true":
        return {"type": "noop"}, "disabled"
    root = project.root.resolve()
    if "transport" in ol.model_fields_set and ol.transport:
        return normalize(dict(ol.transport), root), "runtime.openlineage"
    named = env.get("OPENLINEAGE_CONFIG")
    for path, origin in ((root / "openlineage.yml", "openlineage.yml"),
                         (Path(named) if named else None, "$OPENLINEAGE_CONFIG")):
        if path is not None and path.is_file():
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            if isinstance(doc, dict) and isinstance(doc.get("transport"), dict):
                return normalize(doc["transport"], root), origin
    from_env = _env_config(env).get("transport")
    if isinstance(from_env, dict) and from_env.get("type"):
        return normalize(from_env, root), "OPENLINEAGE__TRANSPORT"
    if env.get("OPENLINEAGE_URL"):
        http: dict[str, Any] = {"type": "http", "url": env["OPENLINEAGE_URL"],
                                "endpoint": env.get("OPENLINEAGE_ENDPOINT", "api/v1/lineage")}
        if env.get("OPENLINEAGE_API_KEY"):
            http["auth"] = {"type": "api_key", "api_key_env": "OPENLINEAGE_API_KEY"}
        return normalize(http, root), "OPENLINEAGE_URL"
    return normalize({"type": "file"}, root), "default"


def _env_config(env: Mapping[str, str]) -> dict[str, Any]:
    """``OPENLINEAGE__TRANSPORT__URL=...`` -> {"transport": {"url": ...}}; values parsed as JSON when
    they are JSON (openlineage-python's rule), keys lower-cased."""
    config: dict[str, Any] = {}
    for key, raw in sorted(env.items(), reverse=True):
        if not key.startswith(ENV_PREFIX):
            continue
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        node = config
        *parents, last = [k.lower() for k in key[len(ENV_PREFIX):].split("__")]
        for k in parents:
            node = node.setdefault(k, {})
        node[last] = value
    return config


def normalize(config: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """Fill defaults and make paths absolute; secrets stay as env var names until send time."""
    out = copy.deepcopy(dict(config))
    kind = out.get("type")
    if kind == "file":
        path = Path(str(out.get("log_file_path") or DEFAULT_FILE)).expanduser()
        out["log_file_path"] = str(path if path.is_absolute() or "://" in str(path) else root / path)
        out.setdefault("append", True)
    elif kind == "http":
        out.setdefault("retry", {"total": 0})  # the outbox retries, with backoff across sensor ticks
    elif kind == "composite":
        children = out.get("transports") or []
        if isinstance(children, dict):
            out["transports"] = {k: normalize(v, root) for k, v in children.items()}
        else:
            out["transports"] = [normalize(v, root) for v in children]
    return out


def legs(config: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Independent delivery legs: the children of a composite (named, or ``<type>_<i>``), else one."""
    if config.get("type") != "composite":
        return [(str(config.get("name") or config.get("type") or "default"), dict(config))]
    children = config.get("transports") or []
    items = list(children.items()) if isinstance(children, dict) else \
        [(str(c.get("name") or f"{c.get('type')}_{i}"), c) for i, c in enumerate(children)]
    return [(name, dict(c)) for name, c in items if c]


def build_transport(config: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Transport:
    """An openlineage-python transport from one leg's config, through its default factory."""
    env = os.environ if env is None else env
    conf = copy.deepcopy(dict(config))
    auth = conf.get("auth")
    if isinstance(auth, dict) and auth.get("api_key_env"):
        name = auth.pop("api_key_env")
        if not env.get(name):
            raise ValueError(f"OpenLineage http auth: environment variable {name} is not set")
        conf["auth"] = {**auth, "type": auth.get("type", "api_key"), "apiKey": env[name]}
    if conf.get("type") == "file":
        Path(conf["log_file_path"]).parent.mkdir(parents=True, exist_ok=True)
    return get_default_factory().create(conf)


# -- delivery ------------------------------------------------------------------------------------
@dataclass
class LegReport:
    name: str
    delivered: int = 0
    rejected: int = 0
    pending: int = 0
    deferred: bool = False  # in backoff: nothing was sent this time
    busy: bool = False  # another process was sending
    last_error: str | None = None
    next_attempt_at: datetime | None = None


@dataclass
class DeliveryReport:
    enqueued: int = 0
    legs: list[LegReport] = field(default_factory=list)

    @property
    def delivered(self) -> int:
        return sum(leg.delivered for leg in self.legs)

    @property
    def pending(self) -> int:
        return sum(leg.pending for leg in self.legs)

    @property
    def rejected(self) -> int:
        return sum(leg.rejected for leg in self.legs)

    @property
    def next_attempt_at(self) -> datetime | None:
        times = [leg.next_attempt_at for leg in self.legs if leg.pending and leg.next_attempt_at]
        return min(times) if times else None

    @property
    def ok(self) -> bool:
        return self.pending == 0


def backoff_seconds(failures: int, base: float = 1.0, cap: float = 300.0) -> float:
    """1 s, 2 s, 4 s ... capped at 5 minutes."""
    return min(cap, base * 2 ** max(0, failures - 1))


def _permanent(exc: BaseException) -> bool:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None) in PERMANENT_HTTP


def emit_all(events: Iterable[Any], transport_config: Mapping[str, Any], state_dir: str | Path, *,
             now: float | None = None, force: bool = False, backoff_base: float = 1.0,
             backoff_cap: float = 300.0) -> DeliveryReport:
    """Queue ``events`` (dicts or openlineage-python events) durably, then send every pending event
    of every leg in order. A failure stops that leg, records the error and the next attempt time
    (exponential backoff); a later call, e.g. the next sensor tick with no new events, resumes. Calls
    before that time only queue, unless ``force``."""
    clock = time.time() if now is None else now
    lines = [json.dumps(e if isinstance(e, dict) else to_dict(e), sort_keys=True, separators=(",", ":"))
             for e in events]
    report = DeliveryReport(enqueued=len(lines))
    for name, conf in legs(transport_config):
        if conf.get("type") == "noop":
            continue
        box = Outbox(state_dir, name)
        box.append(lines)
        report.legs.append(_drain(box, name, conf, clock, force, backoff_base, backoff_cap))
    return report


def _drain(box: Outbox, name: str, conf: dict[str, Any], now: float, force: bool, base: float,
           cap: float) -> LegReport:
    leg = LegReport(name)
    with box.draining() as held:
        state = box.read_state()
        if not held:
            leg.busy = True
        elif state.failures and now < state.next_attempt_at and not force:
            leg.deferred = True
        else:
            _send(box, conf, state, leg, now, base, cap)
            state = box.retire_if_done(state)
        leg.pending = box.count_pending(state)
        leg.last_error = state.last_error
        if state.failures:
            leg.next_attempt_at = datetime.fromtimestamp(state.next_attempt_at, tz=UTC)
    return leg


def _send(box: Outbox, conf: dict[str, Any], state: LegState, leg: LegReport, now: float, base: float,
          cap: float) -> None:
    transport: Transport | None = None
    try:
        for end, line in box.pending(state):
            if transport is None:
                transport = build_transport(conf)
            try:
                transport.emit(json.loads(line))
            except Exception as exc:
                if not _permanent(exc):
                    raise
                box.reject(line)
                leg.rejected += 1
                state.rejected_total += 1
            else:
                leg.delivered += 1
                state.delivered_total += 1
            state.offset, state.failures, state.last_error, state.next_attempt_at = end, 0, None, 0.0
            box.write_state(state)
    except Exception as exc:  # the backend or the config: keep the event, retry later
        state.failures += 1
        state.last_error = f"{type(exc).__name__}: {exc}"[:500]
        state.next_attempt_at = now + backoff_seconds(state.failures, base, cap)
        box.write_state(state)
    finally:
        if transport is not None:
            transport.close()
