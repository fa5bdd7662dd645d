"""``scripts/setup-dev.sh`` on a fresh machine, against another revision's: CI's every run starts with it.

Each side runs its own revision's script (a git worktree for ``--base``, the working tree for "this")
into a new venv and a new ``$HOME`` (so empty jar, Ivy, uv and pip caches and a new Flink venv) with
``PIP_NO_CACHE_DIR=1 UV_NO_CACHE=1``; the sides alternate, round by round. What apt installs is the
machine's: purge a package first (say ``apt-get purge chromium chromium-common && apt-get autoremove``)
for a round to include it; the first side run reinstalls it, so only that side pays for it.

    python3 benchmarks/bench_setup.py --base 435c5f7            # one round each
    python3 benchmarks/bench_setup.py --base 435c5f7 --rounds 2

Prints each run's wall time and the CPU of its process tree, then the medians and the ratio."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_util import REPO, median, timed_run


def fresh_setup(checkout: Path, scratch: Path) -> tuple[float, float]:
    """(wall s, CPU s) of ``bash scripts/setup-dev.sh`` from ``checkout`` into a new venv and home."""
    shutil.rmtree(scratch, ignore_errors=True)
    home = scratch / "home"
    home.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "venv", str(scratch / "venv")], check=True)
    env = {"PATH": f"{scratch / 'venv' / 'bin'}:{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
           "HOME": str(home), "PIP_NO_CACHE_DIR": "1", "UV_NO_CACHE": "1", "VIRTUAL_ENV": str(scratch / "venv")}
    timed = timed_run(["bash", "scripts/setup-dev.sh"], cwd=checkout, env=env)
    shutil.rmtree(scratch, ignore_errors=True)
    return timed.seconds, timed.cpu_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the revision to compare with (a commit or branch)")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-setup-"))
    base = work / "base"
    subprocess.run(["git", "worktree", "add", "--detach", str(base), args.base], cwd=REPO, check=True,
                   capture_output=True)
    results: dict[str, list[tuple[float, float]]] = {"this": [], "base": []}
    try:
        for r in range(args.rounds):
            for side, checkout in (("this", REPO), ("base", base)) if r % 2 == 0 else (("base", base), ("this", REPO)):
                wall, cpu = fresh_setup(checkout, work / "scratch")
                results[side].append((wall, cpu))
                print(f"round {r + 1} {side:4}  {wall:6.1f} s wall  {cpu:6.1f} s CPU", flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=REPO, check=False)
        shutil.rmtree(work, ignore_errors=True)
    this, was = (median([w for w, _ in results[s]]) for s in ("this", "base"))
    print(f"median wall: this {this:.1f} s, base {args.base} {was:.1f} s: {this / was:.2f}x")


if __name__ == "__main__":
    main()
