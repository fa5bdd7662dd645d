"""Start a local Spark Connect server process (pyspark's bundled ``sbin`` script), for
:mod:`.project_server`, which decides when and keeps its state.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pyspark

from ...spec.project import Project
from ..errors import SparkSetupError
from ..storage.paths import ProjectPaths
from .java import check_java
from .jvm_archive import with_archive
from .settings import SparkSettings

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT_S = 120.0


def spark_home() -> Path:
    """pyspark's own folder: it ships bin/, sbin/ and jars/, so it works as SPARK_HOME."""
    return Path(pyspark.__file__).resolve().parent


def port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _server_env(project: Project, port: int, state: Path | None = None) -> dict[str, str]:
    state = state or ProjectPaths.from_project(project).state_dir / "connect-server"
    (state / "logs").mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update({
        "SPARK_HOME": str(spark_home()),
        "SPARK_PID_DIR": str(state),
        "SPARK_LOG_DIR": str(state / "logs"),
        "SPARK_IDENT_STRING": f"streamt-{port}",  # pid/log file names; lets stop find this server
        "PYSPARK_PYTHON": env.get("PYSPARK_PYTHON", sys.executable),
    })
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    env.pop("SPARK_REMOTE", None)
    return env


def _log_tail(env: Mapping[str, str], lines: int = 15) -> str:
    logs = sorted(Path(env["SPARK_LOG_DIR"]).glob("*.out"), key=lambda p: p.stat().st_mtime)
    if not logs:
        return "(no server log written)"
    text = logs[-1].read_text(encoding="utf-8", errors="replace").splitlines()
    return "\n".join(text[-lines:])


def _pid_file(env: Mapping[str, str], port: int) -> Path:
    return Path(env["SPARK_PID_DIR"]) / f"spark-streamt-{port}-{SERVER_CLASS}-1.pid"


def start_server_process(project: Project, settings: SparkSettings, conf: Mapping[str, str], port: int,
                         state: Path | None = None) -> int:
    """Start a server on ``port`` with pyspark's ``sbin/spark-daemon.sh`` (it daemonizes the JVM); return its pid
    once the port answers. ``state``: the folder for its pid and logs (default: the project's)."""
    check_java()
    env = _server_env(project, port, state)
    # pyspark's sbin/start-connect-server.sh is `spark-daemon.sh submit <server class> 1 --name ...`; some
    # pyspark wheels (4.2.0) ship spark-daemon.sh and the server's jar without that wrapper
    daemon = spark_home() / "sbin" / "spark-daemon.sh"
    if not daemon.is_file():
        raise SparkSetupError(f"pyspark has no {daemon}; reinstall pyspark[connect] or run a Connect server "
                              "yourself and set runtime.spark.remote")
    args = ["bash", str(daemon), "submit", SERVER_CLASS, "1", "--name", "Spark Connect server",
            "--master", settings.master, "--conf", f"spark.connect.grpc.binding.port={port}"]
    if settings.mode == "local" and settings.class_archive:  # maps the machine's class archive (never writes it)
        conf = with_archive(conf, dump=False)
    for key, value in conf.items():
        args += ["--conf", f"{key}={value}"]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise SparkSetupError(f"could not start the Spark Connect server: {proc.stderr.strip() or proc.stdout}")
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if port_open(port):
            try:
                return int(_pid_file(env, port).read_text().strip())
            except (OSError, ValueError):
                raise SparkSetupError(f"the Spark Connect server on port {port} left no pid file "
                                      f"({_pid_file(env, port)})") from None
        time.sleep(0.2)
    raise SparkSetupError(f"the Spark Connect server did not listen on port {port} within "
                          f"{START_TIMEOUT_S:.0f}s; its log ends with:\n{_log_tail(env)}")
