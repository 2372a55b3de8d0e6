"""Backoff for Azure DevOps requests: urllib3's ``Retry`` with the seed's schedule (§8).

- Waits 1, 2, 4, 8, 16 s (``backoff_factor * 2**(n-1)``, capped at ``backoff_max``) between
  attempts; urllib3's own formula skips the first wait, the seed's does not.
- A ``Retry-After`` header (seconds or an HTTP date) replaces the computed wait: ADO sends it with
  429 (TF400733) and it is the only safe pace.
- The sleep function is injectable, so tests can check the schedule without waiting.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from itertools import takewhile
from typing import Any

from urllib3.util.retry import Retry

log = logging.getLogger("shared.ado")

READ_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# A write answered 500/502/504 may have been applied: retrying a create could make a second work
# item. 429 and 503 mean "not processed, come back later", so only those are retried for writes.
WRITE_RETRY_STATUSES = frozenset({429, 503})


class AdoRetry(Retry):
    def __init__(self, *args: Any, sleeper: Callable[[float], None] | None = None, **kw: Any):
        super().__init__(*args, **kw)
        self.sleeper = sleeper or time.sleep

    def new(self, **kw: Any) -> AdoRetry:
        fresh = super().new(**kw)
        fresh.sleeper = self.sleeper
        return fresh

    def get_backoff_time(self) -> float:
        errors = len(list(takewhile(lambda h: h.redirect_location is None, reversed(self.history))))
        if errors == 0:
            return 0.0
        return float(min(self.backoff_max, self.backoff_factor * (2 ** (errors - 1))))

    def sleep(self, response: Any = None) -> None:
        delay = None
        if self.respect_retry_after_header and response is not None:
            delay = self.get_retry_after(response)
        if delay is None:
            delay = self.get_backoff_time()
        last = self.history[-1] if self.history else None
        if last is not None:
            cause = f"HTTP {last.status}" if last.status else type(last.error).__name__
            log.warning(
                "Azure DevOps %s %s: %s; retry %d in %.1f s",
                last.method,
                _path(last.url),
                cause,
                len(self.history),
                delay,
            )
        if delay > 0:
            self.sleeper(delay)


def _path(url: str | None) -> str:
    return (url or "").split("?", 1)[0]


def make_retry(
    *,
    statuses: frozenset[int],
    max_retries: int = 5,
    backoff_factor: float = 1.0,
    backoff_max: float = 16.0,
    retry_after_max: int = 300,
    read_errors: bool = True,
    sleeper: Callable[[float], None] | None = None,
) -> AdoRetry:
    return AdoRetry(
        total=max_retries,
        connect=max_retries,
        read=max_retries if read_errors else 0,
        status=max_retries,
        other=0,
        redirect=3,
        allowed_methods=None,  # every verb: the caller chooses the statuses per kind of request
        status_forcelist=statuses,
        backoff_factor=backoff_factor,
        backoff_max=backoff_max,
        retry_after_max=retry_after_max,
        respect_retry_after_header=True,
        raise_on_status=False,  # the last response becomes a typed AdoError, not a RetryError
        raise_on_redirect=False,
        sleeper=sleeper,
    )
