"""Small JSON and CSV sources are parsed once: their valid rows are kept as Parquet, per batch of files.

Parsing text is the costly part of reading a JSON or CSV source, and a dimension such as customers
is read whole by every refresh of every table that joins it, while its files rarely change. A source
whose files total at most ``runtime.spark.parsed_cache_mb`` (default 64; 0: never) keeps the valid rows of
the files it has parsed under ``<warehouse>/_parsed/<source>/``: one folder per batch of files parsed
together, and a manifest naming the batch's files with their fingerprints (:func:`.quarantine_ledger.fingerprint`),
the rows it holds and the declaration it was parsed with. A read whose files are exactly covered by
batches that are still valid reads Parquet; files no batch holds are parsed into a new batch first
(its malformed records are quarantined in the same pass); a batch with a changed or vanished file is
dropped. Declared columns only (an inferred schema can change with the files).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame

from ..core.files import atomic_write
from ..spec.models import Source
from .context import RunContext
from .input_files import Snapshot
from .locks import FileLock
from .quarantine_ledger import Fingerprint, read_fingerprint
from .source_schema import declared_ddl
from .sources import CORRUPT, PERMISSIVE

MANIFEST = "_batch.json"  # inside the batch's Parquet folder: Spark skips `_` files


@dataclass(frozen=True)
class Batch:
    folder: Path
    files: Mapping[str, Fingerprint]
    rows: int


def _declaration(source: Source) -> str:
    text = json.dumps(source.model_dump(mode="json", include={"format", "options", "columns"}), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ParsedCache:
    """The cached batches of one source (see the module docstring)."""

    def __init__(self, root: Path, source: Source, snapshot: Snapshot) -> None:
        self.root = root
        self.source = source
        self.snapshot = snapshot
        self.declaration = _declaration(source)

    @classmethod
    def of(cls, ctx: RunContext, source: Source, snapshot: Snapshot | None) -> ParsedCache | None:
        """The cache of ``source``, or None when it does not qualify (format, size, no declared columns)."""
        limit = int(ctx.project.runtime.spark.parsed_cache_mb * 1024 * 1024)
        if snapshot is None or limit <= 0 or source.resolved_format not in PERMISSIVE:
            return None
        if not declared_ddl(source) or source.options.get("mode", "PERMISSIVE").upper() != "PERMISSIVE":
            return None
        if not snapshot.files or sum(fp[0] for fp in snapshot.files.values()) > limit:
            return None
        return cls(ctx.warehouse.root / "_parsed" / source.name, source, snapshot)

    def lock(self) -> FileLock:
        return FileLock(self.root / ".lock", wait=True)

    def batches(self) -> list[Batch]:
        """Valid batches (every file still as it was parsed); invalid ones are deleted."""
        out: list[Batch] = []
        for manifest in sorted(self.root.glob(f"*/{MANIFEST}")):
            if manifest.parent.name.startswith("."):  # a batch being written
                continue
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
                files = {f: read_fingerprint(fp) for f, fp in data["files"].items()}
                batch = Batch(manifest.parent, files, int(data["rows"]))
                valid = data.get("declaration") == self.declaration and \
                    all(self.snapshot.files.get(f) == fp for f, fp in files.items())
            except (OSError, ValueError, KeyError, TypeError, IndexError):
                batch, valid = Batch(manifest.parent, {}, 0), False
            if valid:
                out.append(batch)
            else:
                shutil.rmtree(manifest.parent, ignore_errors=True)
        return out

    def cover(self, files: list[str]) -> tuple[list[Batch], list[str]] | None:
        """(the batches holding exactly rows of ``files``, the files none holds); None when a batch
        holds some of ``files`` and others too (its rows cannot be split by file)."""
        wanted = set(files)
        chosen: list[Batch] = []
        held: set[str] = set()
        for batch in self.batches():
            inside = wanted & set(batch.files)
            if not inside:
                continue
            if len(inside) != len(batch.files):
                return None
            chosen.append(batch)
            held |= inside
        return chosen, sorted(wanted - held)

    def add(self, rows: DataFrame, files: list[str], count: int | None = None) -> Batch:
        """Write ``rows`` (the valid rows of exactly ``files``) as a new batch; its rows are counted while
        written unless ``count`` is given. Appears whole or not at all (a rename)."""
        from .output import counted, observed_rows, parquet_rows

        name = uuid.uuid4().hex[:16]
        tmp = self.root / f".tmp-{name}"
        try:
            observation = f"streamt_parsed_{self.source.name}_{name}"
            out, obs = counted(rows, observation)
            out.write.mode("error").parquet(str(tmp))
            seen = count if count is not None else observed_rows(obs, observation)
            if seen is None:  # no count came back: the footers of what was just written hold it
                seen = parquet_rows(tmp)
            if seen is None:
                seen = rows.sparkSession.read.parquet(str(tmp)).count()
            batch = Batch(self.root / name, {f: self.snapshot.files[f] for f in files}, seen)
            atomic_write(tmp / MANIFEST, json.dumps({"declaration": self.declaration, "rows": batch.rows,
                                                     "files": {f: list(fp) for f, fp in sorted(batch.files.items())}},
                                                    sort_keys=True))
            os.replace(tmp, batch.folder)
            return batch
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def read(self, ctx: RunContext, batches: list[Batch], columns: tuple[str, ...]) -> DataFrame:
        """The valid rows the batches hold, with the source's declared columns."""
        ddl = declared_ddl(self.source)
        assert ddl is not None
        reader = ctx.spark.read.schema(ddl)
        df = reader.parquet(*[str(b.folder) for b in batches])
        return df.select(*[f"`{c}`" for c in columns if c != CORRUPT])
