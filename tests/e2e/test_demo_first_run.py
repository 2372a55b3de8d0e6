"""The first ten minutes of a new user: ``make demo`` on their own file, the address it prints, the
review page behind it, and stopping it.

Each test runs ``python -m devhost.demo`` as a child process, as ``make demo FILE=...`` does, on the
small sample .vtt (the AMI sample takes minutes; its own test is tests/integration/
test_samples_offline.py). The address is taken from the demo's output, never built by the test.
"""

from __future__ import annotations

import json
import os
import re
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.pipeline import SAMPLES
from tests.support.processes import Child, azurite_on, is_running, needs_proc, parent_of

VTT = SAMPLES / "transcripts" / "remote_control_design_review.vtt"
REVIEW_LINE = (
    r"^Review page: (http://127\.0\.0\.1:\d+/api/ui\?code=([^#\s]+)#run=(run-[0-9a-f]{20}))$"
)
API_LINE = r"^API base: +(http://127\.0\.0\.1:\d+/api) "
AZURITE_LINE = r"^Azurite: blob http://127\.0\.0\.1:(\d+)/"


def get(url: str, key: str | None) -> tuple[int, bytes]:
    """Status and body of a GET, with the function key as the header when given."""
    headers = {"x-functions-key": key} if key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def demo_args(out: Path, *extra: str) -> list[str]:
    return ["-m", "devhost.demo", str(VTT), "--port", "0", "--out", str(out), *extra]


def test_the_demo_on_a_vtt_completes_prints_where_to_look_and_leaves_nothing_running(
    tmp_path: Path,
) -> None:
    needs_proc()
    child = Child(demo_args(tmp_path))
    try:
        code = child.finish()
    finally:
        child.close()
    assert code == 0, child.output
    out = child.output
    review = re.search(REVIEW_LINE, out, re.MULTILINE)
    api = re.search(API_LINE, out, re.MULTILINE)
    assert review and api, out
    assert review.group(1).startswith(api.group(1) + "/ui?")
    assert review.group(2) == "demo-function-key"
    assert "make demo-serve" in out  # how to keep the page up, since this host has stopped

    run_id = review.group(3)
    backlog = [
        json.loads(line)
        for line in (tmp_path / run_id / "generated_backlog.jsonl").read_text().splitlines()
    ]
    stories = [i for i in backlog if i["type"] == "User Story"]
    assert stories
    # the VTT's voices and cue times reach the quotes
    quotes = [q for s in stories for q in s["source_quotes"]]
    assert {q["speaker"] for q in quotes} <= {
        "Project Manager", "User Interface", "Marketing", "Industrial Designer"
    }  # fmt: skip
    assert all(re.fullmatch(r"\d\d:\d\d:\d\d", q["timecode"] or "") for q in quotes)

    blob_port = int(re.search(AZURITE_LINE, out, re.MULTILINE).group(1))  # type: ignore[union-attr]
    assert azurite_on(blob_port) == []


class ServedDemo:
    """``python -m devhost.demo --keep-running`` (``make demo-serve``), started on first use and
    again after a test stopped it, so that each test passes alone and in any order."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.child: Child | None = None

    def running(self) -> Child:
        if self.child is None or not self.child.running():
            self.child = Child(demo_args(self.out, "--keep-running"))
            self.child.wait_for(r"The host keeps running")
        return self.child

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedDemo]:
    demo = ServedDemo(tmp_path_factory.mktemp("demo-out"))
    yield demo
    demo.close()


def test_the_printed_address_and_api_base_answer_with_the_printed_key(served: ServedDemo) -> None:
    child = served.running()
    review = child.wait_for(REVIEW_LINE)
    url, key, run_id = review.group(1), review.group(2), review.group(3)
    api = child.wait_for(API_LINE).group(1)
    assert get(url.split("#")[0], None)[0] == 200  # the key is in the address itself
    assert get(url.split("?")[0], None)[0] == 401  # and it is needed
    status, body = get(f"{api}/runs/{run_id}", key)
    assert status == 200 and json.loads(body)["status"] == "completed"


@pytest.mark.browser
def test_the_printed_address_opens_the_demo_run_on_the_review_page_in_chromium(
    served: ServedDemo,
) -> None:
    launch = _chromium()
    child = served.running()
    review = child.wait_for(REVIEW_LINE)
    url, key, run_id = review.group(1), review.group(2), review.group(3)
    api = child.wait_for(API_LINE).group(1)
    status, body = get(f"{api}/runs/{run_id}/backlog", key)
    assert status == 200
    titles = [i["title"] for i in _stories(json.loads(body))]
    assert titles

    with launch() as chromium:
        page = chromium.new_page()
        response = page.goto(url)  # as printed: nothing added, nothing typed
        assert response is not None and response.status == 200
        page.locator("#run-heading").filter(has_text=run_id).wait_for(timeout=60_000)
        page.locator("#run-status").filter(has_text="completed").wait_for(timeout=60_000)
        page.locator("#tree article.story").first.wait_for(timeout=60_000)
        shown = page.locator("#tree article.story .story-title").all_inner_texts()
        assert sorted(shown) == sorted(titles)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_served_demo_and_its_azurite(
    served: ServedDemo, signum: signal.Signals
) -> None:
    needs_proc()
    child = served.running()
    blob_port = int(child.wait_for(AZURITE_LINE).group(1))
    (azurite,) = azurite_on(blob_port)
    assert parent_of(azurite) == child.proc.pid  # the demo's own Azurite, no other

    assert child.signal(signum) == 0, child.output  # a requested stop, not a crash
    assert "Stopping the host and Azurite" in child.output
    assert not is_running(azurite)
    assert azurite_on(blob_port) == []


def _stories(tree: Any) -> list[dict[str, Any]]:
    """Every user story of a ``GET .../backlog`` tree, wherever it hangs."""
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "User Story":
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(tree)
    return found


def _chromium() -> Any:
    """A context manager that launches headless Chromium (skips without it or Playwright)."""
    from contextlib import contextmanager

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    executable = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not Path(executable).exists():
        pytest.skip(f"no Chromium at {executable} (make setup installs it, as root)")

    @contextmanager
    def launch() -> Iterator[Any]:
        with sync_api.sync_playwright() as p:
            chromium = p.chromium.launch(
                executable_path=executable,
                args=["--headless", "--no-sandbox", "--disable-gpu",
                      "--disable-background-networking", "--disable-component-update",
                      "--disable-sync"],
            )  # fmt: skip
            try:
                yield chromium
            finally:
                chromium.close()

    return launch
