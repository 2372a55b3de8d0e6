"""The OpenAI stand-in's per-route delay: ``embedding_delay`` sets how long an automatic embedding
answer waits, independently of the chat calls' ``delay`` (benchmarks/bench_fanout.py measures
embeddings answered at once and after 300 ms)."""

from __future__ import annotations

import json

import pytest

from devhost.standins.openai_standin import OpenAIStandIn, Reply

CHAT = json.dumps(
    {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hello"}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "Anything", "schema": {"type": "object", "properties": {}}},
        },
    }
).encode()
EMBED = json.dumps({"model": "text-embedding-3-small", "input": ["the remote pairs"]}).encode()


class Waits:
    """Stands for the stand-in's stop event: records each wait instead of sleeping."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def wait(self, seconds: float) -> bool:
        self.seconds.append(seconds)
        return False

    def set(self) -> None:
        pass


def waits_for(standin: OpenAIStandIn, route: str) -> list[float]:
    waits = Waits()
    standin._stopping = waits  # type: ignore[assignment]
    status, _, body = standin.handle(route, f"/v1/{route}", {}, CHAT if route == "chat" else EMBED)
    assert status == 200, body
    if route == "embeddings":
        assert len(body["data"][0]["embedding"]) == standin.embedding_dim
    return waits.seconds


@pytest.mark.parametrize(
    ("delay", "embedding_delay", "chat_wait", "embedding_wait"),
    [
        (0.3, None, [0.3], [0.3]),  # default: every call waits ``delay``
        (0.3, 0.0, [0.3], []),  # embeddings answered at once
        (0.0, 0.25, [], [0.25]),  # only embeddings wait
        (0.3, 0.1, [0.3], [0.1]),
    ],
)
def test_embedding_delay_is_per_route(
    delay: float, embedding_delay: float | None, chat_wait: list[float], embedding_wait: list[float]
) -> None:
    with OpenAIStandIn(delay=delay, embedding_delay=embedding_delay) as standin:
        assert standin.auto_delay("chat") == delay
        assert standin.auto_delay("embeddings") == (
            delay if embedding_delay is None else embedding_delay
        )
        assert waits_for(standin, "chat") == chat_wait
        assert waits_for(standin, "embeddings") == embedding_wait
        assert [r.route for r in standin.requests] == ["chat", "embeddings"]


def test_scripted_chat_replies_keep_their_own_delay() -> None:
    with OpenAIStandIn(delay=0.3, embedding_delay=0.0) as standin:
        standin.script(Reply.json({}, delay=0.05))
        assert waits_for(standin, "chat") == [0.05]
        assert waits_for(standin, "chat") == [0.3]
        assert waits_for(standin, "embeddings") == []


def test_embedding_delay_over_http() -> None:
    """Through the real SDK: an embedding answered at once while chat calls would wait."""
    from openai import OpenAI

    with OpenAIStandIn(delay=30.0, embedding_delay=0.0) as standin:
        client = OpenAI(base_url=standin.base_url, api_key="x", timeout=10, max_retries=0)
        response = client.embeddings.create(model="text-embedding-3-small", input=["a", "b"])
        assert [len(d.embedding) for d in response.data] == [1536, 1536]


# ------------------------------------------------------------------------------------------------
# the quota (RateLimits) and answers that take time in proportion to their tokens (TokenLatency)


class FakeTime:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def chat_body(content: str, max_tokens: int = 100, model: str = "gpt-4o") -> bytes:
    return json.dumps(
        {
            "model": model,
            "messages": [{"role": "user", "content": content}],
            "max_completion_tokens": max_tokens,
        }
    ).encode()


def test_the_quota_counts_prompt_characters_and_max_tokens_and_answers_429_past_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from devhost.standins.openai_standin import RateLimits, server

    clock = FakeTime()
    monkeypatch.setattr(server.time, "time", clock)
    quota = RateLimits(tokens=1000, window_s=60.0)
    assert quota.counted("chat", json.loads(chat_body("x" * 401, 100))) == 101 + 100
    assert quota.counted("embeddings", {"input": ["abcd", "abcde"]}) == 1 + 2
    standin = OpenAIStandIn(limits=quota)
    standin._stopping = Waits()  # type: ignore[assignment]
    try:
        first = standin.handle("chat", "/v1/chat/completions", {}, chat_body("x" * 1600, 200))
        clock.now += 10.0
        second = standin.handle("chat", "/v1/chat/completions", {}, chat_body("x" * 1200, 100))
        clock.now += 5.0
        refused = standin.handle("chat", "/v1/chat/completions", {}, chat_body("x" * 400, 100))
        other = standin.handle(
            "chat", "/v1/chat/completions", {}, chat_body("x" * 400, 100, model="gpt-4o-mini")
        )
        clock.now += 45.0  # the first request (600 tokens) leaves the window
        again = standin.handle("chat", "/v1/chat/completions", {}, chat_body("x" * 400, 100))
    finally:
        standin._server.server_close()
    assert [first[0], second[0], refused[0], other[0], again[0]] == [200, 200, 429, 200, 200]
    assert refused[1] == {"retry-after": "45", "retry-after-ms": "45000"}
    assert [r.counted for r in standin.requests] == [600, 400, 0, 200, 200]
    assert [r.answered_with for r in standin.requests].count("limited") == 1


def test_requests_are_limited_per_sixth_of_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    from devhost.standins.openai_standin import RateLimits, server

    clock = FakeTime()
    monkeypatch.setattr(server.time, "time", clock)
    standin = OpenAIStandIn(limits=RateLimits(requests=12, window_s=60.0))  # 2 per 10 s
    standin._stopping = Waits()  # type: ignore[assignment]
    try:
        statuses = []
        for _ in range(3):
            statuses.append(standin.handle("embeddings", "/v1/embeddings", {}, EMBED)[0])
            clock.now += 1.0
        clock.now += 8.0  # 10 s after the first
        statuses.append(standin.handle("embeddings", "/v1/embeddings", {}, EMBED)[0])
    finally:
        standin._server.server_close()
    assert statuses == [200, 200, 429, 200]


def test_token_latency_adds_time_in_proportion_to_the_answer() -> None:
    from devhost.standins.openai_standin import TokenLatency

    latency = TokenLatency(base_s=0.5, per_prompt_token_s=0.001, per_completion_token_s=0.01)
    with OpenAIStandIn(token_latency={"chat": latency}) as standin:
        waits = waits_for(standin, "chat")
        usage = standin.requests[0].usage
        assert usage["completion_tokens"] > 0
        assert waits == [
            pytest.approx(0.5 + 0.001 * usage["prompt_tokens"] + 0.01 * usage["completion_tokens"])
        ]
        assert waits_for(standin, "embeddings") == []  # no latency set for embeddings
