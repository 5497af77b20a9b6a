"""Deterministic RAG metrics beyond the lexical four, with Ragas' names and numbers."""
