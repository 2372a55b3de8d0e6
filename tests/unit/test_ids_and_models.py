"""Identifiers and record validation: the contracts every artifact relies on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from shared import ids
from shared.models import GeneratedItem, RunStatus, Segment, SourceQuote, TaggingRecord

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_run_id_is_deterministic_per_path_and_content():
    a = ids.make_run_id("transcripts/p/a.txt", "h1")
    assert a == ids.make_run_id("transcripts/p/a.txt", "h1")
    assert a != ids.make_run_id("transcripts/p/a.txt", "h2")
    assert a != ids.make_run_id("transcripts/p/b.txt", "h1")
    assert ids.check_run_id(a) == a


def test_attempt_ids_are_run_ids_derived_from_the_attempt_they_retry():
    first = ids.make_run_id("transcripts/p/a.txt", "h1")
    second = ids.make_attempt_id(first, 2)
    assert ids.check_run_id(second) == second  # a run id like any other (routes, storage)
    assert second == ids.make_attempt_id(first, 2)  # the same retry twice: the same attempt
    assert len({first, second, ids.make_attempt_id(first, 3), ids.make_attempt_id(second, 3)}) == 4


@pytest.mark.parametrize(
    ("raw", "recorded"),
    [
        ('"0x8DCF1A2B3C4D5E6"', "0x8DCF1A2B3C4D5E6"),  # the Azure SDK's quoted form
        ("0x8DCF1A2B3C4D5E6", "0x8DCF1A2B3C4D5E6"),  # the dev host's stripped form
        ('W/"abc"', "abc"),
        ("", None),
        ('""', None),
        (None, None),
    ],
)
def test_etags_are_recorded_without_quotes(raw, recorded):
    assert ids.normalize_etag(raw) == recorded


def test_a_run_json_written_before_attempts_existed_still_loads():
    old = {
        "run_id": "run-0123456789abcdef0123",
        "project": "p",
        "source_path": "transcripts/p/a.txt",
        "source_name": "a.txt",
        "content_sha256": "0" * 64,
        "size_bytes": 10,
        "status": "failed",
        "phase": "failed",
        "engine": "offline",
        "embedding_model": "all-MiniLM-L6-v2-int8",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    run = RunStatus.model_validate(old)
    assert (run.attempt, run.retry_of, run.retried_by, run.source_etag) == (1, None, None, None)
    with pytest.raises(ValidationError):
        RunStatus.model_validate({**old, "attempt": 0})


@pytest.mark.parametrize(
    "value",
    [
        "../run-0123",
        "run-0123456789abcdef0123/..",
        "RUN-0123456789abcdef0123",
        "run-xyz",
        "",
        "run-0123456789abcdef01234",
    ],
)
def test_bad_run_ids_are_rejected(value):
    with pytest.raises(ids.InvalidIdentifier):
        ids.check_run_id(value)


@pytest.mark.parametrize(
    "name", ["../run.json", "a/b.json", "run.json/..", ".hidden.json", "x.exe", "RUN.JSON", "parts"]
)
def test_bad_artifact_names_are_rejected(name):
    with pytest.raises(ids.InvalidIdentifier):
        ids.check_artifact_name(name)


def test_good_names_pass():
    assert ids.check_artifact_name("generated_backlog.jsonl")
    assert ids.check_project("Remote-Control_2")
    assert ids.check_upload_name("meeting 12 (final).txt")
    with pytest.raises(ids.InvalidIdentifier):
        ids.check_upload_name("..txt")
    with pytest.raises(ids.InvalidIdentifier):
        ids.check_project("../etc")


def test_epic_id_is_shared_by_theme_not_segment():
    assert ids.epic_id("run-1", "Battery life") == ids.epic_id("run-1", " battery LIFE ")
    assert ids.epic_id("run-1", "Battery life") != ids.epic_id("run-2", "Battery life")


def test_segment_span_must_match_its_text():
    with pytest.raises(ValidationError):
        Segment(
            run_id="r",
            segment_id="seg-0001",
            segment_order=1,
            raw_text="abc",
            start_char=0,
            end_char=4,
            token_count=1,
            segmentation_version="v",
            engine="offline",
            timestamp=NOW,
        )


def test_quote_offsets_must_match_text():
    with pytest.raises(ValidationError):
        SourceQuote(text="abc", start=10, end=12)


def _story(**kw):
    base = dict(
        run_id="r",
        segment_id="seg-0001",
        segment_order=1,
        type="User Story",
        item_id="seg-0001-st01",
        story_id="seg-0001-st01",
        title="t",
        source_doc="d",
        source_doc_segment="0-3",
        source_quotes=[SourceQuote(text="abc", start=0, end=3)],
        generation_agent_version="v",
        engine="offline",
    )
    base.update(kw)
    return GeneratedItem(**base)


def test_a_story_needs_a_quote_and_consistent_ids():
    assert _story().item_id == "seg-0001-st01"
    with pytest.raises(ValidationError, match="quote"):
        _story(source_quotes=[])
    with pytest.raises(ValidationError, match="item_id"):
        _story(story_id="seg-0001-st02")


def test_records_reject_unknown_fields_and_tags():
    with pytest.raises(ValidationError):
        _story(surprise=True)
    with pytest.raises(ValidationError):
        TaggingRecord(
            run_id="r",
            segment_id="s",
            story_id="x",
            decision_tag="maybe",
            tagging_agent_version="v",
            engine="offline",
            timestamp=NOW,
        )
