"""Stopping cleanly: what turns SIGTERM, SIGHUP and SIGINT into an orderly exit.

Azurite runs in its own process group (so that a Ctrl-C in the terminal does not kill it before the
host has stopped), which also means nothing kills it when its parent dies by a signal's default
action: SIGTERM's default ends Python without running ``finally`` clauses, ``with`` exits or
``atexit``. ``exit_on_signals`` installs handlers that raise ``Terminated`` (a ``KeyboardInterrupt``,
so pytest treats it as an interruption and tears its fixtures down) in the main thread instead;
``Azurite.stop`` then runs on the way out and kills Azurite's whole process group.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived (SIGINT raises a plain ``KeyboardInterrupt``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number."""
        return 128 + self.signum


def exit_on_signals(*, interrupt: bool = True) -> bool:
    """Raise ``Terminated`` in the main thread on SIGTERM and SIGHUP (and ``KeyboardInterrupt`` on
    SIGINT when ``interrupt``), once: a repeated signal while the process is already stopping is
    ignored, so that a second Ctrl-C cannot cut ``Azurite.stop`` short and leave Azurite running.

    Only the main thread can install handlers; elsewhere nothing changes and False is returned.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    stopping = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        if stopping.is_set():
            print(f"{signal.Signals(signum).name}: already stopping", file=sys.stderr, flush=True)
            return
        stopping.set()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)

    signals = [signal.SIGTERM, signal.SIGHUP]
    if interrupt:
        signals.append(signal.SIGINT)
    for signum in signals:
        signal.signal(signum, handler)
    return True
