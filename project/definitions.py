"""Dagster code location of the example project (loaded by the repo's workspace.yaml)."""

from pathlib import Path

from dagster_streamt.dagster import build_definitions

defs = build_definitions(Path(__file__).parent)
