"""Kafka itself, outside Spark: a local single-node KRaft broker without Docker (:mod:`.broker`,
``streamt kafka start``; its jars come from :mod:`..jars`) and topic administration from Python (:mod:`.admin`).

Importing it imports neither pyspark nor Dagster: a project that does not use Kafka pays nothing, and
the broker and topic tools work without a Spark session.
"""
