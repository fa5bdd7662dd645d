"""The peer pipeline's data and outputs, for ``bench_peers.py`` (no Spark: NumPy for the data, pyarrow and
delta-rs to read the tables the runners write, so checking a run costs well under a second).

* :func:`peer_dir`: the shared peer-bench folder (``gen_data.py``, ``handwritten.py``, ``run_sdp.sh``,
  ``sdp/``, ``streamt_project.yml``, ``reap.py``).
* :func:`cached_data`: ``gen_data.py`` output, generated once per (orders, customers, seed, generator
  version) under the temp folder, with the number of malformed order lines counted independently of
  Spark (a line that is not a JSON object, or whose ``amount`` is a string).
* :func:`fingerprint`: rows and sum of the amount column of each of the four outputs (a Delta table's
  current version read with delta-rs, a Parquet folder with pyarrow).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROWS_PER_FILE = 100_000  # gen_data.py's file size
# output -> the column whose sum is compared (every output carries the orders' amount in one form)
OUTPUTS = {"orders_clean": "amount", "customer_orders": "amount", "order_metrics": "total_amount",
           "tier_revenue": "revenue"}


def peer_dir(given: Path | None = None) -> Path:
    """``given``, else ``shared/peer-bench`` next to the repository or one of its parents (worktrees)."""
    if given is not None:
        candidates = [given]
    else:
        env = os.environ.get("PEER_BENCH")
        candidates = [Path(env)] if env else [p / "shared" / "peer-bench" for p in REPO.parents]
    for c in candidates:
        if (c / "gen_data.py").is_file() and (c / "reap.py").is_file():
            return c.resolve()
    raise SystemExit(f"peer-bench folder not found (looked at {', '.join(map(str, candidates))}); "
                     "pass --peer-dir or set PEER_BENCH")


def malformed_lines(files: list[Path]) -> int:
    """Order lines Spark's PERMISSIVE JSON reader with the declared schema must flag as corrupt."""
    bad = 0
    for f in files:
        with f.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    bad += 1
                    continue
                if not isinstance(rec, dict) or isinstance(rec.get("amount"), str):
                    bad += 1
    return bad


@dataclass(frozen=True)
class PeerData:
    root: Path  # holds customers/ and orders/
    orders: int
    malformed: int
    extra: Path  # one more orders file (+1 %), not under root/orders
    extra_orders: int
    extra_malformed: int

    def linked_copy(self, dest: Path, with_extra: bool = False) -> Path:
        """A folder of hard links to the data (cheap; ``with_extra`` adds the +1 % file)."""
        if dest.exists():
            shutil.rmtree(dest)
        for sub in ("customers", "orders"):
            (dest / sub).mkdir(parents=True)
            for f in sorted((self.root / sub).iterdir()):
                os.link(f, dest / sub / f.name)
        if with_extra:
            self.add_extra(dest)
        return dest

    def add_extra(self, dest: Path, nth: int = 1) -> None:
        """Add the +1 % file to ``dest`` (``nth`` > 1: once more, as a copy under another name: a new
        file of the same orders, as a later hour's file would be. Not a hard link: a link changes the
        status time of the file already read, which a rerun then sees as rewritten)."""
        if nth == 1:
            os.link(self.extra, dest / "orders" / self.extra.name)
        else:
            shutil.copyfile(self.extra, dest / "orders" / f"{self.extra.stem}-{nth}{self.extra.suffix}")


def _gen(peer: Path, out: Path, orders: int, customers: int, seed: int, *extra: str) -> None:
    subprocess.run([sys.executable, str(peer / "gen_data.py"), "--orders", str(orders), "--customers",
                    str(customers), "--seed", str(seed), "--out", str(out), *extra],
                   check=True, capture_output=True, text=True)


def cached_data(peer: Path, orders: int, customers: int, seed: int, log: object = print,
                extra_orders: int | None = None) -> PeerData:
    """Generate once per arguments (and version of gen_data.py); later calls reuse the folder.
    ``extra_orders``: the size of the incremental file (default 1 % of ``orders``)."""
    code = hashlib.sha256((peer / "gen_data.py").read_bytes()).hexdigest()[:12]
    default = max(1, orders // 100)
    extra_orders = extra_orders or default
    key = f"o{orders}-c{customers}-s{seed}-{code}" + ("" if extra_orders == default else f"-e{extra_orders}")
    base = Path(tempfile.gettempdir()) / "streamt-peer-data" / key
    marker = base / "done.json"
    n_files = (orders + ROWS_PER_FILE - 1) // ROWS_PER_FILE
    if not marker.is_file():
        log(f"generating {orders:,} orders and {customers:,} customers (+{extra_orders:,} orders for the "
            f"incremental run) under {base} ...")
        shutil.rmtree(base, ignore_errors=True)
        _gen(peer, base / "data", orders, customers, seed)
        # the +1 % batch: the next file index, same seed, same schema, deterministic
        _gen(peer, base / "extra", extra_orders, customers, seed, "--start-file", str(n_files), "--no-customers")
        info = {"malformed": malformed_lines(sorted((base / "data" / "orders").glob("*.json"))),
                "extra_malformed": malformed_lines(sorted((base / "extra" / "orders").glob("*.json")))}
        marker.write_text(json.dumps(info))
    info = json.loads(marker.read_text())
    (extra,) = sorted((base / "extra" / "orders").glob("*.json"))
    return PeerData(base / "data", orders, info["malformed"], extra, extra_orders, info["extra_malformed"])


# -- outputs ---------------------------------------------------------------------------------------
Fingerprint = dict[str, tuple[int, float]]


def is_delta(folder: Path) -> bool:
    return (folder / "_delta_log").is_dir()


def parquet_rows_and_sum(folder: Path, column: str | None) -> tuple[int, float]:
    """Rows and sum of ``column`` of the table in ``folder``: a Delta table's current version (read with
    delta-rs: the folder also holds the files of earlier versions), else every Parquet file below it."""
    import pyarrow.compute as pc

    if is_delta(folder):
        from deltalake import DeltaTable

        table = DeltaTable(str(folder)).to_pyarrow_table(columns=[column] if column else None)
    elif not folder.is_dir() or not any(folder.rglob("*.parquet")):
        return 0, 0.0
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(str(folder), columns=[column] if column else [])
    total = pc.sum(table[column]).as_py() if column else 0.0
    return table.num_rows, round(float(total or 0.0), 2)


def fingerprint(folders: dict[str, Path]) -> Fingerprint:
    """Rows and sum of the amount column (2 decimals: Spark's sum order varies) of each output."""
    return {name: parquet_rows_and_sum(folders[name], col) for name, col in OUTPUTS.items()}


def streamt_outputs(project: Path) -> dict[str, Path]:
    """Where each model's rows are now: its Delta table (``<model>/data``, table and stream models alike,
    as in dagster_streamt/spark/storage/warehouse.py); a table in the pre-Delta layout: the version that
    ``<model>/_CURRENT`` names."""
    wh = project / ".streamt" / "warehouse"
    out: dict[str, Path] = {}
    for name in OUTPUTS:
        pointer = wh / name / "_CURRENT"
        out[name] = wh / name / pointer.read_text().strip() if pointer.is_file() else wh / name / "data"
    return out


def streamt_quarantined(project: Path, source: str = "orders_raw") -> int:
    return parquet_rows_and_sum(project / ".streamt" / "warehouse" / f"{source}__quarantine" / "data", None)[0]


def differences(got: Fingerprint, want: Fingerprint) -> list[str]:
    return [f"{name}: {got.get(name)} != {want[name]} (rows, sum)" for name in sorted(want)
            if got.get(name) != want[name]]
