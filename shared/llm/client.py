"""Building the ``openai`` SDK client from settings: OpenAI, any OpenAI-compatible endpoint, or
Azure OpenAI with a key or with Entra ID (managed identity / developer sign-in via azure-identity).

The SDK's own retry policy handles 429 and 5xx (and timeouts), honouring ``Retry-After``;
``OPENAI_MAX_RETRIES`` sets how many times, ``OPENAI_TIMEOUT_SECONDS`` the per-request timeout.
A client is thread-safe and pools its connections: the agents share one, the embedder has its own.
With the shared rate limiter on, its HTTP hooks (``ModelLimits.event_hooks``) see every request as
it leaves and every response, also the 429s the SDK retries itself, so the limiter hears of one
at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shared.errors import ConfigurationError
from shared.llm import config
from shared.settings import Settings

AZURE_OPENAI_SCOPE = "https://cognitiveservices.azure.com/.default"
EventHooks = dict[str, list[Callable[[Any], None]]]


def _entra_token_provider(settings: Settings) -> Any:
    from azure.identity import DefaultAzureCredential, get_bearer_token_provider

    credential = DefaultAzureCredential(managed_identity_client_id=settings.azure_client_id or None)
    return get_bearer_token_provider(credential, AZURE_OPENAI_SCOPE)


def _http_client(event_hooks: EventHooks | None) -> dict[str, Any]:
    """The ``http_client`` argument: the SDK's own defaults plus the hooks, if any."""
    if not event_hooks:
        return {}
    from openai import DefaultHttpxClient

    return {"http_client": DefaultHttpxClient(event_hooks=event_hooks)}


def build_openai_client(settings: Settings, *, event_hooks: EventHooks | None = None) -> Any:
    """A sync ``OpenAI`` or ``AzureOpenAI`` client (see shared.llm.config for which);
    ``event_hooks``: the HTTP client's ``request`` / ``response`` hooks (the rate limiter's)."""
    timeout = settings.openai_timeout_seconds
    retries = settings.openai_max_retries
    endpoint = settings.azure_openai_endpoint
    if endpoint:  # the "azure" provider (shared.llm.config.provider)
        from openai import AzureOpenAI

        key = settings.azure_openai_api_key
        auth: dict[str, Any] = (
            {"api_key": key.get_secret_value()}
            if key is not None and key.get_secret_value()
            else {"azure_ad_token_provider": _entra_token_provider(settings)}
        )
        return AzureOpenAI(
            azure_endpoint=endpoint,
            api_version=settings.openai_api_version,
            timeout=timeout,
            max_retries=retries,
            **auth,
            **_http_client(event_hooks),
        )
    key = settings.openai_api_key
    if key is None or not key.get_secret_value():
        raise ConfigurationError(
            "the LLM engine needs OPENAI_API_KEY (any non-empty value for a local "
            "OpenAI-compatible server such as Ollama or vLLM) or AZURE_OPENAI_ENDPOINT"
        )
    from openai import OpenAI

    return OpenAI(
        api_key=key.get_secret_value(),
        base_url=settings.openai_base_url or None,
        timeout=timeout,
        max_retries=retries,
        **_http_client(event_hooks),
    )
