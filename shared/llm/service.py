"""How a model service counts a call and asks a caller to wait, as the limiter needs them.

- **Token estimates**: what a call reserves is its prompt estimate plus ``max_tokens`` (what Azure
  OpenAI counts against TPM when a request arrives). The estimate is the larger of tiktoken's count
  and one token per 4 characters, over the messages and the response schema (``chat_tokens``,
  ``embedding_tokens``): never below the service's own estimate from characters.
- **429s**: ``retry-after-ms`` / ``retry-after`` from a response's headers, and the wait an
  ``openai`` SDK rate-limit error asked for (``insufficient_quota``, billing, is not a rate limit).
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from shared.llm import Message

DEFAULT_MAX_TOKENS = 4096  # counted when a call names no max_tokens
MESSAGE_OVERHEAD_TOKENS = 4  # role and separators per message
SCHEMA_MARGIN = 1.15  # the SDK's strict schema is a little longer than pydantic's


def retry_after_seconds(headers: Mapping[str, str] | Any) -> float | None:
    """``retry-after-ms`` (Azure OpenAI, OpenAI) or ``retry-after`` in seconds; None when absent
    or an HTTP date."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except (TypeError, ValueError):
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def service_retry_after(err: BaseException) -> float | None:
    """For a 429 rate limit from the ``openai`` SDK, the seconds it asked to wait (0.0 when it did
    not say); None for anything else, including ``insufficient_quota`` (billing, not rate)."""
    openai = sys.modules.get("openai")
    if openai is None or not isinstance(err, openai.RateLimitError):
        return None
    if getattr(err, "code", None) == "insufficient_quota":
        return None
    response = getattr(err, "response", None)
    seconds = retry_after_seconds(getattr(response, "headers", None))
    return seconds if seconds is not None else 0.0


def text_tokens(text: str, model: str | None = None) -> int:
    """A service's estimate of ``text`` is at most this: the larger of tiktoken's count and one
    token per 4 characters (Azure OpenAI estimates from characters)."""
    if not text:
        return 0
    from shared.text.tokens import count_tokens

    return max(count_tokens(text, model), -(-len(text) // 4))


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


@functools.lru_cache(maxsize=64)
def _schema_tokens(schema: type) -> int:
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):  # nothing to count
        return 0
    try:
        text = json.dumps(schema.model_json_schema())
    except Exception:  # noqa: BLE001 - a schema pydantic cannot render: nothing to count
        return 0
    return math.ceil(len(text) * SCHEMA_MARGIN / 4)


def chat_tokens(
    messages: Sequence[Message], schema: type | None, max_tokens: int | None, model: str | None
) -> int:
    """What a chat call reserves: its messages, its response schema and its ``max_tokens``."""
    prompt = sum(
        text_tokens(_content_text(m.get("content")), model) + MESSAGE_OVERHEAD_TOKENS
        for m in messages
    )
    if schema is not None:
        prompt += _schema_tokens(schema)
    return prompt + (DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens)


def embedding_tokens(texts: Sequence[str], model: str | None) -> int:
    return sum(text_tokens(t, model) for t in texts)
