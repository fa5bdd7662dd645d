"""Definition-time validation of data tests, on real projects loaded from YAML."""

from __future__ import annotations

from pathlib import Path

from dagster_streamt.api import load
from dagster_streamt.spec.errors import Diagnostic
from dagster_streamt.validation.data_tests import check_tests
from tests.helpers import write_project

BASE = """\
project: {name: t}
sources:
  - name: raw
    format: json
    path: data/raw
    columns:
      - {name: id, type: long}
      - {name: customer_id, type: bigint}
      - {name: amount, type: double}
      - {name: ts, type: timestamp}
  - name: customers_raw
    format: json
    path: data/customers
    columns: [{name: id, type: bigint}]
models:
  - name: orders
    materialized: stream
    sql: SELECT id, customer_id, amount, ts FROM {{ source("raw") }}
  - name: customers
    materialized: table
    sql: SELECT id, name FROM {{ source("customers_raw") }}
  - name: everything
    sql: SELECT * FROM {{ ref("customers") }}
  - name: typed
    sql: SELECT id, amount FROM {{ source("raw") }}
    columns: [{name: id, type: integer}, {name: amount, type: "decimal(10,2)"}]
"""


def check(tmp_path: Path, tests: str) -> list[Diagnostic]:
    root = write_project(tmp_path / "p", {"stream_project.yml": BASE + tests})
    loaded = load(root, use_cache=False)
    mine = check_tests(loaded.project, loaded.compiled, loaded.graph).items
    # streamt validate reports exactly these test diagnostics, and nothing else for this project
    assert [d for d in loaded.diagnostics if d.code.startswith("TST")] == mine
    assert all(d.code.startswith("TST") for d in loaded.errors), [d.format() for d in loaded.errors]
    return mine


def found(diags: list[Diagnostic]) -> list[tuple[str, int]]:
    return [(d.code, d.line) for d in diags]


def test_valid_tests_have_no_diagnostics(tmp_path: Path) -> None:
    diags = check(tmp_path, """\
tests:
  - name: ok
    model: orders
    type: continuous
    assertions:
      - not_null: {columns: [id, customer_id]}
      - unique_key: {key: id, tolerance: 0.01}
      - foreign_key: {column: customer_id, ref_model: customers, ref_key: id, match_rate: 0.99}
      - relationships: {column: customer_id, to: 'source("customers_raw")', field: id}
      - max_lag: {column: ts, max_seconds: 300}
      - throughput: {min_per_second: 1}
      - custom_sql: {sql: 'SELECT count(*) FROM {{ ref("orders") }} WHERE amount < 0', expect: 0}
      - accepted_types: {types: {id: bigint, amount: number, ts: timestamp}}
""")
    assert diags == []


def test_unknown_assertions_and_keys_point_at_their_lines(tmp_path: Path) -> None:
    diags = check(tmp_path, """\
tests:
  - name: bad
    model: orders
    assertions:
      - not_nul: {columns: [id]}
      - unique:
          columns: [id]
          tolerence: 0.1
      - range: {column: amount}
      - accepted_values: {column: id, values: [1], quote: maybe}
""")
    line0 = BASE.count("\n")
    assert found(diags) == [("TST001", line0 + 5), ("TST002", line0 + 8), ("TST003", line0 + 9),
                            ("TST004", line0 + 10)]
    assert diags[0].hint == 'did you mean "not_null"?'
    assert diags[1].hint == 'did you mean "tolerance"?'
    assert all(d.file == "stream_project.yml" for d in diags)


def test_streaming_rules_need_a_continuous_test_on_a_stream(tmp_path: Path) -> None:
    diags = check(tmp_path, """\
tests:
  - name: lag_in_batch
    model: orders
    assertions:
      - max_lag: {column: ts, max_seconds: 60}
  - name: continuous_on_table
    model: customers
    type: continuous
    assertions:
      - not_null: {columns: [id]}
""")
    assert [d.code for d in diags] == ["TST005", "TST006"]
    assert "type: continuous" in diags[0].hint and "materialized: stream" in diags[1].hint


def test_relationship_targets_and_fields_must_exist(tmp_path: Path) -> None:
    diags = check(tmp_path, """\
tests:
  - name: fk
    model: orders
    assertions:
      - relationships: {column: customer_id, to: 'ref("customer")', field: id}
      - relationships: {column: customer_id, to: 'ref("customers")', field: idd}
      - relationships: {column: customer_id, to: 'ref("raw")', field: id}
      - custom_sql: {sql: 'SELECT * FROM {{ ref("ordrs") }}'}
""")
    assert [d.code for d in diags] == ["TST007", "TST008", "TST007", "TST011"]
    assert diags[0].hint == 'did you mean "customers"?' and diags[1].hint == 'did you mean "id"?'
    assert "that name is a source" in diags[2].message and diags[3].hint == 'did you mean "orders"?'


def test_schema_tests_check_columns_and_types(tmp_path: Path) -> None:
    diags = check(tmp_path, """\
tests:
  - name: schema_src
    source: raw
    type: schema
    assertions:
      - not_null: {columns: [id, amout]}
      - accepted_types: {types: {id: int, amount: number, customer_id: [string, long], ts: timestmp}}
  - name: schema_typed
    model: typed
    type: schema
    assertions:
      - accepted_types: {types: {id: integer, amount: "decimal(10,2)"}}
      - accepted_types: {types: {amount: double}}
      - row_count: {min: 1}
""")
    codes = [(d.code, d.message.split(":", 1)[0]) for d in diags]
    assert codes == [("TST008", "test 'schema_src'"), ("TST009", "test 'schema_src'"), ("TST013", "test 'schema_src'"),
                     ("TST009", "test 'schema_typed'"), ("TST014", "test 'schema_typed'")]
    assert diags[0].hint == 'did you mean "amount"?'
    assert "declared bigint, not int" in diags[1].message


def test_unknown_schema_is_a_warning_not_an_error(tmp_path: Path) -> None:
    diags = check(tmp_path, """\
tests:
  - name: star
    model: everything
    type: schema
    assertions:
      - not_null: {columns: [whatever]}
  - name: inferred
    model: customers
    type: schema
    assertions:
      - accepted_types: {types: {name: string}}
      - not_null: {columns: [nme]}
""")
    assert [(d.code, d.severity.value) for d in diags] == [
        ("TST010", "warning"), ("TST010", "warning"), ("TST008", "error")]
    assert "columns:" in diags[0].hint


def test_sql_that_does_not_parse_is_only_a_warning(tmp_path: Path) -> None:
    diags = check(tmp_path, """\
tests:
  - name: exprs
    model: orders
    assertions:
      - expression_is_true: {expression: "amount > ("}
      - custom_sql: {where: "amount <"}
""")
    assert [(d.code, d.severity.value) for d in diags] == [("TST012", "warning"), ("TST012", "warning")]


def test_unknown_target_is_left_to_the_graph(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"stream_project.yml": BASE + """\
tests:
  - name: lost
    model: ordrs
    type: continuous
    assertions:
      - not_null: {columns: [nothing]}
"""})
    loaded = load(root, use_cache=False)
    assert [d.code for d in loaded.errors] == ["REF003"]
    assert check_tests(loaded.project, loaded.compiled, loaded.graph).items == []
