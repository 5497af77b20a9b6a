"""Fusing runs: fusion methods, score normalisations, supervised training and the grid search."""
