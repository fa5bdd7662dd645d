"""Validate events against the OpenLineage 2-0-2 JSON Schemas in /work/shared/openlineage-spec: the
event schema, and every facet against its own schema file (an unknown facet key fails the check, so
nothing we emit escapes validation)."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

# ../shared/openlineage-spec beside the repository (as on every machine and in CI); overridable.
_BESIDE = Path(__file__).resolve().parents[2].parent / "shared" / "openlineage-spec"
SPEC_DIR = Path(os.environ.get("OPENLINEAGE_SPEC_DIR") or (
    _BESIDE if _BESIDE.is_dir() else "/work/shared/openlineage-spec"))

RUN_FACETS = {"parent": "ParentRunFacet", "processing_engine": "ProcessingEngineRunFacet",
              "nominalTime": "NominalTimeRunFacet", "errorMessage": "ErrorMessageRunFacet"}
JOB_FACETS = {"jobType": "JobTypeJobFacet", "sql": "SQLJobFacet", "documentation": "DocumentationJobFacet",
              "ownership": "OwnershipJobFacet", "sourceCodeLocation": "SourceCodeLocationJobFacet"}
DATASET_FACETS = {"schema": "SchemaDatasetFacet", "symlinks": "SymlinksDatasetFacet",
                  "columnLineage": "ColumnLineageDatasetFacet", "documentation": "DocumentationDatasetFacet",
                  "ownership": "OwnershipDatasetFacet", "datasetType": "DatasetTypeDatasetFacet"}
INPUT_FACETS = {"dataQualityAssertions": "DataQualityAssertionsDatasetFacet",
                "inputStatistics": "InputStatisticsInputDatasetFacet"}
OUTPUT_FACETS = {"outputStatistics": "OutputStatisticsOutputDatasetFacet"}


def _format_checker() -> FormatChecker:
    checker = FormatChecker()
    if "uri" not in checker.checkers:  # jsonschema checks uri only with rfc3987 installed: a minimal stand-in

        @checker.checks("uri")
        def _uri(value: object) -> bool:
            if not isinstance(value, str):
                return True
            parts = urlsplit(value)
            return bool(parts.scheme) and " " not in value and bool(parts.netloc or parts.path)

    return checker


@cache
def _registry() -> tuple[Registry, dict[str, dict[str, Any]]]:
    if not (SPEC_DIR / "OpenLineage.json").is_file():
        pytest.skip(f"OpenLineage JSON Schemas not found in {SPEC_DIR}")
    schemas = {p.stem: json.loads(p.read_text()) for p in SPEC_DIR.glob("*.json")}
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return registry, schemas


def _validator(stem: str) -> Draft202012Validator:
    registry, schemas = _registry()
    return Draft202012Validator(schemas[stem], registry=registry, format_checker=_format_checker())


def _errors(stem: str, doc: Any) -> list[str]:
    return [f"{stem}: {'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
            for e in _validator(stem).iter_errors(doc)]


def _facets(where: str, facets: dict[str, Any] | None, known: dict[str, str]) -> list[str]:
    problems: list[str] = []
    _, schemas = _registry()
    for key, facet in (facets or {}).items():
        stem = known.get(key)
        if stem is None:
            problems.append(f"{where}: facet {key!r} has no schema mapping")
            continue
        problems += [f"{where}.{p}" for p in _errors(stem, {key: facet})]
        if not facet.get("_schemaURL", "").startswith(schemas[stem]["$id"]):
            problems.append(f"{where}.{key}: _schemaURL {facet.get('_schemaURL')} is not {schemas[stem]['$id']}")
    return problems


def event_problems(event: dict[str, Any]) -> list[str]:
    """Every schema violation of one event and its facets (empty when valid)."""
    problems = _errors("OpenLineage", event)
    problems += _facets("run", (event.get("run") or {}).get("facets"), RUN_FACETS)
    problems += _facets("job", (event.get("job") or {}).get("facets"), JOB_FACETS)
    if "dataset" in event:
        problems += _facets("dataset", event["dataset"].get("facets"), DATASET_FACETS)
    for i, ds in enumerate(event.get("inputs") or []):
        problems += _facets(f"inputs[{i}]", ds.get("facets"), DATASET_FACETS)
        problems += _facets(f"inputs[{i}].inputFacets", ds.get("inputFacets"), INPUT_FACETS)
    for i, ds in enumerate(event.get("outputs") or []):
        problems += _facets(f"outputs[{i}]", ds.get("facets"), DATASET_FACETS)
        problems += _facets(f"outputs[{i}].outputFacets", ds.get("outputFacets"), OUTPUT_FACETS)
    return problems


def assert_valid(events: list[dict[str, Any]]) -> None:
    problems = [f"event {i}: {p}" for i, e in enumerate(events) for p in event_problems(e)]
    assert not problems, "\n".join(problems[:40])
