"""Durable-style fan-in recorded in blob artifacts.

A run is complete when every segment has a generation part and every story named in those parts
has a tag part. Nothing counts: completion is derived from what is present against what is expected,
so redelivered messages, crashed workers and poisoned units cannot make the count wrong. Any worker
that sees completion sends the finalize message (finalize is idempotent).
"""

from __future__ import annotations

import json

from shared import layout
from shared.bus import FINALIZE_QUEUE
from shared.models import TERMINAL_STATES, FinalizeMessage, GeneratedPart, RunStatus
from shared.pipeline.runs import load_run, send_once, update_run
from shared.services import Services
from shared.storage import NotFound, read_model


def expected_story_ids(svc: Services, run: RunStatus) -> list[str] | None:
    """All story ids of the run once every segment has its generation part, else None."""
    path = layout.expected_stories(run.run_id)
    try:
        return list(json.loads(svc.store.get(path)))
    except NotFound:
        pass
    if run.segment_count is None:
        return None
    parts = svc.store.list(layout.generated_parts_prefix(run.run_id))
    if len(parts) < run.segment_count:
        return None
    story_ids: list[str] = []
    for p in parts:
        story_ids.extend(read_model(svc.store, p, GeneratedPart).story_ids)
    # parts are immutable once written, so this list never changes: remember it
    svc.store.create(path, json.dumps(story_ids).encode())
    return story_ids


def tagged_story_ids(svc: Services, run_id: str) -> set[str]:
    return {layout.unit_of(p) for p in svc.store.list(layout.tag_parts_prefix(run_id))}


def is_complete(svc: Services, run: RunStatus) -> bool:
    expected = expected_story_ids(svc, run)
    return expected is not None and set(expected) <= tagged_story_ids(svc, run.run_id)


def check_completion(svc: Services, run_id: str) -> bool:
    run = load_run(svc, run_id)
    if run.status in TERMINAL_STATES:
        return False
    expected = expected_story_ids(svc, run)
    if expected is None:
        return False

    def to_tagging(r: RunStatus) -> RunStatus | None:
        if r.phase != "generating":
            return None
        r.phase, r.story_count = "tagging", len(expected)
        return r

    update_run(svc, run_id, to_tagging)
    if not set(expected) <= tagged_story_ids(svc, run_id):
        return False
    send_once(svc, run_id, "finalize", [(FINALIZE_QUEUE, FinalizeMessage(run_id=run_id))])
    return True
