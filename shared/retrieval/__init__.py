"""Retrieval for generation and tagging, the same for both engines.

- ``search``: the index queried (embedder + vector index), ranked, and the fallback wired in
- ``keyword``: keyword retrieval over the ingestion files, for when the index cannot be queried
"""
