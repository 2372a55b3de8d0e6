"""Fan-in is derived from the parts present, and the printed tree holds every item exactly once."""

from __future__ import annotations

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
from shared.pipeline.fanin import check_completion, expected_story_ids
from shared.pipeline.runs import load_run
from shared.review.tree import build_tree, render_tree
from shared.services import Services
from shared.settings import Settings
from shared.storage import create_model
from shared.storage.local import LocalFolderStore

NOW = datetime(2026, 1, 1, tzinfo=UTC)
RUN = "run-0123456789abcdef0123"


def item(kind: str, iid: str, **kw) -> GeneratedItem:
    ids = {"Epic": "epic_id", "Feature": "feature_id", "User Story": "story_id"}
    base = dict(
        run_id=RUN,
        segment_id=iid[:8],
        segment_order=1,
        type=kind,
        item_id=iid,
        title=f"T {iid}",
        source_doc="m.txt",
        source_doc_segment="0-10",
        generation_agent_version="v",
        engine="offline",
    )
    base[ids[kind]] = iid
    if kind == "User Story":
        base["source_quotes"] = [SourceQuote(text="abc", start=0, end=3)]
    base.update(kw)
    return GeneratedItem(**base)


def tag(story_id: str, t: str = "new") -> TaggingRecord:
    return TaggingRecord(
        run_id=RUN,
        segment_id=story_id[:8],
        story_id=story_id,
        decision_tag=t,
        tagging_agent_version="v",
        engine="offline",
        timestamp=NOW,
    )


def svc(tmp_path) -> tuple[Services, InProcessBus]:
    bus = InProcessBus()
    s = Services(
        settings=Settings(storage_backend="local"), store=LocalFolderStore(tmp_path), bus=bus
    )
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
        segment_count=2,
    )
    create_model(s.store, layout.run_json(RUN), status)
    return s, bus


def part(seg: str, stories: list[str]) -> GeneratedPart:
    return GeneratedPart(
        run_id=RUN,
        segment_id=seg,
        status="generated",
        timestamp=NOW,
        items=[item("User Story", sid) for sid in stories],
    )


def test_completion_needs_every_segment_part_and_every_story_tag(tmp_path):
    s, bus = svc(tmp_path)
    create_model(
        s.store, layout.generated_part(RUN, "seg-0001"), part("seg-0001", ["seg-0001-st01"])
    )
    assert expected_story_ids(s, load_run(s, RUN)) is None
    assert not check_completion(s, RUN)
    create_model(
        s.store, layout.generated_part(RUN, "seg-0002"), part("seg-0002", [])
    )  # no stories
    assert not check_completion(s, RUN)  # one story untagged
    create_model(
        s.store, layout.tag_part(RUN, "seg-0001-st01"), TagPart(record=tag("seg-0001-st01"))
    )
    assert check_completion(s, RUN)
    assert check_completion(s, RUN)  # seen twice ...
    assert [q for q, _ in bus.sent] == [FINALIZE_QUEUE]  # ... finalize sent once


def test_tree_holds_every_item_once_and_renders_tags_and_quotes():
    epic = item("Epic", "ep-1")
    feature = item("Feature", "seg-0001-ft01", epic_id="ep-1")
    under_feature = item("User Story", "seg-0001-st01", epic_id="ep-1", feature_id="seg-0001-ft01")
    under_existing = item("User Story", "seg-0001-st02", parent_work_item_id=1010)
    orphan = item("User Story", "seg-0002-st01")
    items = [epic, feature, under_feature, under_existing, orphan]
    tags = {
        "seg-0001-st01": tag("seg-0001-st01", "extend"),
        "seg-0001-st02": tag("seg-0001-st02", "conflict"),
    }
    tree = build_tree(items, tags)
    assert [e["item"]["item_id"] for e in tree["epics"]] == ["ep-1"]
    assert tree["epics"][0]["features"][0]["stories"][0]["item"]["item_id"] == "seg-0001-st01"
    assert tree["existing_parents"][0]["work_item_id"] == 1010
    assert [n["item"]["item_id"] for n in tree["unparented"]] == ["seg-0002-st01"]
    text = render_tree(tree)
    for i in items:
        assert text.count(f"({i.item_id})") == 1
    assert "[extend]" in text and "[conflict]" in text and "[untagged]" in text and "“abc”" in text
