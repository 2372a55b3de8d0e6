"""Which chat model and embedding model each call uses, decided from settings without importing
the ``openai`` SDK (run.json and config snapshots need the names; cold start must not pay for it).

Rules:
- Azure OpenAI when ``AZURE_OPENAI_ENDPOINT`` is set (it wins over ``OPENAI_API_KEY``), else OpenAI
  or any OpenAI-compatible endpoint (``OPENAI_BASE_URL``).
- On Azure the "model" of a call is a deployment name: ``AZURE_OPENAI_CHAT_DEPLOYMENT`` for all
  three agents when set, else each agent's ``SYNTH_PIPELINE__<AGENT>__MODEL``;
  ``AZURE_OPENAI_EMBEDDING_DEPLOYMENT`` for embeddings when set, else
  ``SYNTH_PIPELINE__EMBEDDING__MODEL``.
- Elsewhere each agent's ``SYNTH_PIPELINE__<AGENT>__MODEL`` (seed §10 ``segmentation.model``...).
- The LLM judge of ``eval judge`` follows the same rule with ``SYNTH_PIPELINE__JUDGE__MODEL``.
"""

from __future__ import annotations

from typing import Literal

from shared.settings import Settings

AgentName = Literal["segmentation", "generation", "tagging"]
AGENTS: tuple[AgentName, ...] = ("segmentation", "generation", "tagging")


def provider(settings: Settings) -> Literal["azure", "openai"]:
    return "azure" if settings.azure_openai_endpoint else "openai"


def _chat(settings: Settings, configured: str) -> str:
    """The chat deployment on Azure when one is set for all agents, else ``configured``."""
    if provider(settings) == "azure" and settings.azure_openai_chat_deployment:
        return settings.azure_openai_chat_deployment
    return configured


def chat_model(settings: Settings, agent: AgentName) -> str:
    return _chat(settings, str(getattr(settings.pipeline, agent).model))


def judge_model(settings: Settings) -> str:
    """The LLM judge's model (``eval judge``): the chat deployment on Azure when one is set for all
    agents, else ``SYNTH_PIPELINE__JUDGE__MODEL``."""
    return _chat(settings, settings.pipeline.judge.model)


def embedding_model(settings: Settings) -> str:
    if provider(settings) == "azure" and settings.azure_openai_embedding_deployment:
        return settings.azure_openai_embedding_deployment
    return settings.pipeline.embedding.model


def run_model_label(settings: Settings) -> str | None:
    """What run.json records as ``model``: None for the offline engine; the chat model (or
    deployment) when all agents share one, else ``agent=model`` pairs."""
    if settings.resolved_engine() != "llm":
        return None
    models = {agent: chat_model(settings, agent) for agent in AGENTS}
    if len(set(models.values())) == 1:
        return models["generation"]
    return ", ".join(f"{agent}={model}" for agent, model in models.items())
