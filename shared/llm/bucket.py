"""The shared state of one deployment's rate budget (``shared.llm.limiter`` reads and writes it):
its ``Limits`` and the ``BucketState`` every instance shares through one small blob
(``ingestion/limits/{deployment}.json``): the reservations of the last window in slots of 1/60 of
it, the rate factor and ``blocked_until``, and the arithmetic on them (how long until a call fits,
granting, moving a late send, throttling after a 429). No I/O and no clock: the limiter passes
``now``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

SLOTS_PER_WINDOW = 60
REQUEST_WINDOW_SHARE = 6  # requests: RPM/6 per sixth of the window (Azure: 10-second periods)
DECREASE = 0.7  # a 429 multiplies the rate by this ...
MIN_FACTOR = 0.25  # ... down to this ...
RECOVERY = 0.1  # ... and it grows back by this per sixth of a window without a 429
# the longest expected time from a grant to the request's arrival at the service (the SDK builds
# the request, the network carries it): a reservation is counted at least this much past its window
ARRIVAL_MARGIN_S = 0.25


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
