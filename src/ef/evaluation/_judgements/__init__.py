"""Building and checking relevance judgements: pooling runs, qrels statistics, agreement."""
