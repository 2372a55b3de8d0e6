"""Keeping the project's vector index current: what the loaders, the ADO writer, the sync and the
pending stories share (the house rule: ``shared/`` never imports ``loaders/``; the loaders are thin
commands over the loads here).

- ``workitems``: work items from REST JSON, ADO CSV exports and normalized JSONL; ``work_item_hash``
- ``html_text``: ADO rich text to plain text and criteria lists
- ``indexer``: incremental upsert, skip and prune of work items; what both loads share
- ``documents``: architecture documents cut into chunks and indexed; the documents' whole load
- ``backlog``: the ADO backlog in the index (lease, reindex, ``ado_vectors.jsonl``); its whole load
- ``sync``: the index kept up with what changed in Azure DevOps since the last sync
- ``writes``: the index updated after an ADO write or rollback
- ``pending``: a run's stories in the index until they are written
- ``project``: a project at a glance (runs, index, sync, pending)
"""
