"""Processes for the tests that stop a demo, a host or a pytest session with a signal: a child whose
output is read line by line, and what ``/proc`` says about the processes it started (Linux only).

Azurite is found by its own command line (``--blobPort N``) and its parent, never by name alone, so
that the Azurite of another test session running beside this one is never mistaken for ours.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.pipeline import REPO

PROC = Path("/proc")
# what would switch the demo from the offline engine to a model or remote stores
FOREIGN_SETTINGS = ("SYNTH_", "OPENAI_", "AZURE_OPENAI_", "PINECONE_", "LANGFUSE_", "AZURE_DEVOPS_")


def needs_proc() -> None:
    """Skip the calling test where there is no Linux ``/proc`` to look processes up in."""
    if not (PROC / "self" / "stat").exists():
        pytest.skip("needs Linux /proc to find the processes a child started")


@dataclass(frozen=True)
class ProcessId:
    """A process as the kernel knows it: a pid is reused, (pid, start time) is not."""

    pid: int
    started: int


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time in clock ticks) of a process, None when there is none."""
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # the command name may hold spaces and ")"
    return fields[0], int(fields[1]), int(fields[19])


def command_line(pid: int) -> list[str]:
    """The arguments a process was started with ([] when it is gone)."""
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def azurite_on(blob_port: int) -> list[ProcessId]:
    """Every live Azurite process serving blobs on ``blob_port`` (whoever started it)."""
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        args = command_line(int(entry.name))
        if not any("azurite" in a for a in args) or "--blobPort" not in args:
            continue
        if args[args.index("--blobPort") + 1 :][:1] != [str(blob_port)]:
            continue
        stat = _stat(int(entry.name))
        if stat is not None and stat[0] != "Z":
            found.append(ProcessId(int(entry.name), stat[2]))
    return found


def parent_of(process: ProcessId) -> int | None:
    """The parent pid of ``process`` while it runs."""
    stat = _stat(process.pid)
    return stat[1] if stat is not None and stat[2] == process.started else None


def is_running(process: ProcessId) -> bool:
    """True while that very process (not a later one with its pid) exists and is not a zombie."""
    stat = _stat(process.pid)
    return stat is not None and stat[2] == process.started and stat[0] != "Z"


def child_env() -> dict[str, str]:
    """This environment without the settings that would pick a model, remote stores or ADO, and
    with unbuffered output so that each line arrives as it is printed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN_SETTINGS)}
    env.pop("AzureWebJobsStorage", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Child:
    """A Python child process in the repository root whose output (stdout and stderr) is read
    line by line on a thread."""

    def __init__(self, args: Sequence[str], cwd: Path = REPO) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, *args],
            cwd=str(cwd),
            env=child_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """The reader thread: each line into the queue, None at the end."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    @property
    def output(self) -> str:
        """Every line read so far."""
        return "\n".join(self.lines)

    def wait_for(self, pattern: str, limit: float = 600) -> re.Match[str]:
        """The first output line matching ``pattern``; fails with the output so far when the
        process ends first (``limit`` only keeps a broken child from hanging the session)."""
        regex = re.compile(pattern)
        for line in self.lines:
            if match := regex.search(line):
                return match
        while True:
            try:
                line = self._queue.get(timeout=limit)
            except queue.Empty:
                self.kill()
                pytest.fail(f"no line matching {pattern!r} in {limit:.0f} s:\n{self.output}")
            if line is None:
                pytest.fail(f"exited ({self.proc.wait()}) before {pattern!r}:\n{self.output}")
            self.lines.append(line)
            if match := regex.search(line):
                return match

    def finish(self, limit: float = 300) -> int:
        """Wait for the exit and the rest of the output; the exit code."""
        code = self.proc.wait(limit)
        self._reader.join(limit)
        while not self._queue.empty():
            line = self._queue.get_nowait()
            if line is not None:
                self.lines.append(line)
        return code

    def signal(self, signum: signal.Signals) -> int:
        """Send ``signum`` and wait for the exit; the exit code (negative: killed by a signal)."""
        self.proc.send_signal(signum)
        return self.finish()

    def running(self) -> bool:
        """True until the process exits."""
        return self.proc.poll() is None

    def close(self) -> None:
        """Stop the process if a test left it running: SIGTERM (it stops what it started), then
        SIGKILL if it does not exit."""
        if not self.running():
            return
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL, for a child that no longer answers."""
        if self.running():
            self.proc.kill()
            self.proc.wait()
