"""A small hand-made backlog with several quotes per story, and a completed run holding it, for
the saved review's tests (shared/review/state.py): fast and deterministic, no model."""

from __future__ import annotations

import json

from shared import layout
from shared.models import Coverage, RunStatus, Segment, SourceQuote, UnquotedStatement
from shared.services import Services
from shared.storage import dump_jsonl, dump_model
from tests.support.backlog_items import NOW, Backlog

TRANSCRIPT = (
    "Ana: The remote must show the channel number on the display.\n"
    "Bo: It should also show the input source when it changes.\n"
    "Ana: Saying louder should raise the volume by one step.\n"
    "Cy: The remote beeps twice when the batteries are low.\n"
    "Bo: The display shows the channel number.\n"
    "Ana: Maybe a backlight for the keypad, we are not sure yet.\n"
    "Cy: The volume must never go above level forty.\n"
)
# the requirement sentence no story of ``review_backlog`` quotes (the run's coverage)
UNQUOTED_TEXT = "The volume must never go above level forty."


def quote(text: str) -> SourceQuote:
    """``text`` where it first occurs in TRANSCRIPT, with its speaker."""
    start = TRANSCRIPT.index(text)
    line_start = TRANSCRIPT.rfind("\n", 0, start) + 1
    speaker = TRANSCRIPT[line_start : TRANSCRIPT.index(":", line_start)]
    return SourceQuote(text=text, start=start, end=start + len(text), speaker=speaker)


def unquoted() -> list[UnquotedStatement]:
    """The run's coverage: the one requirement sentence no story quotes, with its speaker."""
    q = quote(UNQUOTED_TEXT)
    return [
        UnquotedStatement(
            text=q.text, start=q.start, end=q.end, segment_id="seg-0001", speaker=q.speaker
        )
    ]


def review_backlog(run_id: str = "run-" + "a" * 20) -> tuple[Backlog, dict[str, str]]:
    """Epic → two features (and a third under the existing epic #1002), with stories:
    ``show`` (new, three quotes), ``louder`` (extend of #1126: one criterion the generation found
    there already, one delta), ``mute`` (duplicate of #1106), ``beep`` (new, two quotes, one of
    them said like one of ``show``'s), ``light`` (new) and ``battery`` (new, under #1002)."""
    b = Backlog(run_id)
    ids = {"epic": b.epic("Remote display")}
    ids["f1"] = b.feature("Channel display", ids["epic"])
    ids["f2"] = b.feature("Feedback", ids["epic"])
    ids["f3"] = b.feature("Power", parent_work_item_id=1002)
    ids["show"] = b.story(
        "Show the channel number",
        ids["f1"],
        criteria=["The display shows the channel number.", "The input source is shown."],
    )
    ids["louder"] = b.story(
        "Louder by voice",
        ids["f1"],
        tag="extend",
        related=[1126],
        criteria=["Voice control can be switched off.", "Saying louder raises the volume."],
        deltas=["Saying louder raises the volume."],
    )
    ids["mute"] = b.story("Mute by voice", ids["f2"], tag="duplicate", related=[1106])
    ids["beep"] = b.story(
        "Beep on low battery",
        ids["f2"],
        criteria=["Beeps twice when the batteries are low", "the display shows the channel number"],
    )
    ids["light"] = b.story("Keypad backlight", ids["f2"])
    ids["battery"] = b.story("Battery icon", ids["f3"])
    quotes = {
        ids["show"]: [
            quote("The remote must show the channel number on the display."),
            quote("It should also show the input source when it changes."),
            quote("The display shows the channel number."),
        ],
        ids["louder"]: [quote("Saying louder should raise the volume by one step.")],
        ids["mute"]: [quote("Saying louder should raise the volume by one step.")],
        ids["beep"]: [
            quote("The remote beeps twice when the batteries are low."),
            quote("The display shows the channel number."),
        ],
        ids["light"]: [quote("Maybe a backlight for the keypad, we are not sure yet.")],
        ids["battery"]: [quote("The remote beeps twice when the batteries are low.")],
    }
    b.items = [
        i.model_copy(update={"source_quotes": quotes[i.item_id]}) if i.item_id in quotes else i
        for i in b.items
    ]
    return b, ids


def store_run(svc: Services, b: Backlog, *, status: str = "completed") -> str:
    """``b`` as a completed run of project ``rc`` in ``svc.store`` (run.json, transcript,
    one segment, backlog, tagging); returns its run id."""
    run_id = b.run_id
    run = RunStatus(
        run_id=run_id,
        project="rc",
        source_path="transcripts/rc/meeting.txt",
        source_name="meeting.txt",
        content_sha256="0" * 64,
        size_bytes=len(TRANSCRIPT),
        status=status,  # type: ignore[arg-type]
        phase="done" if status.startswith("completed") else "tagging",
        engine="offline",
        embedding_model="test",
        created_at=NOW,
        updated_at=NOW,
        completed_at=NOW if status.startswith("completed") else None,
        segment_count=1,
        story_count=sum(1 for i in b.items if i.type == "User Story"),
    )
    segment = Segment(
        run_id=run_id,
        segment_id="seg-0001",
        segment_order=1,
        raw_text=TRANSCRIPT,
        start_char=0,
        end_char=len(TRANSCRIPT),
        token_count=80,
        segmentation_version="test",
        engine="offline",
        timestamp=NOW,
    )
    store = svc.store
    store.put(layout.run_json(run_id), dump_model(run))
    store.put(layout.run_file(run_id, "transcript.txt"), TRANSCRIPT.encode())
    store.put(layout.run_file(run_id, "segments.jsonl"), dump_jsonl([segment]))
    store.put(layout.run_file(run_id, "generated_backlog.jsonl"), dump_jsonl(b.items))
    store.put(layout.run_file(run_id, "tagging_analysis.jsonl"), dump_jsonl(b.records))
    coverage = Coverage(
        requirement_sentences=7, quoted_sentences=6, share=round(6 / 7, 4), unquoted=unquoted()
    )
    store.put(
        layout.run_summary(run_id),
        json.dumps({"run_id": run_id, "coverage": coverage.model_dump(mode="json")}).encode(),
    )
    return run_id
