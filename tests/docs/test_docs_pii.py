"""PII in the docs: classification follows DIRECT lineage, a mask policy stops it, and what reaches
an exposure unmasked is called out (same answers as `streamt lineage --classification`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dagster_streamt.api import load
from dagster_streamt.lineage.project_columns import column_lineage, propagate_classification

from ..helpers import write_project
from .conftest import streamt
from .test_docs_generate import core

FILES = {
    "sources/users.yml": """\
        sources:
          - name: users
            format: json
            path: data/users
            columns:
              - {name: id, type: bigint, classification: internal}
              - {name: email, type: string, classification: sensitive, description: Login e-mail}
              - {name: phone, type: string, classification: sensitive}
        """,
    "models/m.yml": """\
        models:
          - name: users_clean
            description: Users with a hashed e-mail; the phone is passed on as it is.
            sql: SELECT id, sha2(email, 256) AS email, phone FROM {{ source("users") }}
            security:
              policies:
                - mask: {column: email, method: hash}
          - name: contacts
            sql: SELECT id, email, upper(phone) AS phone_norm FROM {{ ref("users_clean") }}
        """,
    "exposures/e.yml": """\
        exposures:
          - name: crm_sync
            type: application
            owner: crm
            consumes: [{ref: contacts}]
        """,
}


@pytest.fixture(scope="module")
def pii_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_project(tmp_path_factory.mktemp("pii") / "p", dict(FILES))
    r = streamt("docs", "generate", "-p", str(root))
    assert r.returncode == 0, r.stdout + r.stderr
    return root / "target" / "docs" / "index.html"


def test_masking_stops_classification(pii_site: Path) -> None:
    data = core(pii_site)
    clean = {c["name"]: c for c in data["models"]["users_clean"]["columns"]}
    assert clean["email"]["mask"] == "hash" and "classification" not in clean["email"]
    assert clean["phone"]["classification"] == ["sensitive"] and "mask" not in clean["phone"]
    contacts = {c["name"]: c for c in data["models"]["contacts"]["columns"]}
    assert "classification" not in contacts["email"]
    assert contacts["phone_norm"]["classification"] == ["sensitive"]
    assert data["pii"]["unmasked"] == [["crm_sync", "contacts", "phone_norm"]]
    loaded = load(pii_site.parents[2])
    report = propagate_classification(loaded, column_lineage(loaded))
    assert data["pii"]["exposures"] == {e: [[c.relation, c.column, list(c.classes), list(c.origins)] for c in cols]
                                        for e, cols in report.exposures.items()}


@pytest.mark.browser
def test_pii_flow_in_the_page(pii_site: Path, new_page: Any) -> None:
    p = new_page()
    page = p.open(pii_site.as_uri() + "#source.users/phone")
    page.wait_for_selector("#column-view")
    flow = page.inner_text("#column-view")
    assert "crm_sync receives contacts.phone_norm sensitive" in flow
    page.evaluate("location.hash = '#source.users/email'")
    page.wait_for_selector("#column-view[data-column='users.email']")
    flow = page.inner_text("#column-view")
    assert "Masked on the way: users_clean.email (hash)" in flow
    assert "No classified data from this column reaches an exposure." in flow
    assert "crm_sync (application) reads contacts.email" in page.inner_text("#column-exposures")
    page.evaluate("location.hash = '#pii'")
    page.wait_for_selector("#pii-unmasked")
    assert page.inner_text("#pii-unmasked") == "crm_sync ← contacts.phone_norm"
    page.evaluate("location.hash = '#model.users_clean'")
    page.wait_for_selector("#columns")
    assert "masked: hash" in page.inner_text("#columns tr[data-column='email']")
    p.assert_clean()
