"""The component in a real `create-dagster` project, through the real `dg` CLI: `dg list components`
finds it (entry point of the built package), `dg scaffold defs` writes its defs.yaml, `dg check defs`
and `dg list defs` load the translated graph, `streamt run` inside the dg project records runs under
the component's keys, and `dg dev` serves that graph, those runs and the component's docs schema."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ..helpers import graphql, write_project

ROOT = Path(__file__).parents[2]
TIMEOUT_S = 240

SHOP = {
    "stream_project.yml": "project: {name: shop}\n",
    "sources/s.yml": """\
        sources:
          - name: orders
            format: json
            path: data/orders
            columns: [{name: id, type: bigint}, {name: amount, type: double}]
        """,
    "models/m.yml": """\
        models:
          - name: orders_clean
            materialized: stream
            sql: SELECT id, amount FROM {{ source("orders") }} WHERE amount > 0
          - name: revenue
            materialized: table
            sql: SELECT sum(amount) AS total FROM {{ ref("orders_clean") }}
        """,
    "tests/t.yml": "tests:\n  - name: clean_ids\n    model: orders_clean\n"
                   "    assertions: [{not_null: {columns: [id]}}]\n",
    "data/orders/a.json": '{"id": 1, "amount": 5.0}\n{"id": 2, "amount": -1.0}\n{"id": 3, "amount": 7.5}\n',
}
TRANSLATION = {"key": "streamt/{{ node.type }}/{{ node.name }}", "group_name": "shop_{{ node.type }}s"}
CLEAN, REVENUE = ["streamt", "model", "orders_clean"], ["streamt", "model", "revenue"]


@pytest.fixture(scope="module")
def dg_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A create-dagster project holding the `shop` streamt project and its component, and the
    environment its tools run in: this package built and installed as a user installs it (so its
    entry point exists), the project's `src` importable as `uv sync` would make it."""
    base = tmp_path_factory.mktemp("dg")
    wheels, site = base / "wheels", base / "site"
    for cmd in (["wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],):
        built = subprocess.run([sys.executable, "-m", "pip", *cmd], capture_output=True, text=True, timeout=600)
        assert built.returncode == 0, built.stdout + built.stderr
    wheel = next(wheels.glob("dagster_streamt-*.whl"))
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                                str(wheel)], capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    project = base / "myproj"
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "STREAMT_DEFINITIONS", "STREAMT_ENV")}
    env.update(PYTHONPATH=os.pathsep.join([str(site), str(project / "src")]), DAGSTER_DG_UPDATE_CHECK_ENABLED="0")
    created = subprocess.run([_tool("create-dagster"), "project", "myproj", "--no-uv-sync"], cwd=base, env=env,
                             capture_output=True, text=True, timeout=300)
    assert created.returncode == 0, created.stdout + created.stderr
    write_project(project / "shop", dict(SHOP))
    return project, env


def _tool(name: str) -> str:
    """A console script installed next to this interpreter (`dg`, `create-dagster`)."""
    path = Path(sys.executable).with_name(name)
    return str(path) if path.exists() else (shutil.which(name) or name)


def dg(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_tool("dg"), *args], cwd=project, env=env, capture_output=True, text=True, timeout=600)


def defs_yaml(project: Path) -> Path:
    return project / "src" / "myproj" / "defs" / "shop" / "defs.yaml"


def test_dg_lists_scaffolds_checks_and_lists_the_component(dg_project: tuple[Path, dict[str, str]]) -> None:
    project, env = dg_project
    listed = dg(project, env, "list", "components", "--json")
    assert listed.returncode == 0, listed.stderr
    items = json.loads(listed.stdout)["items"]
    component = next(c for c in items if c["key"] == "dagster_streamt.StreamtProjectComponent")
    assert "streamt project" in component["summary"]

    scaffolded = dg(project, env, "scaffold", "defs", "dagster_streamt.StreamtProjectComponent", "shop",
                    "--project-path", "shop")
    assert scaffolded.returncode == 0, scaffolded.stdout + scaffolded.stderr
    written = yaml.safe_load(defs_yaml(project).read_text())
    assert written == {"type": "dagster_streamt.StreamtProjectComponent",
                       "attributes": {"project": "{{ context.project_root }}/shop"}}
    written["attributes"]["translation"] = TRANSLATION
    defs_yaml(project).write_text(yaml.safe_dump(written, sort_keys=False))

    checked = dg(project, env, "check", "defs")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "All definitions loaded successfully" in checked.stdout + checked.stderr
    defs = json.loads(dg(project, env, "list", "defs", "--json").stdout)
    assets = {a["asset_key"]: a for a in defs["assets"]}
    assert sorted(assets) == ["streamt/model/orders_clean", "streamt/model/revenue", "streamt/source/orders"]
    assert assets["streamt/model/revenue"]["dependency_keys"] == ["streamt/model/orders_clean"]
    assert assets["streamt/model/revenue"]["group_name"] == "shop_models"
    assert [c["key"] for c in defs["asset_checks"]] == ["streamt/model/orders_clean:clean_ids"]

    typo = defs_yaml(project).with_name("defs.yaml.bak")
    shutil.copy(defs_yaml(project), typo)
    defs_yaml(project).write_text(defs_yaml(project).read_text() + "  selct: tag:x\n")
    bad = dg(project, env, "check", "defs")
    shutil.move(typo, defs_yaml(project))
    assert bad.returncode != 0 and "selct" in bad.stdout + bad.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


ASSETS = "{ assetNodes { assetKey { path } groupName assetMaterializations(limit: 1) { runId } } }"
DOCS = """query($location: String!) { componentTypesForLocationOrError(locationName: $location) {
  __typename ... on ComponentTypes { componentTypes { name namespace description schema } } } }"""


@pytest.mark.spark
@pytest.mark.slow
def test_streamt_run_in_the_dg_project_shows_in_dg_dev(dg_project: tuple[Path, dict[str, str]],
                                                      tmp_path: Path) -> None:
    project, env = dg_project
    if not defs_yaml(project).exists():  # run alone: scaffold as the test above does
        defs_yaml(project).parent.mkdir(parents=True)
        defs_yaml(project).write_text(yaml.safe_dump({"type": "dagster_streamt.StreamtProjectComponent",
                                                      "attributes": {"project": "{{ context.project_root }}/shop",
                                                                     "translation": TRANSLATION}}))
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**env, "DAGSTER_HOME": str(home)}
    ran = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "run", "-p", str(project / "shop")],
                         env=env, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2/2 model(s) succeeded" in ran.stdout and "test clean_ids passed" in ran.stdout
    run_id = ran.stdout.split("(Dagster run ")[1].split(")")[0]

    port, log = _free_port(), tmp_path / "dg-dev.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([_tool("dg"), "dev", "--port", str(port), "--host", "127.0.0.1"], cwd=project,
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline, nodes = time.time() + TIMEOUT_S, {}
        while not nodes and time.time() < deadline:
            assert proc.poll() is None, log.read_text()[-4000:]
            with contextlib.suppress(OSError):
                nodes = {tuple(n["assetKey"]["path"]): n for n in graphql(port, ASSETS)["assetNodes"]}
            time.sleep(0.5)
        assert set(nodes) == {tuple(CLEAN), tuple(REVENUE), ("streamt", "source", "orders")}, log.read_text()[-4000:]
        assert nodes[tuple(REVENUE)]["groupName"] == "shop_models"
        assert nodes[tuple(CLEAN)]["assetMaterializations"] == [{"runId": run_id}]  # the CLI's run, same keys

        docs = graphql(port, DOCS, {"location": "myproj"})["componentTypesForLocationOrError"]
        ours = next(c for c in docs["componentTypes"] if c["namespace"] == "dagster_streamt")
        assert ours["name"] == "dagster_streamt.StreamtProjectComponent" and "streamt project" in ours["description"]
        props = ours["schema"]["properties"]
        assert {"project", "env", "select", "exclude", "translation", "spark"} <= set(props)
        assert "stream_project.yml" in props["project"]["description"]
        assert "selection syntax" in props["select"]["description"]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
