"""Nothing is left running: ``python -m devhost --azurite`` and a pytest session using the
``azurite`` fixture stop their Azurite when they are stopped with SIGINT, SIGTERM or SIGHUP.

Each test starts the process, finds the Azurite it started (its child, by the blob port it prints)
while it runs, signals the process and checks that this Azurite is gone. Azurite processes of other
sessions running beside this one are never looked at (see ``tests.support.processes``). The demo's
own test is in tests/e2e/test_demo_first_run.py.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.support.pipeline import REPO
from tests.support.processes import Child, azurite_on, is_running, needs_proc, parent_of


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_devhost_stops_its_azurite_on_a_signal(signum: signal.Signals) -> None:
    needs_proc()
    key = "cleanup-key"
    child = Child(["-m", "devhost", "--azurite", "--port", "0", "--function-key", key])
    try:
        blob_port = int(child.wait_for(r"^Azurite: blob http://127\.0\.0\.1:(\d+)/").group(1))
        review = child.wait_for(r"^Review page: (http://127\.0\.0\.1:\d+/api/ui\?code=\S+)$")
        assert review.group(1).endswith(f"?code={key}")
        assert child.wait_for(r"^API base: +(http://127\.0\.0\.1:\d+/api) ").group(1)
        child.wait_for(r"Press Ctrl\+C to stop")
        (azurite,) = azurite_on(blob_port)
        assert parent_of(azurite) == child.proc.pid

        assert child.signal(signum) == 0, child.output
        assert not is_running(azurite)
        assert azurite_on(blob_port) == []
    finally:
        child.close()


INNER_TEST = """
import time


def test_holds_the_session_azurite(azurite):
    print(f"AZURITE {azurite.blob_port}", flush=True)
    while True:
        time.sleep(1)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_pytest_session_stopped_by_a_signal_stops_the_fixture_azurite(
    signum: signal.Signals, tmp_path: Path
) -> None:
    needs_proc()
    test_file = tmp_path / "test_hold.py"
    test_file.write_text(INNER_TEST)
    child = Child(
        [
            "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider",
            "-c", str(REPO / "pyproject.toml"), "--rootdir", str(REPO),
            "-p", "tests.conftest",  # the repository's fixtures and its signal handling
            str(test_file),
        ]
    )  # fmt: skip
    try:
        blob_port = int(child.wait_for(r"AZURITE (\d+)").group(1))
        (azurite,) = azurite_on(blob_port)
        assert parent_of(azurite) == child.proc.pid

        code = child.signal(signum)
        assert code == pytest.ExitCode.INTERRUPTED, child.output  # not killed by the signal
        assert not is_running(azurite)
        assert azurite_on(blob_port) == []
    finally:
        child.close()
