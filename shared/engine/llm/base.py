"""The retry rule every LLM agent shares (seed §4 step 5, §5 and §6 "Retry & Robustness").

One call; if the answer is rejected (``shared.errors.RejectedAnswer``: malformed or
schema-violating JSON, a refusal, a cut answer, or content the agent's own check rejects, such as a
quote not found in the segment) one more call at the temperature lowered by
``RETRY_TEMPERATURE_DROP``, with the rejected answer and the reason fed back; a second rejected
answer raises the agent's ``AgentFailed`` subclass with the last raw output and the usage of both
calls. A request the endpoint rejects as such (HTTP 400/422) fails at once: sending it again cannot
help. Transport errors (what the SDK's own retries of 429/5xx and timeouts could not fix)
propagate, so the queue host retries the unit; so does any other exception, a ``ValueError`` of a
bug in a check included: only a ``RejectedAnswer`` is retried.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel

from shared.agents import AgentFailed
from shared.errors import RejectedAnswer
from shared.llm import ChatModel, InvalidRequest, Message
from shared.models import Usage

log = logging.getLogger(__name__)

RETRY_TEMPERATURE_DROP = 0.05
FEEDBACK_RAW_CHARS = 6000

S = TypeVar("S", bound=BaseModel)
R = TypeVar("R")


@dataclass
class Outcome(Generic[R]):
    value: R
    usage: Usage
    model: str
    attempts: int


def ask(
    chat: ChatModel,
    messages: Sequence[Message],
    schema: type[S],
    check: Callable[[S], R],
    *,
    temperature: float,
    max_tokens: int,
    failure: type[AgentFailed],
    what: str,
) -> Outcome[R]:
    """The answer of ``chat`` to ``messages`` as ``check`` turns it into the agent's result.

    ``check`` raises ``RejectedAnswer`` to reject an answer (``QuoteNotFound`` is one;
    ``shared.llm.validated`` turns a schema violation into one); anything else it raises is a bug
    and propagates.
    """
    usage = Usage()
    conversation = list(messages)
    reason, raw = "", ""
    for attempt in (1, 2):
        temp = temperature if attempt == 1 else max(0.0, temperature - RETRY_TEMPERATURE_DROP)
        try:
            answer = chat.structured(conversation, schema, temperature=temp, max_tokens=max_tokens)
        except InvalidRequest as err:
            raise failure(f"{what}: {err}", attempts=attempt, usage=usage) from err
        except RejectedAnswer as err:
            usage, reason, raw = usage + err.usage, str(err), err.raw
        else:
            usage = usage + answer.usage
            try:
                return Outcome(check(answer.value), usage, answer.model, attempt)
            except RejectedAnswer as err:
                reason, raw = str(err), answer.raw
        if attempt == 1:
            log.warning("%s: answer rejected, retrying at temperature %.2f: %s", what, temp, reason)
            conversation = [
                *messages,
                {"role": "assistant", "content": raw[:FEEDBACK_RAW_CHARS] or "(no usable answer)"},
                {
                    "role": "user",
                    "content": f"Your answer was rejected: {reason}\n"
                    "Answer again with corrected JSON that follows every rule above.",
                },
            ]
    raise failure(f"{what} failed twice: {reason}", attempts=2, raw_output=raw, usage=usage)
