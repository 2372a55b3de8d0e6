"""Start and stop a private Azurite (Azure Storage emulator) for tests and the local demo.

Owns: locating the npm-installed binary, picking free ports, waiting for readiness, the
well-known development connection string, and killing Azurite's whole process group. Azurite runs
in a process group of its own; ``stop()`` runs on ``with`` exit and at interpreter exit, and
``devhost.lifecycle.exit_on_signals`` makes SIGTERM and SIGHUP end in an interpreter exit too.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

REPO_ROOT = Path(__file__).resolve().parents[1]

ACCOUNT_NAME = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


class AzuriteError(RuntimeError):
    """Azurite could not be found, started or reached."""


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct TCP ports that were free a moment ago (the OS picks them)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in socks:  # all held open together, so no port is handed out twice
            sock.bind((host, 0))
        return [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.25):
            return True
    except OSError:
        return False


def connection_string(blob_port: int, queue_port: int, host: str = "127.0.0.1") -> str:
    """The devstoreaccount1 connection string with explicit blob and queue endpoints."""
    return (
        f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT_NAME};AccountKey={ACCOUNT_KEY};"
        f"BlobEndpoint=http://{host}:{blob_port}/{ACCOUNT_NAME};"
        f"QueueEndpoint=http://{host}:{queue_port}/{ACCOUNT_NAME};"
    )


class Azurite:
    """One Azurite process (blob + queue) on free ports of 127.0.0.1.

    ``with Azurite() as az: ... az.connection_string`` starts an in-memory emulator;
    ``Azurite(location=dir)`` persists to ``dir`` so that ``restart()`` keeps the data.
    """

    def __init__(
        self,
        *,
        location: str | Path | None = None,
        blob_port: int | None = None,
        queue_port: int | None = None,
        root: str | Path | None = None,
        startup_timeout: float = 30.0,
        host: str = "127.0.0.1",
    ) -> None:
        self.root = Path(root) if root else REPO_ROOT
        self.binary = self.root / "node_modules" / ".bin" / "azurite"
        self.location = Path(location) if location else None
        self.host = host
        # Azurite always starts its table service too; give it a free port so that two
        # emulators (parallel test sessions) never fight over the default 10002.
        blob, queue, table = free_ports(3, host)
        self.blob_port, self.queue_port, self.table_port = (
            blob_port or blob,
            queue_port or queue,
            table,
        )
        self.startup_timeout = startup_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    # -- public API -------------------------------------------------------------------------
    @property
    def connection_string(self) -> str:
        return connection_string(self.blob_port, self.queue_port, self.host)

    @property
    def blob_endpoint(self) -> str:
        return f"http://{self.host}:{self.blob_port}/{ACCOUNT_NAME}"

    @property
    def queue_endpoint(self) -> str:
        return f"http://{self.host}:{self.queue_port}/{ACCOUNT_NAME}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def command(self) -> list[str]:
        cmd = [
            str(self.binary),
            "--silent",
            "--disableTelemetry",
            "--skipApiVersionCheck",
            "--blobHost", self.host, "--blobPort", str(self.blob_port),
            "--queueHost", self.host, "--queuePort", str(self.queue_port),
            "--tableHost", self.host, "--tablePort", str(self.table_port),
        ]  # fmt: skip
        if self.location is None:
            cmd.append("--inMemoryPersistence")
        else:
            cmd += ["--location", str(self.location)]
        return cmd

    def start(self) -> Azurite:
        if self.running:
            return self
        if not self.binary.exists():
            raise AzuriteError(
                f"Azurite not found at {self.binary}: run `npm ci` or `make setup` in {self.root}"
            )
        if self.location is not None:
            self.location.mkdir(parents=True, exist_ok=True)
        fd, log = tempfile.mkstemp(prefix="azurite-", suffix=".log")
        self._log_path = Path(log)
        with os.fdopen(fd, "wb") as log_file:
            self._proc = subprocess.Popen(
                self.command(),
                cwd=str(self.location or self.root),
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stop() kills node and children
            )
        atexit.register(self.stop)
        deadline = time.monotonic() + self.startup_timeout
        ports = (self.blob_port, self.queue_port)
        while not all(_port_open(self.host, p) for p in ports):
            if self._proc.poll() is not None:
                code = self._proc.returncode
                self._fail(f"Azurite exited with code {code} during startup")
            if time.monotonic() > deadline:
                self._fail(f"Azurite did not open ports {ports} within {self.startup_timeout}s")
            time.sleep(0.05)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.poll() is None:
                self._kill_group(proc, signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self._kill_group(proc, signal.SIGKILL)
                    proc.wait(timeout)
            else:
                self._kill_group(proc, signal.SIGKILL)  # stray children, if any
        finally:
            # interrupted on the way (a signal, a timeout): no survivor either way
            if proc.poll() is None:
                self._kill_group(proc, signal.SIGKILL)
            self._proc = None
            atexit.unregister(self.stop)
        # Wait until the ports are released so that restart() can bind them again.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(
            _port_open(self.host, p) for p in (self.blob_port, self.queue_port)
        ):
            time.sleep(0.05)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def restart(self) -> Azurite:
        """Stop and start again on the same ports and location (data survives with location)."""
        self.stop()
        return self.start()

    def output(self) -> str:
        """What Azurite wrote to stdout/stderr so far."""
        if self._log_path is None or not self._log_path.exists():
            return ""
        return self._log_path.read_text(errors="replace")

    def __enter__(self) -> Azurite:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.location or "memory"
        return f"Azurite(blob={self.blob_port}, queue={self.queue_port}, {where}, pid={self.pid})"

    # -- internals --------------------------------------------------------------------------
    @staticmethod
    def _kill_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _fail(self, reason: str) -> None:
        output = self.output().strip() or "(no output)"
        self.stop()
        raise AzuriteError(
            f"{reason}; command: {' '.join(self.command())}\nAzurite output:\n{output}"
        )
