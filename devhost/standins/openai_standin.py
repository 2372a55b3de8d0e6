"""An OpenAI-compatible HTTP server on localhost, for tests and benchmarks: the real ``openai`` SDK
talks to it over HTTP, so retries, timeouts, headers and response parsing are the SDK's own.

Routes (OpenAI and Azure OpenAI spellings):
  POST /v1/chat/completions                         POST /openai/deployments/{d}/chat/completions
  POST /v1/embeddings                               POST /openai/deployments/{d}/embeddings
  GET  /v1/models                                   GET  /openai/models
(any path prefix before ``/chat/completions`` or ``/embeddings`` works; the query string is ignored)

Answers, in this order of precedence for each request:
0. the quota (``limits``, off by default): a request past its deployment's tokens or requests per
   window is answered 429 with ``Retry-After`` / ``retry-after-ms`` (see ``RateLimits``);
1. a scripted reply: ``standin.script(Reply..., match=...)`` queues one-shot replies, consumed in
   order by the first request they match (``match``: a JSON schema name such as
   "GenerationAnswer", a predicate on ``Recorded``, or None for any chat request);
2. the failure plan (``Failures``): a seeded share of requests answered with malformed JSON, 429,
   500 or a hang (client timeout);
3. the automatic answer: valid, plausible output derived from the prompt, after ``delay`` seconds
   (embeddings after ``embedding_delay`` seconds when it is given, else after ``delay`` too), plus,
   with ``token_latency``, a time proportional to its prompt and completion tokens.

Automatic answers by response schema name (``response_format.json_schema.name``):
- ``SegmentationAnswer``: reads the numbered units ``[n] text`` of the prompt and starts a segment
  every ``units_per_segment`` units (or makes ``segments_per_call`` equal parts);
- ``GenerationAnswer``: reads the segment's data block and writes ``stories_per_segment`` stories,
  each quoting a different real sentence of it (requirement-like sentences first); one epic (the
  theme) and one feature; the first story extends the first retrieved User Story, if any;
- ``TaggingAnswer``: reads the candidates' similarities and the thresholds from the prompt and
  applies them (duplicate ≥ duplicateAtLeast, extend ≥ extendSimilarity, gap ≥ gapAtLeast, else new);
- ``JudgeAnswer``: ratings 1-5 derived from the prompt (traceability from the share of the story's
  words found in the segment block, AC ratings from the criteria's wording), with rationales;
- any other schema: a minimal instance of the JSON schema (required fields only).
Embeddings: deterministic hashed bag-of-words vectors (``dimensions`` or ``embedding_dim``), L2
normalized, so texts sharing words are similar; float lists or base64 as the request asks.

Every request is recorded (``standin.requests``) with its parsed body, headers, the SDK's retry
count header and the Azure deployment, for assertions.

Use::

    with OpenAIStandIn(delay=0.05, failures=Failures(rate=0.3, seed=7)) as llm:
        env = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "x"}
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from shared.engine.llm.prompting import (
    ADO_ITEM_RE,
    CANDIDATE_RE,
    DATA_BLOCK_RE,
    THRESHOLD_RE,
    UNIT_LINE_RE,
)
from shared.text.textio import sentence_spans, words

# ------------------------------------------------------------------------------------------------
# replies


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


# ------------------------------------------------------------------------------------------------
# failure injection


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


# ------------------------------------------------------------------------------------------------
# quota and latency


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


# ------------------------------------------------------------------------------------------------
# recorded requests


@dataclass
class Recorded:
    route: str  # "chat" | "embeddings" | "models"
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    deployment: str | None
    answered_with: str = ""  # "limited" | "scripted:<kind>" | "failure:<kind>" | "auto"
    status: int = 200
    counted: int = 0  # tokens counted against the quota (with ``limits``; 0 when refused)
    arrived: float = 0.0  # time.time() when the request arrived
    answered: float = 0.0  # time.time() when the answer was ready to send
    usage: dict[str, int] = field(default_factory=dict)  # the usage the answer reported

    @property
    def schema_name(self) -> str | None:
        fmt = self.body.get("response_format") or {}
        return (fmt.get("json_schema") or {}).get("name")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def prompt(self) -> str:
        """All message contents, joined."""
        return "\n".join(str(m.get("content") or "") for m in self.messages)

    @property
    def user_prompt(self) -> str:
        users = [m for m in self.messages if m.get("role") == "user"]
        return str(users[0].get("content") or "") if users else ""

    @property
    def temperature(self) -> float | None:
        return self.body.get("temperature")

    @property
    def retry_count(self) -> int:
        return int(self.headers.get("x-stainless-retry-count", "0") or 0)

    @property
    def model(self) -> str | None:
        return self.deployment or self.body.get("model")


Matcher = str | Callable[[Recorded], bool] | None


# ------------------------------------------------------------------------------------------------
# the server


class OpenAIStandIn:
    def __init__(
        self,
        *,
        delay: float = 0.0,
        embedding_delay: float | None = None,
        failures: Failures | None = None,
        units_per_segment: int = 8,
        segments_per_call: int | None = None,
        stories_per_segment: int = 3,
        embedding_dim: int = 1536,
        limits: RateLimits | dict[str, RateLimits] | None = None,
        token_latency: TokenLatency | dict[str, TokenLatency] | None = None,
        listener: Callable[[Recorded], None] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.delay = delay
        # one RateLimits for every model (each model its own quota), or per model name
        self.limits = limits
        # one TokenLatency for every route, or per route ("chat", "embeddings")
        self.token_latency = token_latency
        self.listener = listener  # called with each request once it is answered
        self._quotas: dict[str, _Quota] = {}
        self.embedding_delay = embedding_delay  # None: embeddings wait ``delay`` like chat calls
        self.failures = failures or Failures()
        self.units_per_segment = units_per_segment
        self.segments_per_call = segments_per_call
        self.stories_per_segment = stories_per_segment
        self.embedding_dim = embedding_dim
        self.requests: list[Recorded] = []
        self.models_status = 0  # non-zero: GET .../models answers this status
        self._script: list[tuple[Matcher, Reply]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """For ``OPENAI_BASE_URL``."""
        return f"{self.url}/v1"

    @property
    def azure_endpoint(self) -> str:
        """For ``AZURE_OPENAI_ENDPOINT``."""
        return self.url

    def start(self) -> OpenAIStandIn:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="openai-standin",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes held requests
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> OpenAIStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting -----------------------------------------------------------------------------
    def script(self, *replies: Reply, match: Matcher = None) -> None:
        """Queue one-shot replies for the chat requests ``match`` selects, used in order."""
        with self._lock:
            self._script.extend((match, r) for r in replies)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()

    @property
    def chat_requests(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.route == "chat"]

    def calls(self, schema_name: str) -> list[Recorded]:
        return [r for r in self.chat_requests if r.schema_name == schema_name]

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def _scripted(self, rec: Recorded) -> Reply | None:
        with self._lock:
            for k, (matcher, reply) in enumerate(self._script):
                if (
                    matcher is None
                    or (isinstance(matcher, str) and matcher == rec.schema_name)
                    or (callable(matcher) and matcher(rec))
                ):
                    del self._script[k]
                    return reply
        return None

    # -- answering -----------------------------------------------------------------------------
    def models(self, path: str, headers: dict[str, str]) -> tuple:
        """``GET /v1/models`` (``/openai/models`` on Azure): the models it answers for, recorded
        as a ``models`` request; ``models_status`` makes it answer that error status instead."""
        rec = Recorded("models", path, headers, {}, None)
        with self._lock:
            self.requests.append(rec)
        if self.models_status:
            rec.status = self.models_status
            return self.models_status, {}, {"error": {"message": "stand-in", "type": "error"}}
        names = ["gpt-4o", "text-embedding-3-small"]
        return (
            200,
            {},
            {
                "object": "list",
                "data": [
                    {"id": n, "object": "model", "created": 0, "owned_by": "standin"} for n in names
                ],
            },
        )

    def auto_delay(self, route: str) -> float:
        """How long an automatic answer on ``route`` ("chat" or "embeddings") waits."""
        if route == "embeddings" and self.embedding_delay is not None:
            return self.embedding_delay
        return self.delay

    def limits_for(self, model: str | None) -> RateLimits | None:
        if isinstance(self.limits, dict):
            return self.limits.get(model or "")
        return self.limits

    def _over_quota(self, route: str, rec: Recorded) -> Reply | None:
        """None when the request fits its deployment's quota (and is counted), else the 429."""
        limits = self.limits_for(rec.model)
        if limits is None or not (limits.tokens > 0 or limits.requests > 0):
            return None
        cost = limits.counted(route, rec.body)
        with self._lock:
            quota = self._quotas.setdefault(rec.model or "", _Quota(limits))
            rec.arrived = time.time()  # in arrival order, under the lock
            wait = quota.admit(rec.arrived, cost)
        if wait <= 0:
            rec.counted = cost
            return None
        reply = Reply.status_code(
            429,
            retry_after=math.ceil(wait),
            message=f"Requests to {rec.model} have exceeded the rate limit of your deployment; "
            f"retry after {wait:.3f} s",
        )
        reply.headers["retry-after-ms"] = str(math.ceil(wait * 1000))
        return reply

    def handle(self, route: str, path: str, headers: dict[str, str], raw: bytes) -> tuple:
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return 400, {}, {"error": {"message": "request body is not JSON", "type": "invalid"}}
        m = re.search(r"/deployments/([^/]+)/", path)
        rec = Recorded(route, path, headers, body, m.group(1) if m else None, arrived=time.time())
        with self._lock:
            self.requests.append(rec)
        result = self._respond(route, raw, headers, body, rec)
        rec.answered = time.time()
        if self.listener is not None:
            self.listener(rec)
        return result

    def latency_for(self, route: str) -> TokenLatency | None:
        if isinstance(self.token_latency, dict):
            return self.token_latency.get(route)
        return self.token_latency

    def _respond(
        self, route: str, raw: bytes, headers: dict[str, str], body: dict[str, Any], rec: Recorded
    ) -> tuple:
        reply = self._over_quota(route, rec)
        if reply is not None:
            rec.answered_with = "limited"
        else:
            reply = self._scripted(rec) if route == "chat" else None
            if reply is not None:
                rec.answered_with = f"scripted:{reply.kind}"
        if reply is None:
            failure = self.failures.pick(route, raw, headers.get("x-stainless-retry-count", "0"))
            if failure is not None:
                reply = self.failures.reply(failure)
                rec.answered_with = f"failure:{failure}"
            else:
                reply = Reply.auto(delay=self.auto_delay(route))
                rec.answered_with = "auto"
        if reply.kind == "status":
            if reply.delay:
                self._stopping.wait(reply.delay)
            rec.status = reply.status
            return reply.status, reply.headers, reply.body
        result = self._answer(route, body, rec, reply)
        rec.usage = dict(result[2].get("usage") or {})
        wait = reply.delay
        latency = self.latency_for(route)
        if reply.kind == "auto" and latency is not None:
            wait += latency.seconds(
                int(rec.usage.get("prompt_tokens") or 0),
                int(rec.usage.get("completion_tokens") or 0),
            )
        if wait:
            self._stopping.wait(wait)
        return result

    def _answer(self, route: str, body: dict[str, Any], rec: Recorded, reply: Reply) -> tuple:
        if route == "embeddings":
            return 200, {}, self._embeddings(body, rec)
        if reply.kind in ("json", "content"):
            content = reply.body if reply.kind == "content" else json.dumps(reply.body)
        else:  # auto, or a hang that outlived the client
            answer = self._auto(rec)
            if reply.mutate is not None:
                answer = reply.mutate(answer, rec)
            content = json.dumps(answer)
        return 200, {}, self._completion(rec, content, reply.finish_reason)

    def _completion(self, rec: Recorded, content: str, finish_reason: str) -> dict[str, Any]:
        prompt_tokens = _approx_tokens(rec.prompt)
        completion_tokens = _approx_tokens(content)
        return {
            "id": f"chatcmpl-standin-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": rec.model or "standin",
            "system_fingerprint": "standin",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "finish_reason": finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _embeddings(self, body: dict[str, Any], rec: Recorded) -> dict[str, Any]:
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        dim = int(body.get("dimensions") or self.embedding_dim)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vector = hashed_embedding(str(text), dim)
            encoded: Any = (
                base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode() if as_base64 else vector
            )
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        tokens = sum(_approx_tokens(str(t)) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": rec.model or "standin-embedding",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    # -- automatic answers ---------------------------------------------------------------------
    def _auto(self, rec: Recorded) -> dict[str, Any]:
        name = rec.schema_name
        if name == "SegmentationAnswer":
            return self._auto_segmentation(rec.user_prompt)
        if name == "GenerationAnswer":
            return self._auto_generation(rec.user_prompt)
        if name == "TaggingAnswer":
            return self._auto_tagging(rec.user_prompt)
        if name == "JudgeAnswer":
            return self._auto_judge(rec.user_prompt)
        schema = ((rec.body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        return minimal_instance(schema or {"type": "object"}, schema or {})

    def _auto_segmentation(self, prompt: str) -> dict[str, Any]:
        block = _first_block(prompt, "transcript")
        lines = {int(m.group(1)): m.end() for m in UNIT_LINE_RE.finditer(block)}
        indices = sorted(lines)
        if not indices:
            return {"segments": []}
        if self.segments_per_call:
            step = max(1, -(-len(indices) // self.segments_per_call))
        else:
            step = max(1, self.units_per_segment)
        segments = []
        texts = block.splitlines()
        for n, k in enumerate(range(0, len(indices), step)):
            chunk = " ".join(texts[k : k + step])
            top = _top_words(chunk, 4) or ["discussion"]
            segments.append(
                {
                    "start_unit": indices[k],
                    "intent_labels": top,
                    "dominant_intent": f"requirements: {top[0]}",
                    "theme": f"Theme {n // 3 + 1}",
                }
            )
        return {"segments": segments}

    def _auto_generation(self, prompt: str) -> dict[str, Any]:
        segment = _first_block(prompt, "transcript")
        theme = _line_value(prompt, "Theme") or "Meeting requirements"
        sentences = [s.text(segment) for s in sentence_spans(segment)]
        cue = re.compile(r"\b(must|should|need|needs|want|will|shall|require|has to)\b", re.I)
        ranked = sorted(
            range(len(sentences)),
            key=lambda i: (not cue.search(sentences[i]), -len(sentences[i])),
        )
        chosen = sorted(ranked[: self.stories_per_segment])
        user_stories = [
            int(m.group(1))
            for m in ADO_ITEM_RE.finditer(_first_block(prompt, "backlog"))
            if m.group(2).strip() == "User Story"
        ]
        stories = []
        for n, i in enumerate(chosen):
            quote = sentences[i]
            gist = " ".join(quote.split()[:8]).rstrip(".,;:!?")
            stories.append(
                {
                    "title": gist[:1].upper() + gist[1:],
                    "description": f"As a user, I want {gist[:1].lower() + gist[1:]}, "
                    "so that the product meets what the meeting asked for.",
                    "acceptance_criteria": [f"The delivered product satisfies: {quote}"],
                    "feature_key": "f1",
                    "source_quotes": [quote],
                    "superseded_quotes": [],
                    "open_questions": [],
                    "constraint_violation": False,
                    "constraint_notes": [],
                    "ac_delta": [],
                    "extends_work_item_ids": user_stories[:1] if n == 0 else [],
                }
            )
        return {
            "epics": [
                {"key": "e1", "title": theme, "description": "", "existing_work_item_id": None}
            ],
            "features": [
                {
                    "key": "f1",
                    "title": f"{theme}: {_line_value(prompt, 'Dominant intent') or 'requirements'}",
                    "description": "",
                    "epic_key": "e1",
                    "existing_work_item_id": None,
                }
            ]
            if stories
            else [],
            "stories": stories,
            "open_questions": [],
        }

    def _auto_tagging(self, prompt: str) -> dict[str, Any]:
        thresholds = {k: float(v) for k, v in THRESHOLD_RE.findall(prompt)}
        candidates = [(int(i), float(s)) for i, s in CANDIDATE_RE.findall(prompt)]
        best = max((s for _, s in candidates), default=0.0)
        tag = "new"
        for name, key in (
            ("duplicate", "duplicateAtLeast"),
            ("extend", "extendSimilarity"),
            ("gap", "gapAtLeast"),
        ):
            if best >= thresholds.get(key, 2.0):
                tag = name
                break
        related = [] if tag == "new" else [i for i, s in candidates if s >= best - 1e-9][:1]
        return {
            "decision_tag": tag,
            "confidence": 0.8,
            "runner_up_tag": None,
            "runner_up_confidence": None,
            "related_story_ids": related,
            "reasoning_excerpt": f"Best similarity {best:.2f} against the thresholds.",
        }

    def _auto_judge(self, prompt: str) -> dict[str, Any]:
        """Ratings a reader could defend from the prompt alone: traceability from the share of the
        story's content words found in the segment, AC ratings from the criteria's wording."""
        segment = set(words(_first_block(prompt, "segment")))
        story = _first_block(prompt, "story")
        content = [w for w in words(story) if len(w) > 3 and w not in _STOP | _STORY_FORM]
        found = sum(1 for w in content if w in segment) / len(content) if content else 0.0
        acs = [line[2:] for line in story.splitlines() if line.startswith("- ")]
        negative = any(
            re.search(r"\b(not|never|no|error|fails?|invalid|reject\w*)\b", a, re.I) for a in acs
        )
        measurable = sum(1 for a in acs if re.search(r"\d", a))
        tag = re.search(r"^## Tag assigned by the pipeline\n(\S+)", prompt, re.MULTILINE)
        is_gap = bool(tag and tag.group(1) == "gap")
        return {
            "independent": 4,
            "negotiable": 4,
            "valuable": 4 if "so that" in story.lower() else 2,
            "estimable": 3,
            "small": 4 if len(acs) <= 5 else 2,
            "testable": 4 if acs else 1,
            "invest_rationale": "Estimable is the weakest: the effort depends on details "
            "the segment leaves open.",
            "ac_coverage": 4 if acs else 1,
            "ac_negative_cases": 4 if negative else 1,
            "ac_measurability": 1 + round(4 * measurable / len(acs)) if acs else 1,
            "ac_rationale": "The criteria state the expected result"
            + ("" if negative else " but no error or negative case")
            + ".",
            "traceability": 1 + round(4 * found),
            "traceability_rationale": f"{found:.0%} of the story's content words occur in "
            "the segment.",
            "gap_is_real_enhancement": True if is_gap else None,
            "gap_rationale": "It adds what the related story leaves open." if is_gap else None,
        }


# ------------------------------------------------------------------------------------------------
# helpers

SERVICE_ENV_PREFIXES = (
    "SYNTH_",
    "OPENAI_",
    "AZURE_OPENAI_",
    "AZURE_CLIENT_ID",
    "PINECONE_",
    "LANGFUSE_",
    "AZUREWEBJOBSSTORAGE",
)


def hermetic_env(monkeypatch: Any) -> None:
    """Remove every variable that chooses an engine, embedder, index, store or tracer (a session
    fixture elsewhere may have set them), so a test's ``Settings`` say only what the test says."""
    import os

    for name in list(os.environ):
        if name.upper().startswith(SERVICE_ENV_PREFIXES):
            monkeypatch.delenv(name, raising=False)


def _handler_for(standin: OpenAIStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, headers: dict[str, str], body: Any) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout): nothing to answer

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            if path.endswith("/chat/completions"):
                self._send(*standin.handle("chat", path, headers, raw))
            elif path.endswith("/embeddings"):
                self._send(*standin.handle("embeddings", path, headers, raw))
            else:
                self._send(404, {}, {"error": {"message": f"no route {path}", "type": "invalid"}})

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path.endswith("/models"):  # what a health check lists
                headers = {k.lower(): v for k, v in self.headers.items()}
                self._send(*standin.models(path, headers))
                return
            self._send(404, {}, {"error": {"message": "GET is not served", "type": "invalid"}})

    return Handler


def _approx_tokens(text: str) -> int:
    """About 4 characters a token: cheap, and all the stand-in needs for usage figures."""
    return max(1, len(text) // 4) if text else 0


def _first_block(prompt: str, kind: str) -> str:
    for m in DATA_BLOCK_RE.finditer(prompt):
        if m.group("kind") == kind:
            return m.group("text")
    return ""


def _line_value(prompt: str, label: str) -> str:
    m = re.search(rf"^{re.escape(label)}: (.*)$", prompt, re.MULTILINE)
    return m.group(1).strip() if m else ""


_STOP = set(
    "the a an and or but to of in on for with is are was were be been it this that we you i they "
    "he she so yeah okay ok um uh just like have has do does not no yes can could would should "
    "will at as by from about what which there their our your my me us if then than also all".split()
)

# the labels and the template of a story block ("Title:", "As a user, I want ...")
_STORY_FORM = {"title", "description", "acceptance", "criteria", "user", "want", "that"}


def _top_words(text: str, n: int) -> list[str]:
    counts: dict[str, int] = {}
    for w in words(re.sub(r"\[\d+\]", " ", text)):
        if len(w) > 2 and w not in _STOP and not w.isdigit():
            counts[w] = counts.get(w, 0) + 1
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def hashed_embedding(text: str, dim: int) -> list[float]:
    """Bag of words hashed into ``dim`` signed buckets, L2-normalized (a bias bucket keeps
    word-less texts from being zero vectors)."""
    vector = [0.0] * dim
    vector[0] = 0.05
    for w in words(text):
        h = int.from_bytes(hashlib.md5(w.encode()).digest()[:8], "little")
        vector[h % dim] += 1.0 if (h >> 40) & 1 else -1.0
    norm = sum(v * v for v in vector) ** 0.5
    return [v / norm for v in vector]


def minimal_instance(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """The smallest value a JSON schema (OpenAI strict subset) accepts."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return minimal_instance(root.get("$defs", {}).get(name, {}), root)
    if "anyOf" in schema:
        options = schema["anyOf"]
        nullable = [o for o in options if o.get("type") == "null"]
        return None if nullable else minimal_instance(options[0], root)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal_instance(props[k], root) for k in schema.get("required", props)}
    if kind == "array":
        return []
    if kind == "string":
        return ""
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return None
