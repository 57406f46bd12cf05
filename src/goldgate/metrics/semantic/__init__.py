"""Semantic metrics: embedding similarity and the LLM judge, with their caches and HTTP client."""
