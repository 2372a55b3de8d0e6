"""The pipeline's guarantees over a local folder store and the in-process bus (no Azurite):
fan-out/fan-in, idempotency under duplicate delivery, poison handling, seed failure rules, bad input.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime

import pytest

from shared import layout
from shared.agents import Agents, GenerationFailed, SegmentationFailed, TaggingFailed
from shared.bus import GENERATE_QUEUE, SEGMENT_QUEUE, TAG_QUEUE
from shared.models import ErrorRecord, GeneratedItem, Segment, TaggingRecord, WorkItem
from shared.pipeline.runs import load_run
from shared.storage import read_jsonl
from shared.storage.local import LocalFolderStore
from tests.support.fakes import (
    CueGenerator,
    Flaky,
    ParagraphSegmenter,
    ThresholdTagger,
    fake_agents,
)
from tests.support.pipeline import artifact_bytes, load_backlog, make_pipeline, run_file
from tests.support.transcripts import SMALL

FIXED = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
BACKLOG = [
    WorkItem(work_item_id=1, work_item_type="Epic", title="Remote control"),
    WorkItem(
        work_item_id=11,
        work_item_type="User Story",
        title="Battery life",
        description="The battery must last at least twelve months.",
        parent_id=1,
    ),
    WorkItem(
        work_item_id=12,
        work_item_type="User Story",
        title="Buttons",
        description="The remote has fifteen buttons including digits.",
        parent_id=1,
    ),
]


def pipeline(tmp_path, **kw):
    svc, bus = make_pipeline(LocalFolderStore(tmp_path / "store"), **kw)
    svc.clock = lambda: FIXED
    load_backlog(svc, "demo", BACKLOG)
    return svc, bus


def test_run_completes_with_every_artifact(tmp_path):
    svc, bus = pipeline(tmp_path)
    run = run_file(svc, bus, "demo", "meeting.txt", SMALL.encode())

    assert run.status == "completed", run.failure_reason
    assert run.phase == "done"
    names = set(svc.store.children(layout.run_prefix(run.run_id)))
    assert set(layout.FINAL_ARTIFACTS) <= names
    segments = read_jsonl(svc.store, layout.run_file(run.run_id, "segments.jsonl"), Segment)
    transcript = svc.store.get(layout.run_file(run.run_id, "transcript.txt")).decode()
    assert "".join(s.raw_text for s in segments) == transcript
    items = read_jsonl(
        svc.store, layout.run_file(run.run_id, "generated_backlog.jsonl"), GeneratedItem
    )
    stories = [i for i in items if i.type == "User Story"]
    # five 'must'/'should' sentences in SMALL
    assert len(stories) == 5 == run.story_count
    records = read_jsonl(
        svc.store, layout.run_file(run.run_id, "tagging_analysis.jsonl"), TaggingRecord
    )
    assert [r.story_id for r in records] == [s.item_id for s in stories]
    assert all(s.assigned_tag == r.decision_tag for s, r in zip(stories, records, strict=True))
    for story in stories:
        for q in story.source_quotes:
            assert transcript[q.start : q.end] == q.text
    # the battery sentence is nearly the existing story #11
    battery = next(r for s, r in zip(stories, records, strict=True) if "battery" in s.title.lower())
    assert battery.decision_tag in ("extend", "duplicate") and battery.related_story_ids == [11]
    summary = json.loads(svc.store.get(layout.run_file(run.run_id, "summary.json")))
    assert summary["story_count"] == 5 and summary["segment_count"] == len(segments)
    assert sum(summary["tag_distribution"].values()) == 5
    assert svc.store.get(layout.run_file(run.run_id, "errors.jsonl")) == b""


def test_same_upload_never_starts_two_runs(tmp_path):
    svc, bus = pipeline(tmp_path)
    first = run_file(svc, bus, "demo", "meeting.txt", SMALL.encode())
    sent_before = len(bus.sent)
    second = run_file(svc, bus, "demo", "meeting.txt", SMALL.encode())
    assert second.run_id == first.run_id and second.status == "completed"
    assert len(bus.sent) == sent_before  # nothing re-sent for a finished run
    other = run_file(
        svc, bus, "demo", "meeting.txt", (SMALL + "\nExtra: it must be blue.\n").encode()
    )
    assert other.run_id != first.run_id


def test_every_message_delivered_twice_gives_identical_artifacts(tmp_path):
    once_svc, once_bus = pipeline(tmp_path / "once")
    once = run_file(once_svc, once_bus, "demo", "m.txt", SMALL.encode())
    twice_svc, twice_bus = pipeline(tmp_path / "twice", deliver_twice=True)
    twice = run_file(twice_svc, twice_bus, "demo", "m.txt", SMALL.encode())

    assert once.run_id == twice.run_id and twice.status == "completed"
    assert artifact_bytes(once_svc, once.run_id) == artifact_bytes(twice_svc, twice.run_id)
    # one set of downstream messages: each distinct message was sent once by the handlers
    sent = [(q, json.loads(b)) for q, b in twice_bus.sent]
    generate = [m for q, m in sent if q == GENERATE_QUEUE]
    tag = [m for q, m in sent if q == TAG_QUEUE]
    assert (
        len(generate)
        == len({json.dumps(m, sort_keys=True) for m in generate})
        == once.segment_count
    )
    # a generation unit's tag messages are sent without the outbox lease (send_once
    # exclusive=False: a duplicate costs little): two deliveries running at the same moment may
    # both send them, never more often than the unit was delivered, and the artifacts above are
    # the same either way
    distinct = Counter(json.dumps(m, sort_keys=True) for m in tag)
    assert len(distinct) == 5 and set(distinct.values()) <= {1, 2}, distinct


def test_replaying_all_messages_after_completion_changes_nothing(tmp_path):
    svc, bus = pipeline(tmp_path)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    before = artifact_bytes(svc, run.run_id)
    for queue, body in list(bus.sent):
        bus.send_raw(queue, body)
    bus.drain()
    assert artifact_bytes(svc, run.run_id) == before


def test_a_tag_unit_that_always_fails_ends_in_poison_and_the_run_completes(tmp_path):
    agents = fake_agents()
    tagger = Flaky(
        ThresholdTagger(),
        "tag",
        lambda n, story, cands: "battery" in story.title.lower(),
        lambda: RuntimeError("model exploded"),
    )
    agents.tagger = tagger  # type: ignore[assignment]
    svc, bus = pipeline(tmp_path, agents=agents, max_dequeue_count=3)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())

    assert run.status == "completed_with_errors"
    errors = read_jsonl(svc.store, layout.run_file(run.run_id, "errors.jsonl"), ErrorRecord)
    assert len(errors) == 1
    assert errors[0].phase == "tag" and errors[0].outcome == "tagged_new"
    assert "model exploded" in errors[0].message
    records = read_jsonl(
        svc.store, layout.run_file(run.run_id, "tagging_analysis.jsonl"), TaggingRecord
    )
    failed = [r for r in records if r.tagging_failed]
    assert len(failed) == 1 and failed[0].decision_tag == "new"
    assert len(records) == 5
    assert tagger.calls >= 3 + 4  # three deliveries of the bad one, one each for the others


def test_a_generate_unit_that_always_fails_is_skipped(tmp_path):
    agents = fake_agents()
    agents.generator = Flaky(
        CueGenerator(),
        "generate",
        lambda n, seg, ctx: "battery" in seg.raw_text,
        lambda: ConnectionError("timeout"),
    )  # type: ignore[assignment]
    svc, bus = pipeline(tmp_path, agents=agents)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert run.status == "completed_with_errors"
    errors = read_jsonl(svc.store, layout.run_file(run.run_id, "errors.jsonl"), ErrorRecord)
    assert [(e.phase, e.outcome) for e in errors] == [("generate", "skipped")]
    summary = json.loads(svc.store.get(layout.run_file(run.run_id, "summary.json")))
    assert summary["skipped_segments"] == 1 and summary["story_count"] == 3


def test_generation_agent_giving_up_skips_the_segment_without_retries(tmp_path):
    agents = fake_agents()
    gen = Flaky(
        CueGenerator(),
        "generate",
        lambda n, seg, ctx: "battery" in seg.raw_text,
        lambda: GenerationFailed("quote not in segment", attempts=2, raw_output="{...}"),
    )
    agents.generator = gen  # type: ignore[assignment]
    svc, bus = pipeline(tmp_path, agents=agents)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert run.status == "completed_with_errors"
    errors = read_jsonl(svc.store, layout.run_file(run.run_id, "errors.jsonl"), ErrorRecord)
    assert errors[0].attempts == 2 and errors[0].details["raw_output"] == "{...}"
    assert gen.calls == run.segment_count  # handled, not redelivered


def test_tagging_agent_giving_up_tags_new_with_tagging_failed(tmp_path):
    agents = fake_agents()
    agents.tagger = Flaky(
        ThresholdTagger(),
        "tag",
        lambda *a: True,
        lambda: TaggingFailed("unclear decision", attempts=2),
    )  # type: ignore[assignment]
    svc, bus = pipeline(tmp_path, agents=agents)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    records = read_jsonl(
        svc.store, layout.run_file(run.run_id, "tagging_analysis.jsonl"), TaggingRecord
    )
    assert all(r.decision_tag == "new" and r.tagging_failed for r in records)
    assert run.status == "completed_with_errors" and run.error_count == 5


def test_no_retrieved_story_means_new_without_a_model_call(tmp_path):
    agents = fake_agents()
    tagger = Flaky(ThresholdTagger(), "tag", lambda *a: False, lambda: RuntimeError())
    agents.tagger = tagger  # type: ignore[assignment]
    svc, bus = make_pipeline(LocalFolderStore(tmp_path / "s"), agents=agents)  # empty index
    run = run_file(svc, bus, "empty", "m.txt", SMALL.encode())
    records = read_jsonl(
        svc.store, layout.run_file(run.run_id, "tagging_analysis.jsonl"), TaggingRecord
    )
    assert run.status == "completed"
    assert {r.decision_tag for r in records} == {"new"} and tagger.calls == 0
    assert all("no existing user story" in r.reasoning_excerpt for r in records)


def test_segmentation_failure_aborts_the_run_with_the_reason(tmp_path):
    agents = Agents(
        segmenter=Flaky(
            ParagraphSegmenter(),
            "segment",
            lambda *a: True,
            lambda: SegmentationFailed("boundaries out of order", attempts=2),
        ),  # type: ignore[arg-type]
        generator=CueGenerator(),
        tagger=ThresholdTagger(),
    )
    svc, bus = pipeline(tmp_path, agents=agents)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert run.status == "failed" and run.phase == "failed"
    assert "boundaries out of order" in (run.failure_reason or "")
    errors = read_jsonl(svc.store, layout.run_file(run.run_id, "errors.jsonl"), ErrorRecord)
    assert errors[0].phase == "segment" and errors[0].outcome == "aborted"


def test_segment_unit_crashing_every_time_is_poisoned_and_the_run_fails(tmp_path):
    agents = fake_agents()
    agents.segmenter = Flaky(
        ParagraphSegmenter(), "segment", lambda *a: True, lambda: MemoryError("out of memory")
    )  # type: ignore[assignment]
    svc, bus = pipeline(tmp_path, agents=agents, max_dequeue_count=2)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert run.status == "failed"
    assert "out of memory" in (run.failure_reason or "")
    assert any(q == SEGMENT_QUEUE for q, _ in bus.sent)


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("empty.txt", b"", "empty"),
        ("blank.txt", b"  \n\t \n", "no text"),
        ("binary.txt", bytes(range(256)) * 4, "binary"),
        ("notes.exe", b"hello", "unsupported file type"),
        ("bad.pdf", b"%PDF-1.4 not really", "could not be read"),
    ],
)
def test_bad_input_fails_with_a_clear_reason(tmp_path, name, data, reason):
    svc, bus = pipeline(tmp_path)
    run = run_file(svc, bus, "demo", name, data)
    assert run.status == "failed"
    assert reason in (run.failure_reason or "")
    assert not svc.store.exists(layout.run_file(run.run_id, "segments.jsonl"))
    errors = read_jsonl(svc.store, layout.run_file(run.run_id, "errors.jsonl"), ErrorRecord)
    assert errors[0].phase == "start"


def test_oversized_upload_is_rejected_and_nothing_is_copied(tmp_path):
    from shared.settings import Settings

    settings = Settings(storage_backend="local", engine="offline", embedder="minilm")
    settings.pipeline.limits.max_upload_bytes = 100
    svc, bus = pipeline(tmp_path, settings=settings)
    run = run_file(svc, bus, "demo", "big.txt", b"x must be y. " * 20)
    assert run.status == "failed" and "over the limit" in (run.failure_reason or "")
    assert svc.store.list(f"uploads/{run.run_id}/") == []
    assert not svc.store.exists(layout.run_file(run.run_id, "transcript.txt"))


def test_latin1_and_utf16_uploads_are_read(tmp_path):
    svc, bus = pipeline(tmp_path)
    text = "Björn: The café menu must show prices in €.\n"
    for name, data in [
        ("latin1.txt", text.replace("€", "EUR").encode("latin-1")),
        ("utf16.txt", text.encode("utf-16")),
    ]:
        run = run_file(svc, bus, "demo", name, data)
        assert run.status == "completed", run.failure_reason
        transcript = svc.store.get(layout.run_file(run.run_id, "transcript.txt")).decode()
        assert "Björn" in transcript and "café" in transcript


def test_status_never_changes_after_a_terminal_state(tmp_path):
    svc, bus = pipeline(tmp_path)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    from shared.pipeline.runs import update_run

    after = update_run(svc, run.run_id, lambda r: r.model_copy(update={"status": "running"}))
    assert after.status == "completed" == load_run(svc, run.run_id).status
