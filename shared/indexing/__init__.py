"""Keeping the project's vector index current: what the loaders, the ADO writer, the sync and the
pending stories share (the house rule: ``shared/`` never imports ``loaders/``; the loaders keep
their commands and import this).

- ``workitems``: work items from REST JSON, ADO CSV exports and normalized JSONL; ``work_item_hash``
- ``html_text``: ADO rich text to plain text and criteria lists
- ``indexer``: incremental upsert, skip and prune in the index; the ingestion records
"""
