"""The automatic answers: valid, plausible output derived from the prompt, by the response
schema's name (segmentation, generation, tagging, the judge; any other schema: its minimal
instance), the hashed bag-of-words embeddings and the approximate token counts of the usage.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from devhost.standins.openai_standin.recorded import Recorded
from shared.engine.llm.prompting import (
    ADO_ITEM_RE,
    CANDIDATE_RE,
    DATA_BLOCK_RE,
    THRESHOLD_RE,
    UNIT_LINE_RE,
)
from shared.text.textio import sentence_spans, words

if TYPE_CHECKING:
    from devhost.standins.openai_standin.server import OpenAIStandIn


def auto_answer(standin: OpenAIStandIn, rec: Recorded) -> dict[str, Any]:
    name = rec.schema_name
    if name == "SegmentationAnswer":
        return _auto_segmentation(standin, rec.user_prompt)
    if name == "GenerationAnswer":
        return _auto_generation(standin, rec.user_prompt)
    if name == "TaggingAnswer":
        return _auto_tagging(rec.user_prompt)
    if name == "JudgeAnswer":
        return _auto_judge(rec.user_prompt)
    schema = ((rec.body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    return minimal_instance(schema or {"type": "object"}, schema or {})


def _auto_segmentation(standin: OpenAIStandIn, prompt: str) -> dict[str, Any]:
    block = _first_block(prompt, "transcript")
    lines = {int(m.group(1)): m.end() for m in UNIT_LINE_RE.finditer(block)}
    indices = sorted(lines)
    if not indices:
        return {"segments": []}
    if standin.segments_per_call:
        step = max(1, -(-len(indices) // standin.segments_per_call))
    else:
        step = max(1, standin.units_per_segment)
    segments = []
    texts = block.splitlines()
    for n, k in enumerate(range(0, len(indices), step)):
        chunk = " ".join(texts[k : k + step])
        top = _top_words(chunk, 4) or ["discussion"]
        segments.append(
            {
                "start_unit": indices[k],
                "intent_labels": top,
                "dominant_intent": f"requirements: {top[0]}",
                "theme": f"Theme {n // 3 + 1}",
            }
        )
    return {"segments": segments}


def _auto_generation(standin: OpenAIStandIn, prompt: str) -> dict[str, Any]:
    segment = _first_block(prompt, "transcript")
    theme = _line_value(prompt, "Theme") or "Meeting requirements"
    sentences = [s.text(segment) for s in sentence_spans(segment)]
    cue = re.compile(r"\b(must|should|need|needs|want|will|shall|require|has to)\b", re.I)
    ranked = sorted(
        range(len(sentences)),
        key=lambda i: (not cue.search(sentences[i]), -len(sentences[i])),
    )
    chosen = sorted(ranked[: standin.stories_per_segment])
    user_stories = [
        int(m.group(1))
        for m in ADO_ITEM_RE.finditer(_first_block(prompt, "backlog"))
        if m.group(2).strip() == "User Story"
    ]
    stories = []
    for n, i in enumerate(chosen):
        quote = sentences[i]
        gist = " ".join(quote.split()[:8]).rstrip(".,;:!?")
        stories.append(
            {
                "title": gist[:1].upper() + gist[1:],
                "description": f"As a user, I want {gist[:1].lower() + gist[1:]}, "
                "so that the product meets what the meeting asked for.",
                "acceptance_criteria": [f"The delivered product satisfies: {quote}"],
                "feature_key": "f1",
                "source_quotes": [quote],
                "superseded_quotes": [],
                "open_questions": [],
                "constraint_violation": False,
                "constraint_notes": [],
                "ac_delta": [],
                "extends_work_item_ids": user_stories[:1] if n == 0 else [],
            }
        )
    return {
        "epics": [{"key": "e1", "title": theme, "description": "", "existing_work_item_id": None}],
        "features": [
            {
                "key": "f1",
                "title": f"{theme}: {_line_value(prompt, 'Dominant intent') or 'requirements'}",
                "description": "",
                "epic_key": "e1",
                "existing_work_item_id": None,
            }
        ]
        if stories
        else [],
        "stories": stories,
        "open_questions": [],
    }


def _auto_tagging(prompt: str) -> dict[str, Any]:
    thresholds = {k: float(v) for k, v in THRESHOLD_RE.findall(prompt)}
    candidates = [(int(i), float(s)) for i, s in CANDIDATE_RE.findall(prompt)]
    best = max((s for _, s in candidates), default=0.0)
    tag = "new"
    for name, key in (
        ("duplicate", "duplicateAtLeast"),
        ("extend", "extendSimilarity"),
        ("gap", "gapAtLeast"),
    ):
        if best >= thresholds.get(key, 2.0):
            tag = name
            break
    related = [] if tag == "new" else [i for i, s in candidates if s >= best - 1e-9][:1]
    return {
        "decision_tag": tag,
        "confidence": 0.8,
        "runner_up_tag": None,
        "runner_up_confidence": None,
        "related_story_ids": related,
        "reasoning_excerpt": f"Best similarity {best:.2f} against the thresholds.",
    }


def _auto_judge(prompt: str) -> dict[str, Any]:
    """Ratings a reader could defend from the prompt alone: traceability from the share of the
    story's content words found in the segment, AC ratings from the criteria's wording."""
    segment = set(words(_first_block(prompt, "segment")))
    story = _first_block(prompt, "story")
    content = [w for w in words(story) if len(w) > 3 and w not in _STOP | _STORY_FORM]
    found = sum(1 for w in content if w in segment) / len(content) if content else 0.0
    acs = [line[2:] for line in story.splitlines() if line.startswith("- ")]
    negative = any(
        re.search(r"\b(not|never|no|error|fails?|invalid|reject\w*)\b", a, re.I) for a in acs
    )
    measurable = sum(1 for a in acs if re.search(r"\d", a))
    tag = re.search(r"^## Tag assigned by the pipeline\n(\S+)", prompt, re.MULTILINE)
    is_gap = bool(tag and tag.group(1) == "gap")
    return {
        "independent": 4,
        "negotiable": 4,
        "valuable": 4 if "so that" in story.lower() else 2,
        "estimable": 3,
        "small": 4 if len(acs) <= 5 else 2,
        "testable": 4 if acs else 1,
        "invest_rationale": "Estimable is the weakest: the effort depends on details "
        "the segment leaves open.",
        "ac_coverage": 4 if acs else 1,
        "ac_negative_cases": 4 if negative else 1,
        "ac_measurability": 1 + round(4 * measurable / len(acs)) if acs else 1,
        "ac_rationale": "The criteria state the expected result"
        + ("" if negative else " but no error or negative case")
        + ".",
        "traceability": 1 + round(4 * found),
        "traceability_rationale": f"{found:.0%} of the story's content words occur in the segment.",
        "gap_is_real_enhancement": True if is_gap else None,
        "gap_rationale": "It adds what the related story leaves open." if is_gap else None,
    }


def _approx_tokens(text: str) -> int:
    """About 4 characters a token: cheap, and all the stand-in needs for usage figures."""
    return max(1, len(text) // 4) if text else 0


def _first_block(prompt: str, kind: str) -> str:
    for m in DATA_BLOCK_RE.finditer(prompt):
        if m.group("kind") == kind:
            return m.group("text")
    return ""


def _line_value(prompt: str, label: str) -> str:
    m = re.search(rf"^{re.escape(label)}: (.*)$", prompt, re.MULTILINE)
    return m.group(1).strip() if m else ""


_STOP = set(
    "the a an and or but to of in on for with is are was were be been it this that we you i they "
    "he she so yeah okay ok um uh just like have has do does not no yes can could would should "
    "will at as by from about what which there their our your my me us if then than also all".split()
)

# the labels and the template of a story block ("Title:", "As a user, I want ...")
_STORY_FORM = {"title", "description", "acceptance", "criteria", "user", "want", "that"}


def _top_words(text: str, n: int) -> list[str]:
    counts: dict[str, int] = {}
    for w in words(re.sub(r"\[\d+\]", " ", text)):
        if len(w) > 2 and w not in _STOP and not w.isdigit():
            counts[w] = counts.get(w, 0) + 1
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def hashed_embedding(text: str, dim: int) -> list[float]:
    """Bag of words hashed into ``dim`` signed buckets, L2-normalized (a bias bucket keeps
    word-less texts from being zero vectors)."""
    vector = [0.0] * dim
    vector[0] = 0.05
    for w in words(text):
        h = int.from_bytes(hashlib.md5(w.encode()).digest()[:8], "little")
        vector[h % dim] += 1.0 if (h >> 40) & 1 else -1.0
    norm = sum(v * v for v in vector) ** 0.5
    return [v / norm for v in vector]


def minimal_instance(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """The smallest value a JSON schema (OpenAI strict subset) accepts."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return minimal_instance(root.get("$defs", {}).get(name, {}), root)
    if "anyOf" in schema:
        options = schema["anyOf"]
        nullable = [o for o in options if o.get("type") == "null"]
        return None if nullable else minimal_instance(options[0], root)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal_instance(props[k], root) for k in schema.get("required", props)}
    if kind == "array":
        return []
    if kind == "string":
        return ""
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return None
