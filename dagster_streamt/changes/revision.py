"""A project as a git revision holds it, in a folder of its own: what ``streamt diff --base REF``
compares with, read with git itself (``git archive``), without touching the working tree or the index.

Only the project folder is taken from the revision (its models, SQL files, environments); anything it
names outside that folder is read as it is now.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path


class RevisionError(Exception):
    """The revision cannot be read: not a git repository, an unknown revision, no git."""


def _git(cwd: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise RevisionError("git is not installed (streamt diff --base reads revisions with git)") from None
    if done.returncode != 0:
        raise RevisionError(done.stderr.decode(errors="replace").strip() or f"git {' '.join(args)} failed")
    return done.stdout


def project_at(project_dir: Path, revision: str, into: Path) -> Path | None:
    """Extract ``project_dir`` as ``revision`` has it under ``into``; its path there, or None when the
    revision has no such folder (every model is then new).

    >>> project_at(Path("project"), "HEAD", Path(tempfile.mkdtemp()))  # doctest: +SKIP
    PosixPath('/tmp/tmpab12/project')
    """
    folder = project_dir.resolve()
    try:
        top = Path(_git(folder, "rev-parse", "--show-toplevel").decode().strip())
    except RevisionError as exc:
        raise RevisionError(f"{project_dir} is not in a git repository ({exc})") from None
    try:
        commit = _git(top, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}").decode().strip()
    except RevisionError:
        raise RevisionError(f"no revision {revision!r} in {top} (a branch, tag or commit: "
                            "git log --oneline lists them)") from None
    relative = folder.relative_to(top).as_posix()
    listed = _git(top, "ls-tree", "-d", "--name-only", commit, "--", relative or ".").decode().split()
    if relative and relative not in listed:
        return None
    archive = _git(top, "archive", "--format=tar", commit, "--", relative or ".")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / relative if relative else into
