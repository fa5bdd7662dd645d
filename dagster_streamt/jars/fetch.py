"""Jar sets resolved once by Spark's own Ivy, then read from a cache at every session start.

``spark.jars.packages`` is how Spark users get connectors, but Spark resolves it again at each session
start (seconds, and the network every time). So a set is resolved once, the way Spark does it: a JVM
gateway is launched with ``spark.jars.packages`` / ``spark.jars.excludes`` (and the project's own
``spark.jars.ivy``, ``spark.jars.repositories`` or ``spark.jars.ivySettings``), Spark's Ivy resolves and
downloads, and the files it resolved (the gateway's ``spark.jars``) are copied into the cache folder
``${XDG_CACHE_HOME:-~/.cache}/dagster-streamt/jars/<set folder>/``. The folder counts once its
``.complete`` marker (written last, holding the set's stamp) is there; later sessions pass its files as
``spark.jars``: no resolution, no network. A lock per set keeps two processes from resolving it at once.

Where downloads are not allowed, the policy ``cache`` (``runtime.spark.jars`` or ``STREAMT_JARS``) only
reads the cache, filled elsewhere with ``streamt jars fetch``; ``provided`` adds no jars at all (the
platform ships them).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse

from .sets import JarSet, JarsUnavailable, pyspark_jars_dir

Policy = Literal["fetch", "cache", "provided"]
POLICIES: tuple[Policy, ...] = ("fetch", "cache", "provided")
POLICY_ENV = "STREAMT_JARS"
MARKER = ".complete"
# The project's settings for Spark's Ivy that a resolution honours (a mirror, a proxy's settings, its home).
IVY_KEYS = ("spark.jars.ivy", "spark.jars.repositories", "spark.jars.ivySettings")
_ARTIFACT = re.compile(r"-\d[0-9A-Za-z.]*(-[0-9A-Za-z.]+)?\.jar$")


def cache_dir() -> Path:
    """The jar cache, read at each call so that a changed XDG_CACHE_HOME (tests, CI) takes effect."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dagster-streamt" / "jars"


def policy(project_setting: str | None = None) -> Policy:
    """The jar policy in force: ``STREAMT_JARS`` (a machine's rule, e.g. no downloads on a build server)
    over the project's ``runtime.spark.jars``, else ``fetch``."""
    value = os.environ.get(POLICY_ENV) or project_setting or "fetch"
    if value not in POLICIES:
        raise JarsUnavailable(f"{POLICY_ENV}={value!r} is not a jar policy: use one of {', '.join(POLICIES)}")
    return value  # narrowed to Policy by the check above


def artifact(jar_name: str) -> str:
    """``kafka-clients-3.9.2.jar`` -> ``kafka-clients``: a jar's artifact, whatever its version.

    >>> artifact("zstd-jni-1.5.7-17.jar"), artifact("delta-spark_4.2_2.13-4.4.0.jar")
    ('zstd-jni', 'delta-spark_4.2_2.13')
    """
    return _ARTIFACT.sub("", jar_name)


def folder(jar_set: JarSet) -> Path:
    return cache_dir() / jar_set.folder


def cached(jar_set: JarSet) -> list[Path] | None:
    """The set's cached jars, or None when its folder is missing, incomplete or resolved for other
    coordinates."""
    where = folder(jar_set)
    try:
        stamp = (where / MARKER).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    jars = sorted(where.glob("*.jar"))
    return jars if stamp == jar_set.stamp and jars else None


def jars_for(jar_set: JarSet, mode: Policy = "fetch", conf: Mapping[str, str] | None = None,
             report: Callable[[str], None] | None = None) -> list[Path]:
    """The set's jars from the cache; resolved first when missing and ``mode`` is ``fetch``.

    Raises :class:`JarsUnavailable` naming the fix when ``mode`` is ``cache`` and the set is not cached,
    or when Spark's Ivy cannot resolve it."""
    found = cached(jar_set)
    if found:
        return found
    if mode != "fetch":
        raise JarsUnavailable(
            f"{jar_set.what} is not in {folder(jar_set)}, and downloads are off (jar policy `{mode}`): run "
            f"`streamt jars fetch {jar_set.key}` on a machine that reaches Maven Central and copy {cache_dir()} "
            f"here, or set runtime.spark.jars: fetch")
    return resolve(jar_set, conf, report)


@contextmanager
def _locked(jar_set: JarSet) -> Iterator[None]:
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / f".{jar_set.folder}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def resolve(jar_set: JarSet, conf: Mapping[str, str] | None = None,
            report: Callable[[str], None] | None = None, *, force: bool = False) -> list[Path]:
    """Resolve ``jar_set`` with Spark's Ivy and cache it; returns the cached jars. ``conf``: the project's
    Spark conf (its Ivy settings are used); ``force``: resolve even when cached (``streamt jars fetch
    --force``)."""
    say = report or partial(print, file=sys.stderr, flush=True)
    with _locked(jar_set):
        found = cached(jar_set)
        if found and not force:  # cached, or another process resolved it while this one waited
            return found
        say(f"streamt: fetching {jar_set.what} with Spark's Ivy (once; cached in {folder(jar_set)})")
        begin = time.monotonic()
        resolved = _ivy_resolve(jar_set, {k: v for k, v in (conf or {}).items() if k in IVY_KEYS})
        jars = _install(jar_set, resolved)
        say(f"streamt: {jar_set.what}: {len(jars)} jars in {time.monotonic() - begin:.1f} s")
        return jars


def _ivy_resolve(jar_set: JarSet, ivy_conf: Mapping[str, str]) -> list[Path]:
    """The files Spark's Ivy resolves for the set: a gateway JVM launched with ``spark.jars.packages``
    (no SparkContext: spark-submit resolves before the gateway's main starts) reports them as its
    ``spark.jars``."""
    _check_java()
    from pyspark import SparkConf
    from pyspark.errors import PySparkRuntimeError
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf(loadDefaults=False)
    conf.set("spark.jars.packages", ",".join(jar_set.packages))
    if jar_set.excludes:
        conf.set("spark.jars.excludes", ",".join(jar_set.excludes))
    for key, value in sorted(ivy_conf.items()):
        conf.set(key, value)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        try:
            gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
        except PySparkRuntimeError as exc:
            if exc.getCondition() != "JAVA_GATEWAY_EXITED":
                raise
            log.seek(0)
            raise JarsUnavailable(f"Spark's Ivy could not resolve {jar_set.what} "
                                  f"({', '.join(jar_set.packages)}): {_ivy_error(log.read())}") from None
        try:
            listed = gateway.jvm.org.apache.spark.SparkConf().get("spark.jars", "")
        finally:
            _stop(gateway)
    files = [Path(unquote(urlparse(item).path)) for item in str(listed).split(",") if item.strip()]
    missing = [f for f in files if not f.is_file()]
    if not files or missing:
        raise JarsUnavailable(f"Spark's Ivy resolved {jar_set.what} to no usable file "
                              f"({', '.join(map(str, missing)) or 'an empty list'})")
    return files


def _check_java() -> None:
    home = os.environ.get("JAVA_HOME")
    if (Path(home) / "bin" / "java").is_file() if home else shutil.which("java"):
        return
    raise JarsUnavailable("Spark resolves its jars in a JVM, and there is no Java: install Java 17 or newer "
                          "(e.g. `apt-get install openjdk-17-jre-headless`) or point JAVA_HOME at one")


def _ivy_error(log: str) -> str:
    """The lines of spark-submit's output that say what failed (unresolved modules, download errors)."""
    wanted = [ln.strip() for ln in log.splitlines()
              if re.search(r"unresolved dependency|not found|download failed|UnknownHost|Connection refused"
                           r"|java\.\w+Exception|Error: ", ln)
              and "repos.spark-packages.org" not in ln]
    lines = list(dict.fromkeys(wanted))[:6] or [ln.strip() for ln in log.splitlines() if ln.strip()][-4:]
    return "; ".join(lines) or "spark-submit exited without output"


def _stop(gateway: object) -> None:
    """Shut the gateway's JVM down: closing its stdin ends it (how pyspark ties it to the Python process)."""
    proc = getattr(gateway, "proc", None)
    try:
        gateway.shutdown()  # type: ignore[attr-defined]
    finally:
        if proc is not None:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except Exception:
                proc.kill()
                proc.wait()


def _install(jar_set: JarSet, resolved: list[Path]) -> list[Path]:
    """Copy the resolved files into the set's folder under Ivy's names (``<group>_<artifact>-<version>.jar``),
    leaving out, for a set that runs inside Spark, any artifact pyspark bundles (at any version), and adding
    the pyspark jars the set borrows; the marker is written last and the folder swapped in whole."""
    own = {artifact(p.name): p for p in sorted(pyspark_jars_dir().glob("*.jar"))}
    bundled = set(own) if jar_set.in_spark else set()
    target = folder(jar_set)
    tmp = Path(tempfile.mkdtemp(prefix=f".{jar_set.folder}.", dir=cache_dir()))
    try:
        for source in resolved:
            stem = artifact(source.name)
            if not any(stem == a or stem.endswith(f"_{a}") for a in bundled):
                shutil.copy2(source, tmp / source.name)
        for name in jar_set.from_pyspark:
            if name not in own:
                raise JarsUnavailable(f"{jar_set.what} needs pyspark's {name} jar: none in {pyspark_jars_dir()}")
            shutil.copy2(own[name], tmp / own[name].name)
        (tmp / MARKER).write_text(jar_set.stamp + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    jars = cached(jar_set)
    if not jars:
        raise JarsUnavailable(f"{jar_set.what} resolved to no jar beyond what pyspark bundles")
    return jars
