"""A unit that waits for model capacity is re-queued with a visibility delay, never failed
(shared/pipeline process, shared/bus send_later): no attempt recorded, nothing towards poison, and
the run ends as it would have. Only a service that keeps refusing (429 past the limiter's wait) is
bounded, so a deployment that never answers cannot hold a run open."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared import layout, pipeline
from shared.agents import Agents
from shared.bus import GENERATE_QUEUE, TAG_QUEUE, send_later
from shared.bus.memory import InProcessBus
from shared.llm import CapacityUnavailable
from shared.models import ErrorRecord, SegmentMessage, WorkItem
from shared.storage import read_jsonl
from shared.storage.local import LocalFolderStore
from tests.support.fakes import CueGenerator, Flaky, ParagraphSegmenter, ThresholdTagger
from tests.support.pipeline import load_backlog, make_pipeline, run_file
from tests.support.transcripts import SMALL

BACKLOG = [
    WorkItem(
        work_item_id=11,
        work_item_type="User Story",
        title="Battery life",
        description="The battery must last at least twelve months.",
    )
]


@pytest.fixture(autouse=True)
def _no_requeue_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "MIN_REQUEUE_DELAY_S", 0.0)


def run_with(tmp_path: Path, agents: Agents) -> tuple[object, InProcessBus, object]:
    svc, bus = make_pipeline(LocalFolderStore(tmp_path), agents=agents)
    load_backlog(svc, "demo", BACKLOG)
    done = run_file(svc, bus, "demo", "meeting.txt", SMALL.encode())
    return svc, bus, done


def test_a_unit_without_capacity_is_requeued_not_failed(tmp_path: Path) -> None:
    busy = Flaky(
        CueGenerator(),
        "generate",
        fail=lambda n, *a: n <= 3,  # the first three generation calls find no capacity
        error=lambda: CapacityUnavailable("budget spent", retry_after=0.01),
    )
    tagger = Flaky(
        ThresholdTagger(),
        "tag",
        fail=lambda n, *a: n == 1,
        error=lambda: CapacityUnavailable("budget spent", retry_after=0.01),
    )
    agents = Agents(segmenter=ParagraphSegmenter(), generator=busy, tagger=tagger)
    svc, bus, done = run_with(tmp_path, agents)
    assert done.status == "completed" and done.error_count == 0
    assert [q for q, _ in bus.delayed] == [GENERATE_QUEUE] * 3 + [TAG_QUEUE]
    store = svc.store  # type: ignore[attr-defined]
    assert not store.list(f"runs/{done.run_id}/parts/attempts/")  # no failed attempt recorded
    assert not store.list(f"runs/{done.run_id}/parts/errors/") and not bus.dead
    # waits for the shared budget are not counted against the unit
    sent = [json.loads(body) for q, body in bus.sent if q == GENERATE_QUEUE]
    assert {m["deferrals"] for m in sent} == {0}


def test_a_service_that_keeps_refusing_fails_the_unit_after_the_bound(tmp_path: Path) -> None:
    refusing = Flaky(
        CueGenerator(),
        "generate",
        fail=lambda n, segment, context: segment.segment_id.endswith("0001"),
        error=lambda: CapacityUnavailable("429 past the wait", retry_after=0.0, service=True),
    )
    agents = Agents(segmenter=ParagraphSegmenter(), generator=refusing, tagger=ThresholdTagger())
    svc, bus, done = run_with(tmp_path, agents)
    assert done.status == "completed_with_errors"
    requeued = [q for q, _ in bus.delayed]
    assert requeued == [GENERATE_QUEUE] * pipeline.MAX_SERVICE_DEFERRALS
    errors = read_jsonl(svc.store, layout.run_file(done.run_id, "errors.jsonl"), ErrorRecord)  # type: ignore[attr-defined]
    assert [(e.phase, e.outcome) for e in errors] == [("generate", "skipped")]
    assert "429 past the wait" in errors[0].message


def test_the_in_process_bus_holds_a_delayed_message_back() -> None:
    bus = InProcessBus(workers=2)
    seen: list[str] = []
    bus.bind("q", lambda body, n: seen.append(json.loads(body)["run_id"]))
    send_later(bus, "q", SegmentMessage(run_id="later"), 0.2)
    bus.send("q", SegmentMessage(run_id="now"))
    bus.drain()
    assert seen == ["now", "later"] and bus.delayed == [("q", 0.2)]


def test_a_bus_without_send_later_gets_the_message_at_once() -> None:
    class Plain:
        def __init__(self) -> None:
            self.sent: list[tuple[str, str]] = []

        def send(self, queue: str, message: SegmentMessage) -> None:
            self.sent.append((queue, message.run_id))

    plain = Plain()
    send_later(plain, "q", SegmentMessage(run_id="r1"), 30.0)  # type: ignore[arg-type]
    assert plain.sent == [("q", "r1")]
