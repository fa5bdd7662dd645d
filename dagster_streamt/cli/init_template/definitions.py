"""This project as a Dagster code location: `dg dev -f definitions.py` (sources, models, tests as
asset checks, exposures, schedules and sensors)."""

from pathlib import Path

from dagster_streamt import build_definitions

defs = build_definitions(Path(__file__).parent)
