"""RAG evaluation: lexical metrics, the per-sample built-ins, evaluate_rag, the Ragas bridge.

Also Ragas' deterministic metrics (``overlap``, ``strings``, ``contexts``, on the inputs that
``inputs`` reads and the ``rag-metrics`` extra that ``extra`` imports) and the sample ids that
let two pipelines' reports pair up (``sample_ids``).
"""
