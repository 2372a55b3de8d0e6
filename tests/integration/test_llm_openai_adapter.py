"""The chat model adapter and the embedder on the real ``openai`` SDK against the OpenAI stand-in:
structured outputs, malformed and schema-violating answers, 429 with Retry-After, 5xx, timeouts,
Azure routing with a key and with Entra ID, batching and the content-hash cache."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import openai
import pytest

from devhost.standins.openai_standin import (
    Failures,
    OpenAIStandIn,
    Reply,
    hashed_embedding,
    hermetic_env,
)
from shared.embeddings import DimensionMismatch
from shared.embeddings.openai_embedder import OpenAIEmbedder
from shared.engine.llm.schemas import TaggingAnswer
from shared.errors import ConfigurationError
from shared.llm import InvalidOutput
from shared.llm import client as llm_client
from shared.llm.client import build_openai_client
from shared.llm.openai_chat import OpenAIChatModel
from shared.settings import Settings
from shared.storage.local import LocalFolderStore

MESSAGES = [{"role": "user", "content": "tag this"}]


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch):
    hermetic_env(monkeypatch)


@pytest.fixture
def llm() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as standin:
        yield standin


def chat_model(llm: OpenAIStandIn, **overrides: object) -> OpenAIChatModel:
    settings = Settings(
        openai_api_key="x", openai_base_url=llm.base_url, storage_backend="local", **overrides
    )
    return OpenAIChatModel(build_openai_client(settings), "gpt-4o")


def test_a_structured_answer_is_parsed_with_its_usage(llm):
    answer = chat_model(llm).structured(MESSAGES, TaggingAnswer, temperature=0.1)
    assert isinstance(answer.value, TaggingAnswer) and answer.value.decision_tag == "new"
    assert answer.usage.calls == 1 and answer.usage.completion_tokens > 0
    sent = llm.chat_requests[0]
    assert sent.body["response_format"]["type"] == "json_schema"
    assert sent.body["response_format"]["json_schema"]["strict"] is True
    assert sent.schema_name == "TaggingAnswer" and sent.temperature == 0.1


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply.malformed(), "does not match the schema"),
        (Reply.schema_violation(), "does not match the schema"),
        (Reply.content("{}", finish_reason="length"), "output token limit"),
    ],
)
def test_unusable_answers_raise_invalid_output_with_the_raw_text(llm, reply, expected):
    llm.script(reply)
    with pytest.raises(InvalidOutput) as err:
        chat_model(llm).structured(MESSAGES, TaggingAnswer, temperature=0.1)
    assert expected in str(err.value)
    assert err.value.raw and err.value.usage.calls == 1


def test_429_with_retry_after_is_retried_by_the_sdk(llm):
    llm.script(Reply.rate_limited(retry_after=0.05))
    answer = chat_model(llm).structured(MESSAGES, TaggingAnswer, temperature=0.1)
    assert answer.value.decision_tag == "new"
    assert [(r.answered_with, r.retry_count) for r in llm.chat_requests] == [
        ("scripted:status", 0),
        ("auto", 1),
    ]


def test_5xx_beyond_the_sdk_retries_propagates(llm):
    llm.script(Reply.server_error(), Reply.server_error())
    with pytest.raises(openai.InternalServerError):
        chat_model(llm, openai_max_retries=1).structured(MESSAGES, TaggingAnswer, temperature=0)
    assert len(llm.chat_requests) == 2


def test_a_slow_answer_past_the_timeout_raises(llm):
    llm.script(Reply.hang(5.0))
    model = chat_model(llm, openai_timeout_seconds=0.3, openai_max_retries=0)
    with pytest.raises(openai.APITimeoutError):
        model.structured(MESSAGES, TaggingAnswer, temperature=0)


def test_a_slow_answer_within_the_timeout_is_fine(llm):
    llm.script(Reply.slow(0.2))
    answer = chat_model(llm, openai_timeout_seconds=5).structured(
        MESSAGES, TaggingAnswer, temperature=0
    )
    assert answer.value.decision_tag == "new"


def test_azure_openai_with_a_key_calls_the_deployment(llm):
    settings = Settings(
        azure_openai_endpoint=llm.azure_endpoint,
        azure_openai_api_key="azure-key",
        azure_openai_chat_deployment="chat-dep",
        storage_backend="local",
    )
    from shared.llm.config import chat_model as configured_model

    model = OpenAIChatModel(build_openai_client(settings), configured_model(settings, "tagging"))
    model.structured(MESSAGES, TaggingAnswer, temperature=0)
    sent = llm.chat_requests[0]
    assert sent.deployment == "chat-dep" and sent.headers["api-key"] == "azure-key"
    assert sent.path == "/openai/deployments/chat-dep/chat/completions"


def test_azure_openai_without_a_key_uses_an_entra_id_token(llm, monkeypatch):
    scopes = []

    def provider(settings: Settings):
        scopes.append(llm_client.AZURE_OPENAI_SCOPE)
        return lambda: "entra-token"

    monkeypatch.setattr(llm_client, "_entra_token_provider", provider)
    settings = Settings(
        azure_openai_endpoint=llm.azure_endpoint, azure_client_id="mi-id", storage_backend="local"
    )
    OpenAIChatModel(build_openai_client(settings), "gpt-4o").structured(
        MESSAGES, TaggingAnswer, temperature=0
    )
    sent = llm.chat_requests[0]
    assert sent.headers["authorization"] == "Bearer entra-token" and "api-key" not in sent.headers
    assert scopes == ["https://cognitiveservices.azure.com/.default"]


def test_no_key_and_no_azure_endpoint_is_a_clear_error():
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        build_openai_client(Settings(storage_backend="local", engine="llm"))


# ------------------------------------------------------------------------------------------------
# embeddings


def embedder(llm: OpenAIStandIn, store=None, **kw) -> OpenAIEmbedder:
    client = build_openai_client(
        Settings(openai_api_key="x", openai_base_url=llm.base_url, storage_backend="local")
    )
    return OpenAIEmbedder(client, "text-embedding-3-small", store=store, **kw)


def test_embeddings_are_batched_normalized_and_decoded(llm):
    texts = ["battery life", "buttons", "recycled case", "voice control", "price"]
    vectors = embedder(llm, batch_size=2).embed(texts)
    assert vectors.shape == (5, 1536)
    assert len([r for r in llm.requests if r.route == "embeddings"]) == 3
    assert llm.requests[0].body["encoding_format"] == "base64"  # the SDK's default
    expected = np.asarray(hashed_embedding("recycled case", 1536), dtype=np.float32)
    assert np.allclose(vectors[2], expected, atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_nothing_is_embedded_twice(llm, tmp_path):
    store = LocalFolderStore(tmp_path)
    first = embedder(llm, store=store)
    a = first.embed(["battery life", "buttons", "battery life"])
    assert first.embedded_texts == 2  # the duplicate is embedded once
    again = first.embed(["buttons"])
    assert first.embedded_texts == 2 and np.array_equal(again[0], a[1])
    fresh = embedder(llm, store=store)  # another worker: the store's cache answers
    b = fresh.embed(["buttons", "battery life", "price"])
    assert fresh.embedded_texts == 1 and np.array_equal(b[0], a[1])
    assert len(store.list("index/_embedding-cache/")) == 3


def test_a_model_of_another_size_is_a_clear_dimension_mismatch(llm):
    llm.embedding_dim = 768  # e.g. a local OpenAI-compatible server with another model
    with pytest.raises(DimensionMismatch, match="768-dimensional vectors but 1536"):
        embedder(llm).embed(["battery"])


def test_reduced_dimensions_are_requested(llm):
    small = embedder(llm, dimension=256)
    assert small.embed(["battery"]).shape == (1, 256)
    assert llm.requests[0].body["dimensions"] == 256


# ------------------------------------------------------------------------------------------------
# the stand-in's failure knob (used by the chaos tests and benchmarks)


def test_the_failure_knob_is_seeded_and_order_independent(llm):
    plan = Failures(rate=0.3, seed=11)
    bodies = [f'{{"n": {i}}}'.encode() for i in range(200)]
    first = [plan.pick("chat", b, "0") for b in bodies]
    again = [plan.pick("chat", b, "0") for b in reversed(bodies)][::-1]
    assert first == again
    kinds = [k for k in first if k]
    assert set(kinds) == {"malformed", "429", "500", "timeout"}
    assert 30 <= len(kinds) <= 90  # about 30% of 200
    assert [plan.pick("chat", b, "1") for b in bodies] != first  # a retry draws afresh
    assert plan.pick("embeddings", bodies[0], "0") is None  # chat only by default
