"""The machine's class-data-sharing archive for local Spark JVMs: written once by the first JVM that
finds none, adopted by a later run, used from then on, and ignored (never fatal) when unusable."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dagster_streamt.jars import sets
from dagster_streamt.jars.fetch import cache_dir as jar_cache_dir
from dagster_streamt.jars.fetch import jars_for
from dagster_streamt.spark.session import jvm_archive
from dagster_streamt.spark.session.java import find_java
from dagster_streamt.spark.session.jvm_archive import archive_key, java_options, with_archive
from dagster_streamt.spark.session.local_memory import local_driver_memory
from dagster_streamt.spark.session.session_jars import with_delta_conf, with_jars

from ..conftest import write_project
from ..spark.helpers import jsonl, run_seeing_java


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "dagster-streamt" / "jvm"


def test_on_by_default_and_off_in_yaml(tmp_path: Path) -> None:
    from dagster_streamt.spark import SparkSettings

    from ..conftest import load

    assert SparkSettings.from_project(load(write_project(tmp_path / "a", {}))).class_archive
    off = load(write_project(tmp_path / "b", {"runtime": {"spark": {"class_archive": False}}}))
    assert not SparkSettings.from_project(off).class_archive


def test_a_newer_jdk_manages_the_archive_itself(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jvm_archive, "_java_major", lambda java: 21)
    key = archive_key({})
    assert java_options({}, dump=False) == ""  # a server never writes it
    options = java_options({})
    assert options.startswith(f"-XX:+AutoCreateSharedArchive -XX:SharedArchiveFile={folder / (key + '.jsa')} ")
    (folder / f"{key}.jsa").write_bytes(b"x")
    assert "AutoCreateSharedArchive" in java_options({}, dump=False)


def test_first_jvm_dumps_then_a_complete_dump_is_adopted(folder: Path) -> None:
    key = archive_key({})
    assert key is not None and archive_key({"spark.jars": "/x.jar"}) != key  # the classpath is part of it
    first = java_options({})
    assert f"-XX:ArchiveClassesAtExit={folder}/{key}." in first and "-Xlog:cds=off" in first
    assert java_options({}, dump=False) == ""  # a server never writes it
    tmp = Path(first.split("=", 1)[1].split()[0])
    tmp.write_bytes(b"x" * 64)  # as a JVM leaves it at exit (no process names it any more)
    used = java_options({})
    assert used.startswith(f"-XX:SharedArchiveFile={folder / (key + '.jsa')} -Xshare:auto")
    assert not tmp.exists() and (folder / f"{key}.jsa").is_file()
    leftover = folder / f"{key}.other.jsa.tmp"
    leftover.write_bytes(b"y")
    assert java_options({}) == used and not leftover.exists()  # a second writer's file is dropped


def test_a_dump_in_progress_is_left_alone(folder: Path) -> None:
    key = archive_key({})
    folder.mkdir(parents=True)
    tmp = folder / f"{key}.busy.jsa.tmp"
    tmp.write_bytes(b"partial")
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", str(tmp)])
    cmdline = Path(f"/proc/{writer.pid}/cmdline")
    deadline = time.monotonic() + 10  # until the child has exec'd: before, /proc shows pytest's command line
    while time.monotonic() < deadline and str(tmp).encode() not in cmdline.read_bytes():
        time.sleep(0.02)
    try:
        assert "ArchiveClassesAtExit" in java_options({}) and tmp.exists()
    finally:
        writer.kill()
        writer.wait()


def test_user_cds_flags_win(folder: Path) -> None:
    conf = {"spark.driver.extraJavaOptions": "-Xshare:off"}
    assert with_archive(conf) == conf
    merged = with_archive({"spark.driver.extraJavaOptions": "-Dx=1"})
    assert merged["spark.driver.extraJavaOptions"].startswith("-Dx=1 -XX:ArchiveClassesAtExit=")


@pytest.mark.spark
@pytest.mark.slow
def test_runs_write_adopt_and_use_the_archive(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj", {
        "sources": [{"name": "raw", "format": "json", "path": "data",
                     "columns": [{"name": "id", "type": "bigint"}, {"name": "v", "type": "double"}]}],
        "models": [{"name": "total", "sql": 'SELECT count(*) AS n, sum(v) AS s FROM {{ source("raw") }}'}]},
        {"data/a.json": jsonl([{"id": 1, "v": 2.5}, {"id": 2, "v": 1.5}]) + "{bad\n"})
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    folder = tmp_path / "cache" / "dagster-streamt" / "jvm"
    jars = tmp_path / "cache" / "dagster-streamt" / "jars"  # only the archive is this test's own: the jar
    jars.parent.mkdir(parents=True)  # cache (Delta's, which every table needs) is the machine's
    jars.symlink_to(jar_cache_dir(), target_is_directory=True)

    def run(*extra: str) -> list[str]:
        code, out, javas = run_seeing_java([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(project),
                                            *extra], env)
        assert code == 0, out
        return javas

    javas = run()
    # the run's driver, as shipped: C1 alone, the run reads a few bytes of new data (spark/session/jit.py)
    drivers = [c for c in javas if "SparkSubmit" in c]
    assert len(drivers) == 1 and "-XX:TieredStopAtLevel=1" in drivers[0], javas
    deadline = time.monotonic() + 240  # the JVM writes it after the CLI has exited
    while time.monotonic() < deadline and not any(
            p.stat().st_size and not jvm_archive._writer_alive(p) for p in folder.glob("*.jsa.tmp")):
        time.sleep(1)
    assert list(folder.glob("*.jsa.tmp")), "the first run's JVM wrote no archive"
    run("--full-refresh", "total")  # adopts it and starts its JVM with it
    archives = list(folder.glob("*.jsa"))
    assert len(archives) == 1 and archives[0].stat().st_size > 1_000_000
    archive = archives[0]
    data = archive.read_bytes()
    key = archive.name.removesuffix(".jsa")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        java = find_java()
        assert java is not None
        # The runs' key: Delta's jars are on every session's classpath, and a local session's heap size
        # (compressed pointers depend on it, so the archive does too)
        conf = with_delta_conf(with_jars({"spark.driver.memory": local_driver_memory()}, jars_for(sets.delta())))

        def starts(options: str) -> bool:
            proc = subprocess.run([str(java), *options.split(), "-XX:-CreateCoredumpOnCrash", "-version"],
                                  capture_output=True, text=True, timeout=60, cwd=tmp_path)
            return proc.returncode == 0

        options = java_options(conf)
        assert "SharedArchiveFile" in options and starts(options)
        # a dump cut short (its JVM killed while writing) would crash every JVM mapping it: never adopted
        archive.unlink()
        cut = folder / f"{key}.cut.jsa.tmp"
        cut.write_bytes(data[: len(data) // 2])
        assert not starts(f"-XX:SharedArchiveFile={cut} -Xshare:auto")  # what it would do
        options = java_options(conf)
        assert "ArchiveClassesAtExit" in options and not cut.exists() and not archive.exists()
        # an adopted archive damaged later (the same check, once its size or time changed): removed
        archive.write_bytes(data[: len(data) // 2])
        assert "ArchiveClassesAtExit" in java_options(conf) and not archive.exists()
        archive.write_bytes(b"not an archive")  # not an archive at all: a JVM ignores it and starts
        options = java_options(conf)
        assert "SharedArchiveFile" in options and starts(options)
