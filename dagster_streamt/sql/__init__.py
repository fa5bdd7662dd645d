"""The one SQL front end: every model's and test's SQL is normalized, parsed and analyzed here."""

from .features import SqlFeatures, analyze
from .normalize import Untranslatable
from .parse import ParsedQuery, output_columns, parse_expression, parse_query
from .scans import whole_scans

__all__ = ["ParsedQuery", "SqlFeatures", "Untranslatable", "analyze", "output_columns", "parse_expression",
           "parse_query", "whole_scans"]
