"""Loaders fill the vector index (seed §2): the existing ADO backlog and architecture documents.

They run by hand: ``python -m loaders.ado_loader`` and ``python -m loaders.arch_loader`` (or the
same loads through ``python -m shared.cli load-backlog`` / ``load-docs``), and use whatever
embedder and vector store the settings choose. They are thin commands: the loads are
``shared.indexing.backlog.load_backlog`` and ``shared.indexing.documents.load_documents`` (the
house rule: ``shared/`` never imports ``loaders/``).

- ``ado_loader`` / ``arch_loader``: the commands (options, output, exit codes)
- ``console``: services, summary, options and exit codes shared by both commands
"""
