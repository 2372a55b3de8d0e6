"""Command line: ``python -m devhost`` runs the Functions app locally, like ``func start``.

Owns argument parsing, optional Azurite startup, the startup banner (the functions, the review
page with its key, the API base) and signal handling: SIGINT, SIGTERM and SIGHUP stop the host and
the Azurite it started, so nothing is left running.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from pathlib import Path
from types import FrameType

from .azurite import Azurite
from .host import REPO_ROOT, STORAGE_SETTING, LocalHost


def main(argv: list[str] | None = None) -> int:
    """Run the app until a signal; 0 after a clean stop."""
    parser = argparse.ArgumentParser(prog="python -m devhost", description=__doc__)
    parser.add_argument("--port", type=int, default=7071, help="HTTP port (default 7071)")
    parser.add_argument("--app", default="function_app", help="module or .py file of the app")
    parser.add_argument("--host-json", default="host.json", help="path to host.json")
    parser.add_argument("--root", default=str(REPO_ROOT), help="app root (sys.path, settings)")
    parser.add_argument("--azurite", action="store_true", help="start a private Azurite")
    parser.add_argument("--azurite-location", help="persist Azurite data here (default: memory)")
    parser.add_argument("--function-key", help="require this key on FUNCTION-level routes")
    parser.add_argument("--workers", type=int, default=8, help="concurrent invocations")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="[%(asctime)s] %(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("azure.core.pipeline.policies.http_logging_policy", "azure.storage"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        """Only a flag: the main thread stops the host, then Azurite, in order."""
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, on_signal)

    azurite: Azurite | None = None
    try:
        if args.azurite:
            azurite = Azurite(location=args.azurite_location).start()
            os.environ[STORAGE_SETTING] = azurite.connection_string  # wins over local.settings
            print(f"Azurite: blob {azurite.blob_endpoint}, queue {azurite.queue_endpoint}")
        host = LocalHost(
            args.app,
            Path(args.host_json),
            root=args.root,
            port=args.port,
            function_key=args.function_key,
            max_workers=args.workers,
        )
        host.start()
        print(f"\nFunctions ({host.url}):\n")
        for f in host.functions.values():
            print(f"        {f.describe(f'{host.url}/{host.route_prefix}'.rstrip('/'))}\n")
        api = f"{host.url}/{host.route_prefix}".rstrip("/")
        if any(f.route is not None and f.route.template == "ui" for f in host.functions.values()):
            code = f"?code={args.function_key}" if args.function_key else ""
            print(f"Review page: {api}/ui{code}")
        key = f" (function key {args.function_key})" if args.function_key else ""
        print(f"API base:    {api}{key}")
        print("Press Ctrl+C to stop.", flush=True)
        stop.wait()
        host.stop()
    finally:
        if azurite is not None:
            azurite.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
