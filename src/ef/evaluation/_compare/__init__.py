"""Comparing systems: paired tests, corrections, ComparisonReport and its renderings."""
