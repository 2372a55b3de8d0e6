"""The tracing port. One trace per run (``synthesis_run``), spans named as seed §7.4.

The embedded default records nothing. The Langfuse adapter (``shared.tracing_langfuse``) derives
the trace id from the run id so spans written by separate function invocations join one trace.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class Span(Protocol):
    trace_id: str | None

    def update(self, **metrics: Any) -> None: ...


class Tracer(Protocol):
    def span(self, run_id: str, name: str, **metadata: Any) -> Any: ...

    def flush(self) -> None: ...


class _NullSpan:
    trace_id: str | None = None

    def update(self, **metrics: Any) -> None:
        pass


class NullTracer:
    """Tracing switched off (no Langfuse keys): spans cost nothing and go nowhere."""

    @contextmanager
    def span(self, run_id: str, name: str, **metadata: Any) -> Iterator[_NullSpan]:
        yield _NullSpan()

    def flush(self) -> None:
        pass
