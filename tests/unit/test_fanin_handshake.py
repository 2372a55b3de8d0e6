"""The fan-in handshake (shared/pipeline/fanin.py): a tagging unit that finishes while the run is
still ``generating`` leaves the check to the generation unit that moves the run to ``tagging``, and
the parts are read once however many units find them complete together."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

from shared import layout
from shared.bus import FINALIZE_QUEUE
from shared.bus.memory import InProcessBus
from shared.models import (
    GeneratedItem,
    GeneratedPart,
    RunStatus,
    SourceQuote,
    TaggingRecord,
    TagPart,
)
from shared.pipeline import fanin
from shared.pipeline.fanin import check_completion, expected_story_ids
from shared.pipeline.runs import load_run
from shared.services import Services
from shared.settings import Settings
from shared.storage import create_model
from tests.support.fakes import CountingStore

NOW = datetime(2026, 1, 1, tzinfo=UTC)
RUN = "run-0123456789abcdef0123"


def story(sid: str) -> GeneratedItem:
    return GeneratedItem(
        run_id=RUN,
        segment_id=sid[:8],
        segment_order=1,
        type="User Story",
        item_id=sid,
        story_id=sid,
        title=f"T {sid}",
        source_doc="m.txt",
        source_doc_segment="0-10",
        generation_agent_version="v",
        engine="offline",
        source_quotes=[SourceQuote(text="abc", start=0, end=3)],
    )


def services(tmp_path, segments: int) -> tuple[Services, InProcessBus, CountingStore]:
    bus = InProcessBus()
    store = CountingStore(tmp_path)
    svc = Services(settings=Settings(storage_backend="local"), store=store, bus=bus)
    status = RunStatus(
        run_id=RUN,
        project="p",
        source_path="transcripts/p/m.txt",
        source_name="m.txt",
        content_sha256="x",
        size_bytes=1,
        status="running",
        phase="generating",
        engine="offline",
        embedding_model="m",
        created_at=NOW,
        updated_at=NOW,
        segment_count=segments,
    )
    create_model(store, layout.run_json(RUN), status)
    return svc, bus, store


def write_part(svc: Services, seg: str, stories: list[str]) -> None:
    part = GeneratedPart(
        run_id=RUN,
        segment_id=seg,
        status="generated",
        timestamp=NOW,
        items=[story(s) for s in stories],
    )
    create_model(svc.store, layout.generated_part(RUN, seg), part)


def write_tag(svc: Services, sid: str) -> None:
    record = TaggingRecord(
        run_id=RUN,
        segment_id=sid[:8],
        story_id=sid,
        decision_tag="new",
        tagging_agent_version="v",
        engine="offline",
        timestamp=NOW,
    )
    create_model(svc.store, layout.tag_part(RUN, sid), TagPart(record=record))


def test_a_tag_done_while_generating_is_seen_by_the_unit_that_moves_the_run(tmp_path):
    svc, bus, _ = services(tmp_path, segments=2)
    write_part(svc, "seg-0001", ["seg-0001-st01"])
    write_tag(svc, "seg-0001-st01")  # tagged before the second segment is generated
    assert not check_completion(svc, RUN, after_tag=True)  # leaves it to generation
    assert load_run(svc, RUN).phase == "generating"
    write_part(svc, "seg-0002", ["seg-0002-st01"])
    assert not check_completion(svc, RUN)  # the second generation unit moves the run ...
    run = load_run(svc, RUN)
    assert (run.phase, run.story_count) == ("tagging", 2)
    write_tag(svc, "seg-0002-st01")
    assert check_completion(svc, RUN, after_tag=True)  # ... and the last tag completes it
    assert [q for q, _ in bus.sent] == [FINALIZE_QUEUE]


def test_the_generation_unit_that_moves_the_run_finds_every_tag_already_written(tmp_path):
    svc, bus, _ = services(tmp_path, segments=2)
    write_part(svc, "seg-0001", ["seg-0001-st01"])
    write_part(svc, "seg-0002", ["seg-0002-st01"])
    for sid in ("seg-0001-st01", "seg-0002-st01"):  # every tagging unit ran before the move
        write_tag(svc, sid)
        assert not check_completion(svc, RUN, after_tag=True)
    assert check_completion(svc, RUN)  # the generation unit's check sends finalize
    assert [q for q, _ in bus.sent] == [FINALIZE_QUEUE]


def test_fewer_tag_parts_than_stories_is_incomplete_without_reading_the_expected_ids(tmp_path):
    svc, bus, store = services(tmp_path, segments=1)
    write_part(svc, "seg-0001", ["seg-0001-st01", "seg-0001-st02"])
    assert not check_completion(svc, RUN)  # moves the run to tagging
    write_tag(svc, "seg-0001-st01")
    store.clear()
    assert not check_completion(svc, RUN, after_tag=True)
    assert layout.expected_stories(RUN) not in store.gets
    write_tag(svc, "seg-0001-st02")
    assert check_completion(svc, RUN, after_tag=True)
    assert bus.sent


def test_units_finding_every_part_together_read_the_parts_once(tmp_path, monkeypatch):
    svc, _, store = services(tmp_path, segments=3)
    for n in (1, 2, 3):
        write_part(svc, f"seg-000{n}", [f"seg-000{n}-st01"])
    run = load_run(svc, RUN)
    started, release = threading.Event(), threading.Event()
    real = fanin._expected_from_parts

    def slow(svc_, run_):  # the first caller holds the computation until the others wait on it
        started.set()
        release.wait(5)
        return real(svc_, run_)

    monkeypatch.setattr(fanin, "_expected_from_parts", slow)
    results: list[list[str] | None] = []
    threads = [threading.Thread(target=lambda: results.append(expected_story_ids(svc, run)))]
    threads[0].start()
    started.wait(5)
    monkeypatch.setattr(fanin, "_expected_from_parts", real)
    threads += [
        threading.Thread(target=lambda: results.append(expected_story_ids(svc, run)))
        for _ in range(4)
    ]
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join(10)
    expected = ["seg-0001-st01", "seg-0002-st01", "seg-0003-st01"]
    assert results == [expected] * 5
    part_reads = [p for p in store.gets if "/parts/generated/" in p]
    assert len(part_reads) == 3  # one read of each part served all five callers


def test_a_stale_incomplete_answer_is_not_reused(tmp_path, monkeypatch):
    svc, _, _ = services(tmp_path, segments=2)
    write_part(svc, "seg-0001", ["seg-0001-st01"])
    run = load_run(svc, RUN)
    started, release = threading.Event(), threading.Event()
    real = fanin._expected_from_parts

    def slow(svc_, run_):  # lists the parts before the second one is written
        found = real(svc_, run_)
        started.set()
        release.wait(5)
        return found

    monkeypatch.setattr(fanin, "_expected_from_parts", slow)
    first: list[list[str] | None] = []
    t = threading.Thread(target=lambda: first.append(expected_story_ids(svc, run)))
    t.start()
    started.wait(5)
    monkeypatch.setattr(fanin, "_expected_from_parts", real)
    write_part(svc, "seg-0002", ["seg-0002-st01"])
    second: list[list[str] | None] = []
    t2 = threading.Thread(target=lambda: second.append(expected_story_ids(svc, run)))
    t2.start()
    time.sleep(0.2)  # let the second caller find the first one's computation and wait on it
    release.set()
    t.join(10)
    t2.join(10)
    assert first == [None]
    assert second == [["seg-0001-st01", "seg-0002-st01"]]
