"""Keys streamt accepts load here too (noted where Spark gives them no meaning), typos still do not;
streamt's newer DSL (apiVersion, contract, ownership) and the `expression` assertion."""

from __future__ import annotations

from pathlib import Path

from dagster_streamt.api import load
from dagster_streamt.spec.loader import load_project

from ..helpers import write_project

SRC = """\
sources:
  - name: orders
    format: json
    path: data/orders
    columns: [{name: id, type: bigint}, {name: amount, type: double}]
    contract: {version: 2.0.0, contact: team@example.com, sla: {availability: 99.9%}}
    ownership: {mode: external}
"""
MODEL = """\
models:
  - name: clean
    sql: SELECT id, amount FROM {{ source('orders') }}
    schema: {compatibility: BACKWARD}
    topic: {name: orders.clean.v1}
    ownership: {mode: adopted}
    contract:
      enforced: true
      columns: [{name: id, type: BIGINT, nullable: false}, {name: amount, type: DOUBLE}]
"""
ROOT = """\
apiVersion: streamt.dev/v1alpha1
project: {name: p}
governance: {require_owners: true, data_classification: {pii: {requires_masking: true}}}
runtime:
  flink: {default: c, default_parallelism: 4, clusters: {c: {rest_url: http://f}}}
  schema_registry: {url: http://sr, api_key: k, api_secret: s, compatibility: BACKWARD}
"""


def test_streamt_keys_load_with_notes(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": ROOT, "sources/s.yml": SRC, "models/m.yml": MODEL,
                             "tests/t.yml": "tests:\n  - {name: t, model: clean, type: schema, assertions: []}\n"})
    project, diags = load_project(tmp_path)
    assert not diags.has_errors, [d.format() for d in diags.items]
    notes = sorted(d.message.split("`")[1] for d in diags.items if d.code == "STR042")
    assert {"governance", "models[].schema", "runtime.flink", "runtime.schema_registry"} <= set(notes)
    assert project is not None
    model = project.models["clean"]
    assert model.contract is not None and model.contract.enforced and model.ownership is not None
    assert [c.name for c in model.contract.columns] == ["id", "amount"] and not model.contract.columns[0].nullable
    assert project.sources["orders"].contract == {"version": "2.0.0", "contact": "team@example.com",
                                                  "sla": {"availability": "99.9%"}}


def test_typos_still_get_did_you_mean(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": ROOT.replace("governance:", "governence:"),
                             "sources/s.yml": SRC.replace("contract:", "contrat:")})
    _, diags = load_project(tmp_path)
    hints = {d.message: d.hint for d in diags.items if d.code == "STR010"}
    assert any("governence" in m and "governance" in h for m, h in hints.items())
    assert any("contrat" in m and "contract" in h for m, h in hints.items())


def test_unsupported_api_version(tmp_path: Path) -> None:
    write_project(tmp_path, {"stream_project.yml": "apiVersion: streamt.dev/v9\nproject: {name: p}\n"})
    _, diags = load_project(tmp_path)
    [err] = [d for d in diags.items if d.code == "STR012"]
    assert (err.file, err.line) == ("stream_project.yml", 1) and "streamt.dev/v1alpha1" in err.hint


def test_empty_assertions_do_not_hide_an_unknown_model(tmp_path: Path) -> None:
    write_project(tmp_path, {"sources/s.yml": SRC,
                             "tests/t.yml": "tests:\n  - {name: t, model: nowhere, type: schema, assertions: []}\n"})
    loaded = load(tmp_path, use_cache=False)
    assert [d.code for d in loaded.errors] == ["REF003"]


def test_expression_assertion_is_accepted_and_checked(tmp_path: Path) -> None:
    write_project(tmp_path, {"sources/s.yml": SRC, "models/m.yml": MODEL, "tests/t.yml": """\
        tests:
          - name: rules
            model: clean
            type: sample
            assertions:
              - expression: {description: Amount must be positive, sql: amount > 0}
              - expression: {sql: "amount <"}
              - expression: {sqll: amount > 0}
        """})
    loaded = load(tmp_path, use_cache=False)
    found = {(d.code, d.line) for d in loaded.diagnostics if d.code.startswith("TST")}
    assert ("TST012", 7) in found  # does not parse (a warning: Spark may still accept it)
    assert any(code == "TST002" for code, _ in found)  # `sqll`: unknown key, with a suggestion
    assert not [d for d in loaded.diagnostics if d.code == "TST001"]
