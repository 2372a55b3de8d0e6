"""Timer triggers: one thread runs every timer function when its schedule falls due.

Owns: the next due time of each timer (its NCRONTAB schedule, or a fixed interval given as a test
hook), ``runOnStartup``, and never overlapping two runs of one timer, as the real host does. A
timer that fails is logged and not retried.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from azure.functions.timer import TimerRequest

from .discovery import FunctionInfo
from .invoke import Invoker
from .runtime import Runtime


class Timers:
    """The timer-triggered functions of one host. ``intervals``: function name -> seconds,
    overriding that timer's schedule."""

    def __init__(
        self,
        functions: list[FunctionInfo],
        *,
        runtime: Runtime,
        invoker: Invoker,
        intervals: dict[str, float],
    ) -> None:
        self.functions = functions
        self.runtime = runtime
        self.invoker = invoker
        self.intervals = intervals
        self._lock = threading.Lock()
        self._timers_running: set[str] = set()

    def start(self) -> None:
        if self.functions:
            self.runtime.spawn("devhost-timers", self._timer_loop)

    def _timer_loop(self) -> None:
        fns = self.functions
        now = datetime.now(UTC)
        due = {
            f.name: now if f.trigger.get("runOnStartup") else self._next_due(f, now) for f in fns
        }
        while not self.runtime.stop.is_set():
            now = datetime.now(UTC)
            for f in fns:
                if due[f.name] <= now:
                    due[f.name] = self._next_due(f, now)
                    with self._lock:
                        if f.name in self._timers_running:
                            continue  # the real host never overlaps runs of one timer
                        self._timers_running.add(f.name)
                    try:
                        self.runtime.submit(self._run_timer, f, False)
                    except RuntimeError:
                        return
            wait = min((d - datetime.now(UTC)).total_seconds() for d in due.values())
            self.runtime.stop.wait(max(0.01, min(wait, 1.0)))

    def _next_due(self, f: FunctionInfo, now: datetime) -> datetime:
        interval = self.intervals.get(f.name)
        if interval is not None:
            return datetime.fromtimestamp(now.timestamp() + interval, UTC)
        assert f.schedule is not None
        return f.schedule.next_after(now)

    def _run_timer(self, f: FunctionInfo, past_due: bool) -> None:
        try:
            self.invoker.invoke(f, TimerRequest(past_due=past_due))
        except Exception:  # noqa: BLE001 - any failure, as the Functions host
            pass  # logged by invoke; timers are not retried
        finally:
            with self._lock:
                self._timers_running.discard(f.name)
