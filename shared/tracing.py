"""The tracing port. One trace per run (``synthesis_run``), spans named as seed §7.4.

The embedded default records nothing. The Langfuse adapter (``shared.tracing_langfuse``) derives
the trace id from the run id so spans written by separate function invocations join one trace.

``span(run_id, name)`` records one unit of work as it happens; ``run_root(run_id, ...)`` records the
run's root observation ``synthesis_run`` once, when the run has ended, spanning from the run's
creation to its end with the seed §12 run metrics (``shared.pipeline.runs.trace_run_end`` calls it
once per run). ``enabled`` is False when nothing is recorded, so callers can skip the bookkeeping.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any, Protocol


class Span(Protocol):
    """One unit of work being recorded: ``update`` adds metrics (token usage, counts, an error)."""

    trace_id: str | None

    def update(self, **metrics: Any) -> None: ...


class Tracer(Protocol):
    enabled: bool

    def span(self, run_id: str, name: str, **metadata: Any) -> AbstractContextManager[Span]:
        """A context manager: the span of ``name`` from entering it to leaving it (an exception
        leaving it marks the span as an error and goes on)."""
        ...

    def run_root(
        self, run_id: str, *, started_at: datetime, ended_at: datetime, **metadata: Any
    ) -> None: ...

    def flush(self) -> None: ...


class _NullSpan:
    trace_id: str | None = None

    def update(self, **metrics: Any) -> None:
        pass


class NullTracer:
    """Tracing switched off (no Langfuse keys): spans cost nothing and go nowhere."""

    enabled = False

    @contextmanager
    def span(self, run_id: str, name: str, **metadata: Any) -> Iterator[_NullSpan]:
        yield _NullSpan()

    def run_root(
        self, run_id: str, *, started_at: datetime, ended_at: datetime, **metadata: Any
    ) -> None:
        pass

    def flush(self) -> None:
        pass
