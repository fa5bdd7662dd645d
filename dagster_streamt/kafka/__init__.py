"""Kafka itself, outside Spark: where the JVM jars Kafka needs are cached (:mod:`.jars`: Spark's
connector, which pyspark does not bundle, and a broker), a local single-node KRaft broker without Docker
(:mod:`.broker`, ``streamt kafka start``) and topic administration from Python (:mod:`.admin`).

Importing it imports neither pyspark nor Dagster: a project that does not use Kafka pays nothing, and
the broker and topic tools work without a Spark session.
"""
