"""The app's exception tree, and the one builder of error records (``errors.jsonl``).

- ``SynthesizerError``: the root of every error the app raises on purpose. Anything else that
  escapes a handler is a bug: the queue host retries it and finally poisons the unit, the HTTP host
  answers 500. Domain errors keep the built-in base they had as a second base (``UnknownRun`` is
  still a ``LookupError``), so an ``except`` written against it still holds.
- ``ConfigurationError``: a setting needed for what was asked is missing or invalid (storage, the
  queue bus, an OpenAI or Azure OpenAI endpoint, Pinecone, Azure DevOps). The message names the
  settings, never a value. The API answers it with 503 (``shared.api.API_ERRORS``).
- ``RejectedAnswer``: a model answered, but the answer is rejected: not usable data (malformed or
  schema-violating JSON, a refusal, a cut answer; ``shared.llm.InvalidOutput``) or refused by the
  agent's own check (a quote not in the segment, ``shared.agents.QuoteNotFound``; a tag without
  the story it names). It is the one exception the agents' retry loop
  (``shared.engine.llm.base.ask``) retries; any other exception, a ``ValueError`` from a bug
  included, propagates.

``error_record`` builds every record of ``parts/errors/`` and ``errors.jsonl``, so each has the
same fields whatever failed (``shared.models.ErrorRecord``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from shared.models import ErrorRecord, Usage

Phase = Literal["start", "segment", "generate", "tag", "finalize"]
RAW_OUTPUT_CHARS = 2000  # of a failed agent's last answer, in the record's details


class SynthesizerError(Exception):
    """The root of the errors the app raises on purpose."""


class ConfigurationError(SynthesizerError):
    """A setting needed for what was asked is missing or invalid; the message names it (never
    its value)."""


class RejectedAnswer(SynthesizerError):
    """A model's answer was rejected; ``raw``: the answer's text, ``usage``: the tokens the call
    used (when the rejection came from the call itself). The agents retry once on it."""

    def __init__(self, message: str, *, raw: str = "", usage: Usage | None = None) -> None:
        super().__init__(message)
        self.raw = raw
        self.usage = usage or Usage()


def error_record(
    run_id: str,
    phase: Phase,
    unit_id: str,
    error: BaseException | str,
    *,
    outcome: str,
    timestamp: datetime,
    message: str | None = None,
    attempts: int | None = None,
    dequeue_count: int | None = None,
    details: dict[str, str] | None = None,
) -> ErrorRecord:
    """The record of a failed unit.

    ``error``: the exception (its type name is ``error_type``, its text the default ``message``;
    a failed agent's ``attempts`` and the start of its ``raw_output`` are taken from it), or the
    name of a failure that is no exception (``Poisoned``, ``BudgetExceeded``). ``outcome``: what
    the pipeline did about it (``skipped``, ``tagged_new``, ``aborted``)."""
    if isinstance(error, BaseException):
        error_type, text = type(error).__name__, str(error)
        raw = str(getattr(error, "raw_output", "") or "")
        tries = getattr(error, "attempts", None)
    else:
        error_type, text, raw, tries = error, "", "", None
    extra = {"raw_output": raw[:RAW_OUTPUT_CHARS]} if raw else {}
    return ErrorRecord(
        run_id=run_id,
        phase=phase,
        unit_id=unit_id,
        error_type=error_type,
        message=text if message is None else message,
        attempts=attempts if attempts is not None else (tries if isinstance(tries, int) else 1),
        dequeue_count=dequeue_count,
        outcome=outcome,
        details={**extra, **(details or {})},
        timestamp=timestamp,
    )
