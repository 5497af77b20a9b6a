"""RAG evaluation: lexical metrics, the per-sample built-ins, evaluate_rag, the Ragas bridge."""
