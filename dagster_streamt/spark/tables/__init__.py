"""Batch materializations: tables refreshed whole or incrementally, partitions, views."""
