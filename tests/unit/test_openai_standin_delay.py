"""The OpenAI stand-in's per-route delay: ``embedding_delay`` sets how long an automatic embedding
answer waits, independently of the chat calls' ``delay`` (benchmarks/bench_fanout.py measures
embeddings answered at once and after 300 ms)."""

from __future__ import annotations

import json

import pytest

from tests.support.openai_standin import OpenAIStandIn, Reply

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
