"""What a reviewer judges of a run, as a stable JSON document: the offline engine's snapshot tests
(tests/integration/test_samples_offline.py) compare it with tests/snapshots/.

``run_snapshot`` keeps the run's outcome and counts, the segments (ids, character ranges, the
range of statement numbers each holds and the numbers of those its stories quote, theme and
intents), the backlog as a tree (epics, their features, their stories with description,
acceptance criteria, quoted evidence, superseded quotes, open questions, merges, extensions,
constraint notes and warnings) and each story's tag with its targets (the existing work items or
pending stories it names), the runner-up tag and whether it waits for a reviewer.

Stable by construction: no run id (the run's own id and any other run's become ``<run_id>`` /
``<other_run>``), no epic id (a hash of the run id: epics are nested, not named by id), no
timestamp, duration, path, token count or float score (similarities and confidences are left out:
their last digits depend on the CPU's ONNX kernels). Statements are numbered from 1 in the order
``shared.text.textio.sentence_spans`` finds them in the normalized transcript; a quote names every
statement it overlaps.
"""

from __future__ import annotations

import json
import re
from typing import Any

from shared.text.textio import sentence_spans

RUN_ID = re.compile(r"run-[0-9a-f]{20}")


def statement_numbers(spans: list[tuple[int, int]], start: int, end: int) -> list[int]:
    """The 1-based numbers of the statements that the range [start, end) overlaps."""
    return [n for n, (s, e) in enumerate(spans, 1) if s < end and start < e]


def number_range(numbers: list[int]) -> str:
    """Consecutive numbers as "first-last" (a segment's statements), "" for none."""
    return f"{numbers[0]}-{numbers[-1]}" if numbers else ""


def _quote(spans: list[tuple[int, int]], quote: dict[str, Any]) -> dict[str, Any]:
    """A quote as the reviewer reads it: its statements, its words, who said it and when."""
    out: dict[str, Any] = {
        "statements": statement_numbers(spans, quote["start"], quote["end"]),
        "text": quote["text"],
    }
    if quote.get("speaker"):
        out["speaker"] = quote["speaker"]
    if quote.get("timecode"):
        out["timecode"] = quote["timecode"]
    return out


def _tag(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """A story's tag with its targets, as the review page shows it (no scores)."""
    if record is None:
        return None
    titles = {s["work_item_id"]: s["title"] for s in record["similarity_scores"]}
    return {
        "tag": record["decision_tag"],
        "targets": [
            {"work_item_id": wid, "title": titles.get(wid, "")}
            for wid in record["related_story_ids"]
        ],
        "pending_targets": [
            {"candidate_id": p["candidate_id"], "story_id": p["story_id"], "title": p["title"]}
            for p in record["pending_refs"]
        ],
        "runner_up": record["runner_up_tag"],
        "needs_review": record["needs_review"],
        "tagging_failed": record["tagging_failed"],
    }


def _story(
    spans: list[tuple[int, int]], item: dict[str, Any], record: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "id": item["item_id"],
        "title": item["title"],
        "description": item["description"],
        "acceptance_criteria": item["acceptance_criteria"],
        "quotes": [_quote(spans, q) for q in item["source_quotes"]],
        "superseded_quotes": [_quote(spans, q) for q in item["superseded_quotes"]],
        "open_questions": [
            {
                "question": q["question"],
                "quote": _quote(spans, q["quote"]) if q.get("quote") else None,
            }
            for q in item["open_questions"]
        ],
        "merged_story_ids": item["merged_story_ids"],
        "extends_work_item_ids": item["extends_work_item_ids"],
        "ac_delta": [
            {"work_item_id": d["work_item_id"], "criterion": d["criterion"]}
            for d in item["ac_delta_entries"]
        ],
        "constraint_violation": item["constraint_violation"],
        "constraint_notes": item["constraint_notes"],
        "warnings": item["warnings"],
        "assigned_tag": item["assigned_tag"],
        "tagging": _tag(record),
    }


def run_snapshot(
    transcript: str,
    run: dict[str, Any],
    segments: list[dict[str, Any]],
    items: list[dict[str, Any]],
    records: list[dict[str, Any]],
) -> dict[str, Any]:
    """The snapshot of one run from its artifacts (``model_dump(mode="json")`` of run.json,
    segments.jsonl, generated_backlog.jsonl and tagging_analysis.jsonl) and its transcript.txt."""
    spans = [(s.start, s.end) for s in sentence_spans(transcript)]
    by_story = {r["story_id"]: r for r in records}
    stories_of_segment: dict[str, list[int]] = {}
    for item in items:
        if item["type"] == "User Story":
            numbers = stories_of_segment.setdefault(item["segment_id"], [])
            for q in item["source_quotes"] + item["superseded_quotes"]:
                numbers.extend(statement_numbers(spans, q["start"], q["end"]))

    epics: list[dict[str, Any]] = []
    epic_of: dict[str, dict[str, Any]] = {}
    feature_of: dict[str, dict[str, Any]] = {}
    unparented: list[dict[str, Any]] = []
    for item in items:
        if item["type"] == "Epic":
            epic = {"title": item["title"], "description": item["description"], "features": []}
            epic_of[item["item_id"]] = epic
            epics.append(epic)
        elif item["type"] == "Feature":
            feature = {
                "id": item["item_id"],
                "title": item["title"],
                "description": item["description"],
                "merged_feature_ids": item["merged_feature_ids"],
                "stories": [],
            }
            feature_of[item["item_id"]] = feature
            parent = epic_of.get(item["epic_id"] or "")
            (parent["features"] if parent else unparented).append(feature)
        else:
            story = _story(spans, item, by_story.get(item["item_id"]))
            parent = feature_of.get(item["feature_id"] or "")
            (parent["stories"] if parent else unparented).append(story)

    snapshot: dict[str, Any] = {
        "source_name": run["source_name"],
        "status": run["status"],
        "engine": run["engine"],
        "segment_count": run["segment_count"],
        "story_count": run["story_count"],
        "error_count": run["error_count"],
        "warnings": [w["code"] for w in run.get("warnings") or []],
        "statement_count": len(spans),
        "segments": [
            {
                "id": s["segment_id"],
                "chars": f"{s['start_char']}-{s['end_char']}",
                "statements": number_range(
                    statement_numbers(spans, s["start_char"], s["end_char"])
                ),
                "quoted_statements": sorted(set(stories_of_segment.get(s["segment_id"], []))),
                "theme": s["theme"],
                "dominant_intent": s["dominant_intent"],
                "intent_labels": s["intent_labels"],
            }
            for s in segments
        ],
        "epics": epics,
        "tags": {
            tag: sum(1 for r in records if r["decision_tag"] == tag)
            for tag in sorted({r["decision_tag"] for r in records})
        },
    }
    if unparented:  # a feature without its epic or a story without its feature: shown, not lost
        snapshot["unparented"] = unparented
    return normalized(snapshot, run["run_id"])


def normalized(value: Any, run_id: str) -> Any:
    """``value`` with the run's id as ``<run_id>`` and any other run id as ``<other_run>`` in every
    string (quotes and titles hold none; reasons and warnings might)."""
    if isinstance(value, dict):
        return {k: normalized(v, run_id) for k, v in value.items()}
    if isinstance(value, list):
        return [normalized(v, run_id) for v in value]
    if isinstance(value, str):
        return RUN_ID.sub(lambda m: "<run_id>" if m.group() == run_id else "<other_run>", value)
    return value


def dumps(snapshot: dict[str, Any]) -> str:
    """The snapshot file's text: pretty JSON, sorted keys, indent 2, a final newline."""
    return json.dumps(snapshot, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
