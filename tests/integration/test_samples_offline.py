"""Both sample transcripts through the real offline engine and MiniLM, in-process: every segment is
verbatim (their concatenation is the normalized transcript, character for character) and every
quote is found in the transcript at its offsets and inside its own segment."""

from __future__ import annotations

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
from tests.support.pipeline import SAMPLES, load_backlog, make_pipeline, run_file

TRANSCRIPTS = ["remote_control_functional_design.txt", "remote_control_planning_notes.md"]


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
    load_backlog(svc, "rc", read_backlog_file(SAMPLES / "backlog" / "remote_control_backlog.jsonl"))
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
