"""The LLM engine: the three agents of seed §4-§6 on a chat model (recorded as ``engine: llm``).

- ``LLMSegmenter``: the model chooses segment starts among numbered units, the code cuts the text
  and enforces the seed limits (``segmentation.py``);
- ``LLMGenerator``: epics/features/stories from the segment and its retrieved context, every quote
  verified verbatim (``generation.py``);
- ``LLMTagger``: one of five tags against the retrieved existing stories (``tagging.py``).

All three return the same drafts as the offline engine (``shared.agents``), with the token usage
of their calls, and share the retry rule of ``base.py``. Prompts are versioned files in
``shared/prompts/``. ``annotate`` is the hygiene gate's hook (``prompting.Annotator``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from shared.agents import Agents
from shared.embeddings import Embedder
from shared.engine.llm.generation import LLMGenerator
from shared.engine.llm.prompting import Annotator, DataAnnotation
from shared.engine.llm.segmentation import LLMSegmenter
from shared.engine.llm.tagging import LLMTagger
from shared.llm import ChatModel
from shared.llm.config import AgentName, chat_model
from shared.settings import Settings

if TYPE_CHECKING:
    from shared.llm.limiter import ModelLimits

__all__ = [
    "Annotator",
    "DataAnnotation",
    "LLMGenerator",
    "LLMSegmenter",
    "LLMTagger",
    "build_llm_agents",
]


def build_llm_agents(
    settings: Settings,
    embedder: Embedder | None = None,
    *,
    chat: Callable[[AgentName], ChatModel] | None = None,
    annotate: Annotator | None = None,
    limits: ModelLimits | None = None,
) -> Agents:
    """The three agents; ``chat(agent)`` gives each its chat model (default: the ``openai`` SDK
    client the settings describe, one client shared by the three). With ``limits`` (the shared
    rate limiter, ``shared.llm.limiter``) every call of the default chat models reserves its tokens
    first, and the client reports each 429 to it."""
    if chat is None:
        from shared.llm.client import build_openai_client
        from shared.llm.limiter import limit_chat
        from shared.llm.openai_chat import OpenAIChatModel

        client = build_openai_client(
            settings, event_hooks=limits.event_hooks() if limits is not None else None
        )

        def chat(agent: AgentName) -> ChatModel:
            return limit_chat(OpenAIChatModel(client, chat_model(settings, agent)), limits)

    cfg = settings.pipeline
    return Agents(
        segmenter=LLMSegmenter(chat("segmentation"), cfg.segmentation, embedder, annotate),
        generator=LLMGenerator(chat("generation"), cfg, annotate),
        tagger=LLMTagger(chat("tagging"), cfg, embedder, annotate),
    )
