"""A real single-node Kafka broker without Docker, for local runs (``streamt kafka start``) and tests.

One JVM runs Kafka's broker and KRaft controller (``process.roles=broker,controller``) from Kafka's own
jars, resolved once by Spark's Ivy and cached (:mod:`..jars`), on loopback only, with its data, config and log in one
folder. A folder is formatted once (``kafka.tools.StorageTool format``); starting again on it keeps its
topics. Internal topics have replication 1 (there is one broker) and topics are not created by a first
write unless asked: a typo in a topic name should fail, not make a new topic.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.processes import pid_alive as _pid_alive
from ..jars import sets
from ..jars.fetch import jars_for, policy
from ..jars.sets import KAFKA_VERSION

HOST = "127.0.0.1"
HEAP = "512m"
START_TIMEOUT = 90.0
STOP_TIMEOUT = 30.0
JVM_FLAGS = ["-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20"]
_NODE_ID = 1


class KafkaBrokerError(RuntimeError):
    """The broker did not start (or its folder is in use); the message ends with its log's last lines."""


@dataclass
class KafkaBroker:
    """A running broker: connect clients to ``bootstrap_servers``; :meth:`stop` ends it."""

    bootstrap_servers: str
    directory: Path
    process: subprocess.Popen[bytes]
    started_in: float = field(default=0.0)

    @property
    def port(self) -> int:
        return int(self.bootstrap_servers.rsplit(":", 1)[1])

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM (Kafka shuts down cleanly: logs flushed, the folder reusable), SIGKILL after
        ``timeout`` seconds, and wait either way, so no process is left behind."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        (self.directory / "broker.pid").unlink(missing_ok=True)


def free_port() -> int:
    """A TCP port nothing listens on now (the kernel's pick on loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def port_open(port: int, host: str = HOST) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).is_file():
        raise KafkaBrokerError("no java found (JAVA_HOME or PATH): the Kafka broker needs Java 17 or newer")
    return java


def _cluster_id() -> str:
    """A random cluster id as Kafka writes one (Uuid.randomUuid: URL-safe base64, 22 chars, no leading -)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _properties(directory: Path, port: int, controller_port: int, auto_create_topics: bool) -> str:
    settings = {
        "process.roles": "broker,controller",
        "node.id": _NODE_ID,
        "controller.quorum.voters": f"{_NODE_ID}@{HOST}:{controller_port}",
        "listeners": f"PLAINTEXT://{HOST}:{port},CONTROLLER://{HOST}:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://{HOST}:{port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": directory / "data",
        "num.partitions": 1,
        "auto.create.topics.enable": str(auto_create_topics).lower(),
        "offsets.topic.replication.factor": 1,
        "offsets.topic.num.partitions": 1,  # one group coordinator partition: a fast first consumer group
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
        "transaction.state.log.num.partitions": 1,
        "share.coordinator.state.topic.replication.factor": 1,
        "share.coordinator.state.topic.min.isr": 1,
        "group.initial.rebalance.delay.ms": 0,
        "log.flush.interval.messages": 1_000_000,
        # keep every record whatever its timestamp: Kafka's 7-day default deletes records produced with
        # historical event times (a replay, a test's fixed dates) at the first retention check, 5 min in
        "log.retention.ms": -1,
    }
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def _log4j2(directory: Path) -> str:
    """Kafka's own log goes to ``server.log`` in the folder (INFO), nothing to the terminal."""
    return "\n".join([
        "status = warn",
        "appender.file.type = File",
        "appender.file.name = file",
        f"appender.file.fileName = {directory / 'server.log'}",
        "appender.file.layout.type = PatternLayout",
        "appender.file.layout.pattern = [%d] %p %m (%c)%n",
        "rootLogger.level = INFO",
        "rootLogger.appenderRef.file.ref = file",
        "logger.request.name = kafka.request.logger",
        "logger.request.level = WARN",
        "",
    ])


def _tail(directory: Path, lines: int = 15) -> str:
    chunks = []
    for name in ("broker.out", "server.log"):
        path = directory / name
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()
            picked = [line for line in text if " ERROR " in line or "Exception" in line] or text
            chunks += picked[-lines:]
    return "\n".join(chunks[-lines:]) or "(no log)"


def _check_not_in_use(directory: Path) -> None:
    pid_file = directory / "broker.pid"
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    if _pid_alive(pid) and Path(f"/proc/{pid}/cmdline").is_file() and \
            b"kafka.Kafka" in Path(f"/proc/{pid}/cmdline").read_bytes():
        raise KafkaBrokerError(f"a Kafka broker (pid {pid}) already runs from {directory}; stop it first "
                               "or use another folder")


def _die_with_parent() -> Callable[[], None] | None:
    """For the child before exec (Linux): SIGTERM it when the starting thread ends, so a crashed test
    run or CLI leaves no broker behind. libc is loaded here, in the parent: the child only makes the
    call (no dlopen between fork and exec). Elsewhere None: :meth:`KafkaBroker.stop` remains the way."""
    try:
        import ctypes

        prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


def _format(java: str, classpath: str, directory: Path, config: Path) -> None:
    """Write the folder's cluster id and node metadata once (KRaft refuses to start unformatted)."""
    if (directory / "data" / "meta.properties").is_file():
        return
    # a short-lived JVM: C1 and the serial collector start it about 0.5 s sooner
    cmd = [java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
           f"-Dlog4j2.configurationFile={directory / 'log4j2.properties'}", "-cp", classpath,
           "kafka.tools.StorageTool", "format", "--config", str(config), "--cluster-id", _cluster_id(),
           "--ignore-formatted"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise KafkaBrokerError(f"formatting the broker's folder {directory} failed: {' '.join(detail)}")


def broker_classpath(kafka_version: str = KAFKA_VERSION) -> str:
    """Every jar a Kafka broker runs with (``kafka.Kafka``, ``kafka.tools.StorageTool``), as ``java -cp``
    takes them; resolved on first use unless the jar policy (``STREAMT_JARS``) is ``cache``."""
    mode = policy()
    jars = jars_for(sets.broker(kafka_version), "cache" if mode == "provided" else mode)
    return os.pathsep.join(str(j) for j in jars)


def start_broker(directory: Path | str, port: int = 0, *, kafka_version: str = KAFKA_VERSION,
                 auto_create_topics: bool = False, heap: str = HEAP,
                 timeout: float = START_TIMEOUT) -> KafkaBroker:
    """Start a broker on ``127.0.0.1:port`` (0: a free port) with its data in ``directory`` and return
    once it answers a metadata request; raises :class:`KafkaBrokerError` with its log's tail if not.
    On Linux the broker ends with the thread that started it (a crash leaves none behind): start it from
    a thread that outlives its use."""
    from .admin import KafkaAdminError, list_topics

    begin = time.monotonic()
    directory = Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    _check_not_in_use(directory)
    classpath, java = broker_classpath(kafka_version), _java()  # raises JarsUnavailable with the fix
    port = port or free_port()
    if port_open(port):
        raise KafkaBrokerError(f"port {port} on {HOST} is already in use (another broker?); pick another "
                               "with --port")
    controller_port = free_port()
    config = directory / "server.properties"
    config.write_text(_properties(directory, port, controller_port, auto_create_topics), encoding="utf-8")
    (directory / "log4j2.properties").write_text(_log4j2(directory), encoding="utf-8")
    _format(java, classpath, directory, config)
    cmd = [java, f"-Xmx{heap}", *JVM_FLAGS, "-Djava.awt.headless=true",
           f"-Dlog4j2.configurationFile={directory / 'log4j2.properties'}", f"-Dkafka.logs.dir={directory}",
           "-cp", classpath, "kafka.Kafka", str(config)]
    with open(directory / "broker.out", "wb") as out:
        # its own session: Ctrl-C in the terminal reaches the CLI, which stops the broker cleanly
        process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   cwd=directory, start_new_session=True, preexec_fn=_die_with_parent())
    (directory / "broker.pid").write_text(f"{process.pid}\n")
    broker = KafkaBroker(f"{HOST}:{port}", directory, process)
    deadline = begin + timeout
    try:
        while True:
            if process.poll() is not None:
                raise KafkaBrokerError(f"the Kafka broker exited with code {process.returncode} while starting; "
                                       f"its log ({directory}):\n{_tail(directory)}")
            if port_open(port):
                try:
                    list_topics(broker.bootstrap_servers, internal=True, timeout=5)
                    break
                except KafkaAdminError:
                    pass
            if time.monotonic() > deadline:
                raise KafkaBrokerError(f"the Kafka broker did not answer on {broker.bootstrap_servers} within "
                                       f"{timeout:g} s; its log ({directory}):\n{_tail(directory)}")
            time.sleep(0.2)
    except BaseException:
        broker.stop(timeout=10)
        raise
    broker.started_in = time.monotonic() - begin
    return broker
