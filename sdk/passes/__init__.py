"""Reusable SDK IR passes (Python, one pass per file) that any backend may add to its pipeline."""
