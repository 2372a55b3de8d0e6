"""Loaders fill the vector index (seed §2): the existing ADO backlog and architecture documents.

They run by hand: ``python -m loaders.ado_loader`` and ``python -m loaders.arch_loader`` (or the
same functions through ``python -m shared.cli load-backlog`` / ``load-docs``), and use whatever
embedder and vector store the settings choose.

- ``ado_loader`` / ``arch_loader``: the commands and their whole-load functions
- ``workitems``: work items from REST JSON, ADO CSV exports and normalized JSONL; ``work_item_hash``
- ``html_text``: ADO rich text to plain text and criteria lists
- ``indexer``: incremental upsert, skip and prune in the index; the ingestion records
- ``console``: services, progress bar, summary and exit codes shared by both commands
"""
