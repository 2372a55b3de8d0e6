"""Backlog Synthesizer: the app's Python package (models, settings, ports, pipeline handlers).

Heavy libraries (onnxruntime, openai, pinecone, langfuse, azure SDKs) are imported lazily inside the
functions that need them so that importing `function_app` stays fast (cold start matters).
"""

__version__ = "0.1.0"
PIPELINE_VERSION = "sup-v0.1"
