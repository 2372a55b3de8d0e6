"""The chat model port: one structured call in, one validated pydantic object (or a clear error) out.

Owns what every LLM agent needs from a chat model and nothing more:
- ``ChatModel.structured(messages, schema, temperature=...)`` returns ``StructuredAnswer`` (the
  parsed object, the raw text, the token usage of the call, the model that answered);
- ``InvalidOutput`` (a ``shared.errors.RejectedAnswer``) when the answer is not usable data
  (malformed or schema-violating JSON, a refusal, output cut at the token limit, a content
  filter): the agents retry once on it;
- transport failures (429/5xx after the SDK's own retries, timeouts, connection errors) are left
  to propagate, so the queue host retries the unit and finally its poison handler closes it;
- ``CapacityUnavailable`` when the shared rate limiter (``shared.llm.limiter``, on with
  ``SYNTH_MODEL_TPM`` / ``SYNTH_MODEL_RPM``) found no capacity within its wait, or the service kept
  answering 429: not a failure; the queue handler re-queues the unit after ``retry_after`` seconds.

The adapter on the ``openai`` SDK is ``shared.llm.openai_chat.OpenAIChatModel``; it is imported
lazily (``import openai`` costs about 0.7 s).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from shared.errors import RejectedAnswer, SynthesizerError
from shared.models import Usage

T = TypeVar("T", bound=BaseModel)
Message = dict[str, Any]


class InvalidOutput(RejectedAnswer):
    """The model answered, but not with usable data (``raw``: its text, ``usage``: the call's
    tokens, for errors.jsonl). A ``RejectedAnswer``: the agents retry once on it."""


def schema_mismatch(err: ValidationError) -> str:
    """A pydantic error in a few lines (the first three problems), for retries and errors.jsonl."""
    problems = []
    for e in err.errors()[:3]:
        where = ".".join(str(p) for p in e.get("loc", ())) or "(root)"
        problems.append(f"{where}: {e.get('msg', '')}")
    more = f" (+{err.error_count() - 3} more)" if err.error_count() > 3 else ""
    return "the answer does not match the schema: " + "; ".join(problems) + more


def validated(schema: type[T], data: Any) -> T:
    """``data`` as ``schema``; data that does not fit it is a rejected answer (``RejectedAnswer``
    with the first problems), so an agent's check that converts a model's answer further is
    retried like any schema violation."""
    try:
        return schema.model_validate(data)
    except ValidationError as err:
        raise RejectedAnswer(schema_mismatch(err)) from err


class InvalidRequest(SynthesizerError, ValueError):
    """The endpoint rejected the request itself (HTTP 400/422, e.g. a prompt over the context
    window): sending it again cannot help, so the agent gives up without its retry."""


class CapacityUnavailable(SynthesizerError, RuntimeError):
    """No model capacity now: the shared budget is spent for longer than a unit may wait, or the
    service answered 429 past the wait. Not the unit's fault: it is re-queued with a visibility
    delay of ``retry_after`` seconds (``shared.pipeline.process``), which is not a failed delivery.
    ``service``: the service refused (429 after the SDK's retries), not only the shared budget."""

    def __init__(self, message: str, *, retry_after: float, service: bool = False) -> None:
        super().__init__(message)
        self.retry_after = max(0.0, float(retry_after))
        self.service = service


@dataclass
class StructuredAnswer(Generic[T]):
    value: T
    raw: str
    usage: Usage
    model: str


class ChatModel(Protocol):
    model: str

    def structured(
        self,
        messages: Sequence[Message],
        schema: type[T],
        *,
        temperature: float,
        max_tokens: int | None = None,
    ) -> StructuredAnswer[T]: ...


__all__ = [
    "CapacityUnavailable",
    "ChatModel",
    "InvalidOutput",
    "InvalidRequest",
    "Message",
    "StructuredAnswer",
    "schema_mismatch",
]
