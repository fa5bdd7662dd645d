"""dagster-streamt: streamt-style declarative SQL pipelines on Spark, orchestrated by Dagster.

The top-level package imports nothing heavy so that the lineage CLI stays fast; the Spark and
Dagster layers live in ``dagster_streamt.spark`` and ``dagster_streamt.dagster``.
"""

__version__ = "0.1.0"
