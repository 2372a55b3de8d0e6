"""The chat model adapter on the ``openai`` SDK: structured outputs parsed into pydantic models.

One call = ``client.chat.completions.with_raw_response.parse(response_format=Schema, ...)``: the SDK
sends the schema as a strict ``json_schema`` response format and parses the answer into the
pydantic model; the raw response is kept so that a malformed or schema-violating answer still
yields its text and token usage for errors.jsonl. The SDK retries 429 and 5xx itself (honouring
``Retry-After``); what is left after its retries propagates unchanged (see ``shared.llm``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from shared.llm import (
    InvalidOutput,
    InvalidRequest,
    Message,
    StructuredAnswer,
    T,
    schema_mismatch,
)
from shared.models import Usage

log = logging.getLogger(__name__)


def _usage(body: dict[str, Any]) -> Usage:
    usage = body.get("usage") or {}
    return Usage(
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        calls=1,
    )


def _content(body: dict[str, Any]) -> str:
    try:
        return str(body["choices"][0]["message"].get("content") or "")
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""


class OpenAIChatModel:
    """``ChatModel`` over an ``OpenAI`` / ``AzureOpenAI`` client; ``model`` is the model name, or
    the deployment name on Azure."""

    def __init__(self, client: Any, model: str) -> None:
        self.client = client
        self.model = model

    def structured(
        self,
        messages: Sequence[Message],
        schema: type[T],
        *,
        temperature: float,
        max_tokens: int | None = None,
    ) -> StructuredAnswer[T]:
        import openai

        extra: dict[str, Any] = {}
        if max_tokens is not None:
            extra["max_completion_tokens"] = max_tokens
        try:
            raw = self.client.chat.completions.with_raw_response.parse(
                model=self.model,
                messages=list(messages),
                response_format=schema,
                temperature=max(0.0, round(temperature, 3)),
                **extra,
            )
        except (openai.BadRequestError, openai.UnprocessableEntityError) as err:
            raise InvalidRequest(f"the model endpoint rejected the request: {err}") from err
        try:
            body = json.loads(raw.text)
        except ValueError:
            body = {}
        usage = _usage(body)
        text = _content(body)
        try:
            completion = raw.parse()
        except ValidationError as err:
            raise InvalidOutput(schema_mismatch(err), raw=text, usage=usage) from err
        except openai.LengthFinishReasonError as err:
            raise InvalidOutput(
                "the answer was cut at the output token limit", raw=text, usage=usage
            ) from err
        except openai.ContentFilterFinishReasonError as err:
            raise InvalidOutput(
                "the answer was stopped by the content filter", raw=text, usage=usage
            ) from err
        message = completion.choices[0].message if completion.choices else None
        if message is None:
            raise InvalidOutput("the answer has no choices", raw=text, usage=usage)
        if getattr(message, "refusal", None):
            raise InvalidOutput(f"the model refused: {message.refusal}", raw=text, usage=usage)
        if message.parsed is None:
            raise InvalidOutput("the answer is empty", raw=text, usage=usage)
        if completion.usage is not None:
            usage = Usage(
                prompt_tokens=completion.usage.prompt_tokens or 0,
                completion_tokens=completion.usage.completion_tokens or 0,
                calls=1,
            )
        return StructuredAnswer(
            value=message.parsed, raw=text, usage=usage, model=completion.model or self.model
        )
