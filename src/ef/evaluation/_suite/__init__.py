"""Benchmark suites: systems over datasets, one report (BEIR's table, averages, significance)."""
