"""Find Java and check its version before Spark tries to start a JVM: Spark 4 needs Java 17+, and
the error Spark prints otherwise ("JAVA_GATEWAY_EXITED", or a class-version stack) hides the fix."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from ..errors import SparkSetupError

MIN_JAVA = 17
INSTALL_HINT = ("install Java 17 or newer, e.g. `apt-get install openjdk-17-jre-headless` (Debian/Ubuntu) "
                "or `brew install openjdk@17` (macOS), or point JAVA_HOME at a Java 17+ installation")
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


def find_java() -> Path | None:
    """The java binary Spark's launcher will use: $JAVA_HOME/bin/java, else java on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        return candidate if candidate.is_file() else None
    found = shutil.which("java")
    return Path(found) if found else None


def java_major_version(java: Path) -> int | None:
    """Major version from ``java -version`` ("1.8.0_x" is 8, "17.0.15" is 17); None if unreadable."""
    try:
        proc = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = _VERSION.search(proc.stderr + proc.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def check_java() -> int:
    """Return Java's major version, or raise :class:`SparkSetupError` saying what to install."""
    java = find_java()
    if java is None:
        where = f"JAVA_HOME={os.environ['JAVA_HOME']} has no bin/java" if os.environ.get("JAVA_HOME") \
            else "no `java` on PATH and JAVA_HOME is not set"
        raise SparkSetupError(f"Spark needs Java {MIN_JAVA}+, but {where}; {INSTALL_HINT}")
    major = java_major_version(java)
    if major is None:
        raise SparkSetupError(f"could not read the version of {java} (`java -version` failed); {INSTALL_HINT}")
    if major < MIN_JAVA:
        raise SparkSetupError(f"Spark 4 needs Java {MIN_JAVA}+, but {java} is Java {major}; {INSTALL_HINT}")
    return major
