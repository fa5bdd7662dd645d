"""`streamt docs serve` over real HTTP, and user text that tries to break out of the page."""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from ..helpers import write_project
from .conftest import ENV, copy_example, streamt

pytestmark = pytest.mark.browser


def test_serve_then_browse(tmp_path: Path, new_page: Any) -> None:
    project = copy_example(tmp_path / "shop")
    proc = subprocess.Popen([sys.executable, "-m", "dagster_streamt.cli", "docs", "serve", "-p", str(project),
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        assert proc.stdout is not None
        lines = []
        while not any(line.startswith("Serving ") for line in lines):
            line = proc.stdout.readline()
            assert line, f"serve exited: {''.join(lines)} {proc.stderr.read() if proc.stderr else ''}"
            lines.append(line)
        url = lines[-1].split(" at ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and (project / "target" / "docs" / "index.html").is_file()
        with urllib.request.urlopen(url + "assets/vendor/cytoscape.min.js", timeout=10) as resp:
            assert resp.status == 200 and len(resp.read()) > 100_000
        p = new_page(allowed=url)
        page = p.open(url + "#model.customer_orders")
        page.wait_for_selector("#sql[data-loaded='1'] pre code")  # a SQL file loaded over HTTP
        assert "LEFT JOIN `orders_clean`" in page.inner_text("#sql")
        p.assert_clean()
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "stopped" in out


def test_serve_reports_a_busy_port(tmp_path: Path) -> None:
    import socket

    project = copy_example(tmp_path / "shop")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = streamt("docs", "serve", "-p", str(project), "--port", str(port), timeout=120)
    assert r.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in r.stderr and "Traceback" not in r.stderr
    r = streamt("docs", "serve", "-p", str(copy_example(tmp_path / "other")), "--no-regenerate", timeout=120)
    assert r.returncode == 2 and "run `streamt docs generate` first" in r.stderr


def test_hostile_text_is_shown_not_run(tmp_path: Path, new_page: Any) -> None:
    write_project(tmp_path, {"sources/s.yml": """\
        sources:
          - name: accounts
            description: "Accounts </script><script>window.pwned = 1</script><!-- x"
            format: json
            path: data
            columns:
              - {name: id, type: bigint, description: "<img src=x onerror=window.pwned=2>"}
        """, "models/m.yml": """\
        models:
          - name: active
            description: "<b>bold?</b>"
            sql: SELECT id, '</script><script>window.pwned=3</script>' AS note FROM {{ source("accounts") }}
        """})
    r = streamt("docs", "generate", "-p", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    p = new_page()
    page = p.open((tmp_path / "target" / "docs" / "index.html").as_uri() + "#source.accounts")
    assert "</script><script>window.pwned = 1</script>" in page.inner_text("#details .description")
    assert "<img src=x onerror=window.pwned=2>" in page.inner_text("#columns")
    page.evaluate("location.hash = '#model.active'")
    page.wait_for_selector("#sql[data-loaded='1'] pre code")
    assert "window.pwned=3" in page.inner_text("#sql") and page.inner_text("#details .description") == "<b>bold?</b>"
    assert page.evaluate("window.pwned === undefined")
    p.assert_clean()
