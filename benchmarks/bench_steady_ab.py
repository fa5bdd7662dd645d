"""Steady +1 % reruns on the project's server: this tree against another revision, interleaved.

A change to the rerun path moves a steady rerun by a second or less, and on a 2-core machine two
reruns of the same code differ by several seconds (the JIT still warming after dozens of runs, Delta
checkpoints every tenth commit, the state compaction every 16th refresh). So both revisions run side
by side, in one session, on the same data: each has its own project (its own copy of the peer data)
and its own Spark Connect server, started by its own code; after a one-shot full run each, rounds of
one more +1 % file for both, then a rerun of each, in alternating order. Reported per side: the median
wall time, the server's CPU and the ``streamt`` process's CPU over the rounds after the warm-up ones,
and their ratios (this tree / base). After every round both sides' tables must hold the same rows and
sums, else the script fails.

    flock /tmp/spark.lock python3 benchmarks/bench_steady_ab.py --base HEAD            # uncommitted change
    flock /tmp/spark.lock python3 benchmarks/bench_steady_ab.py --base 314ab68 --rounds 10
    flock /tmp/spark.lock python3 benchmarks/bench_steady_ab.py --base HEAD --one-shot  # `streamt run`'s default

``--one-shot``: the same +1 % rerun in a fresh JVM each round (the default of ``streamt run``, no
server), each side from its own saved state: after the full run and one more orders file, each side's
project folder is kept, and put back before each of its reruns, so every round repeats the very same
rerun. CPU is the whole process tree's (through ``reap.py``: the JVM included).

Data: ``peer_data.cached_data`` (``--orders``, default 2,000,000, as ``bench_peers.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import proc_cpu, server_env, stop_server
from bench_util import median, parse_summary
from peer_data import PeerData, cached_data, fingerprint, peer_dir, streamt_outputs

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Side:
    """One revision: its source tree, project, data folder, server and measurements."""

    name: str
    tree: Path
    project: Path
    data: Path
    server: int = 0
    walls: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)
    client_cpu: list[float] = field(default_factory=list)
    full: float = 0.0

    def env(self) -> dict[str, str]:
        env = server_env()
        env["PYTHONPATH"] = str(self.tree)  # this side's package, whatever is installed
        return env

    def streamt(self, *args: str, reap: Path | None = None) -> tuple[float, float, str]:
        """``streamt ARGS -p project`` with this side's code: (wall s, its own CPU s, stdout). ``reap``:
        the peer's ``reap.py``, to wait for (and count the CPU of) the JVM too."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        waiter = [sys.executable, str(reap)] if reap is not None else []
        proc = subprocess.run([*waiter, sys.executable, "-m", "dagster_streamt.cli", *args, "-p", str(self.project)],
                              cwd=self.project.parent, env=self.env(), capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"{self.name}: streamt {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n"
                             f"{proc.stderr[-3000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, proc.stdout

    def start_server(self) -> None:
        self.streamt("server", "start")
        state = json.loads((self.project / ".streamt" / "connect-server" / "server.json").read_text())
        self.server = int(state["pid"])

    def one_shot(self, peer: Path, saved: Path) -> str:
        """Put the saved state back, then one ``streamt run`` and its JVM (``reap.py`` waits for both)."""
        shutil.rmtree(self.project)
        shutil.copytree(saved, self.project, symlinks=True)
        wall, cpu, out = self.streamt("run", reap=peer / "reap.py")
        self.walls.append(wall)
        self.client_cpu.append(cpu)
        models = ", ".join(f"{m} {v['seconds']}" for m, v in parse_summary(out).items())
        return f"{self.name:5} {wall:5.1f} s ({models})"

    def rerun(self, record: bool) -> str:
        cpu_before = proc_cpu(self.server)
        wall, cpu, out = self.streamt("run")
        if record:
            self.walls.append(wall)
            self.server_cpu.append(proc_cpu(self.server) - cpu_before)
            self.client_cpu.append(cpu)
        models = ", ".join(f"{m} {v['seconds']}" for m, v in parse_summary(out).items())
        return f"{self.name:5} {wall:5.1f} s ({models})"


def worktree(rev: str, dest: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(dest), rev], check=True,
                   capture_output=True, text=True)
    return dest


def new_side(name: str, tree: Path, peer: Path, data: PeerData, work: Path) -> Side:
    root = work / name
    folder = data.linked_copy(root / "data")
    project = root / "project"
    project.mkdir(parents=True)
    text = (peer / "streamt_project.yml").read_text().replace("__DATA__", str(folder))
    (project / "stream_project.yml").write_text(text)
    return Side(name, tree, project, folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="HEAD", help="the revision to compare this tree with (default HEAD)")
    parser.add_argument("--rounds", type=int, default=8, help="measured rounds (default 8)")
    parser.add_argument("--warm", type=int, default=3, help="rounds before them, not measured (default 3)")
    parser.add_argument("--orders", type=int, default=2_000_000)
    parser.add_argument("--customers", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--peer-dir", type=Path, default=None)
    parser.add_argument("--one-shot", action="store_true",
                        help="the same +1 %% rerun in a fresh JVM each round, from saved state (no server)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.warm < 0:
        parser.error("--rounds must be at least 1 and --warm at least 0")

    peer = peer_dir(args.peer_dir)
    data = cached_data(peer, args.orders, args.customers, args.seed)
    work = Path(tempfile.mkdtemp(prefix="streamt-steady-ab-"))
    base = new_side("base", worktree(args.base, work / "base-tree"), peer, data, work)
    this = new_side("this", ROOT, peer, data, work)
    sides = (this, base)
    if args.one_shot:
        return one_shot(sides, peer, data, work, args.base, args.rounds)
    print(f"== steady +1 % reruns on each side's server: this tree ({ROOT}) against {args.base}; "
          f"{args.warm} warm-up and {args.rounds} measured rounds, alternating order; work folder {work}")
    try:
        for side in sides:
            side.full, _, _ = side.streamt("run")
            print(f"  full run (one-shot)  {side.name:5} {side.full:5.1f} s")
        for side in sides:
            side.start_server()
        for n in range(args.warm + args.rounds):
            record = n >= args.warm
            lines = []
            for side in (sides if n % 2 == 0 else sides[::-1]):
                data.add_extra(side.data, nth=n + 1)
                lines.append(side.rerun(record))
            got = {side.name: fingerprint(streamt_outputs(side.project)) for side in sides}
            if got["this"] != got["base"]:
                raise SystemExit(f"round {n + 1}: the two sides' tables differ: {got}")
            print(f"  round {n + 1:2} {'' if record else '(warm-up) '}" + "  |  ".join(lines))
    finally:
        for side in sides:
            if side.server:
                stop_server(side.project)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base.tree)],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)  # the projects' tables: gigabytes
    print("\n  side   median wall s  server CPU s  streamt CPU s  full run s  rerun/full")
    for side in sides:
        print(f"  {side.name:5} {median(side.walls):14.1f} {median(side.server_cpu):13.1f} "
              f"{median(side.client_cpu):14.1f} {side.full:11.1f} {median(side.walls) / side.full:11.2f}")
    print(f"\n  this / base: wall {median(this.walls) / median(base.walls):.2f}, server CPU "
          f"{median(this.server_cpu) / median(base.server_cpu):.2f}, streamt CPU "
          f"{median(this.client_cpu) / median(base.client_cpu):.2f} (medians of {args.rounds} rounds)")
    print("  every round: both sides' tables hold the same rows and sums")
    return 0


def one_shot(sides: tuple[Side, Side], peer: Path, data: PeerData, work: Path, base_rev: str, rounds: int) -> int:
    """``--one-shot``: see the module docstring. Same report, without the server's columns."""
    this, base = sides
    print(f"== one-shot +1 % reruns (a fresh JVM each): this tree ({ROOT}) against {base_rev}; {rounds} rounds "
          f"from each side's saved state, alternating order; work folder {work}")
    try:
        saved = {}
        for side in sides:
            side.full, _, _ = side.streamt("run")
            print(f"  full run  {side.name:5} {side.full:5.1f} s")
        for side in sides:  # one more orders file for both, before either reads it
            data.add_extra(side.data)
        for side in sides:
            saved[side.name] = work / f"{side.name}-saved"
            shutil.copytree(side.project, saved[side.name], symlinks=True)
        for n in range(rounds):
            lines = [side.one_shot(peer, saved[side.name]) for side in (sides if n % 2 == 0 else sides[::-1])]
            got = {side.name: fingerprint(streamt_outputs(side.project)) for side in sides}
            if got["this"] != got["base"]:
                raise SystemExit(f"round {n + 1}: the two sides' tables differ: {got}")
            print(f"  round {n + 1:2} " + "  |  ".join(lines))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base.tree)],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print("\n  side   median wall s  CPU s (process tree)  full run s")
    for side in sides:
        print(f"  {side.name:5} {median(side.walls):14.1f} {median(side.client_cpu):21.1f} {side.full:11.1f}")
    print(f"\n  this / base: wall {median(this.walls) / median(base.walls):.2f}, CPU "
          f"{median(this.client_cpu) / median(base.client_cpu):.2f} (medians of {rounds} rounds)")
    print("  every round: both sides' tables hold the same rows and sums")
    return 0


if __name__ == "__main__":
    os.environ.pop("DAGSTER_HOME", None)
    raise SystemExit(main())
