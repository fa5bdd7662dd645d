"""Diagnostic codes of data-test validation, registered into the project's stable code table.

``spec.errors.CODES`` is owned by the spec package; data tests add theirs at import time so
``Diagnostics.add`` accepts them. Stable: add new codes, never reuse or renumber.
"""

from __future__ import annotations

from ..spec.errors import CODES

TEST_CODES: dict[str, str] = {
    "TST001": "unknown assertion",
    "TST002": "unknown assertion parameter",
    "TST003": "missing assertion parameter",
    "TST004": "invalid assertion parameter value",
    "TST005": "continuous-only assertion in a non-continuous test",
    "TST006": "continuous test on a target that is not a stream",
    "TST007": "relationships target names an unknown model or source",
    "TST008": "asserted column is not in the target's schema",
    "TST009": "accepted type differs from the declared column type",
    "TST010": "schema cannot be known statically; checked at run time",
    "TST011": "custom SQL template error or unknown reference",
    "TST012": "SQL in an assertion does not parse (Spark will decide at run time)",
    "TST013": "unknown type name in accepted_types",
    "TST014": "assertion needs data but the test only checks the schema",
}
CODES.update(TEST_CODES)

__all__ = ["TEST_CODES"]
