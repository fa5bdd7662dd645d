"""A class-data-sharing archive for the local Spark JVMs, kept once per machine.

A local Spark driver loads and verifies some 15,000 classes while it starts and runs its first
query. With a dynamic CDS archive of them (Java 13+: ``-XX:ArchiveClassesAtExit``), a later JVM maps
them instead; measured here on the peer pipeline's first query: the session up in 3.0 s instead of
4.7 s, the first query 7.0 s instead of 8.7 s.

The archive belongs to one Java, one Spark (its jars) and one extra classpath, so its file name is a
hash of them. The first local driver that finds none dumps its classes when it exits (the JVM does
it after the run's output is printed: a few seconds, once) into a temporary file; a later run that
finds the file written and its writer gone adopts it with an atomic rename, once a JVM started with
it has been seen to start: a dump cut short (its JVM killed while writing) would make every JVM that
maps it crash (SIGBUS), so it is dropped instead, and the next run writes a new one. The adopted
archive is checked that way again whenever its size or time changes (``<key>.ok`` remembers the last
check). A JVM that cannot use the archive otherwise (another Java, another classpath) ignores it
silently (``-Xshare:auto``, CDS logging off).

That management is for Java 17, the oldest Java Spark 4 runs on. From Java 19 on, the JDK does all of
it itself (``-XX:+AutoCreateSharedArchive``: it writes the archive at exit when there is none or it
no longer fits, and validates it when mapping), so only the file's name is ours there.

Where: ``$XDG_CACHE_HOME/dagster-streamt/jvm``, else ``~/.cache/dagster-streamt/jvm``.
``runtime.spark.class_archive: false`` runs without one.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
import uuid
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from .java import find_java, java_major_version

AUTO_ARCHIVE_JAVA = 19  # the first Java with -XX:+AutoCreateSharedArchive
JAVA_OPTIONS = "spark.driver.extraJavaOptions"
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
CLASSPATH_CONF = ("spark.jars", "spark.jars.packages", "spark.driver.extraClassPath", "spark.driver.memory")
STALE_S = 600.0  # without /proc, a temporary archive this old has no writer any more


def archive_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dagster-streamt" / "jvm"


@cache
def _java_major(java: Path) -> int | None:
    return java_major_version(java)


def jdk_manages_archive() -> bool:
    """Whether the Java Spark will use creates and validates the archive itself (Java 19+)."""
    java = find_java()
    major = _java_major(java) if java is not None else None
    return major is not None and major >= AUTO_ARCHIVE_JAVA


def archive_key(conf: Mapping[str, str]) -> str | None:
    """What the archive depends on: the JVM (its library, so an update changes the key), pyspark's jars
    and the classpath settings. None without Java."""
    import pyspark

    java = find_java()
    if java is None:
        return None
    real = java.resolve()
    jvm = next((p for p in (real.parents[1] / "lib" / "server" / "libjvm.so",
                            real.parents[1] / "lib" / "server" / "libjvm.dylib") if p.is_file()), real)
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    st = jvm.stat()
    parts = [str(jvm), str(st.st_size), str(st.st_mtime_ns), pyspark.__version__,
             ",".join(sorted(p.name for p in jars.glob("*.jar"))) if jars.is_dir() else "",
             *(f"{k}={conf.get(k, '')}" for k in CLASSPATH_CONF)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]


def _writer_alive(tmp: Path) -> bool:
    """Whether a JVM is still writing ``tmp`` (its command line names it)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return time.time() - tmp.stat().st_mtime < STALE_S
    needle = str(tmp).encode()
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def _starts_with(archive: Path) -> bool:
    """Whether a JVM mapping ``archive`` starts (about 0.1 s): a truncated archive crashes it."""
    java = find_java()
    if java is None:
        return False
    try:
        proc = subprocess.run([str(java), f"-XX:SharedArchiveFile={archive}", "-Xshare:auto", *QUIET.split(),
                               "-XX:-CreateCoredumpOnCrash", f"-XX:ErrorFile={os.devnull}", "-version"],
                              capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _stamp(archive: Path) -> str:
    st = archive.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def _checked(final: Path, ok: Path) -> bool:
    """``final`` is usable: checked before (the same size and time) or now; a damaged one is removed."""
    try:
        if ok.is_file() and ok.read_text(encoding="utf-8") == _stamp(final):
            return True
        if _starts_with(final):
            ok.write_text(_stamp(final), encoding="utf-8")
            return True
        final.unlink()
    except OSError:
        pass
    return False


def _adopt(folder: Path, key: str, final: Path) -> bool:
    """Rename a complete temporary archive of ``key`` to ``final``; drop leftovers once it exists, and
    dumps cut short."""
    ok = folder / f"{key}.ok"
    for tmp in sorted(folder.glob(f"{key}.*.jsa.tmp")):
        try:
            if tmp.stat().st_size == 0 or _writer_alive(tmp):
                continue
            if final.is_file() or not _starts_with(tmp):
                tmp.unlink()
            else:
                os.replace(tmp, final)
                ok.write_text(_stamp(final), encoding="utf-8")
        except OSError:
            continue
    return final.is_file() and _checked(final, ok)


def java_options(conf: Mapping[str, str], *, dump: bool = True) -> str:
    """The JVM options that use this machine's archive, or (``dump``, none yet) write it at exit."""
    key = archive_key(conf)
    if key is None:
        return ""
    folder = archive_dir()
    final = folder / f"{key}.jsa"
    if jdk_manages_archive():
        if not dump and not final.is_file():
            return ""
        options = f"-XX:+AutoCreateSharedArchive -XX:SharedArchiveFile={final} -Xshare:auto {QUIET}"
    elif _adopt(folder, key, final):
        return f"-XX:SharedArchiveFile={final} -Xshare:auto {QUIET}"
    elif not dump:
        return ""
    else:
        options = f"-XX:ArchiveClassesAtExit={folder / f'{key}.{uuid.uuid4().hex[:12]}.jsa.tmp'} {QUIET}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return ""
    return options


def with_archive(conf: Mapping[str, str], *, dump: bool = True) -> dict[str, str]:
    """``conf`` with the archive's options added to the driver's Java options (unless the user
    already chose a CDS setting there)."""
    out = dict(conf)
    current = out.get(JAVA_OPTIONS, "")
    if any(flag in current for flag in ("SharedArchiveFile", "ArchiveClassesAtExit", "-Xshare")):
        return out
    extra = java_options(conf, dump=dump)
    if extra:
        out[JAVA_OPTIONS] = f"{current} {extra}".strip()
    return out
