"""`streamt init`: the scaffold validates clean (no errors, no warnings), its name follows the folder, it
never writes into a non-empty folder unless told, and --dry-run writes nothing. Running it on Spark and
in Dagster from an installed wheel: tests/test_package.py."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from dagster_streamt.api import load
from dagster_streamt.cli.main import cli


def test_the_scaffold_is_a_valid_project_named_for_its_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "my-shop")])
    assert result.exit_code == 0, result.output
    root = tmp_path / "my-shop"
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        ".gitignore", "data/orders/orders-2026-01-05.json", "definitions.py", "exposures/dashboard.yml",
        "models/customer_totals.yml", "models/orders_clean.yml", "sources/orders.yml", "stream_project.yml",
        "tests/orders_tests.yml"]
    loaded = load(root, use_cache=False)
    assert loaded.project.name == "my_shop"
    assert [d.format() for d in loaded.diagnostics if d.severity.value != "note"] == []
    assert sorted(loaded.project.models) == ["customer_totals", "orders_clean"]
    assert sorted(loaded.project.tests) == ["customer_totals_unique", "orders_clean_quality"]
    assert sorted(loaded.project.exposures) == ["revenue_dashboard"]
    assert "build_definitions(Path(__file__).parent)" in (root / "definitions.py").read_text()
    assert "streamt run -p" in result.output and "dg dev -f" in result.output


def test_a_non_empty_folder_is_refused_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    refused = CliRunner().invoke(cli, ["init", "-p", str(tmp_path)])
    assert refused.exit_code == 1 and "is not empty (notes.txt)" in refused.output and "--force" in refused.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    forced = CliRunner().invoke(cli, ["init", str(tmp_path), "--force", "--project-name", "shop"])
    assert forced.exit_code == 0, forced.output
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert "name: shop" in (tmp_path / "stream_project.yml").read_text()


def test_dry_run_writes_nothing_and_bad_input_is_a_usage_error(tmp_path: Path) -> None:
    runner = CliRunner()
    dry = runner.invoke(cli, ["init", str(tmp_path / "p"), "--dry-run"])
    assert dry.exit_code == 0 and "  stream_project.yml" in dry.output and not (tmp_path / "p").exists()
    bad = runner.invoke(cli, ["init", str(tmp_path / "q"), "--project-name", "1 bad"])
    assert bad.exit_code == 2 and "letters, digits and underscores" in bad.output
    both = runner.invoke(cli, ["init", str(tmp_path / "a"), "-p", str(tmp_path / "b")])
    assert both.exit_code == 2 and "give the folder once" in both.output
    (tmp_path / "file").write_text("")
    not_dir = runner.invoke(cli, ["init", str(tmp_path / "file")])
    assert not_dir.exit_code == 2 and "Traceback" not in not_dir.output
