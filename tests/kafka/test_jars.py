"""Finding the cached Kafka jars: a missing cache names the command that fetches them, and the connector
jars join a session's spark.jars only once, after the user's."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from dagster_streamt.kafka import jars


def _fake_cache(root: Path, folder: str, names: list[str], complete: bool = True) -> Path:
    path = root / "dagster-streamt" / "jars" / folder
    path.mkdir(parents=True)
    for name in names:
        (path / name).write_bytes(b"")
    if complete:
        (path / jars.MARKER).write_text("done\n")
    return path


def test_missing_jars_name_the_fetch_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(jars.KafkaJarsMissing, match=r"bash scripts/setup\.sh.*mvn") as caught:
        jars.connector_jars("4.2.0")
    assert str(tmp_path / "dagster-streamt" / "jars" / "spark-kafka-4.2.0") in str(caught.value)
    with pytest.raises(jars.KafkaJarsMissing, match=r"bash scripts/setup\.sh"):
        jars.broker_classpath()
    with pytest.raises(ValueError, match="Kafka connector"):  # a ValueError: the CLI prints it as one line
        jars.with_connector_jars({}, "4.2.0")


def test_a_half_copied_folder_does_not_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _fake_cache(tmp_path, "kafka-broker-9.9.9", ["kafka_2.13-9.9.9.jar"], complete=False)
    with pytest.raises(jars.KafkaJarsMissing):
        jars.broker_jars("9.9.9")


def test_connector_jars_merge_into_spark_jars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = _fake_cache(tmp_path, "spark-kafka-4.2.0", ["spark-sql-kafka-0-10_2.13-4.2.0.jar",
                                                         "kafka-clients-3.9.2.jar"])
    found = [str(p) for p in jars.connector_jars("4.2.0")]
    assert found == [str(folder / "kafka-clients-3.9.2.jar"), str(folder / "spark-sql-kafka-0-10_2.13-4.2.0.jar")]
    assert jars.with_connector_jars({"a": "b"}, "4.2.0") == {"a": "b", "spark.jars": ",".join(found)}
    merged = jars.with_connector_jars({"spark.jars": "/x/pg.jar, " + found[0]}, "4.2.0")
    assert merged["spark.jars"] == ",".join(["/x/pg.jar", *found])
    own = {"spark.jars.packages": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"}
    assert jars.with_connector_jars(own, "4.2.0") == own  # the user's own connector wins


def test_the_spark_version_is_the_installed_pyspark() -> None:
    import pyspark

    assert jars.spark_version() == pyspark.__version__


def _artifact(jar: str) -> str:
    """kafka-clients-3.9.2.jar -> kafka-clients (as scripts/kafka_jars.sh reads jar names)."""
    return re.sub(r"-\d[0-9A-Za-z.]*(-[0-9A-Za-z.]+)?\.jar$", "", jar)


def test_the_real_cache_holds_no_jar_pyspark_bundles() -> None:
    """What setup fetched for the installed pyspark never repeats a jar of pyspark's jars/ folder (at any
    version), and holds what pyspark lacks: the connector, its token provider, kafka-clients, commons-pool2."""
    import pyspark

    try:
        found = {_artifact(p.name) for p in jars.connector_jars()}
    except jars.KafkaJarsMissing as exc:
        pytest.skip(f"run `bash scripts/setup.sh` to fetch the Kafka jars ({exc})")
    bundled = {_artifact(name) for name in os.listdir(Path(pyspark.__file__).parent / "jars")}
    assert {"spark-sql-kafka-0-10_2.13", "spark-token-provider-kafka-0-10_2.13", "kafka-clients", "commons-pool2",
            "spark-avro_2.13"} <= found
    assert found & bundled == set()


def test_streamt_kafka_start_without_jars_says_how_to_fetch(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from dagster_streamt.cli.main import cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = CliRunner().invoke(cli, ["kafka", "start", "--dir", str(tmp_path / "k"), "--port", "0"])
    assert result.exit_code == 1
    assert "bash scripts/setup.sh" in result.output and "bug" not in result.output
