"""The generated docs in a real browser (Debian's Chromium via Playwright), opened from file:// with
every network request blocked, clicked through as a person would."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.api import load
from dagster_streamt.graph.impact import impact

from .conftest import Page

pytestmark = pytest.mark.browser

DRAWN = """() => StreamtDocs.app.graph.cy.nodes().map(n => n.id()).sort()"""


def payload(index: Path) -> dict[str, Any]:
    text = index.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="streamt-data">(.*?)</script>', text, re.S)
    assert block is not None
    return json.loads(block.group(1))


def painted_pixels(page: Any) -> int:
    """Non-transparent pixels on the graph's canvases: the graph is really drawn, not just modelled."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('#graph canvas')).reduce((sum, c) => {
        if (!c.width || !c.height) return sum;
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
        return sum + n; }, 0)""")


def click_graph_node(page: Any, node_id: str) -> None:
    """A real mouse click on the node's position in the canvas."""
    pos = page.evaluate("""id => { const n = StreamtDocs.app.graph.cy.getElementById(id);
        const r = document.getElementById('graph').getBoundingClientRect(); const p = n.renderedPosition();
        return {x: r.left + p.x, y: r.top + p.y}; }""", node_id)
    page.mouse.click(pos["x"], pos["y"])


def test_example_lists_every_node_and_draws_the_graph(example_site: Path, new_page: Any) -> None:
    p: Page = new_page()
    page = p.open(example_site.as_uri())
    data = payload(example_site)
    listed = page.eval_on_selector_all("#sidebar li[data-id]", "els => els.map(e => e.dataset.id)")
    expected = [n["id"] for n in data["nodes"]] + [f"schedule.{s}" for s in data["schedules"]]
    assert sorted(listed) == sorted(expected)
    assert {"source.orders_raw", "model.orders_clean", "exposure.ops_dashboard", "test.orders_clean_quality",
            "schedule.hourly_orders"} <= set(listed)
    # the whole project is drawn (tests hang off their models), laid out, and painted on the canvas
    drawn = page.evaluate(DRAWN)
    assert drawn == sorted(n["id"] for n in data["nodes"] if n["type"] != "test")
    positions = page.evaluate("""() => StreamtDocs.app.graph.cy.nodes().map(n => [n.position('x'), n.position('y')])""")
    assert len({tuple(xy) for xy in positions}) == len(drawn)
    xs = page.evaluate("""() => { const c = StreamtDocs.app.graph.cy; const ids = ['source.orders_raw',
        'model.orders_clean', 'model.order_metrics', 'exposure.ops_dashboard'];
        return ids.map(i => c.getElementById(i).position('x')); }""")
    assert xs == sorted(xs) and len(set(xs)) == 4  # left to right, upstream first
    assert painted_pixels(page) > 5000
    assert page.inner_text("#details h2").startswith("shop")
    p.assert_clean()


def test_click_a_model_in_the_graph_shows_its_sql_and_columns(example_site: Path, new_page: Any) -> None:
    p = new_page()
    page = p.open(example_site.as_uri())
    click_graph_node(page, "model.orders_clean")
    page.wait_for_function("location.hash === '#model.orders_clean'")
    assert "orders_clean" in page.inner_text("#details h2")
    page.wait_for_selector("#sql[data-loaded='1'] pre code")
    sql = page.inner_text("#sql pre:not([hidden]) code")
    assert "lower(trim(status)) AS status" in sql and "FROM `orders_raw`" in sql
    assert page.locator("#sql code .hljs-keyword").count() >= 3  # highlighted by the vendored highlight.js
    page.click("#sql .tabs button:text('as written')")
    assert '{{ source("orders_raw") }}' in page.inner_text("#sql pre:not([hidden]) code")
    cols = page.eval_on_selector_all("#columns tbody tr", "rows => rows.map(r => r.dataset.column)")
    assert cols == ["order_id", "customer_id", "amount", "status", "ts"]
    amount = page.inner_text("#columns tr[data-column='amount']")
    assert "double" in amount and "Order total in EUR" not in amount  # a model column has no description
    assert "confidential" in amount and "orders_raw.amount" in amount and "DIRECT IDENTITY" in amount
    tests = page.inner_text("#details .tests")
    assert "orders_clean_quality" in tests and "accepted_values: {column: status" in tests
    assert "severity warn" in tests
    # upstream highlighted in blue, downstream in orange, the rest faded
    classes = page.evaluate("""() => Object.fromEntries(StreamtDocs.app.graph.cy.nodes().map(n => [n.id(),
        ['focus','up','down','faded'].filter(c => n.hasClass(c)).join()]))""")
    assert classes["model.orders_clean"] == "focus" and classes["source.orders_raw"] == "up"
    assert classes["exposure.ops_dashboard"] == "down" and classes["source.customers"] == "faded"
    p.assert_clean()


def test_a_column_shows_its_lineage_down_to_the_dashboard(example_site: Path, new_page: Any) -> None:
    p = new_page()
    page = p.open(example_site.as_uri() + "#source.orders_raw")
    page.click("#columns tr[data-column='amount'] a.colname")
    page.wait_for_selector("#column-view[data-column='orders_raw.amount']")
    down = page.inner_text("#column-downstream")
    assert "orders_clean.amount DIRECT IDENTITY" in down
    assert "order_metrics.revenue DIRECT AGGREGATION" in down
    assert "customer_orders.total_spent DIRECT AGGREGATION" in down
    assert page.inner_text("#column-upstream").strip().endswith("(none)")
    reached = page.inner_text("#column-exposures")
    assert "ops_dashboard (dashboard) reads order_metrics.revenue" in reached
    assert "billing_service (application) reads customer_orders.total_spent" in reached
    pii = page.inner_text("#column-view .block:last-child")
    assert "ops_dashboard receives order_metrics.revenue confidential" in pii
    lineage = page.evaluate("""() => StreamtDocs.app.graph.cy.nodes('.lineage').map(n => n.id()).sort()""")
    assert {"model.order_metrics", "exposure.ops_dashboard", "model.customer_orders"} <= set(lineage)
    # from a model column: where it comes from, with the edge types
    page.goto(example_site.as_uri() + "#model.customer_orders/total_spent")
    page.wait_for_selector("#column-view[data-column='customer_orders.total_spent']")
    up = page.inner_text("#column-upstream")
    assert "orders_clean.amount DIRECT AGGREGATION" in up and "orders_raw.amount DIRECT IDENTITY" in up
    p.assert_clean()


def test_search_finds_a_column_and_a_description(example_site: Path, new_page: Any) -> None:
    p = new_page()
    page = p.open(example_site.as_uri())
    page.keyboard.press("/")
    page.keyboard.type("total_sp")
    page.wait_for_selector("#search-results li[data-kind='column']")
    assert page.inner_text("#search-results li:first-child").endswith("customer_orders.total_spent")
    page.keyboard.press("Enter")
    page.wait_for_selector("#column-view[data-column='customer_orders.total_spent']")
    assert page.evaluate("location.hash") == "#model.customer_orders/total_spent"
    page.fill("#search", "wall screen")  # words of ops_dashboard's description
    page.wait_for_selector("#search-results li[data-kind='exposure']")
    assert "ops_dashboard in description" in page.inner_text("#search-results")
    page.fill("#search", "nosuchthing")
    page.wait_for_selector("#search-results li.none")
    p.assert_clean()


def test_impact_summary_of_orders_raw_lists_the_dashboard(example_site: Path, new_page: Any) -> None:
    p = new_page()
    page = p.open(example_site.as_uri() + "#source.orders_raw")
    text = page.inner_text("#impact")
    loaded = load(example_site.parents[2])
    expected = impact(loaded.graph, "source.orders_raw").sentence("orders_raw")
    assert page.inner_text("#impact .impact-sentence") == expected.splitlines()[0]
    assert "2 exposures: billing_service, ops_dashboard" in text and "Owners to notify:" in text
    page.click("#impact a:text('ops_dashboard')")
    page.wait_for_function("location.hash === '#exposure.ops_dashboard'")
    assert "order_metrics" in page.inner_text("#details")
    p.assert_clean()


def _column_hits(hits: list[Any]) -> list[Any]:
    return [[h.ref.relation, h.ref.column, h.depth, h.type,
             [[s.downstream.relation, s.downstream.column, s.upstream.relation, s.upstream.column, s.type, s.subtype]
              for s in h.path]] for h in hits]


JS_HITS = """([rel, col, up, direct]) => { const d = StreamtDocs.app.data;
    const hits = up ? d.columnUpstream(rel, col, direct) : d.columnDownstream(rel, col, direct);
    return hits.map(h => [h.rel, h.col, h.depth, h.type,
        h.path.map(s => [s.down[0], s.down[1], s.up[0], s.up[1], s.type, s.subtype])]); }"""


@pytest.mark.parametrize("which", ["example", "synthetic"])
def test_the_page_answers_like_the_cli(which: str, example_site: Path, synthetic_site: Path, new_page: Any) -> None:
    """Impact summaries and column lineage computed in the page equal the Python answers of
    `streamt lineage --downstream` and `streamt lineage -c` (every node and column of the example;
    a deterministic sample of the synthetic project, INDIRECT edges included)."""
    from dagster_streamt.lineage.project_columns import column_lineage

    site = example_site if which == "example" else synthetic_site
    loaded = load(site.parents[2])
    lineage = column_lineage(loaded)
    p = new_page()
    page = p.open(site.as_uri())
    ids = [n for n in loaded.graph.nodes][:: 1 if which == "example" else 7]
    js = page.evaluate("ids => ids.map(i => StreamtDocs.app.data.impactSentence(i))", ids)
    assert js == [impact(loaded.graph, i).sentence(loaded.graph.nodes[i].name) for i in ids]
    cols = [(m, c) for m in sorted(lineage.models) for c in lineage.models[m].columns]
    cols += [(s, c.name) for s in sorted(loaded.project.sources) for c in loaded.project.sources[s].columns]
    if which == "synthetic":
        indirect = [(m, c) for m, c in cols if m in lineage.models and any(
            e.type == "INDIRECT" for e in lineage.models[m].fields.get(c, ()))]
        assert indirect, "the synthetic project should have column-specific INDIRECT edges"
        cols = cols[::53] + indirect[:20]
    for rel, col in cols:
        for up in (True, False):
            for direct in (False, True):
                py = (lineage.upstream if up else lineage.downstream)(rel, col, direct_only=direct)
                assert page.evaluate(JS_HITS, [rel, col, up, direct]) == _column_hits(py), (rel, col, up, direct)
    p.assert_clean()


def test_synthetic_project_renders_by_neighbourhood(synthetic_site: Path, new_page: Any) -> None:
    p = new_page()
    page = p.open(synthetic_site.as_uri())
    data = payload(synthetic_site)
    page.wait_for_selector("#sidebar[data-listed='1']")
    listed = page.eval_on_selector_all("#sidebar li[data-id]", "els => els.map(e => e.dataset.id)")
    assert sorted(listed) == sorted([n["id"] for n in data["nodes"]] + [f"schedule.{s}" for s in data["schedules"]])
    assert "Large project" in page.inner_text("#graph-note")
    start = len(page.evaluate(DRAWN))
    assert 1 < start < sum(1 for n in data["nodes"] if n["type"] != "test")
    assert painted_pixels(page) > 2000
    # a model deep in the DAG: drawn with its inputs and readers; "+" widens, "-" narrows
    model = max((n for n in data["nodes"] if n["type"] == "model"),
                key=lambda n: sum(1 for e in data["edges"] if data["nodes"][e[1]]["id"] == n["id"]))
    page.goto(synthetic_site.as_uri() + "#" + model["id"])
    page.wait_for_function(f"location.hash === '#{model['id']}'")
    page.wait_for_function(f"StreamtDocs.app.graph.focus === '{model['id']}'")
    drawn = set(page.evaluate(DRAWN))
    index = {n["id"]: i for i, n in enumerate(data["nodes"])}
    parents = {data["nodes"][s]["id"] for s, d in data["edges"] if d == index[model["id"]]}
    assert model["id"] in drawn and parents <= drawn
    page.click("#graph-toolbar button[title='more hops']")
    wider = set(page.evaluate(DRAWN))
    assert drawn <= wider and "± 3 hops" in page.inner_text("#graph-toolbar")
    page.click("#graph-toolbar button[title='fewer hops']")
    page.click("#graph-toolbar button[title='fewer hops']")
    assert set(page.evaluate(DRAWN)) <= drawn
    assert "± 1 hops" in page.inner_text("#graph-toolbar")
    page.wait_for_selector("#sql[data-loaded='1'] pre code")
    p.assert_clean()


def test_every_entity_page_renders(example_site: Path, new_page: Any) -> None:
    """Each node, schedule and the PII and diagnostics pages open without a console error."""
    p = new_page()
    page = p.open(example_site.as_uri())
    data = payload(example_site)
    for target in [n["id"] for n in data["nodes"]] + ["schedule.hourly_orders", "pii", "diagnostics"]:
        page.evaluate("t => { location.hash = '#' + t; }", target)
        page.wait_for_function("t => decodeURIComponent(location.hash.slice(1)) === t", arg=target)
        assert page.inner_text("#details h2"), target
    page.evaluate("location.hash = '#schedule.hourly_orders'")
    page.wait_for_selector("#details code:text('tag:orders+')")
    assert "Runs 6 models" in page.inner_text("#details")
    page.evaluate("location.hash = '#test.orders_clean_quality'")
    page.wait_for_selector("#details .tests")
    assert "range: {column: amount, inclusive: false, max: 100000, min: 0}" in page.inner_text("#details")
    page.evaluate("location.hash = '#pii'")
    page.wait_for_selector("#pii-exposures")
    assert "customer_orders.total_spent" in page.inner_text("#pii-exposures")
    page.evaluate("location.hash = '#model.nope'")
    page.wait_for_selector("#details .warn")
    p.assert_clean()
