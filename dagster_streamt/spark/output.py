"""Small helpers shared by the materializers: schemas, row-count observation, write options."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ..core.files import atomic_write
from .input_files import tree_files
from .observed_views import observed_metrics

OUT_METRIC = "streamt_rows_out"
ROWS_CACHE = "_streamt_output_rows.json"  # in a model's folder: footer counts of its stored files (a reset
# deletes it with them)


def schema_pairs(schema: StructType) -> list[tuple[str, str]]:
    """(column, Spark SQL type) pairs, the form results and Dagster metadata use."""
    return [(f.name, f.dataType.simpleString()) for f in schema.fields]


def counted(df: DataFrame, name: str) -> tuple[DataFrame, Observation]:
    """``df`` observed so the action that writes it also counts its rows (no second pass)."""
    obs = Observation(name)
    return df.observe(obs, F.count(F.lit(1)).alias("rows")), obs


def observed_rows(obs: Observation, name: str | None = None) -> int | None:
    """The rows :func:`counted` saw; None when the action returned no count (unknown is not 0 rows).
    ``name``: the observation's name, for the metrics a Spark Connect action returned."""
    rows = observed_metrics(obs, name).get("rows")
    return int(rows) if rows is not None else None


def parquet_rows(folder: Path, cache: Path | None = None) -> int | None:
    """Rows of the Parquet data files under ``folder`` (partition folders included), from their footers:
    no Spark job, no data read. None when one cannot be read as Parquet (another format)."""
    files = tree_files(folder)
    return footer_rows([str(folder / rel) for rel in files], cache) if files is not None else None


def footer_rows(files: Iterable[str], cache: Path | None = None) -> int | None:
    """Rows of Parquet files (local paths or ``file:`` URIs) from their footers; None when one cannot be
    read here. ``cache``: files never rewritten (a stream's committed output) are counted once: their
    counts are kept there by path and size, so a stream with many files reads only its new footers."""
    import pyarrow.parquet as pq

    known: dict[str, Any] = {}
    if cache is not None:
        try:
            known = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            known = {}
    counts: dict[str, list[int]] = {}
    try:
        for f in files:
            parsed = urlparse(f)
            if parsed.scheme not in ("", "file"):
                return None
            path = unquote(parsed.path)
            size = os.stat(path).st_size
            hit = known.get(path) if isinstance(known, dict) else None
            rows = int(hit[1]) if isinstance(hit, list) and len(hit) == 2 and hit[0] == size else \
                pq.ParquetFile(path).metadata.num_rows
            counts[path] = [size, rows]
    except (OSError, ValueError, TypeError):
        return None
    if cache is not None and counts != known:
        atomic_write(cache, json.dumps(counts, sort_keys=True))
    return sum(rows for _, rows in counts.values())


def format_options(fmt: str) -> dict[str, str]:
    """Options that make a format read back what was written (csv keeps its header)."""
    return {"header": "true"} if fmt == "csv" else {}
