"""The trivial-models project (see ``bench_util.write_trivial_project``) hand-written in plain PySpark:
one session, the CSV source read with its declared schema, then ``--models`` tiny Parquet writes in
topological order, each ``SELECT id, v`` over the previous model's output, read back from its
folder. ``bench_orchestration.py`` uses (t(N) - t(1)) / (N - 1) as the hand-written cost per model.

    python benchmarks/handwritten_trivial.py --project DIR --out OUT --models 50
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import trivial_name, trivial_parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--project", type=Path, required=True, help="folder with data/items/")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--models", type=int, default=50)
    args = ap.parse_args()
    t0 = time.perf_counter()
    shutil.rmtree(args.out, ignore_errors=True)
    out = args.out.resolve()
    spark = (SparkSession.builder.master("local[2]").appName("handwritten-trivial")
             .config("spark.sql.shuffle.partitions", "4").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    t1 = time.perf_counter()
    spark.read.schema("id bigint, v double").option("header", "true").csv(
        str(args.project.resolve() / "data" / "items")).createOrReplaceTempView("items")
    for k in range(1, args.models + 1):
        parent = trivial_parent(k)
        if parent:
            spark.read.schema("id bigint, v double").parquet(str(out / trivial_name(parent))) \
                .createOrReplaceTempView(trivial_name(parent))
        src = "items" if parent == 0 else trivial_name(parent)
        spark.sql(f"SELECT id, v FROM {src}").write.mode("overwrite").parquet(str(out / trivial_name(k)))
    t2 = time.perf_counter()
    spark.stop()
    print(f"session {t1 - t0:.1f} s, {args.models} model(s) {t2 - t1:.2f} s, stop {time.perf_counter() - t2:.1f} s")


if __name__ == "__main__":
    main()
