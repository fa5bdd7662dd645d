"""Environment switches: one reading of "off" for every ``STREAMT_*`` variable that turns a feature off.

Standard library only: the ``streamt`` client reads these before it imports anything else.
"""

from __future__ import annotations

import os

OFF = ("off", "0", "false", "no", "none")
SPARK_SERVER_ENV = "STREAMT_SPARK_SERVER"  # "off": every run starts its own JVM, whatever runtime.spark says


def switched_off(name: str) -> bool:
    """Whether the environment variable ``name`` turns its feature off (unset: on)."""
    return os.environ.get(name, "").strip().lower() in OFF
