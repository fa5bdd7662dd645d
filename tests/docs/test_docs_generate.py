"""`streamt docs generate`: what the site holds, that it is deterministic and self-contained, that
secrets and hostile text stay harmless, and the error paths (no browser needed here)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from dagster_streamt.api import load
from dagster_streamt.docs_site.site import SQL_CHUNK

from ..helpers import write_project
from .conftest import ENV, copy_example, streamt


def core(index: Path) -> dict[str, Any]:
    text = index.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="streamt-data">(.*?)</script>', text, re.S)
    assert block is not None, "the data block is missing or was closed early"
    return json.loads(block.group(1))


def sql_of(site: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in sorted((site / "assets" / "sql").glob("*.js")):
        m = re.fullmatch(r"StreamtDocs\.sqlChunk\((\d+),(.*)\);\n", f.read_text(encoding="utf-8"), re.S)
        assert m is not None and int(m.group(1)) == int(f.stem)
        out.update(json.loads(m.group(2)))
    return out


def files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def test_example_site_holds_every_entity(example_site: Path) -> None:
    data = core(example_site)
    loaded = load(example_site.parents[2])
    assert [n["id"] for n in data["nodes"]] == sorted(loaded.graph.nodes)
    assert sorted(data["models"]) == sorted(loaded.project.models)
    assert sorted(data["sources"]) == ["customers", "orders_raw"] and sorted(data["exposures"]) == [
        "billing_service", "ops_dashboard"]
    assert sorted(data["tests"]) == sorted(loaded.project.tests) and list(data["schedules"]) == ["hourly_orders"]
    ids = [n["id"] for n in data["nodes"]]
    assert sorted((ids[s], ids[d]) for s, d in data["edges"]) == sorted(loaded.graph.edges())
    node = {n["id"]: n for n in data["nodes"]}["model.orders_clean"]
    assert node | {"description": ""} == {
        "id": "model.orders_clean", "type": "model", "name": "orders_clean", "materialized": "stream",
        "owner": "orders-team", "tags": ["critical", "orders"], "description": "",
        "file": "models/staging/orders_clean.yml", "line": 2}
    cols = {c["name"]: c for c in data["sources"]["customers"]["columns"]}
    assert cols["email"] == {"name": "email", "type": "string", "classification": ["sensitive"]}
    total = {c["name"]: c for c in data["models"]["customer_orders"]["columns"]}["total_spent"]
    assert total == {"name": "total_spent", "classification": ["confidential"],
                     "edges": [["orders_clean", "amount", "AGGREGATION"]]}
    assert data["models"]["orders_clean"]["config"] == {"event_time": {"column": "ts", "watermark": "10 minutes"}}
    assert data["models"]["orders_export"]["from"] == "orders_clean"
    assert data["tests"]["orders_clean_quality"]["assertions"] == [
        "not_null: {columns: [order_id]}",
        "accepted_values: {column: status, values: [placed, paid, shipped, cancelled]}",
        "range: {column: amount, inclusive: false, max: 100000, min: 0}"]
    assert data["schedules"]["hourly_orders"]["models"] == sorted(f"model.{m}" for m in loaded.project.models)
    assert data["pii"]["exposures"]["billing_service"] == [
        ["customer_orders", "country", ["internal"], ["customers.country"]],
        ["customer_orders", "customer_id", ["internal"], ["customers.customer_id"]],
        ["customer_orders", "last_order_at", ["internal"], ["orders_raw.ts"]],
        ["customer_orders", "order_count", ["internal"], ["orders_raw.order_id"]],
        ["customer_orders", "total_spent", ["confidential"], ["orders_raw.amount"]]]
    assert data["state"] is None  # never ran
    sql = sql_of(example_site.parent)
    assert sql["orders_clean"][0] == loaded.compiled.models["orders_clean"].sql
    assert '{{ source("orders_raw") }}' in sql["orders_clean"][1]
    assert "orders_export" not in sql  # a sink of `from:` has no SQL
    assert set(data["sql_chunk"]) == set(sql)


def test_site_is_self_contained(example_site: Path) -> None:
    """Every script and style is a relative file of the site; nothing names a network address."""
    site = example_site.parent
    html = example_site.read_text(encoding="utf-8")
    refs = re.findall(r'(?:src|href)="([^"#]+)"', html)
    assert refs and all(not re.match(r"[a-z]+:|//", r) for r in refs), refs
    for ref in refs:
        assert (site / ref).is_file(), ref
    for f in (site / "assets").glob("*.js"):
        text = f.read_text(encoding="utf-8")
        assert "fetch(" not in text and "XMLHttpRequest" not in text and "http" not in text.replace("https://", "")
    for lic in ("LICENSE.cytoscape.txt", "LICENSE.dagre.txt", "LICENSE.highlightjs.txt", "README.md"):
        assert (site / "assets" / "vendor" / lic).is_file()


def test_generation_is_deterministic(tmp_path: Path) -> None:
    a, b = copy_example(tmp_path / "a"), copy_example(tmp_path / "b")
    for p in (a, b):
        r = streamt("docs", "generate", "-p", str(p), "--no-runs")
        assert r.returncode == 0, r.stdout + r.stderr
    assert files(a / "target" / "docs") == files(b / "target" / "docs")


def test_secrets_and_hostile_text_stay_harmless(tmp_path: Path) -> None:
    write_project(tmp_path, {
        ".env": "DB_PASSWORD=hunter2-very-secret\n",
        "sources/s.yml": """\
            sources:
              - name: accounts
                description: "Accounts </script><script>window.pwned = 1</script> <!-- x"
                format: jdbc
                options: {url: "jdbc:postgresql://db/app", dbtable: accounts, user: app, password: "${DB_PASSWORD}"}
                columns:
                  - {name: id, type: bigint, description: "<img src=x onerror=alert(1)>"}
            """,
        "models/m.yml": """\
            models:
              - name: active
                description: "uses </SCRIPT> too"
                sql: SELECT id FROM {{ source("accounts") }} WHERE '${DB_PASSWORD}' <> ''
            """,
    })
    r = streamt("docs", "generate", "-p", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    site = tmp_path / "target" / "docs"
    for name, content in files(site).items():
        assert b"hunter2-very-secret" not in content, name
    data = core(site / "index.html")  # the regex stops at the first </script>: the data was not cut short
    assert data["sources"]["accounts"]["config"]["options"]["password"] == "***"
    assert data["sources"]["accounts"]["config"]["options"]["url"] == "jdbc:postgresql://db/app"
    assert data["nodes"][1]["description"].startswith("Accounts </script><script>")
    assert "'***' <> ''" in sql_of(site)["active"][0]


def test_refuses_to_write_over_other_files(tmp_path: Path) -> None:
    project = copy_example(tmp_path / "shop")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "index.html").write_text("my own page")
    r = streamt("docs", "generate", "-p", str(project), "-o", str(mine))
    assert r.returncode == 1 and "already holds other files" in r.stderr and "Traceback" not in r.stderr
    assert (mine / "index.html").read_text() == "my own page"
    (tmp_path / "afile").write_text("x")
    r = streamt("docs", "generate", "-p", str(project), "-o", str(tmp_path / "afile"))
    assert r.returncode == 2 and "Traceback" not in r.stderr  # click: a folder is expected
    # a relative -o is taken from the current directory; our own folder is rewritten
    for _ in range(2):
        r = streamt("docs", "generate", "-p", str(project), "-o", "site", cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "assets" / "sql" / "0.js").is_file()


def test_sql_chunks_follow_the_project(tmp_path: Path) -> None:
    """Models are split across SQL files; a smaller project leaves no stale file behind."""
    def project(n: int) -> None:
        models = "\n".join(f"  - {{name: m{i:04d}, sql: 'SELECT id FROM {{{{ source(\"s\") }}}}'}}" for i in range(n))
        write_project(tmp_path, {"sources/s.yml": "sources:\n  - {name: s, format: json, path: d, "
                                                  "columns: [{name: id, type: bigint}]}\n",
                                 "models/m.yml": "models:\n" + models + "\n"})

    project(SQL_CHUNK + 5)
    assert streamt("docs", "generate", "-p", str(tmp_path)).returncode == 0
    site = tmp_path / "target" / "docs"
    assert sorted(p.name for p in (site / "assets" / "sql").iterdir()) == ["0.js", "1.js"]
    data = core(site / "index.html")
    assert data["sql_chunk"]["m0000"] == 0 and data["sql_chunk"][f"m{SQL_CHUNK:04d}"] == 1
    assert len(sql_of(site)) == SQL_CHUNK + 5
    project(3)
    assert streamt("docs", "generate", "-p", str(tmp_path)).returncode == 0
    assert sorted(p.name for p in (site / "assets" / "sql").iterdir()) == ["0.js"]


def test_invalid_project_is_reported_not_documented(tmp_path: Path) -> None:
    write_project(tmp_path, {"models/m.yml": "models:\n  - name: m\n    sql: SELECT 1 FROM {{ ref('nope') }}\n"})
    r = streamt("docs", "generate", "-p", str(tmp_path))
    assert r.returncode == 1 and "REF001" in r.stdout and "Traceback" not in r.stderr
    assert not (tmp_path / "target" / "docs").exists()


def test_no_dagster_import_without_run_history(tmp_path: Path) -> None:
    """A project that never ran gets its docs without importing Dagster (fast, and no instance created)."""
    project = copy_example(tmp_path / "shop")
    code = ("import sys; from pathlib import Path; from dagster_streamt.api import load; "
            "from dagster_streamt.docs_site import generate; "
            f"r = generate(load({str(project)!r}), Path({str(tmp_path / 'site')!r})); "
            "assert not r.with_runs; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dagster', 'pyspark')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=ENV)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert not (project / ".streamt").exists()


def test_package_data_ships_the_page() -> None:
    """An installed (non-editable) package has the page and the vendored libraries: pyproject's
    package-data covers every file the site copies."""
    import fnmatch
    import tomllib

    from dagster_streamt.docs_site import site

    patterns = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["dagster_streamt"]
    pkg = Path(site.__file__).parents[1]
    needed = [p for p in site.STATIC.iterdir()] + [site.VENDOR / n for n in site.VENDOR_FILES]
    for path in needed:
        rel = path.relative_to(pkg).as_posix()
        assert any(fnmatch.fnmatch(rel, pat) for pat in patterns), rel


def test_unreadable_run_history_is_a_warning(tmp_path: Path) -> None:
    project = copy_example(tmp_path / "shop")
    (project / ".streamt" / "dagster").mkdir(parents=True)
    (project / ".streamt" / "dagster" / "dagster.yaml").write_text("run_storage: [not, closed\n")
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", "docs", "generate", "-p", str(project)],
                       capture_output=True, text=True, timeout=300, env=ENV)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert "warning: could not read the run history" in r.stderr and "dagster.yaml" in r.stderr
    state = core(project / "target" / "docs" / "index.html")["state"]
    assert state["runs"] == {} and "dagster.yaml" in state["error"]
