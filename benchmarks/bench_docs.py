"""`streamt docs` at scale: generation time and page-ready time of a 10,000-model project.

Generation is timed as a whole `streamt docs generate` process, cold (no cache in target/: the
project is parsed and its column lineage computed first) and warm (the caches any earlier `streamt`
command leaves), each next to its baseline in the same run: `streamt validate`, which loads the same
project (cold or warm) and nothing more. Page-ready is timed in Debian's Chromium (Playwright, network blocked,
file://): from navigation start to the graph drawn for the selection (``StreamtDocs.readyMs``),
then until a search typed at that moment shows its results, and opening a model with its SQL;
the baseline is the example project's page in the same browser.

Usage: ``python benchmarks/bench_docs.py [--models 10000] [--dir /tmp/streamt-bench-docs] [--repeat 3]``
Targets (issue 16): generation <= 10 s, page usable <= 3 s.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def timed(*args: str) -> float:
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "dagster_streamt.cli", *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        raise SystemExit(f"streamt {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")
    return elapsed


def page_times(browser: Any, index: Path, query: str) -> dict[str, float]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []

    def only_files(route: Any) -> None:  # the site must need no network
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            errors.append(route.request.url)
            route.abort()

    page.route("**/*", only_files)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(index.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    ready = page.evaluate("StreamtDocs.readyMs")
    drawn = page.evaluate("StreamtDocs.app.graph.cy.nodes().length")
    page.fill("#search", query)  # typed as soon as the page is ready
    page.wait_for_selector("#search-results li a", timeout=60_000)
    searched = page.evaluate("performance.now()")
    start = page.evaluate("performance.now()")
    page.evaluate("""() => { const m = Object.keys(StreamtDocs.app.data.raw.models).sort();
        location.hash = '#model.' + m[Math.floor(m.length / 2)]; }""")  # a model in the middle of the DAG
    page.wait_for_selector("#sql[data-loaded='1'] pre code", timeout=60_000)
    opened = page.evaluate("performance.now()") - start
    ctx.close()
    if errors:
        raise SystemExit(f"page errors in {index}: {errors}")
    return {"ready_ms": ready, "search_ms": searched, "open_model_ms": opened, "drawn": drawn}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=10_000)
    ap.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temporary one)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    scratch = args.dir or Path(tempfile.mkdtemp(prefix="streamt-bench-docs-"))
    big, example = scratch / f"project_{args.models}", scratch / "example"
    if not (big / "stream_project.yml").exists():
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "gen_project.py"), str(big), "--models",
                        str(args.models)], check=True, capture_output=True)
    shutil.rmtree(example, ignore_errors=True)
    shutil.copytree(REPO / "project", example, ignore=shutil.ignore_patterns(".streamt", "target", "data", "exports"))

    cold, cold_validate = [], []
    for _ in range(max(1, args.repeat - 1)):
        shutil.rmtree(big / "target", ignore_errors=True)
        cold_validate.append(timed("validate", "-p", str(big)))
        shutil.rmtree(big / "target", ignore_errors=True)
        cold.append(timed("docs", "generate", "-p", str(big), "--no-runs"))
    validate = [timed("validate", "-p", str(big)) for _ in range(args.repeat)]
    warm = [timed("docs", "generate", "-p", str(big), "--no-runs") for _ in range(args.repeat)]
    timed("docs", "generate", "-p", str(example), "--no-runs")
    site_mb = (big / "target" / "docs" / "index.html").stat().st_size / 1e6

    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        big_runs = [page_times(browser, big / "target" / "docs" / "index.html", "revenue")
                    for _ in range(args.repeat)]
        ex_runs = [page_times(browser, example / "target" / "docs" / "index.html", "revenue")
                   for _ in range(args.repeat)]
        browser.close()

    def med(xs: list[float]) -> float:
        return statistics.median(xs)

    def pmed(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    print(f"streamt docs at {args.models:,} models (median of {args.repeat}; index.html {site_mb:.1f} MB)")
    print(f"  generate, cold (no cache):        {med(cold):6.2f} s   baseline: streamt validate, cold: "
          f"{med(cold_validate):.2f} s (ratio {med(cold) / med(cold_validate):.2f}x)")
    print(f"  generate, warm:                   {med(warm):6.2f} s   target <= 10 s")
    print(f"  baseline: streamt validate, warm: {med(validate):6.2f} s   "
          f"docs/validate = {med(warm) / med(validate):.2f}x")
    print(f"  page ready (graph drawn):         {pmed(big_runs, 'ready_ms') / 1000:6.2f} s   target <= 3 s "
          f"({int(pmed(big_runs, 'drawn'))} nodes drawn around the busiest source)")
    print(f"  search answered (from navigation): {pmed(big_runs, 'search_ms') / 1000:5.2f} s   target <= 3 s")
    print(f"  open a model with its SQL:        {pmed(big_runs, 'open_model_ms') / 1000:6.2f} s")
    print(f"  baseline: example page ready:     {pmed(ex_runs, 'ready_ms') / 1000:6.2f} s   "
          f"ratio {pmed(big_runs, 'ready_ms') / pmed(ex_runs, 'ready_ms'):.1f}x")


if __name__ == "__main__":
    main()
