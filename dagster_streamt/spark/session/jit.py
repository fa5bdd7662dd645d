"""Which of the JVM's compilers a run's local driver uses, chosen from how much data the run reads.

HotSpot compiles a hot method twice by default: at once with C1 (code that also counts how it runs),
then again with the optimizing C2 from those counts. The optimized code pays off over minutes of
hot loops; a run that reads a few megabytes of new data lives some 15 seconds, and on a small
machine C2's compiler thread then competes with the task threads for the cores, while the methods
wait in C1's slower counting code. With C1 alone (``-XX:TieredStopAtLevel=1``: its fully optimized
code, no counting, no C2), measured on 2 cores with the peer pipeline
(``benchmarks/bench_jit.py --modes quick,full``): the rerun after +1 % orders took 0.75x the wall time
and 0.61x the CPU, a first run over 200,000 orders (23 MB of JSON) 0.74x, over 600,000 (68 MB)
0.83x; a first run over 2 M orders (227 MB) took 1.23x, as its JSON parsing loops are what C2 is for.

So a local run decides before its JVM starts (``runtime.spark.jit: auto``, the default): ``quick``
(C1 only) when the data its models read anew is known to Python and small, else ``full`` (the JVM's
default); :mod:`..new_data` decides. The estimate is the size of the source files a model has not
read yet, by the files its last refresh read (a table's refresh record in its Delta log, a stream's
checkpoint); for a model without one, recomputed, refreshed in full or with a recorded file
rewritten, all the files of its sources and the Parquet files of the upstream tables it reads: file
listings and logs, no Spark. A file read again each run (a dimension joined through a view, which no
record lists) counts each time; the rows an incremental model reads from an upstream table do not:
they come from source files counted where they are read. The choice changes how fast the code runs,
never what it computes. The project's Connect server, which serves run after run, always uses the
default, and so does a driver whose ``spark.driver.extraJavaOptions`` already chooses a compiler.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from .jvm_archive import JAVA_OPTIONS

Jit = Literal["auto", "quick", "full"]
QUICK_OPTION = "-XX:TieredStopAtLevel=1"
# With C1 alone HotSpot reserves 48 MB for compiled code instead of 240 MB, and stops compiling for good
# once that is full (a long run of many queries filled it within minutes): the tiered default's size.
CODE_CACHE = "-XX:ReservedCodeCacheSize=240m"
# a compiler already chosen in the driver's options: left as it is
_CHOSEN = ("TieredStopAtLevel", "TieredCompilation", "UseJVMCICompiler", "CompileThreshold")


def with_jit(conf: Mapping[str, str], jit: Jit) -> dict[str, str]:
    """``conf`` with ``jit``'s option added to the driver's Java options (``quick`` only; ``auto`` here
    means nothing was decided: the JVM's default), unless those options already choose a compiler.

    >>> with_jit({}, "quick")
    {'spark.driver.extraJavaOptions': '-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m'}
    >>> with_jit({JAVA_OPTIONS: "-XX:-TieredCompilation"}, "quick")[JAVA_OPTIONS]
    '-XX:-TieredCompilation'
    >>> with_jit({}, "full")
    {}
    """
    out = dict(conf)
    current = out.get(JAVA_OPTIONS, "")
    if jit == "quick" and not any(flag in current for flag in _CHOSEN):
        cache = "" if "ReservedCodeCacheSize" in current else CODE_CACHE
        out[JAVA_OPTIONS] = f"{current} {QUICK_OPTION} {cache}".strip()
    return out
