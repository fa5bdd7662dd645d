"""dagster-streamt's ``dg`` components (listed by ``dg list components`` through the
``dagster_dg_cli.registry_modules`` entry point; the top-level ``dagster_streamt`` re-exports them)."""

from .component import StreamtProjectComponent

__all__ = ["StreamtProjectComponent"]
