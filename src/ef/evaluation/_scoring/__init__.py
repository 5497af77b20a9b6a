"""Scoring: pure code from rankings and judgements to a report's values.

What an evaluation does, and where:

- :mod:`.query_plan` — which queries are scored, in which order, with what (``QueryPlan``, the
  one plan), and the inputs' fingerprints; :mod:`.grades` — the judgements checked, the relevant
  ones picked, their ideal order; :mod:`.run_queries` — which judged queries a run holds.
- :mod:`.ranked`, :mod:`.found`, :mod:`.scored`, :mod:`.order` — one pass over a query's ranking
  (or ``{doc: score}`` in trec_eval's order): where its relevant documents landed.
- :mod:`.cutoffs` — the one implementation of nDCG, recall, precision, reciprocal rank and AP at
  every cutoff, which every path below reads.
- ef's registered metrics: :mod:`.metrics` (the public per-k primitives), :mod:`.metric_scorer`
  (``MetricScorer``: the built-in metrics in one walk, plugin metrics through :mod:`.steps`).
- trec_eval's vocabulary and the measures of other tools: :mod:`.measures` (``FamilyScorer``,
  the canonical measures), read through :mod:`.notation`, with parameters checked by
  :mod:`.domains`.
- :mod:`.score_sheet` — each query's values kept as they arrive (``ScoreSheet``), then the report;
  :mod:`.aggregation` — every mean, and trec_eval's sums and geometric means.
"""
