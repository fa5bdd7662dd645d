"""The live status line of ``streamt run``: drawn only on a terminal, cleared before each finished
line, showing the models in flight with their elapsed time and, for streams, rows and batches."""

from __future__ import annotations

import io
import re
import time

import pytest

from dagster_streamt.cli.live_line import describe, live_line
from dagster_streamt.spark.run import live


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_line_shows_models_in_flight_and_clears_before_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the line is cut to the terminal's width, which a test run may set
    out = Terminal()
    live.BOARD.start("orders_clean", "stream")
    live.BOARD.stream("orders_clean", 1200, 3)
    try:
        with live.running("tier_revenue", "table"), live_line(out=out) as line:
            assert line is not None and live.BOARD.watched
            time.sleep(1.3)
            line.echo("  ✓ customer_orders  success")
            time.sleep(0.7)
    finally:
        live.BOARD.end("orders_clean")
    text = out.getvalue()
    assert re.search(r"  … orders_clean \(stream\) \d+ s, 1,200 rows in 3 batches; tier_revenue \(table\) \d+ s", text)
    before, _, after = text.partition("  ✓ customer_orders  success\n")
    assert before.endswith("\r\x1b[K"), "the status line is cleared before a finished line"
    assert "orders_clean (stream)" in after, "and drawn again below it"
    assert text.endswith("\r\x1b[K") and not live.BOARD.watched


def test_quiet_when_not_a_terminal() -> None:
    out = io.StringIO()
    with live.running("m", "table"), live_line(out=out) as line:
        assert line is None and not live.BOARD.watched
        time.sleep(0.6)
    assert out.getvalue() == ""


def test_describe() -> None:
    assert describe("m", "table", 2.4, None, None) == "m (table) 2 s"
    assert describe("s", "stream", 10.0, 5, 1) == "s (stream) 10 s, 5 rows in 1 batch"
