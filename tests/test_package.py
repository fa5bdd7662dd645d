"""The package alone runs a project: a wheel built from this tree, installed into a fresh venv outside the
checkout, with empty jar caches (its own XDG cache, and a JVM user.home of its own, so neither Spark's
Ivy home nor ~/.m2 of this machine is seen), scaffolds a project with `streamt init`, runs it on Spark
through Dagster, answers lineage and loads its Dagster definitions. The venv sees the already-installed
dependencies (`--system-site-packages`) so that only the wheel is new; that it, not the checkout, is what
runs is asserted. Also: what the wheel holds and leaves out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this tree (tracked and new files, as `git ls-files` lists them), built offline."""
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the tree's files")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    src = tmp_path_factory.mktemp("src")
    for rel in filter(None, listed):
        if (REPO / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, src / rel)
    dist = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(dist), str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = dist.glob("dagster_streamt-*.whl")
    return built


def test_the_wheel_holds_the_package_and_its_data_and_nothing_else(wheel: Path) -> None:
    from dagster_streamt import __version__

    names = zipfile.ZipFile(wheel).namelist()
    info = f"dagster_streamt-{__version__}.dist-info"
    assert wheel.name == f"dagster_streamt-{__version__}-py3-none-any.whl"  # the version from one place
    assert {n.split("/")[0] for n in names} == {"dagster_streamt", info}  # no tests, project, data, scripts
    for needed in ("dagster_streamt/py.typed", "dagster_streamt/spark/session/log4j2.properties",
                   "dagster_streamt/docs_site/static/index.html", "dagster_streamt/cli/init_template/gitignore",
                   "dagster_streamt/cli/init_template/stream_project.yml", f"{info}/licenses/LICENSE"):
        assert needed in names
    assert any(n.startswith("dagster_streamt/docs_site/vendor/") and n.endswith(".js") for n in names)
    archive = zipfile.ZipFile(wheel)
    entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert "streamt = dagster_streamt.cli.main:main" in entry_points
    assert "[dagster_dg_cli.registry_modules]" in entry_points
    metadata = archive.read(f"{info}/METADATA").decode()
    assert "Typing :: Typed" in metadata and "License :: OSI Approved :: Apache Software License" in metadata
    assert "Requires-Dist: pyspark[connect]==4.2.0" in metadata


@pytest.mark.spark
@pytest.mark.slow
def test_a_fresh_venv_runs_init_run_lineage_and_dagster_from_the_wheel(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    bin_ = venv / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STREAMT_JARS", "DAGSTER_HOME")}
    java_options = f"{os.environ.get('JAVA_TOOL_OPTIONS', '')} -Duser.home={tmp_path / 'home'}".strip()
    env.update(PATH=f"{bin_}{os.pathsep}{env.get('PATH', '')}", XDG_CACHE_HOME=str(tmp_path / "cache"),
               JAVA_TOOL_OPTIONS=java_options, PYTHONDONTWRITEBYTECODE="1")
    work = tmp_path / "work"  # outside the checkout: nothing of it on sys.path
    work.mkdir()

    def run(*cmd: str, timeout: float = 600) -> str:
        proc = subprocess.run(list(cmd), cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout + proc.stderr

    run(str(bin_ / "python"), "-m", "pip", "install", "--no-index", "-q", str(wheel))
    where = run(str(bin_ / "python"), "-c", "import dagster_streamt; print(dagster_streamt.__file__)").strip()
    assert Path(where).is_relative_to(venv), where  # the wheel's package, not the checkout's

    out = run(str(bin_ / "streamt"), "init", "shop")
    assert "created project 'shop'" in out
    out = run(str(bin_ / "streamt"), "run", "-p", "shop")
    assert "fetching Delta Lake" in out and "2/2 model(s) succeeded" in out, out
    jars = sorted(p.name for p in (tmp_path / "cache" / "dagster-streamt" / "jars").glob("delta-*/*.jar"))
    assert jars == ["io.delta_delta-spark_4.2_2.13-4.4.0.jar", "io.delta_delta-storage-4.4.0.jar"]
    assert (tmp_path / "home" / ".ivy2.5.2").is_dir()  # Spark's Ivy ran in this test's own home

    rows = [json.loads(line) for f in sorted((work / "shop" / "data" / "orders").glob("*.json"))
            for line in f.read_text().splitlines() if line.strip()]
    clean = [r for r in rows if r["order_id"] is not None and r["amount"] > 0]
    totals: dict[int, list[float]] = defaultdict(list)
    for r in clean:
        totals[r["customer_id"]].append(r["amount"])
    from deltalake import DeltaTable

    warehouse = work / "shop" / ".streamt" / "warehouse"
    got_clean = DeltaTable(str(warehouse / "orders_clean" / "data")).to_pyarrow_table()
    assert sorted(got_clean.column("order_id").to_pylist()) == sorted(r["order_id"] for r in clean)
    got = DeltaTable(str(warehouse / "customer_totals" / "data")).to_pyarrow_table().to_pylist()
    assert {r["customer_id"]: (r["order_count"], round(r["total_spent"], 6)) for r in got} == \
        {c: (len(a), round(sum(a), 6)) for c, a in totals.items()}

    lineage = json.loads(run(str(bin_ / "streamt"), "lineage", "-p", "shop", "-m", "orders_clean", "--downstream",
                             "--format", "json"))
    assert lineage["impact"]["models"] == ["model.customer_totals"]
    assert lineage["impact"]["exposures"] == ["exposure.revenue_dashboard"]

    code = ("import dagster as dg; from dagster_streamt import build_definitions; "
            "defs = build_definitions('shop'); dg.Definitions.validate_loadable(defs); "
            "print(sorted(k.to_user_string() for k in defs.resolve_all_asset_keys()))")
    keys = run(str(bin_ / "python"), "-c", code).strip().splitlines()[-1]
    for name in ("orders_raw", "orders_clean", "customer_totals", "revenue_dashboard"):
        assert name in keys, keys
