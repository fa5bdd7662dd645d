"""Small helpers to write throwaway projects for tests."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).parents[1]
EXAMPLE = REPO / "project"

ROOT = """\
project:
  name: t
"""


def write_project(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: YAML text}``; adds a minimal root file when none is given."""
    root.mkdir(parents=True, exist_ok=True)
    if "stream_project.yml" not in files and "stream_project.yaml" not in files:
        files = {"stream_project.yml": ROOT, **files}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def codes(diags: list) -> list[str]:
    return [d.code for d in diags]


def streamt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: a separate process."""
    return subprocess.run([sys.executable, "-m", "dagster_streamt.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def graphql(port: int, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """A query against a running Dagster webserver's GraphQL endpoint; errors fail the test."""
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        data = json.loads(resp.read())
    assert not data.get("errors"), data["errors"]
    return data["data"]


S3_BUCKET = "lake"  # the bucket of the session's moto S3 server (conftest's ``s3_endpoint``)


def s3_conf(url: str) -> dict[str, str]:
    """The project's Spark conf that reaches the moto S3 server at ``url``."""
    return {"spark.hadoop.fs.s3a.endpoint": url, "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.access.key": "test", "spark.hadoop.fs.s3a.secret.key": "test",
            "spark.hadoop.fs.s3a.endpoint.region": "us-east-1"}
