"""Query groups: the one group input (QueryGroups, its files) and the per-group aggregation."""
