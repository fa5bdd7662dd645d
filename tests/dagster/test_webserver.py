"""The Dagster UI's backend serves the example's lineage: sources -> models -> exposures."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).parents[2]
QUERY = "{ assetNodes { assetKey { path } dependencyKeys { path } kinds owners { __typename } } }"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(port: int, query: str) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_webserver_shows_the_asset_lineage(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "dagster_webserver", "-w", str(ROOT / "workspace.yaml"),
                             "-h", "127.0.0.1", "-p", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 120
        data = None
        while time.time() < deadline:
            try:
                data = _post(port, QUERY)
                if data.get("data", {}).get("assetNodes"):
                    break
            except OSError:
                pass
            time.sleep(1)
        assert data and data.get("data"), f"webserver did not answer: {data}"
        nodes = {"/".join(n["assetKey"]["path"]): n for n in data["data"]["assetNodes"]}
        assert set(nodes) >= {"sources/orders_raw", "orders_clean", "order_metrics", "exposures/ops_dashboard"}
        deps = {"/".join(d["path"]) for d in nodes["exposures/ops_dashboard"]["dependencyKeys"]}
        assert deps == {"order_metrics"}
        assert {"/".join(d["path"]) for d in nodes["orders_clean"]["dependencyKeys"]} == {"sources/orders_raw"}
        assert set(nodes["orders_clean"]["kinds"]) == {"spark", "stream"}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
