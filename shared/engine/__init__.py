"""Engines that implement the agent ports of ``shared.agents``.

``shared.engine.offline`` runs without any chat model (recorded as ``engine: offline``); the LLM
engine lives beside it once it exists.
"""
