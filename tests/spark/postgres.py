"""A real, throwaway PostgreSQL server for JDBC tests (module-scoped fixture ``postgres_url``)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import POSTGRES_JAR


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    which = shutil.which("pg_ctl")
    return Path(which).parent if which else None


PG_BIN = _pg_bin()


def skip_without_postgres() -> None:
    """Skip the calling test module when PostgreSQL or its JDBC driver is missing (scripts/setup-dev.sh
    installs both)."""
    if not POSTGRES_JAR.is_file() or PG_BIN is None:
        pytest.skip(f"needs {POSTGRES_JAR} and a pg_ctl binary: apt-get install -y postgresql "
                    "libpostgresql-jdbc-java", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """Start PostgreSQL in a temp dir on a free port (as the postgres user when we are root)."""
    assert PG_BIN is not None
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    base = Path(tempfile.mkdtemp(prefix="streamt-pg-"))
    if as_user:
        shutil.chown(base, "postgres", "postgres")
    data, port = base / "data", _free_port()

    def pg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*as_user, *args], capture_output=True, text=True, timeout=120, check=True)

    try:
        pg(str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
        pg(str(PG_BIN / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w", "start", "-o",
           f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off")
        yield f"jdbc:postgresql://127.0.0.1:{port}/postgres"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run([*as_user, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                           capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)
