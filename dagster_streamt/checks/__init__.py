"""Data tests: assertion parameters, definition-time validation, Spark SQL and runners.

Knows nothing of Dagster. The parsing, validation and SQL-building modules import no Spark, so
``streamt validate`` stays fast; the runners (:mod:`.runner`, :mod:`.continuous`, :mod:`.violations`)
import pyspark.
"""
