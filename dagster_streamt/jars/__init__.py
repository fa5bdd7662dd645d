"""The JVM jars a run needs beyond pyspark's own: which and at which versions (:mod:`.sets`, the one place
that knows them), resolved once by Spark's own Ivy and cached for every later session (:mod:`.fetch`).

Importing it imports neither pyspark nor Dagster: a session start that finds its jars cached pays nothing.
"""
