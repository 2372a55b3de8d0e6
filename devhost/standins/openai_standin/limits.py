"""A deployment's quota (``RateLimits``: tokens and requests per sliding window, answered 429
past it) and the model's speed (``TokenLatency``: time in proportion to the tokens).
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any


@dataclass
class RateLimits:
    """A deployment's quota as Azure OpenAI enforces it, applied to each model (deployment) on
    its own: ``tokens`` per ``window_s`` (TPM; what a request counts is added when it arrives:
    its prompt, one token per 4 characters of the messages and the response format, plus its
    ``max_completion_tokens`` / ``max_tokens``, else ``default_max_tokens``; embeddings: their
    inputs) and ``requests`` per window (RPM), evaluated over a sixth of the window at RPM/6 (Azure
    evaluates RPM over 1 or 10 s). Both windows slide, so no span of a window's length ever holds
    more than the limit. A request past either is answered 429 with the seconds until it would
    fit (``retry-after``, whole seconds, and ``retry-after-ms``) and is not counted. 0 = no limit.
    ``window_s`` below 60 runs the quota's clock faster (benchmarks scale time down)."""

    tokens: int = 0
    requests: int = 0
    window_s: float = 60.0
    default_max_tokens: int = 4096

    @property
    def request_window_s(self) -> float:
        return self.window_s / 6 if self.requests >= 6 else self.window_s

    def counted(self, route: str, body: dict[str, Any]) -> int:
        """The tokens a request counts against ``tokens`` when it arrives."""
        if route == "embeddings":
            inputs = body.get("input")
            texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
            return sum(-(-len(str(t)) // 4) for t in texts)
        text = "".join(str(m.get("content") or "") for m in body.get("messages") or [])
        if body.get("response_format"):
            text += json.dumps(body["response_format"])
        most = body.get("max_completion_tokens") or body.get("max_tokens")
        return -(-len(text) // 4) + int(most or self.default_max_tokens)


@dataclass
class TokenLatency:
    """An automatic answer takes ``base_s`` + ``per_prompt_token_s`` x its prompt tokens +
    ``per_completion_token_s`` x its completion tokens (the usage it reports), on top of
    ``delay``: a model's time to first token and its output speed."""

    base_s: float = 0.0
    per_prompt_token_s: float = 0.0
    per_completion_token_s: float = 0.0

    def seconds(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            self.base_s
            + self.per_prompt_token_s * prompt_tokens
            + self.per_completion_token_s * completion_tokens
        )


class _Quota:
    """The sliding windows of one deployment."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        self.admitted: deque[tuple[float, int]] = deque()  # (arrival, tokens counted)
        self.tokens = 0

    def admit(self, now: float, cost: int) -> float:
        """0 when admitted (and counted), else the seconds until the request would fit."""
        lim = self.limits
        while self.admitted and self.admitted[0][0] <= now - lim.window_s:
            self.tokens -= self.admitted.popleft()[1]
        wait = 0.0
        if lim.tokens > 0:
            need = min(cost, lim.tokens)  # a request over the whole limit fits an empty window
            used = self.tokens
            for arrived, tokens in self.admitted:
                if used + need <= lim.tokens:
                    break
                used -= tokens
                wait = max(wait, arrived + lim.window_s - now)
        if lim.requests > 0:
            per = lim.requests * lim.request_window_s / lim.window_s
            recent = [a for a, _ in self.admitted if a > now - lim.request_window_s]
            over = len(recent) + 1 - int(per)
            if over > 0:
                wait = max(wait, recent[over - 1] + lim.request_window_s - now)
        if wait > 0:
            return wait
        self.admitted.append((now, cost))
        self.tokens += cost
        return 0.0
