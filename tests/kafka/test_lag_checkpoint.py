"""Reading a stream query's position from its Structured Streaming checkpoint (no broker, no Spark): the
offsets of the last *committed* batch, per topic, told apart from other sources by the topic's name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dagster_streamt.kafka.lag import committed_position, offsets_json, read_offsets, reader_lag

# Spark 4.2.0's offset log file (OffsetSeqLog v1), as a `streamt run` of a Kafka stream wrote it
# (tests/kafka/test_lag_e2e.py reads one back): version, batch metadata with the session's streaming
# conf, then one line per source; a commit file is "v1" and the next batch's watermark.
CONF = {
    "spark.sql.streaming.stateStore.providerClass":
        "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
    "spark.sql.streaming.stateStore.rocksdb.mergeOperatorVersion": "2",
    "spark.sql.streaming.stateStore.rocksdb.formatVersion": "5",
    "spark.sql.streaming.queryEvolution.enableSourceEvolution": "false",
    "spark.sql.streaming.stateStore.encodingFormat": "unsaferow",
    "spark.sql.streaming.statefulOperator.useStrictDistribution": "true",
    "spark.sql.streaming.flatMapGroupsWithState.stateFormatVersion": "2",
    "spark.sql.streaming.multipleWatermarkPolicy": "min",
    "spark.sql.streaming.stateStore.rowChecksum.enabled": "false",
    "spark.sql.streaming.aggregation.stateFormatVersion": "2",
    "spark.sql.function.protobufExtensions.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.streaming.join.stateFormatVersion": "2",
    "spark.sql.streaming.stateStore.compression.codec": "lz4",
    "spark.sql.optimizer.pruneFiltersCanPruneStreamingSubplan": "false",
}
META = json.dumps({"batchWatermarkMs": 0, "batchTimestampMs": 1795630164930, "conf": CONF}, separators=(",", ":"))


def batch(checkpoint: Path, n: int, *sources: object, committed: bool = True) -> None:
    """Write ``offsets/<n>`` (a source: its offset JSON, or None for ``-``) and, if ``committed``,
    ``commits/<n>``, the way Spark lays them out."""
    (checkpoint / "offsets").mkdir(parents=True, exist_ok=True)
    (checkpoint / "commits").mkdir(parents=True, exist_ok=True)
    lines = ["v1", META, *("-" if s is None else json.dumps(s, separators=(",", ":")) for s in sources)]
    (checkpoint / "offsets" / str(n)).write_text("\n".join(lines), encoding="utf-8")
    (checkpoint / "offsets" / f".{n}.crc").write_bytes(b"crc\x00")  # Hadoop's checksum files: not batches
    if committed:
        (checkpoint / "commits" / str(n)).write_text('v1\n{"nextBatchWatermarkMs":0}', encoding="utf-8")


def test_the_last_committed_batch_counts_not_the_one_in_flight(tmp_path: Path) -> None:
    cp = tmp_path / "cp"
    batch(cp, 0, {"pay": {"0": 10, "1": 5}})
    batch(cp, 1, {"pay": {"1": 8, "0": 20}})
    batch(cp, 2, {"pay": {"0": 40, "1": 9}}, committed=False)  # planned, not finished
    position = committed_position(cp, ["pay"])
    assert position is not None and position.batch == 1
    assert position.offsets == {"pay": {0: 20, 1: 8}}


def test_sources_are_matched_by_topic_among_other_sources(tmp_path: Path) -> None:
    """A query joining a file source, two Kafka sources (one subscribed to two topics) and a source
    with no offset yet: each topic's offsets come from the line that names it."""
    cp = tmp_path / "cp"
    batch(cp, 3, {"logOffset": 2}, {"orders": {"0": 7}}, None, {"pay": {"0": 3, "2": 1}, "refunds": {"0": 4}})
    assert read_offsets(cp / "offsets" / "3") == [{"logOffset": 2}, {"orders": {"0": 7}}, None,
                                                  {"pay": {"0": 3, "2": 1}, "refunds": {"0": 4}}]
    position = committed_position(cp, ["pay", "refunds", "orders", "absent"])
    assert position is not None
    assert position.offsets == {"pay": {0: 3, 2: 1}, "refunds": {0: 4}, "orders": {0: 7}}


def test_one_topic_read_twice_counts_the_reader_further_behind(tmp_path: Path) -> None:
    cp = tmp_path / "cp"
    batch(cp, 0, {"pay": {"0": 9, "1": 2}}, {"pay": {"0": 5, "1": 4}})
    position = committed_position(cp, ["pay"])
    assert position is not None and position.offsets == {"pay": {0: 5, 1: 2}}


def test_lag_per_partition_total_and_never_ran(tmp_path: Path) -> None:
    cp = tmp_path / "cp"
    end = {"pay": {0: 25, 1: 8, 2: 6}}
    never = reader_lag("m", cp, end)  # no checkpoint at all
    assert never is not None and never.batch is None and never.total is None and never.partitions == ()
    batch(cp, 0, {"pay": {"0": 10, "1": 5}}, committed=False)
    assert reader_lag("m", cp, end).total is None  # type: ignore[union-attr]  # started, never committed

    batch(cp, 0, {"pay": {"0": 10, "1": 5}})
    lag = reader_lag("m", cp, end, start={"pay": {0: 0, 1: 0, 2: 2}})
    assert lag is not None and lag.batch == 0
    # partition 2 was added after the batch: Spark reads it from its start offset (2), so 4 to go
    assert [(p.partition, p.end_offset, p.committed, p.lag) for p in lag.partitions] == [
        (0, 25, 10, 15), (1, 8, 5, 3), (2, 6, None, 4)]
    assert lag.total == 22
    assert lag.to_dict()["partitions"][0] == {"topic": "pay", "partition": 0, "end_offset": 25, "committed": 10,
                                              "lag": 15}


def test_a_query_that_reads_the_topic_in_batch_has_no_lag(tmp_path: Path) -> None:
    """It ran (committed batches) but its offsets name other sources only: a stream-static join."""
    cp = tmp_path / "cp"
    batch(cp, 0, {"logOffset": 0})
    assert reader_lag("m", cp, {"pay": {0: 5}}) is None


def test_offsets_json_is_sorted_with_string_partitions() -> None:
    assert json.dumps(offsets_json({"b": {10: 1, 2: 3}, "a": {0: 0}})) == '{"a": {"0": 0}, "b": {"2": 3, "10": 1}}'


def test_the_lag_module_needs_neither_spark_nor_dagster() -> None:
    code = ("import sys, dagster_streamt.kafka.lag; "
            "print(sorted(m for m in ('pyspark', 'dagster') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
