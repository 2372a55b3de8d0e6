"""The review bundle: everything the review page shows for one run, in one JSON document.

``GET /api/runs/{run_id}/review`` (shared.api.runs.get_review) answers with::

    {
      "run_id": ..., "ready": bool,          # ready: the run completed (the backlog exists)
      "run": {...},                          # GET /api/runs/{run_id} (status + live progress)
      "tree": {epics, existing_parents, unparented} | null,   # shared/review/tree.build_tree
      "segments": [{segment_id, segment_order, start_char, end_char, text, theme,
                    dominant_intent, intent_labels, token_count}],
      "stories": {story_id: {
          "segment_id", "decision_tag",
          "quotes": [{text, start, end, speaker, timecode, segment_id, segment_start,
                      segment_end}],        # segment_*: into the segment that holds the quote
          "superseded": [same shape],        # statements a later one revised
          "open_questions": [{question, quote?: {..., segment_start, segment_end}}],
          "compare_with": work_item_id | null,   # the existing story the tag was decided against
                                                 # (negative: a pending story of another run)
          "also_in": [{run_id, story_id, title, source_name}],   # pending stories of other runs
                                                 # (reviewed, not yet written) it relates to
          "generated_acs": [{text, added}],      # added: not among the existing story's ACs
          "existing_acs": [{text, kept}],        # kept: also among the generated story's ACs
          "hygiene": [Flag]}},                   # flags inside this story's quotes
      Flag: {"type": "secret"|"instruction", "kinds": [rule kinds], "line", "start", "end",
             "text": the instruction-like span | null (a secret's value is never shown)}
      "existing": {"<work_item_id>": {work_item_id, work_item_type, title, description,
                    acceptance_criteria, state, tags, parent_id, url, found,
                    pending?: {run_id, story_id, source_name}}},   # pending: another run's
                                             # story, not yet written (a negative id)
      "hygiene": {"flags": [Flag], "outside": [Flag]},   # hygiene.json's flags; outside: in no
                                             # story's quotes (each story lists its own, below)
      "summary": summary.json | null, "coverage": summary.coverage | null,
      "write": the latest write, as GET /api/runs/{run_id}/write answers | null (not completed),
      # the saved review (shared/review/state.py), already applied to tree and stories:
      "review_state": {version, etag, saved_at, saved_by, decisions} | null (not completed),
      "edited": [item_id, …],               # epics, features and stories whose content changed
      "originals": {item_id: {title, description, acceptance_criteria}},   # as generated
      "open_question_stories": [{story_id, title, feature_id, quotes: [quote views]}]
    }

Each story of ``stories`` also has ``"original"``: its generated title, description and criteria
when the review changed it (else null), ``"split_from"``: the story it was split off (else null)
and ``"merged_from"``: the stories merged into it (their quotes and criteria are among its own).
A saved review that no longer fits the run (it cannot happen through the API) is not applied:
``review_state.problems`` then lists why.

Existing work items come from the project's ``ingestion/ado/{project}/ado_vectors.jsonl`` (written by
the ADO loader, one line per indexed item with seed §11.3 metadata plus title, description and ACs);
ids missing there are fetched from the vector index (``ado-{id}``). An item found in neither is
listed with what the tagging record knew (its title) and ``found: false``.

Nothing here renders HTML: the page inserts every string as text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

from shared import layout
from shared.indexing import pending
from shared.models import (
    Coverage,
    GeneratedItem,
    PendingRef,
    RunStatus,
    Segment,
    SourceQuote,
    TaggingRecord,
    UnquotedStatement,
)
from shared.review.edits import Applied, apply
from shared.review.state import ac_key, check, load_state
from shared.review.tree import build_tree
from shared.services import Services
from shared.storage import NotFound, read_json, read_jsonl

log = logging.getLogger(__name__)

COMPARED_TAGS = frozenset({"extend", "gap", "duplicate", "conflict"})
MAX_RELATED = 3  # related existing stories listed per generated story


def _segment_view(segment: Segment) -> dict[str, Any]:
    return {
        "segment_id": segment.segment_id,
        "segment_order": segment.segment_order,
        "start_char": segment.start_char,
        "end_char": segment.end_char,
        "text": segment.raw_text,
        "theme": segment.theme,
        "dominant_intent": segment.dominant_intent,
        "intent_labels": segment.intent_labels,
        "token_count": segment.token_count,
    }


def _quote_view(quote: SourceQuote, segments: list[Segment]) -> dict[str, Any]:
    """A quote with its speaker and timecode and where it sits: the segment that holds it (the
    story's own, or, for a story merged from several segments, another one)."""
    view: dict[str, Any] = {
        "text": quote.text,
        "start": quote.start,
        "end": quote.end,
        "speaker": quote.speaker,
        "timecode": quote.timecode,
        "segment_id": None,
        "segment_start": None,
        "segment_end": None,
    }
    for segment in segments:
        if segment.start_char <= quote.start and quote.end <= segment.end_char:
            view["segment_id"] = segment.segment_id
            view["segment_start"] = quote.start - segment.start_char
            view["segment_end"] = quote.end - segment.start_char
            break
    return view


def referenced_ids(item: GeneratedItem, record: TaggingRecord | None) -> list[int]:
    """Existing work items a generated item points at, most relevant first."""
    ids: list[int] = []
    if record is not None:
        ids.extend(record.related_story_ids[:MAX_RELATED])
    ids.extend(item.extends_work_item_ids)
    ids.extend(d.work_item_id for d in item.ac_delta_entries if d.work_item_id is not None)
    if item.parent_work_item_id is not None:
        ids.append(item.parent_work_item_id)
    return list(dict.fromkeys(ids))


def _existing_view(work_item_id: int, meta: dict[str, Any]) -> dict[str, Any]:
    criteria = meta.get("acceptance_criteria") or []
    if isinstance(criteria, str):
        criteria = [line for line in criteria.splitlines() if line.strip()]
    tags = meta.get("tags") or []
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(";") if t.strip()]
    return {
        "work_item_id": work_item_id,
        # as the project's process names it (Product Backlog Item) when the loader recorded it
        "work_item_type": str(meta.get("ado_work_item_type") or meta.get("work_item_type") or ""),
        "title": str(meta.get("title") or ""),
        "description": str(meta.get("description") or ""),
        "acceptance_criteria": [str(c) for c in criteria],
        "state": str(meta.get("state") or ""),
        "tags": [str(t) for t in tags],
        "parent_id": meta.get("parent_id"),
        "url": str(meta.get("url") or "") or None,
        "found": True,
    }


def existing_items(svc: Services, project: str, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """The existing work items ``ids`` as the loaders recorded them (see the module docstring)."""
    wanted = {int(i) for i in ids}
    found: dict[int, dict[str, Any]] = {}
    if not wanted:
        return found
    try:
        text = svc.store.get(layout.ado_vectors(project)).decode("utf-8")
    except NotFound:
        text = ""
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            wid = int(rec.get("work_item_id"))
        except (ValueError, TypeError):
            continue
        if wid in wanted:
            found[wid] = _existing_view(wid, rec.get("metadata") or {})
            if len(found) == len(wanted):
                break
    missing = sorted(wanted - found.keys())
    if missing:
        try:
            records = svc.index.fetch(project, [f"ado-{i}" for i in missing])
        except Exception as err:  # noqa: BLE001 - the index is optional for the page
            log.warning("review: existing items %s not fetched from the index: %s", missing, err)
            records = {}
        for rec in records.values():
            meta = rec.metadata or {}
            try:
                wid = int(meta["work_item_id"])
            except (KeyError, TypeError, ValueError):
                continue
            found[wid] = _existing_view(wid, meta)
    return found


def pending_items(
    svc: Services, project: str, refs: Iterable[PendingRef]
) -> dict[int, dict[str, Any]]:
    """Pending stories of other runs (negative ids) as the page shows existing items, with
    ``pending: {run_id, story_id, source_name}``; from their records in the index, else what the
    tagging record knew (``found: false``)."""
    wanted = {r.candidate_id: r for r in refs}
    if not wanted:
        return {}
    from shared.indexing.pending import vector_id

    ids = {vector_id(r.run_id, r.story_id): cid for cid, r in wanted.items()}
    try:
        records = svc.index.fetch(project, sorted(ids))
    except Exception as err:  # noqa: BLE001 - the index is optional for the page
        log.warning("review: pending stories not fetched from the index: %s", err)
        records = {}
    out: dict[int, dict[str, Any]] = {}
    for cid, ref in wanted.items():
        rec = records.get(vector_id(ref.run_id, ref.story_id))
        meta = dict(rec.metadata) if rec is not None else {"title": ref.title}
        view = _existing_view(cid, {**meta, "url": None})
        view["found"] = rec is not None
        view["pending"] = {
            "run_id": ref.run_id,
            "story_id": ref.story_id,
            "source_name": meta.get("source_name"),
        }
        out[cid] = view
    return out


def _compare(
    item: GeneratedItem, existing: dict[str, Any] | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    theirs = {ac_key(c) for c in (existing or {}).get("acceptance_criteria", [])}
    mine = {ac_key(c) for c in item.acceptance_criteria}
    generated = [{"text": c, "added": ac_key(c) not in theirs} for c in item.acceptance_criteria]
    kept = [
        {"text": c, "kept": ac_key(c) in mine}
        for c in (existing or {}).get("acceptance_criteria", [])
    ]
    return generated, kept


def _hygiene_flags(svc: Services, run_id: str) -> list[dict[str, Any]]:
    """The run's redacted secrets and instruction-like spans (hygiene.json), in transcript order;
    one flag per span (a span several rules matched lists their kinds)."""
    from shared.text.hygiene import read_report  # imported on first use: cold start

    report = read_report(svc.store, run_id)
    if report is None:
        return []
    flags: dict[tuple[str, int, int], dict[str, Any]] = {}
    spans: list[tuple[str, str, int, int, int, str | None]] = [
        ("secret", r.kind, r.line, r.start, r.end, None) for r in report.redactions
    ]
    spans += [("instruction", a.kind, a.line, a.start, a.end, a.text) for a in report.annotations]
    for kind_of, kind, line, start, end, text in spans:
        flag = flags.setdefault(
            (kind_of, start, end),
            {"type": kind_of, "kinds": [], "line": line, "start": start, "end": end, "text": text},
        )
        if kind not in flag["kinds"]:
            flag["kinds"].append(kind)
    return sorted(flags.values(), key=lambda f: (f["start"], f["end"]))


def _flags_in(flags: list[dict[str, Any]], item: GeneratedItem) -> list[dict[str, Any]]:
    """The flags overlapping one of the story's quotes (those it was drafted from)."""
    spans = [(q.start, q.end) for q in (*item.source_quotes, *item.superseded_quotes)]
    return [f for f in flags if any(f["start"] < end and start < f["end"] for start, end in spans)]


def _own_first(
    item: GeneratedItem, segments: list[Segment], by_segment: dict[str, Segment]
) -> list[Segment]:
    """Its own segment first, then the others (a merged story quotes several)."""
    own = by_segment.get(item.segment_id)
    return ([own] if own else []) + [s for s in segments if s is not own]


def _reviewed(
    svc: Services,
    run_id: str,
    items: list[GeneratedItem],
    records: list[TaggingRecord],
    bundle: dict[str, Any],
    unquoted: list[UnquotedStatement],
) -> tuple[list[GeneratedItem], list[TaggingRecord], Applied]:
    """The backlog with the saved review applied, and the bundle's review fields filled."""
    state, etag = load_state(svc, run_id)
    view = state.view(etag)
    bundle["review_state"] = {
        k: view[k] for k in ("version", "etag", "saved_at", "saved_by", "decisions")
    }
    problems = check(state, items, unquoted)
    if problems:
        log.warning("review: the saved review of %s is not applied: %s", run_id, problems)
        bundle["review_state"]["problems"] = problems
        return items, records, Applied()
    items, records, applied = apply(state, items, records, unquoted)
    bundle["edited"] = applied.edited_ids
    bundle["originals"] = applied.originals
    return items, records, applied


def nearest_story(sentence: dict[str, Any], stories: list[GeneratedItem]) -> str | None:
    """The story that quotes what was said nearest to ``sentence`` (in its segment first): the
    page offers it first when the reviewer adds the sentence to a story."""
    best: tuple[bool, int, str] | None = None
    for story in stories:
        for q in story.source_quotes:
            gap = max(q.start - sentence["end"], sentence["start"] - q.end, 0)
            key = (story.segment_id != sentence.get("segment_id"), gap, story.item_id)
            if best is None or key < best:
                best = key
    return best[2] if best else None


def draft_of(text: str, persona: str) -> dict[str, Any] | None:
    """The offline drafter's story of one sentence alone (title, description, criteria; tidied),
    for the reviewer who makes a story of a sentence no story quoted; None when its draft is
    none the generator would keep ("Provide a cheap" from "Cheap.")."""
    from shared.engine.offline.generation import readable
    from shared.engine.offline.phrasing import write_story
    from shared.pipeline.generate import tidy, tidy_all

    draft = write_story([text], default_persona=persona)
    title = tidy(draft.title)
    if not title or not readable(draft):
        return None
    return {
        "title": title,
        "description": tidy(draft.description),
        "acceptance_criteria": tidy_all(draft.acceptance_criteria),
    }


def build_bundle(
    svc: Services,
    run: RunStatus,
    run_view: dict[str, Any],
    latest_write: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    run_id = run.run_id
    ready = run.status in ("completed", "completed_with_errors")
    bundle: dict[str, Any] = {
        "run_id": run_id,
        "ready": ready,
        "run": run_view,
        "tree": None,
        "segments": [],
        "stories": {},
        "existing": {},
        "summary": None,
        "coverage": None,
        "hygiene": {"flags": [], "outside": []},
        "write": None,
        "review_state": None,
        "edited": [],
        "originals": {},
        "open_question_stories": [],
    }
    try:
        segments = read_jsonl(svc.store, layout.segments(run_id), Segment)
    except NotFound:
        segments = []
    bundle["segments"] = [_segment_view(s) for s in segments]
    if not ready:
        return bundle

    items = read_jsonl(svc.store, layout.generated_backlog(run_id), GeneratedItem)
    try:
        records = read_jsonl(svc.store, layout.tagging_analysis(run_id), TaggingRecord)
    except NotFound:
        records = []
    try:
        summary = read_json(svc.store, layout.run_summary(run_id))
    except NotFound:
        summary = None
    coverage = (summary or {}).get("coverage")
    unquoted = Coverage.model_validate(coverage).unquoted if coverage else []
    items, records, applied = _reviewed(svc, run_id, items, records, bundle, unquoted)
    # pending stories of other runs written since are their ADO items now
    records, unresolved = pending.resolve(svc, records)
    tags = {r.story_id: r for r in records}
    bundle["tree"] = build_tree(items, tags)

    wanted: list[int] = []
    for item in items:
        wanted.extend(referenced_ids(item, tags.get(item.item_id)))
    known = existing_items(svc, run.project, [i for i in wanted if i > 0])
    known.update(
        pending_items(svc, run.project, [unresolved[i] for i in wanted if i in unresolved])
    )
    for seen in records:  # what tagging saw, for items the loaders no longer list
        for score in seen.similarity_scores:
            if score.work_item_id in wanted and score.work_item_id not in known:
                known[score.work_item_id] = {
                    **_existing_view(score.work_item_id, {"title": score.title}),
                    "found": False,
                }
    for wid in wanted:
        known.setdefault(wid, {**_existing_view(wid, {}), "found": False})
    bundle["existing"] = {str(k): known[k] for k in sorted(known)}

    flags = _hygiene_flags(svc, run_id)
    concerned: set[tuple[int, int]] = set()
    by_segment = {s.segment_id: s for s in segments}
    for item in items:
        if item.type != "User Story":
            continue
        record = tags.get(item.item_id)
        ordered = _own_first(item, segments, by_segment)
        tag = record.decision_tag if record else item.assigned_tag
        compare_with = (
            record.related_story_ids[0]
            if record is not None and tag in COMPARED_TAGS and record.related_story_ids
            else None
        )
        generated, kept = _compare(item, known.get(compare_with) if compare_with else None)
        own_flags = _flags_in(flags, item)
        concerned.update((f["start"], f["end"]) for f in own_flags)
        bundle["stories"][item.item_id] = {
            "segment_id": item.segment_id,
            "decision_tag": tag,
            "quotes": [_quote_view(q, ordered) for q in item.source_quotes],
            "superseded": [_quote_view(q, ordered) for q in item.superseded_quotes],
            "open_questions": [
                {
                    "question": q.question,
                    "quote": _quote_view(q.quote, ordered) if q.quote else None,
                }
                for q in item.open_questions
            ],
            "compare_with": compare_with,
            "also_in": [
                {
                    "run_id": unresolved[i].run_id,
                    "story_id": unresolved[i].story_id,
                    "title": unresolved[i].title,
                    "source_name": known.get(i, {}).get("pending", {}).get("source_name"),
                }
                for i in (record.related_story_ids[:MAX_RELATED] if record else [])
                if i in unresolved
            ],
            "generated_acs": generated,
            "existing_acs": kept,
            "hygiene": own_flags,
            "original": applied.originals.get(item.item_id),
            "split_from": applied.split.get(item.item_id),
            "added_in_review": item.item_id in applied.added,
            "merged_from": applied.merged_from(item.item_id),
        }
    bundle["hygiene"] = {
        "flags": flags,
        "outside": [f for f in flags if (f["start"], f["end"]) not in concerned],
    }
    bundle["open_question_stories"] = [
        {
            **question.view(),
            "quotes": [
                _quote_view(q, _own_first(question.item, segments, by_segment))
                for q in question.item.source_quotes
            ],
        }
        for question in applied.open_questions
    ]

    if coverage:  # the sentences the review gave a story: which story quotes each now
        stories = [i for i in items if i.type == "User Story"]
        quoted = {(q.start, q.end): i.item_id for i in stories for q in i.source_quotes}
        persona = svc.settings.pipeline.generation.default_persona
        for sentence in coverage.get("unquoted", []):
            sentence["taken_by"] = quoted.get((sentence["start"], sentence["end"]))
            sentence["draft"] = draft_of(sentence["text"], persona)
            sentence["nearest_story"] = nearest_story(sentence, stories)
    bundle["summary"] = summary
    bundle["coverage"] = coverage
    if latest_write is not None:
        try:
            bundle["write"] = latest_write()
        except Exception as err:  # noqa: BLE001 - optional: the page also asks GET /write
            log.warning("review: latest write results of %s not read: %s", run_id, err)
    return bundle
