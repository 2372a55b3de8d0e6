"""Fixtures of the fault-injection suite: an Azurite that persists to disk (so it can be restarted
mid-run), the sample backlog in its index, and a fault-free baseline run of the chaos transcript.

``CHAOS_TRIALS`` sets the trials per scenario (``make chaos``: 10; unset, as in ``make test``: each
scenario's default, one). The figures of every scenario are printed at the end of the session.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from devhost.azurite import Azurite, free_ports
from shared.bus.memory import InProcessBus
from shared.pipeline import bind_in_process
from shared.pipeline.runs import start_run
from shared.services import build_services
from shared.settings import Settings
from shared.storage.azure_blob import AzureBlobStore
from tests.chaos.harness import REPORT, HostProcess, blob_run_id, check_run, story_titles

PROJECT = "chaos"
TRANSCRIPT = (
    Path(__file__).resolve().parents[2] / "samples/transcripts/remote_control_planning_notes.md"
)


def trials(default: int) -> int:
    """Trials of a scenario: CHAOS_TRIALS when set, else the small default of ``make test``."""
    return max(1, int(os.environ.get("CHAOS_TRIALS") or default))


@dataclass
class ChaosEnv:
    azurite: Azurite
    store: AzureBlobStore
    env: dict[str, str]
    tmp: Path
    baseline: dict[str, str]  # story_id -> title of a fault-free run
    baseline_seconds: float
    data: bytes

    @property
    def conn(self) -> str:
        return self.azurite.connection_string

    def host(self, name: str, **kwargs: object) -> HostProcess:
        (port,) = free_ports(1)
        return HostProcess(self.env, port=port, log_path=self.tmp / f"{name}.log", **kwargs)  # type: ignore[arg-type]

    def drop(self, name: str, data: bytes | None = None) -> str:
        """Upload the transcript under ``name``: a new run."""
        data = self.data if data is None else data
        self.store.put(f"transcripts/{PROJECT}/{name}", data)
        return blob_run_id(PROJECT, name, data)


@pytest.fixture(scope="package")
def chaos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChaosEnv]:
    tmp = tmp_path_factory.mktemp("chaos")
    azurite = Azurite(location=tmp / "azurite").start()
    env = {
        "AzureWebJobsStorage": azurite.connection_string,
        "SYNTH_STORAGE_BACKEND": "azure",
        "SYNTH_ENGINE": "offline",
        "SYNTH_EMBEDDER": "minilm",
        "SYNTH_VECTOR_STORE": "embedded",
    }
    # package scope: the environment below is undone when the last chaos test ends, so it never
    # leaks into the tests collected after this package
    mp = pytest.MonkeyPatch()
    for k, v in env.items():
        mp.setenv(k, v)
    for k in ("OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "PINECONE_API_KEY"):
        mp.delenv(k, raising=False)
    from devhost.demo import load_index
    from shared.services import app_services
    from shared.settings import get_settings

    get_settings.cache_clear()
    app_services.cache_clear()
    try:
        load_index(PROJECT)
        store = AzureBlobStore.from_connection_string(azurite.connection_string)
        data = TRANSCRIPT.read_bytes()
        # the fault-free reference: the same handlers in-process (in-process bus), same storage
        # and index; the offline engine is deterministic, so every faulted run must match it
        svc = build_services(Settings(), store=store, bus=InProcessBus(workers=2))
        bind_in_process(svc.bus, svc)  # type: ignore[arg-type]
        t0 = time.monotonic()
        run = start_run(svc, f"transcripts/{PROJECT}/baseline.md", data)
        svc.bus.drain()  # type: ignore[attr-defined]
        seconds = time.monotonic() - t0
        check = check_run(store, run.run_id)
        assert check.ok and check.status == "completed", check.describe()
        baseline = story_titles(store, run.run_id)
        assert len(baseline) >= 10, "the chaos transcript should make enough stories to hit"
        yield ChaosEnv(azurite, store, env, tmp, baseline, seconds, data)
    finally:
        azurite.stop()
        get_settings.cache_clear()
        app_services.cache_clear()
        mp.undo()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not REPORT:
        return
    terminalreporter.section("fault injection (tests/chaos)")
    for tally in REPORT:
        terminalreporter.write_line(tally.line())
        for note in tally.notes:
            terminalreporter.write_line(f"    {note}")
    total_lost = sum(t.lost for t in REPORT)
    total_dups = sum(t.duplicates for t in REPORT)
    terminalreporter.write_line(
        f"records lost: {total_lost} (must be 0)   duplicates: {total_dups} (must be 0)"
    )
