"""The stand-in's server: ``OpenAIStandIn`` (started and stopped, scripted, its request log) and
how it answers a request: the quota first, then a scripted reply, the failure plan, else the
automatic answer (``answers``), each after its delay; the HTTP routes; ``hermetic_env`` for tests.
"""

from __future__ import annotations

import base64
import json
import math
import re
import struct
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from devhost.standins.openai_standin.answers import _approx_tokens, auto_answer, hashed_embedding
from devhost.standins.openai_standin.limits import RateLimits, TokenLatency, _Quota
from devhost.standins.openai_standin.recorded import Matcher, Recorded
from devhost.standins.openai_standin.replies import Failures, Reply


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
            answer = auto_answer(self, rec)
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
