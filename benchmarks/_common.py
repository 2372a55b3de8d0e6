"""What every benchmark shares: the machine it ran on, percentiles, and where results go."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": cpu or platform.processor(),
        "cores": cores,
        "python": platform.python_version(),
        "platform": platform.platform(),
        # other work on the machine skews timings: say how busy it was
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "python_probe_ms": python_probe_ms(),
    }


def python_probe_ms(repeats: int = 5) -> float:
    """CPU milliseconds of one fixed pure-Python workload (JSON round trips and a loop: the kind
    of work the storage SDK and pydantic do), median of ``repeats``. The same "2 cores" were
    measured up to twice as fast on one day as on another: this figure, beside every result,
    says which kind of day it was (lower is faster)."""
    doc = {"id": "seg-0001-st01", "title": "Pause the session", "scores": list(range(40))}
    times = []
    for _ in range(repeats):
        start = time.thread_time()
        total = 0
        for i in range(4000):
            total += len(json.loads(json.dumps({**doc, "n": i})))
        times.append(time.thread_time() - start)
    return round(1000 * statistics.median(times), 1)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def rss_mib() -> float:
    """Resident memory of this process now (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def write_result(name: str, report: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    report = {
        "benchmark": name,
        "measured_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "machine": machine(),
        **report,
    }
    path.write_text(json.dumps(report, indent=2) + "\n")
    return path


# the model stand-in in a process of its own (its CPU is counted apart from the worker's)
STANDIN_PIDS: dict[str, int] = {}


@contextmanager
def standin_subprocess(module: str, args: Sequence[str]) -> Iterator[str]:
    """``python -m module *args`` serving the OpenAI stand-in: yields the base URL it prints on
    its first line, and stops it (closing its stdin) at the end. Its pid is in STANDIN_PIDS."""
    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    STANDIN_PIDS["standin"] = proc.pid
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        if not base_url.startswith("http"):
            raise RuntimeError(f"the stand-in did not start (exit {proc.poll()})")
        yield base_url
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def post_transcript(url: str, data: bytes, timeout: float = 60) -> dict[str, Any]:
    """POST a transcript to ``/api/runs`` (202 expected); the run it started."""
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "text/plain"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        if response.status != 202:
            raise RuntimeError(f"POST {url} answered {response.status}")
        return dict(json.loads(response.read()))
