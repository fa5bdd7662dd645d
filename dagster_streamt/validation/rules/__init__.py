"""Governance rules (``rules:``): every rule streamt documents, as findings with stable GOV codes.

Findings fail ``streamt validate`` (a CI gate) but leave the project usable: compile, lineage,
Dagster definitions and runs still work on a project that breaks its own policies. One module per
rule family; :func:`check_rules` runs them all.
"""

from __future__ import annotations

from ...graph.graph import Graph
from ...spec.errors import Diagnostics
from ...spec.project import Project
from .context import RuleContext
from .exposure_rules import check_exposures
from .model_rules import check_deprecations, check_models
from .security_rules import check_security
from .source_rules import check_sources
from .test_rules import check_test_rules
from .topic_rules import check_topics


def check_rules(project: Project, graph: Graph) -> Diagnostics:
    ctx = RuleContext(project, graph, Diagnostics())
    for check in (check_models, check_deprecations, check_sources, check_security, check_topics,
                  check_exposures, check_test_rules):
        check(ctx)
    return ctx.diags


__all__ = ["check_rules"]
