"""Read a project directory into a typed :class:`Project`, collecting every problem on the way.

Order: root file -> environment overlay -> ``.env`` -> entity files (recursive, sorted) ->
variable interpolation -> defaults -> strict validation. Nothing here knows about SQL, Spark or
Dagster; the compiler and graph add their own checks on top.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .column_tests import column_tests
from .compat import NOTE_KEYS, KeyMeaning, note_for, walk_keys
from .environments import ENV_DIR, available, check_environment, env_file, resolve_env_name
from .envvars import EnvResolver, is_secret_key, project_dotenv, walk_strings
from .errors import Diagnostics, Severity
from .governance import EnvironmentInfo, Safety
from .models import KIND_OF_SECTION, LEGACY_MATERIALIZATIONS, SECTION_MODELS, Defaults, ProjectInfo, Rules, Runtime
from .names import check_names
from .project import EntityLocation, Project
from .schema_types import effective_columns
from .suggest import did_you_mean
from .validate import validate_model
from .yaml_loader import LineMap, load_yaml

ROOT_FILES = ("stream_project.yml", "stream_project.yaml")
ENTITY_DIRS = ("sources", "models", "tests", "exposures")
SECTIONS = ("sources", "models", "tests", "exposures", "schedules")
# `governance:` is free-form in streamt (its parser ignores it; `rules:` is what it checks)
ROOT_KEYS = ("apiVersion", "project", "runtime", "defaults", "rules", "vars", "governance", *SECTIONS)
API_VERSIONS = ("streamt.dev/v1alpha1",)
ENV_KEYS = ("runtime", "defaults", "rules", "vars")
ENV_FILE_KEYS = (*ENV_KEYS, "environment", "safety")  # streamt's environment header and deploy guards
MATERIALIZATIONS = ("table", "view", "stream", "sink")


def find_root_file(project_dir: Path) -> Path | None:
    return next((project_dir / name for name in ROOT_FILES if (project_dir / name).is_file()), None)


def project_files(project_dir: Path) -> list[Path]:
    """Root file plus every YAML file under the entity folders, recursively, in sorted order."""
    root = find_root_file(project_dir)
    files = [root] if root else []
    for d in ENTITY_DIRS:
        base = project_dir / d
        if base.is_dir():
            files.extend(sorted(p for p in base.rglob("*") if p.suffix in (".yml", ".yaml") and p.is_file()))
    return files


class _Loader:
    def __init__(self, project_dir: Path, env: str | None, environ: dict[str, str] | None) -> None:
        self.root = project_dir
        self.env = resolve_env_name(env, project_dir)
        self.diags = Diagnostics()
        self.environ = environ
        self.hashes: dict[str, str] = {}
        self.resolver: EnvResolver
        self.missing: list[tuple[str, str, int, tuple[str | int, ...]]] = []  # (variable, file, line, key path)
        self.notes: dict[KeyMeaning, list[tuple[str, int]]] = {}  # streamt keys with no effect, where used
        self.legacy: dict[str, list[tuple[str, str, int]]] = {}  # streamt materialization -> models using it
        self.inferred: dict[str, str] = {}  # model -> why its materialization was inferred from the YAML

    # -- files ---------------------------------------------------------------------------
    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def read(self, path: Path) -> tuple[Any, LineMap] | None:
        rel = self.rel(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            self.diags.add("STR004", f"cannot read file: {exc.strerror}", file=rel, hint="check permissions")
            return None
        self.hashes[rel] = hashlib.sha256(raw).hexdigest()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.diags.add("STR004", f"file is not UTF-8 text ({exc.reason} at byte {exc.start})",
                           file=rel, hint="save the file as UTF-8")
            return None
        loaded = load_yaml(text, rel, self.diags)
        if loaded is not None and isinstance(loaded[0], dict):
            self._scan_notes(loaded[0], loaded[1])
        return loaded

    def _scan_notes(self, data: dict[str, Any], lm: LineMap) -> None:
        """Record where each kind of no-effect streamt key is used (its outermost occurrences)."""
        for path in walk_keys(data):
            entry = note_for(path)
            if entry is not None and note_for(path[:-1]) is not entry:
                self.notes.setdefault(entry, []).append((lm.file, lm.line(path)))

    def _emit_notes(self) -> None:
        for entry in NOTE_KEYS:
            where = sorted(self.notes.get(entry, []))
            if not where:
                continue
            more = f" (and {len(where) - 1} more place{'s' if len(where) > 2 else ''})" if len(where) > 1 else ""
            self.diags.add("STR042", f"`{entry.pattern}`{more} is kept for streamt compatibility and has no "
                           f"effect on Spark: {entry.text}", file=where[0][0], line=where[0][1],
                           severity=Severity.NOTE, hint="nothing to do; remove the key if the project no longer "
                           "runs on streamt")
        for mat, models in sorted(self.legacy.items()):
            names = ", ".join(sorted(n for n, _, _ in models))
            file, line = sorted((f, ln) for _, f, ln in models)[0]
            self.diags.add("STR041", f"streamt materialization {mat!r} runs as {LEGACY_MATERIALIZATIONS[mat]!r} on "
                           f"Spark (models: {names})", file=file, line=line, severity=Severity.NOTE,
                           hint=f"write `materialized: {LEGACY_MATERIALIZATIONS[mat]}` to silence this note")

    # -- main ------------------------------------------------------------------------------
    def load(self) -> Project | None:
        if not self.root.is_dir():
            self.diags.add("STR003", f"project directory not found: {self.root}",
                           file=str(self.root), hint="pass the folder holding stream_project.yml with -p")
            return None
        root_file = find_root_file(self.root)
        if root_file is None:
            self.diags.add("STR003", "no stream_project.yml (or .yaml) in the project directory",
                           file=str(self.root), hint="create stream_project.yml or pass the right folder with -p")
            return None
        self.resolver = EnvResolver(project_dotenv(self.root, self.env), self.environ)

        loaded = self.read(root_file)
        root_data, root_lm = loaded if loaded else (None, LineMap(self.rel(root_file)))
        if root_data is None:
            root_data = {}
        if not isinstance(root_data, dict):
            self.diags.add("STR002", "the root file must be a YAML mapping (project:, sources:, models: ...)",
                           file=root_lm.file, line=1, hint="start the file with `project: {name: ...}`")
            root_data = {}
        self._unknown_keys(root_data, ROOT_KEYS, root_lm, ())
        self._api_version(root_data, root_lm)
        overlay_lm = self._apply_environment(root_data, root_lm)

        # sections: (raw entity, location) from every file
        entities: dict[str, list[tuple[dict[str, Any], EntityLocation]]] = {s: [] for s in SECTIONS}
        self._collect(root_data, root_lm, entities)
        for path in project_files(self.root)[1:]:
            got = self.read(path)
            if got is None or got[0] is None:
                continue
            data, lm = got
            if not isinstance(data, dict):
                self.diags.add("STR002", "an entity file must be a mapping with sources:/models:/tests:/exposures:",
                               file=lm.file, line=1, hint="put entries under a `models:` (or other) list")
                continue
            self._unknown_keys(data, SECTIONS, lm, (), where="an entity file")
            self._collect(data, lm, entities)

        info, runtime, defaults, rules, variables = self._settings(root_data, root_lm, overlay_lm)

        typed: dict[str, dict[str, Any]] = {s: {} for s in SECTIONS}
        locations: dict[tuple[str, str], EntityLocation] = {}
        for section in SECTIONS:
            kind = KIND_OF_SECTION[section]
            if section == "tests":
                entities["tests"].extend(column_tests(typed, locations))
            for raw, loc in entities[section]:
                raw = self._interpolate(raw, loc, section)
                if section == "tests":
                    raw = _test_on_source(raw, typed)
                    size = defaults.tests.sample_size
                    if size and "sample_size" not in raw and raw.get("type", "sample") == "sample":
                        raw = {**raw, "sample_size": size}
                if section == "models":
                    raw = self._model_defaults(raw, loc, defaults)
                if section == "sources" and defaults.sources.format and "format" not in raw and not (
                        "topic" in raw or "table" in raw):
                    raw = {**raw, "format": defaults.sources.format}
                if section == "sources" and defaults.sources.owner and "owner" not in raw:
                    raw = {**raw, "owner": defaults.sources.owner}
                obj = self._validate(SECTION_MODELS[section], raw, loc.linemap, loc.base)
                if obj is None:
                    continue
                if section in ("sources", "models"):
                    obj = self._typed_columns(obj, loc)
                if section == "models" and obj.materialized is None and obj.implied_materialization is not None:
                    mat, why = obj.implied_materialization
                    obj = obj.model_copy(update={"materialized": mat})
                    self.inferred[obj.name] = why
                name = obj.name
                if (kind, name) in locations:
                    first = locations[(kind, name)]
                    self.diags.add("STR020", f"{kind} {name!r} is defined twice (first at {first.file}:{first.line})",
                                   file=loc.file, line=loc.line, hint=f"rename or remove one of the {kind}s")
                    continue
                locations[(kind, name)] = loc
                typed[section][name] = obj
        self._missing_summary(runtime)
        self._emit_notes()
        for section in SECTIONS:
            typed[section] = dict(sorted(typed[section].items()))

        project = Project(
            root=self.root, env=self.env, info=info, runtime=runtime, defaults=defaults, rules=rules,
            vars=variables, sources=typed["sources"], models=typed["models"], tests=typed["tests"],
            exposures=typed["exposures"], schedules=typed["schedules"], locations=locations,
            secrets=set(self.resolver.secrets), env_used=dict(sorted(self.resolver.used.items())),
            file_hashes=dict(sorted(self.hashes.items())),
            legacy_materializations={n: mat for mat, ms in self.legacy.items() for n, _, _ in ms},
            inferred=dict(sorted(self.inferred.items())),
        )
        self.diags.extend(check_names(project))
        return project

    def _typed_columns(self, node: Any, loc: EntityLocation) -> Any:
        """Column types as Spark types (Flink's ``TIMESTAMP(3)`` is ``timestamp``), plus the fields of an
        inline ``schema.definition``: every later layer reads one spelling."""
        columns, problems = effective_columns(node.columns, getattr(node, "schema_", None))
        for path, message in problems:
            self.diags.add("STR012", f"{KIND_OF_SECTION[str(loc.base[0])]} {node.name!r}: {message}", file=loc.file,
                           line=loc.line_of(*path), hint="fix the type or the inline schema")
        return node.model_copy(update={"columns": columns}) if columns != node.columns else node

    # -- pieces ----------------------------------------------------------------------------
    def _api_version(self, root_data: dict[str, Any], lm: LineMap) -> None:
        version = root_data.get("apiVersion")
        if version is not None and version not in API_VERSIONS:
            self.diags.add("STR012", f"unsupported apiVersion {version!r}", file=lm.file,
                           line=lm.line(("apiVersion",)), hint=f"write `apiVersion: {API_VERSIONS[-1]}` or leave "
                           "it out (streamt's alpha format)")

    def _apply_environment(self, root_data: dict[str, Any], root_lm: LineMap) -> LineMap | None:
        if not check_environment(self.root, self.env, root_data, self.diags, root_lm.file) or not self.env:
            return None
        path = env_file(self.root, self.env)
        if path is None:
            known = available(self.root)
            hint = f"available environments: {', '.join(known)}" if known else "create environments/<env>.yml"
            self.diags.add("STR004", f"environment {self.env!r} not found (environments/{self.env}.yml)",
                           file=ENV_DIR, hint=hint)
            return None
        got = self.read(path)
        if got is None or got[0] is None:
            return None
        data, lm = got
        if not isinstance(data, dict):
            self.diags.add("STR002", "an environment file must be a mapping (runtime:, defaults:, rules:, vars:)",
                           file=lm.file, line=1, hint="put overrides under `runtime:` and friends")
            return None
        self._unknown_keys(data, ENV_FILE_KEYS, lm, (), where="an environment file")
        header = self._validate(EnvironmentInfo, data.get("environment") or {}, lm, ("environment",))
        self._validate(Safety, data.get("safety") or {}, lm, ("safety",))
        if header is not None and header.name is not None and header.name != self.env:
            self.diags.add("STR012", f"environment file {self.rel(path)} says `name: {header.name}`, but it is "
                           f"loaded as environment {self.env!r}", file=lm.file, line=lm.line(("environment", "name")),
                           hint=f"set `name: {self.env}` or rename the file to environments/{header.name}.yml")
        for key in ENV_KEYS:
            if key in data:
                root_data[key] = _deep_merge(root_data.get(key), data[key])
        return lm

    def _collect(self, data: dict[str, Any], lm: LineMap,
                 out: dict[str, list[tuple[dict[str, Any], EntityLocation]]]) -> None:
        for section in SECTIONS:
            items = data.get(section)
            if items is None:
                continue
            if not isinstance(items, list):
                self.diags.add("STR002", f"`{section}:` must be a list of entries (each starting with `- name:`)",
                               file=lm.file, line=lm.line((section,)), hint=f"write `{section}:` then `  - name: ...`")
                continue
            for i, item in enumerate(items):
                if not isinstance(item, dict):
                    self.diags.add("STR002", f"each entry of `{section}:` must be a mapping, got {type(item).__name__}",
                                   file=lm.file, line=lm.line((section, i)), hint="start the entry with `- name: ...`")
                    continue
                out[section].append((item, EntityLocation(lm.file, (section, i), lm)))

    def _interpolate(self, raw: dict[str, Any], loc: EntityLocation, section: str) -> dict[str, Any]:
        def fn(text: str, path: tuple[str | int, ...]) -> str:
            is_sql = section == "models" and path[-1:] == ("sql",)
            out, missing = self.resolver.interpolate(text, jinja=not is_sql)
            unused = note_for((*loc.base, *path)) if missing else None
            for name in missing:
                line = loc.linemap.line((*loc.base, *path))
                if section == "tests" and "on_failure" in path:
                    self.diags.add("STR030", f"environment variable {name} is not set: this test's alert cannot "
                                   "be sent", file=loc.file, line=line, severity=Severity.WARNING,
                                   hint=f"export {name} (or add it to .env) where the pipeline runs")
                elif unused is None:
                    self.missing.append((name, loc.file, line, (*loc.base, *path)))
                else:
                    self.diags.add("STR030", f"environment variable {name} is not set (used by `{unused.pattern}`, "
                                   "which has no effect on Spark)", file=loc.file, line=line,
                                   severity=Severity.NOTE, hint="nothing to do on Spark; set it for streamt")
            if out and path and is_secret_key(path[-1]):
                self.resolver.secrets.add(out)
            return out

        return walk_strings(raw, (), fn)

    def _missing_summary(self, runtime: Runtime) -> None:
        local = runtime.kafka is not None and runtime.kafka.local_dir is not None
        missing = []
        for name, file, line, path in self.missing:
            if local and _broker_only(path):
                used = ".".join(map(str, path))
                self.diags.add("STR030", f"environment variable {name} is not set (used by `{used}`, which local mode, "
                               "runtime.kafka.local_dir, does not use)", file=file, line=line,
                               severity=Severity.NOTE, hint="set it where the project runs against Kafka")
            else:
                missing.append((name, file, line))
        names = sorted({m[0] for m in missing})
        for name, file, line in missing:
            self.diags.add("STR030", f"environment variable {name} is not set",
                           file=file, line=line,
                           hint=f"export it or add it to .env (missing: {', '.join(names)}); "
                                "or give a default: ${" + name + ":-value}")

    def _model_defaults(self, raw: dict[str, Any], loc: EntityLocation, defaults: Defaults) -> dict[str, Any]:
        """Apply ``defaults.models``; an omitted materialization stays unset and is inferred from the SQL
        after compiling (streamt's rule), unless ``defaults.models.materialized`` gives one."""
        raw = dict(raw)
        d = defaults.models
        if "materialized" not in raw and d.materialized and raw.get("sql") is not None:
            raw["materialized"] = d.materialized  # a `from:`-only model stays a sink (inferred)
        mat = raw.get("materialized")
        name = str(raw.get("name", "?"))
        if isinstance(mat, str) and mat in LEGACY_MATERIALIZATIONS:
            raw["materialized"] = LEGACY_MATERIALIZATIONS[mat]
            self.legacy.setdefault(mat, []).append((name, loc.file, loc.line_of("materialized")))
        elif mat is not None and (not isinstance(mat, str) or mat not in MATERIALIZATIONS):
            suggestion = did_you_mean(str(mat), (*MATERIALIZATIONS, *LEGACY_MATERIALIZATIONS))
            self.diags.add("STR040", f"model {name!r}: unknown materialization {mat!r}", file=loc.file,
                           line=loc.line_of("materialized"),
                           hint=(suggestion + " " if suggestion else "") + "use one of: table, view, stream, sink "
                           "(or leave it out to infer it from the SQL)")
            raw.pop("materialized")
        if d.owner and "owner" not in raw:
            raw["owner"] = d.owner
        if d.group and "group" not in raw:
            raw["group"] = d.group
        if d.tags:
            tags = raw.get("tags") or []
            if isinstance(tags, list):
                raw["tags"] = sorted({*map(str, tags), *d.tags})
        return raw

    def _settings(self, data: dict[str, Any], lm: LineMap, overlay: LineMap | None) -> tuple[
            ProjectInfo, Runtime, Defaults, Rules, dict[str, Any]]:
        env_part: dict[str, Any] = {k: data[k] for k in ("runtime", "defaults", "rules") if k in data}
        env_loc = EntityLocation(lm.file, (), lm)
        env_part = self._interpolate(env_part, env_loc, "settings")
        if "project" not in data:
            self.diags.add("STR011", "missing `project:` section", file=lm.file, line=1,
                           hint="add `project: {name: my_project}` at the top of the root file")
        info = self._validate(ProjectInfo, self._interpolate({"v": data.get("project") or {"name": "unnamed"}},
                                                             env_loc, "settings")["v"], lm, ("project",))
        runtime = self._validate(Runtime, env_part.get("runtime") or {}, overlay or lm, ("runtime",), lm)
        defaults = self._validate(Defaults, env_part.get("defaults") or {}, overlay or lm, ("defaults",), lm)
        rules = self._validate(Rules, env_part.get("rules") or {}, overlay or lm, ("rules",), lm)
        variables = data.get("vars") or {}
        if not isinstance(variables, dict):
            self.diags.add("STR012", "`vars:` must be a mapping of names to values", file=lm.file,
                           line=lm.line(("vars",)), hint="write `vars: {region: eu}`")
            variables = {}
        return (info or ProjectInfo(name="unnamed"), runtime or Runtime(), defaults or Defaults(),
                rules or Rules(), variables)

    def _unknown_keys(self, data: dict[str, Any], allowed: tuple[str, ...], lm: LineMap,
                      base: tuple[str | int, ...], where: str = "the root file") -> None:
        for key in data:
            if key not in allowed:
                hint = did_you_mean(str(key), allowed) or f"allowed here: {', '.join(allowed)}"
                self.diags.add("STR010", f"unknown key {key!r} in {where}", file=lm.file,
                               line=lm.line((*base, key)), hint=hint)

    def _validate(self, cls: type[BaseModel], raw: Any, lm: LineMap, base: tuple[str | int, ...],
                  fallback: LineMap | None = None) -> Any:
        return validate_model(self.diags, cls, raw, lm, base, fallback)


def _broker_only(path: tuple[str | int, ...]) -> bool:
    """Settings local mode does not use: the broker's connection and Kafka Connect connectors."""
    keys = tuple(str(p) for p in path if not isinstance(p, int))
    return (keys[:2] == ("runtime", "kafka") and keys[2:3] != ("local_dir",)) or (
        keys[:1] == ("models",) and ("connector" in keys or keys[1:3] in (("sink", "config"), ("advanced", "sink"))))


def _test_on_source(raw: dict[str, Any], typed: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """streamt writes ``model: <source name>`` for a test on a source: read it as ``source:``."""
    target = raw.get("model")
    if isinstance(target, str) and "source" not in raw and target not in typed["models"] \
            and target in typed["sources"]:
        raw = {k: v for k, v in raw.items() if k != "model"}
        raw["source"] = target
    return raw


def _deep_merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _deep_merge(base.get(k), v) for k, v in over.items()}}
    return over


def load_project(project_dir: str | Path, env: str | None = None,
                 environ: dict[str, str] | None = None) -> tuple[Project | None, Diagnostics]:
    """Load and validate the project's YAML. Never raises for bad input: problems are diagnostics."""
    loader = _Loader(Path(project_dir).resolve(), env, environ)
    try:
        project = loader.load()
    except RecursionError:
        loader.diags.add("STR002", "project structure is nested too deeply", file=str(project_dir),
                         hint="flatten the YAML")
        project = None
    return project, loader.diags
