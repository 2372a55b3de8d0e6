"""Retagging (seed §13.13): tag a completed run's stories again without regenerating them.

Each generated story goes through the pipeline's own tagging step (``shared.pipeline.tag.tag_story``:
retrieval against the index as it is now, the engine and thresholds the settings give now). Then
``tagging_analysis.jsonl``, the ``assigned_tag`` of ``generated_backlog.jsonl`` and the tag counts
of ``summary.json`` are rewritten; ``summary.json`` records ``retagged_at`` and ``retag_count``.
What a retag replaced is kept under ``runs/{run_id}/parts/retag/{n}/``. The per-story parts under
``parts/tags/`` stay as the pipeline wrote them.

A story that finalize merged from several (``merged_story_ids``) is tagged the way finalize
tagged it: each of its stories as generated (``parts/generated/``), and the record that relates
it to the backlog most is its record (``consolidate.carry_tags``).

Idempotent: a story whose new record says the same as its old one (tag, related ids, scores,
reasoning; the timestamp aside) keeps its old record, so retagging twice against an unchanged index
changes no byte of the tagging and keeps no second snapshot. It holds the run's write lock, so it
never runs beside a write of the same run.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from shared import layout
from shared.ids import segment_of_story
from shared.indexing.pending import refresh_quietly
from shared.models import TAGS, GeneratedItem, GeneratedPart, Summary, TaggingRecord, Usage
from shared.pipeline.consolidate import carry_tags
from shared.pipeline.segment import index_warnings, with_index_warnings
from shared.pipeline.tag import tag_story
from shared.services import Services
from shared.storage import NotFound, dump_jsonl, dump_model, read_model
from shared.writer.runs import completed_run, run_lock

_VOLATILE = {"timestamp", "trace_id"}


def _same(a: TaggingRecord, b: TaggingRecord) -> bool:
    return a.model_dump(exclude=_VOLATILE) == b.model_dump(exclude=_VOLATILE)


def _distribution(records: list[TaggingRecord]) -> dict[str, int]:
    counted = Counter(r.decision_tag for r in records)
    return {t: counted.get(t, 0) for t in TAGS}


def _as_generated(
    svc: Services, run_id: str, stories: list[GeneratedItem]
) -> dict[str, GeneratedItem]:
    """The stories merged at finalize, as their generation units wrote them, by id."""
    wanted = {
        sid for s in stories if s.merged_story_ids for sid in [s.item_id, *s.merged_story_ids]
    }
    found: dict[str, GeneratedItem] = {}
    for segment_id in sorted({segment_of_story(sid) for sid in wanted}):
        try:
            part = read_model(svc.store, layout.generated_part(run_id, segment_id), GeneratedPart)
        except NotFound:
            continue  # tagged as it stands
        found.update((i.item_id, i) for i in part.items if i.item_id in wanted)
    return found


def retag_run(svc: Services, run_id: str) -> dict[str, Any]:
    """Retag a completed run; the response body of POST .../retag. Raises UnknownRun,
    RunNotWritable, WriteInProgress."""
    completed_run(svc, run_id)  # refuse an unknown or unfinished run before taking the lock
    with run_lock(svc, run_id):
        # read again under the lock: a retag that finished meanwhile is what this one replaces
        run, items, records = completed_run(svc, run_id)
        old = {r.story_id: r for r in records}
        stories = [i for i in items if i.type == "User Story"]
        usage = Usage()
        new_records: list[TaggingRecord] = []
        changes = []
        generated = _as_generated(svc, run_id, stories)
        for story in stories:
            earlier = [run.retry_of] if run.retry_of else []
            versions = [
                generated.get(sid, story) for sid in [story.item_id, *story.merged_story_ids]
            ]
            parts = [tag_story(svc, run_id, run.project, v, earlier_runs=earlier) for v in versions]
            usage = sum((part.usage for part in parts), usage)
            record = carry_tags([story], {p.record.story_id: p.record for p in parts})[
                story.item_id
            ]
            before = old.get(story.item_id)
            if before is not None and _same(before, record):
                record = before
            new_records.append(record)
            previous_tag = before.decision_tag if before is not None else story.assigned_tag
            if previous_tag != record.decision_tag:
                changes.append(
                    {
                        "story_id": story.item_id,
                        "title": story.title,
                        "from": previous_tag,
                        "to": record.decision_tag,
                        "related_story_ids": record.related_story_ids,
                    }
                )
        tags = {r.story_id: r.decision_tag for r in new_records}
        new_items = [
            i.model_copy(update={"assigned_tag": tags.get(i.item_id)})
            if i.type == "User Story"
            else i
            for i in items
        ]
        summary_path = layout.run_summary(run_id)
        try:
            summary: Summary | None = read_model(svc.store, summary_path, Summary)
        except NotFound:
            summary = None
        snapshot = None
        if new_records != records or new_items != items:
            n = len(svc.store.children(layout.retag_prefix(run_id))) + 1
            for name in (layout.TAGGING_ANALYSIS, layout.GENERATED_BACKLOG, layout.SUMMARY):
                try:
                    data = svc.store.get(layout.run_file(run_id, name))
                except NotFound:
                    continue
                svc.store.put(layout.retag_snapshot(run_id, n, name), data)
            snapshot = layout.retag_snapshot(run_id, n, "")
            svc.store.put(layout.tagging_analysis(run_id), dump_jsonl(new_records))
            svc.store.put(layout.generated_backlog(run_id), dump_jsonl(new_items))
        now = svc.clock()
        distribution = _distribution(new_records)
        # the index as it is now: a backlog loaded since the run lifts its empty_index warning
        warnings = with_index_warnings(run.warnings, index_warnings(svc, run.project))
        if warnings != run.warnings:
            svc.store.put(
                layout.run_json(run_id),
                dump_model(run.model_copy(update={"warnings": warnings, "updated_at": now})),
            )
        if summary is not None:
            summary = summary.model_copy(
                update={
                    "tag_distribution": distribution,
                    "tagging_failed": sum(1 for r in new_records if r.tagging_failed),
                    "retagged_at": now,
                    "retag_count": summary.retag_count + 1,
                    "warnings": warnings,
                }
            )
            svc.store.put(summary_path, dump_model(summary))
    # what the run has pending may follow its tags (a duplicate now is skipped when written)
    refresh_quietly(svc, run_id)
    return {
        "run_id": run_id,
        "retagged_at": now.isoformat(),
        "retag_count": summary.retag_count if summary is not None else None,
        "engine": svc.settings.resolved_engine(),
        "thresholds": svc.settings.pipeline.thresholds.applied(),
        "story_count": len(stories),
        "changed": len(changes),
        "tag_distribution": distribution,
        "previous_tag_distribution": _distribution(records),
        "changes": changes,
        "snapshot": snapshot,
        "warnings": [w.model_dump() for w in warnings],
        "usage": usage.model_dump(),
    }
