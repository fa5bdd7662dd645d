"""The small typed core every layer imports: node ids, durations, atomic files, header-checked
caches, run results, Dagster metadata keys and the loaded project.

Nothing here imports pyspark, dagster or sqlglot, so plain-data code (the lineage CLI, the docs
site, run-history readers) can use these types without paying for an engine.
"""
