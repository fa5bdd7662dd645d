"""The metadata and tag keys streamt writes into the Dagster instance and reads back (run history,
``streamt status``, OpenLineage, alerts): one name per key, so a writer and its readers cannot drift."""

from __future__ import annotations

# asset materialization / observation metadata
STATUS = "streamt/status"  # success | failed | skipped (batch); running | stopped | restarting ... (continuous)
STARTED_AT = "streamt/started_at"  # when the model started (a timestamp: epoch seconds)
ENDED_AT = "streamt/ended_at"  # when it ended
PARTITION_START = "streamt/partition_start"  # a time partition's window (on each partition's materialization)
PARTITION_END = "streamt/partition_end"
PARTITION_WINDOW = "streamt/partition_window"  # [start, end] of a whole run, as earlier versions wrote it: still read
DEFINITION = "streamt/definition"  # the definition a run ran (changes.record): what `streamt plan` compares
RUN_ID = "streamt/run_id"  # the run a runless report belongs to: a continuous run's last reports, once interrupted
MODE = "streamt/mode"  # "continuous" on `streamt run --continuous` progress observations
CONTINUOUS = "continuous"
# asset check evaluation metadata
RESULT = "streamt/result"  # TestResult.compact(): what OpenLineage needs to rebuild the assertions

# run tags
COMMAND_TAG = "streamt/command"  # run | backfill | test
SOURCE_TAG = "streamt/source"  # the source whose new files started a sensor run
NEW_FILES_TAG = "streamt/new_files"  # how many new files it saw
