"""The shared rate limiter (shared/llm/limiter.py) on a deterministic clock: instances sharing one
store never exceed the budget, a 429 blocks every instance and lowers the rate for a while, a
unit that cannot wait is told when to come back, and with every limit 0 nothing is limited and
nothing is stored."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import httpx2
import openai
import pytest

from devhost.standins.openai_standin import RateLimits
from shared import layout
from shared.engine.llm.schemas import GenerationAnswer, TaggingAnswer
from shared.llm import CapacityUnavailable
from shared.llm.bucket import BucketState, Limits
from shared.llm.limiter import LimitedChatModel, ModelLimiter, ModelLimits, limit_chat
from shared.llm.service import chat_tokens, retry_after_seconds, service_retry_after
from shared.settings import Settings
from shared.storage.local import LocalFolderStore
from tests.support.fakes import CountingStore

MODEL = "gpt-4o"


class Clock:
    """time.time and time.sleep for the limiter: sleeping moves the clock."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def limiter(store: object, clock: Clock, limits: Limits, **kw: object) -> ModelLimiter:
    return ModelLimiter(store, MODEL, limits, clock=clock, sleep=clock.sleep, **kw)  # type: ignore[arg-type]


def most_in_any_window(grants: list[tuple[float, int]], span: float) -> tuple[int, int]:
    """The most tokens and the most grants any ``span``-long stretch of time holds."""
    most_tokens = most_grants = 0
    for start, _ in grants:
        inside = [t for at, t in grants if start <= at < start + span]
        most_tokens = max(most_tokens, sum(inside))
        most_grants = max(most_grants, len(inside))
    return most_tokens, most_grants


def test_two_instances_sharing_one_store_never_exceed_the_budget(tmp_path: Path) -> None:
    clock, store = Clock(), LocalFolderStore(tmp_path)
    limits = Limits(tokens=10_000, requests=60, window_s=60.0)
    instances = [limiter(store, clock, limits, max_wait_s=600) for _ in range(2)]
    rng = random.Random(7)
    grants: list[tuple[float, int]] = []
    for _ in range(150):
        tokens = rng.choice([300, 900, 2500])
        rng.choice(instances).acquire(tokens)
        grants.append((clock(), tokens))
        clock.now += rng.random() * 0.5  # callers keep coming faster than the budget allows
    tokens, _ = most_in_any_window(grants, 60.0)
    _, requests = most_in_any_window(grants, 10.0)
    assert tokens <= 10_000 and requests <= 10  # RPM/6 per sixth of the window
    # the budget is used, not only respected: the demand exceeds it throughout
    span = grants[-1][0] - grants[0][0]
    assert sum(t for _, t in grants) >= 0.85 * 10_000 * span / 60
    # both instances got their share, and each saw the other's writes (a lost compare-and-swap)
    assert all(i.stats.grants > 20 for i in instances)
    assert sum(i.stats.conflicts for i in instances) > 0


def test_requests_are_limited_over_a_sixth_of_the_window(tmp_path: Path) -> None:
    clock = Clock()
    only_requests = limiter(LocalFolderStore(tmp_path), clock, Limits(requests=12, window_s=60))
    times = []
    for _ in range(9):
        only_requests.acquire(10_000_000)  # tokens are not limited
        times.append(clock())
    assert most_in_any_window([(t, 0) for t in times], 10.0)[1] == 2  # 12 / 6
    assert times[-1] - times[0] >= 30.0


def test_an_uncontended_grant_is_one_storage_request(tmp_path: Path) -> None:
    clock, store = Clock(), CountingStore(tmp_path)
    one = limiter(store, clock, Limits(tokens=100_000, requests=600))
    one.acquire(1000)  # creates the blob
    one.acquire(1000)  # reads its ETag once
    store.clear()
    before = one.stats.storage_calls
    for _ in range(5):
        one.acquire(1000)
    assert one.stats.storage_calls - before == 5
    # (the local store's replace_if_match checks the ETag and puts: that is one request on Azure)
    path = layout.model_limit(MODEL)
    assert [m for m, _ in store.calls].count("replace_if_match") == 5
    assert {p for _, p in store.calls} == {path} == {"ingestion/limits/gpt-4o.json"}
    assert not [m for m, _ in store.calls if m.startswith("get")]


def test_a_429_blocks_every_instance_and_lowers_the_rate_for_a_while(tmp_path: Path) -> None:
    clock, store = Clock(), LocalFolderStore(tmp_path)
    limits = Limits(tokens=10_000, window_s=60.0)
    a, b = limiter(store, clock, limits), limiter(store, clock, limits)
    b.acquire(1000)  # b now holds a copy of the state that a's 429 makes stale
    a.throttled(retry_after=5.0)
    start = clock()
    b.acquire(1000)
    assert clock() - start >= 5.0  # b waited out a's Retry-After
    # 2,000 tokens are in the window: 7,000 more fit the full budget but not 70 % of it
    with pytest.raises(CapacityUnavailable) as refused:
        b.acquire(7000, deadline=clock())
    assert refused.value.retry_after > 0 and not refused.value.service
    # without 429s the rate grows back (0.1 per sixth of a window) and the window empties
    clock.now += 61.0
    assert b.acquire(9000, deadline=clock()) == 0.0


def test_a_caller_that_cannot_get_capacity_within_the_wait_is_told_when_to_come_back(
    tmp_path: Path,
) -> None:
    clock = Clock()
    one = limiter(LocalFolderStore(tmp_path), clock, Limits(tokens=5000), max_wait_s=10.0)
    one.acquire(4000)
    with pytest.raises(CapacityUnavailable) as busy:
        one.acquire(4000)
    assert clock.slept == []  # the wait (the whole window) is past the bound: no sleep at all
    assert 60.0 <= busy.value.retry_after <= 62.0 * 1.2  # until the first grant leaves the window
    assert one.stats.deferred == 1
    clock.now += busy.value.retry_after
    assert one.acquire(4000) == 0.0


def test_a_call_larger_than_the_whole_limit_goes_alone_in_an_empty_window(tmp_path: Path) -> None:
    clock = Clock()
    one = limiter(LocalFolderStore(tmp_path), clock, Limits(tokens=5000), max_wait_s=120.0)
    assert one.acquire(8000) == 0.0
    start = clock()
    one.acquire(100)
    assert clock() - start >= 60.0


def rate_limit_error(headers: dict[str, str], code: str = "rate_limit_exceeded") -> Exception:
    request = httpx2.Request("POST", "http://standin/v1/chat/completions")
    response = httpx2.Response(429, headers=headers, request=request)
    return openai.RateLimitError("Rate limit reached", response=response, body={"code": code})


def test_a_429_after_the_sdk_retries_is_waited_out_then_the_call_is_made_again(
    tmp_path: Path,
) -> None:
    clock = Clock()
    one = limiter(LocalFolderStore(tmp_path), clock, Limits(tokens=100_000))
    answers: list[object] = [rate_limit_error({"retry-after-ms": "2500"}), "answer"]

    def call() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return str(answer)

    assert one.run(1000, call) == "answer"
    assert sum(clock.slept) >= 2.5 and one.stats.throttled == 1 and one.stats.grants == 2


def test_a_429_that_outlasts_the_wait_defers_the_unit_and_billing_errors_stay_errors(
    tmp_path: Path,
) -> None:
    clock = Clock()
    one = limiter(LocalFolderStore(tmp_path), clock, Limits(tokens=100_000), max_wait_s=3.0)

    def always_429() -> str:
        raise rate_limit_error({"retry-after": "20"})

    with pytest.raises(CapacityUnavailable) as busy:
        one.run(1000, always_429)
    assert busy.value.service and busy.value.retry_after >= 20.0
    clock.now += busy.value.retry_after

    def no_money() -> str:
        raise rate_limit_error({}, code="insufficient_quota")

    with pytest.raises(openai.RateLimitError):
        one.run(1000, no_money)


def test_retry_after_headers() -> None:
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "2"}) == 1.5
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after_seconds({}) is None
    assert service_retry_after(rate_limit_error({})) == 0.0
    assert service_retry_after(ValueError("no")) is None


def test_the_response_hook_reports_each_429_to_its_deployment(tmp_path: Path) -> None:
    clock = Clock()
    limits = ModelLimits(
        LocalFolderStore(tmp_path), Limits(tokens=1000), Limits(tokens=1000), clock=clock
    )
    azure = httpx2.Request(
        "POST", "https://aoai.example/openai/deployments/chat-dep/chat/completions"
    )
    limits.observe(httpx2.Response(429, headers={"retry-after": "7"}, request=azure))
    plain = httpx2.Request(
        "POST", "http://standin/v1/embeddings", content=b'{"model": "text-embedding-3-small"}'
    )
    limits.observe(httpx2.Response(200, request=plain))  # not a 429: nothing
    chat = limits.chat("chat-dep")
    assert chat is not None and chat.stats.throttled == 1
    state = BucketState.parse(LocalFolderStore(tmp_path).get(layout.model_limit("chat-dep")))
    assert state.blocked_until == pytest.approx(clock() + 7.0) and state.factor < 1.0
    embeddings = limits.embeddings("text-embedding-3-small")
    assert embeddings is not None and embeddings.stats.throttled == 0


def test_with_every_limit_0_there_is_no_limiter_and_no_storage_call(tmp_path: Path) -> None:
    store = CountingStore(tmp_path)
    assert ModelLimits.from_settings(Settings(), store) is None

    class Chat:
        model = MODEL

    chat = Chat()
    assert limit_chat(chat, None) is chat  # type: ignore[arg-type]
    assert store.calls == []
    on = ModelLimits.from_settings(Settings(model_tpm=1000), store)
    assert on is not None and isinstance(limit_chat(chat, on), LimitedChatModel)  # type: ignore[arg-type]
    # embeddings follow the chat limits unless set on their own; 0 turns them off
    assert on.embeddings("text-embedding-3-small") is not None
    own = ModelLimits.from_settings(Settings(model_tpm=1000, embedding_tpm=0), store)
    assert own is not None and own.embeddings("text-embedding-3-small") is None


def test_a_calls_reservation_covers_what_the_service_counts() -> None:
    """The estimate is never below the stand-in's count (Azure's rule: characters / 4 + max
    tokens), whatever the text: prose, digits, or a script tiktoken splits finely."""
    from openai.lib._parsing._completions import type_to_response_format_param

    texts = [
        "The remote must have fewer than ten buttons. " * 40,
        "0815 4711 2718 3141 5926 " * 60,
        "リモコンのボタンは十個未満にすること。" * 30,
    ]
    for schema in (GenerationAnswer, TaggingAnswer):
        for text in texts:
            messages = [
                {"role": "system", "content": "You write user stories."},
                {"role": "user", "content": text},
            ]
            body = {
                "messages": messages,
                "response_format": type_to_response_format_param(schema),
                "max_completion_tokens": 800,
            }
            assert chat_tokens(messages, schema, 800, MODEL) >= RateLimits().counted("chat", body)


class GatedStore(LocalFolderStore):
    """Once ``armed``, holds the first compare-and-swap until ``release`` is set."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.armed = threading.Event()
        self.release = threading.Event()
        self.held = threading.Event()

    def replace_if_match(self, path, data, etag, content_type=None):  # type: ignore[no-untyped-def]
        if self.armed.is_set() and not self.held.is_set():
            self.held.set()
            self.release.wait(30)
        return super().replace_if_match(path, data, etag, content_type)


def test_callers_waiting_in_line_are_granted_together_by_one_write(tmp_path: Path) -> None:
    store = GatedStore(tmp_path)
    one = ModelLimiter(store, MODEL, Limits(tokens=1_000_000, requests=60_000))
    one.acquire(10)  # creates the blob
    one.acquire(10)  # reads its ETag
    store.armed.set()  # the next write is held
    callers = [threading.Thread(target=one.acquire, args=(100,)) for _ in range(12)]
    callers[0].start()
    assert store.held.wait(30)  # the first caller's write is under way
    for c in callers[1:]:
        c.start()
    while len(one._line) < 12:  # the other eleven queue behind it
        time.sleep(0.01)
    store.release.set()
    for c in callers:
        c.join(30)
    assert one.stats.grants == 14
    assert one.stats.batches == 4  # the two first, the held one, then the eleven at once


def test_a_large_call_at_the_head_is_not_passed_by_smaller_ones(tmp_path: Path) -> None:
    one = ModelLimiter(
        LocalFolderStore(tmp_path), MODEL, Limits(tokens=10_000, window_s=1.0), max_wait_s=10
    )
    one.acquire(9000)
    large = threading.Thread(target=one.acquire, args=(5000,))
    large.start()
    while not one._line:
        time.sleep(0.005)
    small = threading.Thread(target=one.acquire, args=(500,))  # would fit at once
    small.start()
    large.join(30)
    small.join(30)
    # the small call waited for the large one and went with it: no write granted it alone
    assert one.stats.grants == 3 and one.stats.batches == 2 and one.stats.sleeps >= 1


def test_a_request_sent_late_is_counted_from_when_it_leaves(tmp_path: Path) -> None:
    """The service counts a request from its arrival: one that leaves long after its grant (a
    busy process, the SDK sending again after a 429) must not leave the limiter's window first."""
    clock = Clock()
    limits = ModelLimits(
        LocalFolderStore(tmp_path), Limits(tokens=10_000), Limits(), clock=clock, sleep=clock.sleep
    )
    chat = limits.chat(MODEL)
    assert chat is not None
    granted = clock()

    def slow_to_send(delay: float) -> str:
        clock.now += delay  # building the request took this long
        limits.on_request(None)  # the HTTP client's request hook
        return "answer"

    assert chat.run(4000, lambda: slow_to_send(5.0)) == "answer"
    assert chat.run(1000, lambda: slow_to_send(0.0)) == "answer"  # on time: nothing moved
    assert chat.stats.moved == 1
    # 61 s after the first grant the service still counts the first request (it arrived 5 s late)
    clock.now = granted + 63.0
    assert chat.usage() == (4000 + 1000, 2)
    clock.now = granted + 67.0
    assert chat.usage() == (0, 0)
