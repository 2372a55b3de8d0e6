"""One rate limiter for every instance of the app (issue 16): each model call (chat and
embeddings) first reserves its tokens and one request from a budget per deployment that all
workers share, so that the fan-out never asks a deployment for more than its quota.

The rules:
- **Budget.** ``SYNTH_MODEL_TPM`` tokens and ``SYNTH_MODEL_RPM`` requests per minute for each chat
  deployment, ``SYNTH_EMBEDDING_TPM`` / ``SYNTH_EMBEDDING_RPM`` (unset: the same) for each
  embedding deployment; 0 turns a limit off, and with every limit off there is no limiter and no
  storage call. The minute is ``SYNTH_MODEL_LIMIT_WINDOW_SECONDS`` (60; only benchmarks that
  scale time down change it).
- **What a call reserves**: its prompt estimate plus ``max_tokens`` (what Azure OpenAI counts
  against TPM when a request arrives) and one request. The estimate is the larger of tiktoken's
  count and one token per 4 characters, over the messages and the response schema
  (``chat_tokens``, ``embedding_tokens``): never below the service's own estimate from characters.
- **Windows.** Tokens are counted over a sliding window of one minute; requests over a sixth of
  it, at RPM/6 (Azure evaluates RPM over short periods, typically 10 s, and answers 429 to a burst
  that stays under the minute's count). A sliding window never lets a minute-long span hold more
  than the limit, whatever the phase of the service's own windows.
- **Shared state**: one small JSON blob per deployment, ``ingestion/limits/{deployment}.json``
  (``layout.model_limit``): the reservations of the last window in slots of 1/60 of it, the rate
  factor and ``blocked_until``. A reservation is counted for a window plus ``margin_s`` (one slot,
  at least ``ARRIVAL_MARGIN_S``): the service counts a request from its arrival, a moment after
  the grant, and must have forgotten it before the limiter does. Every change is a compare-and-swap
  on the blob's ETag. A process keeps the state it last read or wrote and tries its change on it,
  so an uncontended grant is one storage request (a conditional PUT); a lost race re-reads. The
  callers of a process wait in one line; the one at its head grants itself and every caller
  behind it that fits with one write (a burst costs one request).
- **Late sends**: a request that leaves later than its grant assumed (a busy process; the SDK
  sending again after a 429) is moved to its send time by the HTTP client's request hook
  (``ModelLimits.on_request``, ``ModelLimiter.sent``).
- **No capacity**: the head of the line sleeps until the window frees enough (computed from the
  state), up to ``MAX_WAIT_WINDOWS`` windows; past that a caller raises ``CapacityUnavailable``
  with the time to come back, and the queue handler re-queues the unit with that visibility delay
  (``shared.pipeline.process``): not a failed delivery.
- **429 from the service** (every response is seen, also those the SDK retries itself, through
  ``ModelLimits.observe``): ``blocked_until`` = now + ``Retry-After`` for every instance, and the
  rate factor drops to 0.7 x (at most once per sixth of a window, down to 0.25), regaining 0.1 per
  sixth of a window without a 429 (AIMD). A 429 left after the SDK's retries is waited out like
  missing capacity, then deferred with ``service=True`` (the pipeline bounds those re-queues);
  ``insufficient_quota`` (billing) stays an error.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import random
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from pydantic import BaseModel

from shared import layout
from shared.llm import CapacityUnavailable, Message, StructuredAnswer, T
from shared.storage import ArtifactStore, NotFound, PreconditionFailed

if TYPE_CHECKING:
    from shared.llm import ChatModel
    from shared.settings import Settings

log = logging.getLogger(__name__)
R = TypeVar("R")

SLOTS_PER_WINDOW = 60
REQUEST_WINDOW_SHARE = 6  # requests: RPM/6 per sixth of the window (Azure: 10-second periods)
DECREASE = 0.7  # a 429 multiplies the rate by this ...
MIN_FACTOR = 0.25  # ... down to this ...
RECOVERY = 0.1  # ... and it grows back by this per sixth of a window without a 429
MAX_WAIT_WINDOWS = 2.0  # how long a caller waits in-process before it is re-queued
DEFAULT_RETRY_AFTER_WINDOWS = 1 / 12  # a 429 without Retry-After: 5 s of a minute
DEFAULT_MAX_TOKENS = 4096  # counted when a call names no max_tokens
MESSAGE_OVERHEAD_TOKENS = 4  # role and separators per message
SCHEMA_MARGIN = 1.15  # the SDK's strict schema is a little longer than pydantic's
CAS_TRIES = 8
MAX_BATCH = 64  # callers granted by one compare-and-swap at most
SEND_SLACK_S = 0.05  # the network time from sending a request to its arrival
# the longest expected time from a grant to the request's arrival at the service (the SDK builds
# the request, the network carries it): a reservation is counted at least this much past its window
ARRIVAL_MARGIN_S = 0.25


# ------------------------------------------------------------------------------------------------
# limits and the shared state


@dataclass(frozen=True)
class Limits:
    """A deployment's budget: ``tokens`` and ``requests`` per ``window_s`` (0 = no limit)."""

    tokens: int = 0
    requests: int = 0
    window_s: float = 60.0

    @property
    def enabled(self) -> bool:
        return self.tokens > 0 or self.requests > 0

    @property
    def slot_s(self) -> float:
        return self.window_s / SLOTS_PER_WINDOW

    @property
    def margin_s(self) -> float:
        """How much longer than its window a reservation is counted (see ARRIVAL_MARGIN_S)."""
        return max(self.slot_s, ARRIVAL_MARGIN_S)

    @property
    def request_window_s(self) -> float:
        """Requests are counted over a sixth of the window, unless that would allow less than one."""
        share = REQUEST_WINDOW_SHARE if self.requests >= REQUEST_WINDOW_SHARE else 1
        return self.window_s / share

    @property
    def requests_per_request_window(self) -> float:
        return self.requests * self.request_window_s / self.window_s

    @property
    def sixth(self) -> float:
        return self.window_s / REQUEST_WINDOW_SHARE


@dataclass
class BucketState:
    """The shared state of one deployment (the blob's content)."""

    slots: dict[int, list[int]] = field(default_factory=dict)  # slot -> [tokens, requests]
    factor: float = 1.0  # the share of the limits in force (below 1 after a 429)
    factor_at: float = 0.0  # when the factor was last lowered
    blocked_until: float = 0.0  # no grant before (a 429's Retry-After)

    @classmethod
    def parse(cls, data: bytes) -> BucketState:
        doc = json.loads(data)
        return cls(
            slots={int(k): [int(t), int(r)] for k, t, r in doc.get("slots", [])},
            factor=float(doc.get("factor", 1.0)),
            factor_at=float(doc.get("factor_at", 0.0)),
            blocked_until=float(doc.get("blocked_until", 0.0)),
        )

    def dump(self) -> bytes:
        doc = {
            "v": 1,
            "slots": [[k, t, r] for k, (t, r) in sorted(self.slots.items())],
            "factor": round(self.factor, 4),
            "factor_at": round(self.factor_at, 3),
            "blocked_until": round(self.blocked_until, 3),
        }
        return json.dumps(doc, separators=(",", ":")).encode()

    def copy(self) -> BucketState:
        return BucketState(
            {k: list(v) for k, v in self.slots.items()},
            self.factor,
            self.factor_at,
            self.blocked_until,
        )

    # -- reading ---------------------------------------------------------------------------------
    def rate_factor(self, now: float, limits: Limits) -> float:
        if self.factor >= 1.0:
            return 1.0
        regained = RECOVERY * max(0.0, now - self.factor_at) / limits.sixth
        return min(1.0, self.factor + regained)

    def live(self, now: float, limits: Limits, span: float) -> list[tuple[float, int, int]]:
        """(expiry, tokens, requests) of the reservations still counted over ``span``, oldest
        first. A reservation in slot k is counted until k x slot + span."""
        found = []
        for k, (tokens, requests) in self.slots.items():
            expiry = k * limits.slot_s + span
            if expiry > now:
                found.append((expiry, tokens, requests))
        return sorted(found)

    def usage(self, now: float, limits: Limits) -> tuple[int, int]:
        """Tokens counted in the window and requests counted in the request window, now."""
        tokens = sum(t for _, t, _ in self.live(now, limits, limits.window_s))
        requests = sum(r for _, _, r in self.live(now, limits, limits.request_window_s))
        return tokens, requests

    def wait_for(self, now: float, tokens: int, limits: Limits) -> float:
        """Seconds until ``tokens`` and one request fit (0: now). A reservation larger than the
        whole limit goes when the window is empty."""
        factor = self.rate_factor(now, limits)
        wait = max(0.0, self.blocked_until - now)
        if limits.tokens > 0:
            live = self.live(now, limits, limits.window_s)
            wait = max(wait, _wait(live, 1, factor * limits.tokens, tokens, now))
        if limits.requests > 0:
            live = self.live(now, limits, limits.request_window_s)
            limit = factor * limits.requests_per_request_window
            wait = max(wait, _wait(live, 2, limit, 1, now))
        return wait

    # -- changing --------------------------------------------------------------------------------
    def grant(self, now: float, tokens: int, limits: Limits) -> int:
        """Count ``tokens`` and one request from ``now``; returns the slot they are kept in."""
        slot = math.ceil((now + limits.margin_s) / limits.slot_s)
        counts = self.slots.setdefault(slot, [0, 0])
        counts[0] += tokens
        counts[1] += 1
        horizon = max(limits.window_s, limits.request_window_s)
        for k in [k for k in self.slots if k * limits.slot_s + horizon <= now]:
            del self.slots[k]
        return slot

    def move(self, old: int, now: float, tokens: int, limits: Limits) -> int:
        """A reservation counted in slot ``old`` is sent only now: count it from now instead
        (it stays counted throughout; if it already left the window it is counted again)."""
        counts = self.slots.get(old)
        if counts is not None and counts[0] >= tokens and counts[1] >= 1:
            counts[0] -= tokens
            counts[1] -= 1
            if counts == [0, 0]:
                del self.slots[old]
        return self.grant(now, tokens, limits)

    def throttle(self, now: float, retry_after: float, limits: Limits) -> bool:
        """A 429 with ``retry_after``: block until then, lower the rate (once per sixth of a
        window). Returns whether anything changed."""
        changed = False
        until = now + retry_after
        if until > self.blocked_until + limits.slot_s / 10:
            self.blocked_until = until
            changed = True
        if now - self.factor_at >= limits.sixth:
            self.factor = max(MIN_FACTOR, self.rate_factor(now, limits) * DECREASE)
            self.factor_at = now
            changed = True
        return changed


def _wait(
    live: list[tuple[float, int, int]], index: int, limit: float, need: float, now: float
) -> float:
    need = min(need, limit)  # larger than the limit: alone in an empty window
    used = sum(entry[index] for entry in live)
    if used + need <= limit:
        return 0.0
    for entry in live:
        used -= entry[index]
        if used + need <= limit:
            return entry[0] - now
    return live[-1][0] - now if live else 0.0


# ------------------------------------------------------------------------------------------------
# one deployment's limiter


@dataclass
class LimiterStats:
    """What one process's limiter did (benchmarks and logs)."""

    grants: int = 0
    tokens: int = 0
    waited_s: float = 0.0  # time callers spent in acquire, in line and for capacity
    sleeps: int = 0  # times the head of the line slept until the budget had room
    slept_s: float = 0.0
    deferred: int = 0  # CapacityUnavailable raised: the unit is re-queued
    throttled: int = 0  # 429s reported by the service
    conflicts: int = 0  # compare-and-swap races lost to another writer
    storage_calls: int = 0
    batches: int = 0  # compare-and-swaps that granted callers (several at once under load)
    moved: int = 0  # grants sent later than counted (a busy process; SDK retries), moved to then


# the reservation of the model call this thread is making (ModelLimiter.run), for the request hook
_sending = threading.local()


@dataclass(eq=False)
class _Ticket:
    tokens: int
    slot: int = 0  # where the shared state counts the grant
    granted: bool = False
    in_flight: bool = False  # picked by the head of the line for the write under way


class ModelLimiter:
    """The shared budget of one deployment, as seen from this process.

    Callers wait in one line, in arrival order. The caller at the head reads the state (or uses
    the copy it holds), grants itself and every caller behind it that fits now, in order, and
    writes all those grants with one compare-and-swap: under a burst, one storage request serves
    many calls. When nothing fits, it sleeps until the state says the window has room.
    """

    def __init__(
        self,
        store: ArtifactStore,
        name: str,
        limits: Limits,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        max_wait_s: float | None = None,
    ) -> None:
        if not limits.enabled:
            raise ValueError(f"model {name!r}: no limit set (tokens and requests are both 0)")
        self.store = store
        self.name = name
        self.limits = limits
        self.path = layout.model_limit(name)
        self.clock = clock
        self.sleep = sleep
        self.max_wait_s = limits.window_s * MAX_WAIT_WINDOWS if max_wait_s is None else max_wait_s
        self.stats = LimiterStats()
        self._state: BucketState | None = None
        self._etag: str | None = None
        self._lock = threading.Lock()  # the cached state and its storage round trips
        self._line: deque[_Ticket] = deque()
        self._cond = threading.Condition()

    # -- the public operations ---------------------------------------------------------------------
    def acquire(self, tokens: int, *, deadline: float | None = None) -> float:
        """Reserve ``tokens`` and one request, waiting up to ``deadline`` (default: now + the wait
        bound); returns the seconds waited. ``CapacityUnavailable`` says when to come back."""
        start = self.clock()
        self._acquire(tokens, deadline)
        return self.clock() - start

    def sent(self, reservation: _Ticket) -> None:
        """The request of ``reservation`` leaves now (the HTTP client's request hook). The service
        counts it from its arrival: when that is later than the shared state assumed (a busy
        process, or the SDK sending again after a 429), the grant is moved to now, so the
        limiter never forgets a request before the service does. On time: nothing to do."""
        now = self.clock()
        if now + SEND_SLACK_S <= reservation.slot * self.limits.slot_s:
            return
        self.stats.moved += 1
        for _ in range(CAS_TRIES):
            state, etag = self._load()
            slot = state.move(reservation.slot, now, reservation.tokens, self.limits)
            if self._store(state, etag):
                reservation.slot = slot
                return

    def _acquire(self, tokens: int, deadline: float | None) -> _Ticket:
        ticket = _Ticket(max(0, int(tokens)))
        start = self.clock()
        deadline = start + self.max_wait_s if deadline is None else deadline
        with self._cond:
            self._line.append(ticket)
        try:
            while True:
                with self._cond:
                    if ticket.granted:
                        self.stats.waited_s += self.clock() - start
                        return ticket
                    if self._line[0] is not ticket:  # behind others: wait for the head's grants
                        left = deadline - self.clock()
                        if left <= 0 and not ticket.in_flight:
                            raise self._late(ticket)
                        self._cond.wait(max(0.005, min(left, self.limits.window_s)))
                        continue
                self._lead(ticket, deadline)
        finally:
            with self._cond:
                if ticket in self._line:
                    self._line.remove(ticket)
                self._cond.notify_all()

    def throttled(self, retry_after: float | None = None) -> None:
        """The service answered 429 (``retry_after`` seconds, when it said): every instance waits
        that long, and the rate is lowered for a while."""
        pause = retry_after if retry_after and retry_after > 0 else self.default_retry_after
        self.stats.throttled += 1
        for _ in range(CAS_TRIES):
            state, etag = self._load()
            if not state.throttle(self.clock(), pause, self.limits):
                return
            if self._store(state, etag):
                log.warning(
                    "model %s answered 429: every instance waits %.2f s, rate at %.0f%% of the "
                    "limits for a while",
                    self.name,
                    pause,
                    100 * state.factor,
                )
                return

    def run(self, tokens: int, call: Callable[[], R]) -> R:
        """``call()`` once ``tokens`` are reserved; a 429 it raises (after the SDK's own retries)
        is fed to the budget and waited out within the wait bound, then ``CapacityUnavailable``."""
        deadline = self.clock() + self.max_wait_s
        while True:
            reservation = self._acquire(tokens, deadline)
            _sending.reservation = (self, reservation)
            try:
                return call()
            except Exception as err:
                retry_after = service_retry_after(err)
                if retry_after is None:
                    raise
                pause = retry_after or self.default_retry_after
                self.throttled(pause)
                if self.clock() + pause > deadline:
                    self.stats.deferred += 1
                    raise CapacityUnavailable(
                        f"model {self.name} kept answering 429 (rate limit) past the wait",
                        retry_after=_jitter(pause),
                        service=True,
                    ) from err
                self.sleep(pause)
            finally:
                _sending.reservation = None

    @property
    def default_retry_after(self) -> float:
        return self.limits.window_s * DEFAULT_RETRY_AFTER_WINDOWS

    def usage(self) -> tuple[int, int]:
        """Tokens and requests counted now (reads the shared state)."""
        with self._lock:
            self._state = None
        state, _ = self._load()
        return state.usage(self.clock(), self.limits)

    # -- inside ------------------------------------------------------------------------------------
    def _lead(self, ticket: _Ticket, deadline: float) -> None:
        """At the head of the line: grant every caller that fits now, in order, with one write;
        or sleep until the head's own call fits; or give up at its deadline."""
        state, etag = self._load()
        now = self.clock()
        with self._cond:
            batch = list(self._line)[:MAX_BATCH]
            for t in batch:
                t.in_flight = True
        chosen = []
        for t in batch:
            if state.wait_for(now, t.tokens, self.limits) > 0:
                break
            t.slot = state.grant(now, t.tokens, self.limits)
            chosen.append(t)
        stored = bool(chosen) and self._store(state, etag)
        with self._cond:
            for t in batch:
                t.in_flight = False
            if stored:
                for t in chosen:
                    t.granted = True
                    self._line.remove(t)
                self.stats.grants += len(chosen)
                self.stats.tokens += sum(t.tokens for t in chosen)
                self.stats.batches += 1
            self._cond.notify_all()
        if chosen:
            return  # granted (the head is the first chosen), or a lost race: read and try again
        wait = state.wait_for(now, ticket.tokens, self.limits)
        if now + wait > deadline:
            self.stats.deferred += 1
            raise CapacityUnavailable(
                f"model {self.name}: the shared budget has no room for {ticket.tokens} tokens "
                f"for {wait:.1f} s",
                retry_after=_jitter(wait),
            )
        self.stats.sleeps += 1
        self.stats.slept_s += wait
        self.sleep(wait)

    def _late(self, ticket: _Ticket) -> CapacityUnavailable:
        """A caller whose deadline passed in the line (the caller holds ``_cond``)."""
        ahead = list(self._line)[: self._line.index(ticket)]
        self._line.remove(ticket)
        self._cond.notify_all()
        self.stats.deferred += 1
        state = self._state.copy() if self._state is not None else BucketState()
        retry = self._backlog_wait(
            state, sum(t.tokens for t in ahead) + ticket.tokens, len(ahead) + 1
        )
        return CapacityUnavailable(
            f"model {self.name}: {len(ahead)} calls of this instance are waiting ahead of this "
            "one for the shared budget",
            retry_after=_jitter(retry),
        )

    def _backlog_wait(self, state: BucketState, tokens: int, requests: int) -> float:
        """About how long until ``tokens`` and ``requests`` more have all been granted."""
        now = self.clock()
        factor = state.rate_factor(now, self.limits)
        wait = state.wait_for(now, min(tokens, self.limits.tokens or tokens), self.limits)
        if self.limits.tokens > 0:
            wait = max(wait, self.limits.window_s * tokens / (factor * self.limits.tokens))
        if self.limits.requests > 0:
            per = factor * self.limits.requests_per_request_window
            wait = max(wait, self.limits.request_window_s * requests / per)
        return wait

    def _load(self) -> tuple[BucketState, str | None]:
        """A copy of the state (the cached one, else read) and the ETag it was read with."""
        with self._lock:
            if self._state is None:
                self.stats.storage_calls += 1
                try:
                    data, etag = self.store.get_with_etag(self.path)
                except NotFound:
                    self._state, self._etag = BucketState(), None
                else:
                    try:
                        self._state = BucketState.parse(data)
                    except (ValueError, TypeError, KeyError):
                        log.warning("%s is not a limiter state; starting afresh", self.path)
                        self._state = BucketState()
                    self._etag = etag
            return self._state.copy(), self._etag

    def _store(self, state: BucketState, etag: str | None) -> bool:
        """Write ``state`` if the blob is still as read (``etag``; None: absent). False when
        another writer came first: the next ``_load`` reads its state."""
        with self._lock:
            self.stats.storage_calls += 1
            try:
                if etag is None:
                    if not self.store.create(self.path, state.dump(), "application/json"):
                        raise PreconditionFailed(self.path)
                    self._state, self._etag = None, None  # its ETag is read with the next use
                    return True
                new_etag = self.store.replace_if_match(
                    self.path, state.dump(), etag, "application/json"
                )
            except (PreconditionFailed, NotFound):
                self.stats.conflicts += 1
                self._state, self._etag = None, None
                return False
            self._state, self._etag = state, new_etag
            return True


def _jitter(seconds: float) -> float:
    """Spread re-queued units a little, so they do not all come back in the same instant."""
    return seconds * (1.0 + 0.2 * random.random())  # jitter, not for security


# ------------------------------------------------------------------------------------------------
# the limiters of a process


class ModelLimits:
    """The limiters of one process on one store: one per deployment, created on first use."""

    def __init__(
        self,
        store: ArtifactStore,
        chat: Limits,
        embeddings: Limits,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.limits = {"chat": chat, "embeddings": embeddings}
        self.clock = clock
        self.sleep = sleep
        self._limiters: dict[tuple[str, str], ModelLimiter] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings, store: ArtifactStore | None) -> ModelLimits | None:
        """None when every limit is 0 (the default) or there is no store to share."""
        window = settings.model_limit_window_seconds
        chat = Limits(settings.model_tpm, settings.model_rpm, window)
        embeddings = Limits(
            settings.model_tpm if settings.embedding_tpm is None else settings.embedding_tpm,
            settings.model_rpm if settings.embedding_rpm is None else settings.embedding_rpm,
            window,
        )
        if store is None or not (chat.enabled or embeddings.enabled):
            return None
        return cls(store, chat, embeddings)

    def chat(self, model: str) -> ModelLimiter | None:
        return self._get("chat", model)

    def embeddings(self, model: str) -> ModelLimiter | None:
        return self._get("embeddings", model)

    def all(self) -> list[ModelLimiter]:
        with self._lock:
            return list(self._limiters.values())

    def _get(self, kind: str, model: str) -> ModelLimiter | None:
        limits = self.limits[kind]
        if not limits.enabled:
            return None
        with self._lock:
            limiter = self._limiters.get((kind, model))
            if limiter is None:
                limiter = ModelLimiter(
                    self.store, model, limits, clock=self.clock, sleep=self.sleep
                )
                self._limiters[(kind, model)] = limiter
            return limiter

    def event_hooks(self) -> dict[str, list[Callable[[Any], None]]]:
        """The HTTP client's hooks: each request's send time, each response's status."""
        return {"request": [self.on_request], "response": [self.observe]}

    def on_request(self, request: Any) -> None:
        """A request leaves: the reservation of this thread's call is checked against the time
        (``ModelLimiter.sent``). Never raises."""
        try:
            pending = getattr(_sending, "reservation", None)
            if pending is not None:
                limiter, reservation = pending
                limiter.sent(reservation)
        except Exception:  # noqa: BLE001 - a hook must never break the call
            log.warning("could not record a request's send time with the limiter", exc_info=True)

    def observe(self, response: Any) -> None:
        """The HTTP client's response hook: a 429 (also one the SDK retries itself) goes to the
        deployment's limiter at once. Never raises: it runs inside the SDK's request."""
        try:
            if response.status_code != 429:
                return
            request = response.request
            kind = "embeddings" if request.url.path.endswith("/embeddings") else "chat"
            model = _model_of(request)
            limiter = self._get(kind, model) if model else None
            if limiter is not None:
                limiter.throttled(retry_after_seconds(response.headers))
        except Exception:  # noqa: BLE001 - a hook must never break the call
            log.warning("could not report a 429 to the rate limiter", exc_info=True)


def _model_of(request: Any) -> str | None:
    """The deployment (Azure: in the path) or the model (OpenAI: in the JSON body) a request is for."""
    found = re.search(r"/deployments/([^/]+)/", request.url.path)
    if found:
        return unquote(found.group(1))
    try:
        model = json.loads(request.content or b"{}").get("model")
    except (ValueError, AttributeError):
        return None
    return str(model) if model else None


# ------------------------------------------------------------------------------------------------
# 429s


def retry_after_seconds(headers: Mapping[str, str] | Any) -> float | None:
    """``retry-after-ms`` (Azure OpenAI, OpenAI) or ``retry-after`` in seconds; None when absent
    or an HTTP date."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except (TypeError, ValueError):
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def service_retry_after(err: BaseException) -> float | None:
    """For a 429 rate limit from the ``openai`` SDK, the seconds it asked to wait (0.0 when it did
    not say); None for anything else, including ``insufficient_quota`` (billing, not rate)."""
    openai = sys.modules.get("openai")
    if openai is None or not isinstance(err, openai.RateLimitError):
        return None
    if getattr(err, "code", None) == "insufficient_quota":
        return None
    response = getattr(err, "response", None)
    seconds = retry_after_seconds(getattr(response, "headers", None))
    return seconds if seconds is not None else 0.0


# ------------------------------------------------------------------------------------------------
# token estimates


def text_tokens(text: str, model: str | None = None) -> int:
    """A service's estimate of ``text`` is at most this: the larger of tiktoken's count and one
    token per 4 characters (Azure OpenAI estimates from characters)."""
    if not text:
        return 0
    from shared.tokens import count_tokens

    return max(count_tokens(text, model), -(-len(text) // 4))


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


@functools.lru_cache(maxsize=64)
def _schema_tokens(schema: type) -> int:
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):  # nothing to count
        return 0
    try:
        text = json.dumps(schema.model_json_schema())
    except Exception:  # noqa: BLE001 - a schema pydantic cannot render: nothing to count
        return 0
    return math.ceil(len(text) * SCHEMA_MARGIN / 4)


def chat_tokens(
    messages: Sequence[Message], schema: type | None, max_tokens: int | None, model: str | None
) -> int:
    """What a chat call reserves: its messages, its response schema and its ``max_tokens``."""
    prompt = sum(
        text_tokens(_content_text(m.get("content")), model) + MESSAGE_OVERHEAD_TOKENS
        for m in messages
    )
    if schema is not None:
        prompt += _schema_tokens(schema)
    return prompt + (DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens)


def embedding_tokens(texts: Sequence[str], model: str | None) -> int:
    return sum(text_tokens(t, model) for t in texts)


# ------------------------------------------------------------------------------------------------
# the chat model port, limited


class LimitedChatModel:
    """A ``ChatModel`` whose every call first reserves its tokens from the shared budget."""

    def __init__(self, inner: ChatModel, limiter: ModelLimiter) -> None:
        self.inner = inner
        self.limiter = limiter
        self.model = inner.model

    def structured(
        self,
        messages: Sequence[Message],
        schema: type[T],
        *,
        temperature: float,
        max_tokens: int | None = None,
    ) -> StructuredAnswer[T]:
        tokens = chat_tokens(messages, schema, max_tokens, self.model)
        return self.limiter.run(
            tokens,
            lambda: self.inner.structured(
                messages, schema, temperature=temperature, max_tokens=max_tokens
            ),
        )


def limit_chat(chat: ChatModel, limits: ModelLimits | None) -> ChatModel:
    """``chat`` behind its deployment's limiter, or ``chat`` itself when there is none."""
    limiter = limits.chat(chat.model) if limits is not None else None
    return chat if limiter is None else LimitedChatModel(chat, limiter)


__all__ = [
    "BucketState",
    "LimitedChatModel",
    "LimiterStats",
    "Limits",
    "ModelLimiter",
    "ModelLimits",
    "chat_tokens",
    "embedding_tokens",
    "limit_chat",
    "retry_after_seconds",
    "service_retry_after",
]
