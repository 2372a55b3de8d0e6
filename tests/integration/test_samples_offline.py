"""Both sample transcripts through the real offline engine and MiniLM, in-process, against the
backlog and architecture notes the demo loads: every segment is verbatim (their concatenation is the
normalized transcript, character for character), every quote is found in the transcript at its
offsets and inside its own segment, and the output matches its snapshot.

Snapshots: ``tests/snapshots/offline_<transcript>.json`` hold what a reviewer judges of each run
(``tests.support.offline_snapshot``: segments with the numbers of the statements their stories
quote, epics, features and stories with titles, criteria and evidence quotes, each story's tag with
its targets), as pretty JSON (sorted keys, indent 2) without run ids, timestamps, paths or scores.
A change to the offline engine that changes its output fails the test with a diff; when the new
output is the intended one, rewrite the snapshots and review the diff before committing::

    UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q tests/integration/test_samples_offline.py -k snapshot
    git diff tests/snapshots/

(docs/TESTING.md, "Snapshots of the offline engine").
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from shared import layout
from shared.bus.memory import InProcessBus
from shared.embeddings.minilm import MiniLMEmbedder
from shared.engine.offline import build_offline_agents
from shared.ids import segment_of_story
from shared.indexing.documents import index_documents
from shared.indexing.workitems import read_backlog_file
from shared.models import GeneratedItem, Segment, TaggingRecord
from shared.services import Services
from shared.settings import Settings
from shared.storage import read_jsonl
from shared.storage.local import LocalFolderStore
from shared.text.textio import extract_text, normalize
from tests.support.generated_text import MARKER, quotes, unclean
from tests.support.offline_snapshot import dumps, run_snapshot
from tests.support.pipeline import SAMPLES, load_backlog, make_pipeline, run_file

TRANSCRIPTS = ["remote_control_functional_design.txt", "remote_control_planning_notes.md"]
SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots"


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    settings = Settings(storage_backend="local", engine="offline", embedder="minilm")
    embedder = MiniLMEmbedder()
    svc, bus = make_pipeline(
        LocalFolderStore(tmp_path_factory.mktemp("store")),
        agents=build_offline_agents(embedder, settings.pipeline),
        embedder=embedder,
        settings=settings,
    )
    load_backlog(svc, "rc", read_backlog_file(SAMPLES / "backlog" / "remote_control_backlog.csv"))
    index_documents(
        svc.embedder,
        svc.index,
        "rc",
        sorted((SAMPLES / "architecture").glob("*.md")),
        settings.pipeline.external_loaders.architecture,
    )
    return svc, bus


@pytest.mark.parametrize("name", TRANSCRIPTS)
def test_sample_is_segmented_verbatim_and_every_quote_is_in_the_transcript(pipeline, name):
    svc, bus = pipeline
    data = (SAMPLES / "transcripts" / name).read_bytes()
    run = run_file(svc, bus, "rc", name, data)
    assert run.status == "completed", run.failure_reason
    assert run.engine == "offline"

    transcript = svc.store.get(layout.run_file(run.run_id, "transcript.txt")).decode()
    assert transcript == normalize(extract_text(data, name.rsplit(".", 1)[1]))
    segments = read_jsonl(svc.store, layout.run_file(run.run_id, "segments.jsonl"), Segment)
    assert "".join(s.raw_text for s in segments) == transcript
    cfg = svc.settings.pipeline.segmentation
    assert all(s.token_count <= cfg.max_segment_tokens for s in segments)
    assert all(s.token_count >= cfg.min_merge_threshold for s in segments)
    by_id = {s.segment_id: s for s in segments}

    items = read_jsonl(
        svc.store, layout.run_file(run.run_id, "generated_backlog.jsonl"), GeneratedItem
    )
    stories = [i for i in items if i.type == "User Story"]
    assert len(stories) >= 10
    for story in stories:
        # a story merged from several segments (one need, one story) quotes each of them
        own = [by_id[story.segment_id]] + [
            by_id[segment_of_story(m)] for m in story.merged_story_ids
        ]
        for quote in story.source_quotes + story.superseded_quotes:
            assert transcript[quote.start : quote.end] == quote.text
            assert any(s.start_char <= quote.start and quote.end <= s.end_char for s in own)
        for question in story.open_questions:
            if question.quote:
                assert transcript[question.quote.start : question.quote.end] == question.quote.text
    records = read_jsonl(
        svc.store, layout.run_file(run.run_id, "tagging_analysis.jsonl"), TaggingRecord
    )
    assert [r.story_id for r in records] == [s.item_id for s in stories]


def test_no_generated_field_of_the_ami_sample_keeps_a_marker_and_quotes_keep_theirs(
    pipeline: tuple[Services, InProcessBus],
) -> None:
    """The demo's meeting (AMI IS1006b, 232 lines with {disfmarker}, {vocalsound} or {gap}):
    titles, descriptions, criteria, notes and open questions are cleaned; quotes are verbatim."""
    svc, bus = pipeline
    name = "remote_control_functional_design.txt"
    run = run_file(svc, bus, "rc", name, (SAMPLES / "transcripts" / name).read_bytes())
    assert run.status == "completed", run.failure_reason
    transcript = svc.store.get(layout.run_file(run.run_id, "transcript.txt")).decode()
    items = [
        i.model_dump(mode="json")
        for i in read_jsonl(
            svc.store, layout.run_file(run.run_id, "generated_backlog.jsonl"), GeneratedItem
        )
    ]
    assert any(i["open_questions"] for i in items)
    assert unclean(items) == []

    every_quote = [q for i in items for q in quotes(i)]
    assert all(transcript[q["start"] : q["end"]] == q["text"] for q in every_quote)
    assert any(MARKER.search(q["text"]) for q in every_quote)
    questions = [q for i in items for q in i["open_questions"] if q.get("quote")]
    assert any(MARKER.search(q["quote"]["text"]) for q in questions)  # the question is clean


@pytest.mark.parametrize("name", TRANSCRIPTS)
def test_offline_output_matches_its_snapshot(
    pipeline: tuple[Services, InProcessBus], name: str
) -> None:
    """Segments, the backlog tree and the tags of the sample equal the stored snapshot
    (``UPDATE_SNAPSHOTS=1`` rewrites it: see the module docstring)."""
    svc, bus = pipeline
    run = run_file(svc, bus, "rc", name, (SAMPLES / "transcripts" / name).read_bytes())
    assert run.status == "completed", run.failure_reason

    def artifact(file: str, model: type) -> list[dict]:
        path = layout.run_file(run.run_id, file)
        return [r.model_dump(mode="json") for r in read_jsonl(svc.store, path, model)]

    actual = dumps(
        run_snapshot(
            svc.store.get(layout.run_file(run.run_id, "transcript.txt")).decode(),
            run.model_dump(mode="json"),
            artifact("segments.jsonl", Segment),
            artifact("generated_backlog.jsonl", GeneratedItem),
            artifact("tagging_analysis.jsonl", TaggingRecord),
        )
    )
    snapshot = SNAPSHOTS / f"offline_{name.rsplit('.', 1)[0]}.json"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(actual, encoding="utf-8")
    assert snapshot.exists(), f"{snapshot} is missing: run with UPDATE_SNAPSHOTS=1 to write it"
    expected = snapshot.read_text(encoding="utf-8")
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), str(snapshot), "this run", lineterm=""
        )
        shown = list(diff)
        pytest.fail(
            f"the offline engine's output on {name} differs from {snapshot.name} "
            f"({len(shown)} diff lines; UPDATE_SNAPSHOTS=1 rewrites it if intended):\n"
            + "\n".join(shown[:120]),
            pytrace=False,
        )
