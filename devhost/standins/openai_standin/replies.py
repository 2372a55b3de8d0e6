"""What the stand-in answers instead of its automatic answer: scripted replies (``Reply``, queued
with ``standin.script``), the mutators that make an automatic answer wrong on purpose, and the
failure plan (``Failures``: a seeded share of requests malformed, 429, 500 or held).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from devhost.standins.openai_standin.recorded import Recorded


@dataclass
class Reply:
    """One scripted answer. Build with the class methods."""

    kind: str  # "json" | "content" | "status" | "auto" | "hang"
    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    mutate: Callable[[dict[str, Any], Recorded], dict[str, Any]] | None = None
    finish_reason: str = "stop"

    @classmethod
    def json(cls, obj: Any, *, delay: float = 0.0) -> Reply:
        """A chat completion whose content is ``obj`` as JSON."""
        return cls("json", body=obj, delay=delay)

    @classmethod
    def content(cls, text: str, *, delay: float = 0.0, finish_reason: str = "stop") -> Reply:
        """A chat completion with this raw content."""
        return cls("content", body=text, delay=delay, finish_reason=finish_reason)

    @classmethod
    def malformed(cls) -> Reply:
        return cls.content('{"segments": [{"start_unit": 0, "intent_labels": ["oops"')

    @classmethod
    def schema_violation(cls) -> Reply:
        """Valid JSON that matches no agent's schema."""
        return cls.json({"answer": "I think the meeting was about remotes.", "confidence": "high"})

    @classmethod
    def status_code(
        cls, status: int, *, retry_after: float | None = None, message: str = ""
    ) -> Reply:
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
        kind = {429: "rate_limit_exceeded", 500: "server_error"}.get(status, "error")
        return cls(
            "status",
            body={
                "error": {"message": message or f"stand-in {status}", "type": kind, "code": kind}
            },
            status=status,
            headers=headers,
        )

    @classmethod
    def rate_limited(cls, retry_after: float = 0.05) -> Reply:
        return cls.status_code(429, retry_after=retry_after, message="Rate limit reached")

    @classmethod
    def server_error(cls) -> Reply:
        return cls.status_code(500, message="The server had an error")

    @classmethod
    def auto(
        cls,
        *,
        delay: float = 0.0,
        mutate: Callable[[dict[str, Any], Recorded], dict[str, Any]] | None = None,
    ) -> Reply:
        """The automatic answer, optionally changed by ``mutate(answer, request)``."""
        return cls("auto", delay=delay, mutate=mutate)

    @classmethod
    def slow(cls, seconds: float, then: Reply | None = None) -> Reply:
        reply = then or cls.auto()
        reply.delay = seconds
        return reply

    @classmethod
    def hang(cls, seconds: float) -> Reply:
        """Hold the request ``seconds`` (longer than the client's timeout), then answer."""
        return cls("hang", delay=seconds)


def quote_not_in_segment(answer: dict[str, Any], request: Recorded) -> dict[str, Any]:
    """``Reply.auto(mutate=quote_not_in_segment)``: the first story quotes something never said."""
    for story in answer.get("stories", [])[:1]:
        story["source_quotes"] = ["We agreed the remote will also make coffee every morning."]
    return answer


def unclear_tag(answer: dict[str, Any], request: Recorded) -> dict[str, Any]:
    """``Reply.auto(mutate=unclear_tag)``: a non-new tag that relates to no retrieved story."""
    answer.update(decision_tag="extend", related_story_ids=[999999], confidence=0.4)
    return answer


@dataclass
class Failures:
    """A seeded share of requests fails. Whether a request fails depends only on ``seed``, its
    body and the SDK's retry count, not on arrival order, so concurrent runs are reproducible and
    a retried request (same body, next retry count) gets a fresh draw.

    ``kinds``: relative weights of "malformed" (content that is not JSON), "429" (with
    ``retry_after`` seconds), "500" and "timeout" (the request is held ``hang_seconds``, longer than
    the client's timeout, then answered). ``routes``: which routes fail ("chat", "embeddings").
    """

    rate: float = 0.0
    seed: int = 0
    kinds: dict[str, float] = field(
        default_factory=lambda: {"malformed": 1.0, "429": 1.0, "500": 1.0, "timeout": 1.0}
    )
    retry_after: float = 0.05
    hang_seconds: float = 5.0
    routes: tuple[str, ...] = ("chat",)

    def pick(self, route: str, body: bytes, retry_count: str) -> str | None:
        if self.rate <= 0 or route not in self.routes:
            return None
        digest = hashlib.sha256(f"{self.seed}\n{retry_count}\n".encode() + body).digest()
        rng = random.Random(digest)
        if rng.random() >= self.rate:
            return None
        names = [k for k, w in self.kinds.items() if w > 0]
        return rng.choices(names, weights=[self.kinds[k] for k in names])[0]

    def reply(self, kind: str) -> Reply:
        if kind == "malformed":
            return Reply.content("Sure! Here is the JSON you asked for: {not json")
        if kind == "429":
            return Reply.rate_limited(self.retry_after)
        if kind == "500":
            return Reply.server_error()
        if kind == "timeout":
            return Reply.hang(self.hang_seconds)
        raise ValueError(f"unknown failure kind {kind!r}")
