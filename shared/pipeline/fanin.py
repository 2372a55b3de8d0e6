"""Durable-style fan-in recorded in blob artifacts.

A run is complete when every segment has a generation part and every story named in those parts
has a tag part. Nothing counts: completion is derived from what is present against what is expected,
so redelivered messages, crashed workers and poisoned units cannot make the count wrong. Any worker
that sees completion sends the finalize message (finalize is idempotent).

Who checks what (a handshake, so that 36 taggings finishing together do not each read every
generation part): the expected story ids are computed once, by a generation unit that finds every
segment's part present, then written down (``parts/expected_stories.json``), and only then does the
run move to ``tagging``; that unit lists the tag parts after the move. A tagging unit writes its part
before it reads the run: if it still finds ``generating``, the move comes later, so the unit that
makes it will list this tag part and it may stop; if it finds ``tagging``, it checks the tags itself
against the expected ids already written down. (It lists the tag parts first: fewer parts than the
run's ``story_count`` cannot be complete, whatever they are, and saves reading the expected ids.)
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from pydantic import BaseModel

from shared import layout
from shared.bus import FINALIZE_QUEUE
from shared.models import TERMINAL_STATES, FinalizeMessage, GeneratedPart, RunStatus
from shared.pipeline.runs import load_run, send_once, update_run
from shared.services import Services
from shared.storage import NotFound, read_model

M = TypeVar("M", bound=BaseModel)


# expected_story_ids computations in progress in this process, by (store, run id): the
# generation units that finish together all find every part present, and one read of the parts
# serves them all (a complete list never changes; an incomplete one may be stale, see below)
_computing: dict[tuple[int, str], Future[list[str] | None]] = {}
_computing_lock = threading.Lock()


def expected_story_ids(svc: Services, run: RunStatus) -> list[str] | None:
    """All story ids of the run once every segment has its generation part, else None."""
    if run.phase != "generating":  # written down before the run left "generating"
        try:
            return list(json.loads(svc.store.get(layout.expected_stories(run.run_id))))
        except NotFound:
            pass
    if run.segment_count is None:
        return None
    key = (id(svc.store), run.run_id)
    with _computing_lock:
        running = _computing.get(key)
        if running is None:
            mine: Future[list[str] | None] = Future()
            _computing[key] = mine
    if running is not None:
        try:
            found = running.result()
        except Exception:  # noqa: BLE001 - that caller's error is its own: look for ourselves
            found = None
        if found is not None:
            return found
        # None may predate this caller's own part: look again
        return _expected_from_parts(svc, run)
    try:
        result = _expected_from_parts(svc, run)
    except BaseException as err:
        mine.set_exception(err)
        raise
    else:
        mine.set_result(result)
        return result
    finally:
        with _computing_lock:
            _computing.pop(key, None)


def _expected_from_parts(svc: Services, run: RunStatus) -> list[str] | None:
    assert run.segment_count is not None
    path = layout.expected_stories(run.run_id)
    parts = svc.store.list(layout.generated_parts_prefix(run.run_id))
    if len(parts) < run.segment_count:
        return None
    try:  # another unit may have written it down already
        return list(json.loads(svc.store.get(path)))
    except NotFound:
        pass
    story_ids: list[str] = []
    for part in read_parts(svc, parts, GeneratedPart):
        story_ids.extend(part.story_ids)
    # parts are immutable once written, so this list never changes: remember it
    svc.store.create(path, json.dumps(story_ids).encode())
    return story_ids


def read_parts(svc: Services, paths: list[str], model: type[M], workers: int = 8) -> list[M]:
    """The parts at ``paths``, in that order, read a few at a time (each read is one storage round
    trip; finalize reads every part of the run)."""
    if len(paths) < 2:
        return [read_model(svc.store, p, model) for p in paths]
    with ThreadPoolExecutor(max_workers=min(workers, len(paths))) as pool:
        return list(pool.map(lambda p: read_model(svc.store, p, model), paths))


def tagged_story_ids(svc: Services, run_id: str) -> set[str]:
    return {layout.unit_of(p) for p in svc.store.list(layout.tag_parts_prefix(run_id))}


def check_completion(
    svc: Services, run_id: str, *, after_tag: bool = False, run: RunStatus | None = None
) -> bool:
    """Send finalize when the run is complete; True when it is (and finalize was sent, now or
    before). ``after_tag``: the caller is a tagging unit that has just written its part (see the
    module docstring: while the run is still ``generating`` it leaves the check to generation).
    ``run``: the status a generation unit read when it started (not after its part was written,
    so never for ``after_tag``) saves reading it here: a status behind the stored one only makes
    the check look at the parts (the move to ``tagging`` reads the run again; a finalize sent for
    a run that has ended is ignored)."""
    if run is None or after_tag:
        run = load_run(svc, run_id)
    if run.status in TERMINAL_STATES:
        return False
    if after_tag and run.phase == "generating":
        return False
    tagged: set[str] | None = None
    if run.phase != "generating" and run.story_count is not None:
        tagged = tagged_story_ids(svc, run_id)
        if len(tagged) < run.story_count:  # story ids are distinct: some are untagged
            return False
    expected = expected_story_ids(svc, run)
    if expected is None:
        return False

    def to_tagging(r: RunStatus) -> RunStatus | None:
        if r.phase != "generating":
            return None
        r.phase, r.story_count = "tagging", len(expected)
        return r

    if run.phase == "generating":  # update_run reads again: only the first unit here moves it
        update_run(svc, run_id, to_tagging)
    if tagged is None:  # listed after the move (the handshake in the module docstring)
        tagged = tagged_story_ids(svc, run_id)
    if not set(expected) <= tagged:
        return False
    send_once(svc, run_id, "finalize", [(FINALIZE_QUEUE, FinalizeMessage(run_id=run_id))])
    return True
