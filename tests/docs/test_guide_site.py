"""The user guide (docs/, mkdocs.yml): built once per session with ``mkdocs build --strict`` (offline),
its generated pages checked against the code they come from, every link followed, and the site
used in Debian's Chromium (navigation and search) with every request outside the site refused."""

from __future__ import annotations

import functools
import html.parser
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

import dagster_streamt
from dagster_streamt.checks.kinds import KINDS
from dagster_streamt.spec.compat import STREAMT_KEYS
from dagster_streamt.spec.errors import CODES

from .conftest import REPO


@pytest.fixture(scope="session")
def guide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("guide") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return site


@pytest.fixture(scope="session")
def served(guide: Path) -> Iterator[str]:
    handler = functools.partial(QuietHandler, directory=str(guide))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if value and ((name == "href" and tag in ("a", "link")) or (name == "src" and tag in ("script", "img"))):
                self.links.append(value)


@functools.cache
def parsed(page: Path) -> Links:
    links = Links()
    links.feed(page.read_text(encoding="utf-8"))
    return links


def page_text(guide: Path, name: str) -> str:
    return (guide / name).read_text(encoding="utf-8")


def test_the_generated_pages_hold_what_the_code_defines(guide: Path) -> None:
    streamt = page_text(guide, "coming-from-streamt.html")
    assert all(f"<code>{k.pattern}</code>" in streamt for k in STREAMT_KEYS)
    assert "no effect: Flink job tuning" in streamt and "<code>payments_example</code>" in streamt
    cli = page_text(guide, "reference/cli.html")
    from dagster_streamt.cli.main import cli as group

    for name, command in group.commands.items():
        assert f"streamt {name}</code>" in cli, name
        assert all(f"<code>{o}</code>" in cli for p in command.params for o in p.opts if p.opts[0].startswith("-"))
    yaml = page_text(guide, "reference/yaml.html")
    from dagster_streamt.spec.models import Model, Source

    for model, prefix in ((Model, "models[]"), (Source, "sources[]")):
        for name, field in model.model_fields.items():
            assert f"<code>{prefix}.{field.alias or name}</code>" in yaml, (prefix, name)
    codes = page_text(guide, "reference/error-codes.html")
    assert all(f"<code>{code}</code>" in codes for code in CODES)
    checks = page_text(guide, "dagster/checks.html")
    assert all(f"<code>{kind}</code>" in checks for kind in KINDS)
    api = page_text(guide, "reference/api.html")
    for name in dagster_streamt.__all__:
        if name not in ("__version__", "ASSERTION_KINDS"):
            assert f'id="dagster_streamt.{name}"' in api, name
    assert api.count("Examples") >= 10 and "get_model_key" in api


def test_every_link_stays_inside_the_site_and_arrives(guide: Path) -> None:
    pages = sorted(guide.rglob("*.html"))
    assert len(pages) >= 25
    broken: list[str] = []
    for page in pages:
        for link in parsed(page).links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                broken.append(f"{page.relative_to(guide)}: external {link}")
                continue
            base = guide if parts.path.startswith("/") else page.parent  # 404.html links from the site root
            target = (base / unquote(parts.path).lstrip("/")).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(guide)}: {link} (no file)")
            elif parts.fragment and target.suffix == ".html" and parts.fragment not in parsed(target).ids:
                broken.append(f"{page.relative_to(guide)}: {link} (no anchor)")
    assert not broken, broken


def test_the_markdown_sources_link_only_inside_the_repository() -> None:
    for md in sorted([*(REPO / "docs").rglob("*.md"), REPO / "README.md", REPO / "ARCHITECTURE.md"]):
        for link in re.findall(r"\]\(([^)\s]+)\)", md.read_text(encoding="utf-8")):
            assert not urlsplit(link).scheme, f"{md.relative_to(REPO)}: {link}"
            path = unquote(urlsplit(link).path)
            if path:
                assert (md.parent / path).exists(), f"{md.relative_to(REPO)}: {link}"


@pytest.mark.browser
def test_navigation_and_search_in_chromium(guide: Path, served: str, new_page: Any) -> None:
    page = new_page(allowed=served)
    p = page.page
    p.goto(served + "index.html")
    p.get_by_role("link", name="Coming from streamt").first.click()
    p.wait_for_url("**/coming-from-streamt.html")
    assert p.locator("h1").first.inner_text().rstrip("¶") == "Coming from streamt"
    assert p.locator("td code", has_text="runtime.flink").count() >= 1
    p.get_by_role("link", name="YAML", exact=True).first.click()
    p.wait_for_url("**/reference/yaml.html")
    p.locator("input[data-md-component='search-query']").first.click(force=True)
    p.keyboard.type("watermark")
    results = p.locator(".md-search-result__item")
    results.first.wait_for(timeout=20_000)
    assert results.count() >= 3
    results.first.locator("a").first.click()
    p.wait_for_load_state()
    assert "watermark" in p.locator("article").first.inner_text().lower()
    page.assert_clean()


@pytest.mark.browser
def test_pages_open_from_disk_with_no_network(guide: Path, new_page: Any) -> None:
    page = new_page()
    p = page.page
    p.goto((guide / "getting-started.html").as_uri())
    assert p.locator("h1").first.inner_text().rstrip("¶") == "Getting started"
    p.get_by_role("link", name="Performance").first.click()
    p.wait_for_url("**/performance.html")
    assert p.locator("td code", has_text="bench_peers.py").count() >= 1
    assert not page.blocked, page.blocked  # fonts, scripts, styles: all from the site's own folder


def test_the_readme_is_short_and_its_two_commands_are_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    run = "bash scripts/setup.sh && python3 project/generate.py && streamt run -p project && " \
          "streamt lineage -p project -m orders_clean --downstream"
    test = "bash scripts/setup-dev.sh && python3 -m ruff check . && python3 -m mypy && python3 -m pytest"
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert blocks[:2] == [run, test]
    assert test in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^## Where everything is documented", readme, re.M)  # every option: the references
