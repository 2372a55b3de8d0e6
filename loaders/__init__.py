"""Loaders fill the vector index (seed §2): the existing ADO backlog and architecture documents.

They run by hand (``python -m shared.cli load-backlog`` / ``load-docs``, or the full loaders in this
package) and use whatever embedder and vector store the settings choose.
"""
