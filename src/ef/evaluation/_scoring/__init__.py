"""Scoring: metric primitives, trec_eval's order, the one-pass core, planning and aggregation."""
