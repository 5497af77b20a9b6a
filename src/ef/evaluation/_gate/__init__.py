"""The quality gate: a run's report checked against a saved baseline under rules."""
