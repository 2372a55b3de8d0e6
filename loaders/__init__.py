"""Loaders fill the vector index (seed §2): the existing ADO backlog and architecture documents.

They run by hand: ``python -m loaders.ado_loader`` and ``python -m loaders.arch_loader`` (or the
same functions through ``python -m shared.cli load-backlog`` / ``load-docs``), and use whatever
embedder and vector store the settings choose.

- ``ado_loader`` / ``arch_loader``: the commands and their whole-load functions
- ``workitems``, ``html_text``, ``indexer``: import paths kept; the code is in ``shared.indexing``
- ``console``: services, progress bar, summary and exit codes shared by both commands
"""
