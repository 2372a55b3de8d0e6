"""``python -m tests.chaos.host_main``: the local Functions host (devhost.LocalHost running the real
function_app.py) as a process the fault-injection suite can SIGKILL and start again.

Like ``python -m devhost`` with two test hooks: ``--lease`` (devhost's ``message_lease``: how long
a received message stays invisible; short, so that the messages a killed host held come back
quickly), and ``--duplicate-log`` which makes every queue message the app sends go out twice, the
second copy after a random delay of 0..``--duplicate-max-delay`` seconds (one line per copy in the
log, so the test can count the faults it injected). The duplicate is sent by a bus wrapped around
the app's own, handed to function_app through its ``app_services`` seam (as the integration tests
do), so nothing inside the pipeline or the host is patched.
"""

from __future__ import annotations

import argparse
import logging
import random
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from devhost.host import REPO_ROOT, LocalHost


class DuplicatingBus:
    """Sends every message twice: once now, once after 0..max_delay seconds."""

    def __init__(self, inner: Any, max_delay: int, log_path: Path, seed: int | None = None) -> None:
        self.inner = inner
        self.max_delay = max_delay
        self.log_path = log_path
        self.rng = random.Random(seed)
        self.lock = threading.Lock()

    def send(self, queue: str, message: Any) -> None:
        self.inner.send(queue, message)
        with self.lock:
            delay = self.rng.randint(0, self.max_delay)
        self.inner.client(queue).send_message(
            message.model_dump_json(), visibility_timeout=delay or None
        )
        with self.lock, open(self.log_path, "a") as log:
            log.write(f"{queue}\t{delay}\t{message.model_dump_json()}\n")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos.host_main")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--lease", type=float, default=4.0, help="message lease (s)")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--duplicate-log", type=Path)
    parser.add_argument("--duplicate-max-delay", type=int, default=3)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="[%(asctime)s] %(process)d %(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("azure.core.pipeline.policies.http_logging_policy", "azure.storage"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

    import function_app
    from shared.services import build_services

    if args.duplicate_log is not None:
        svc = build_services()
        svc.bus = DuplicatingBus(svc.bus, args.duplicate_max_delay, args.duplicate_log)
        function_app.app_services = lambda: svc  # type: ignore[assignment]

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    host = LocalHost(
        "function_app",
        REPO_ROOT / "host.json",
        root=REPO_ROOT,
        port=args.port,
        max_workers=args.workers,
        message_lease=args.lease,
        settings_file=None,
    )
    host.start()
    print(f"READY {host.url}", flush=True)
    stop.wait()
    host.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
