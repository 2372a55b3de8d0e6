"""Story quality (seed §9.2): model-free checks for every generated story, and the LLM judge.

The model-free checks (after AQUSA: role, means, benefit, title, persona, criteria that add to the
title, clean text, atomic, no conjunctions, minimal, unique, testable criteria, quotes found) are
``shared.eval.checks``'s; ``judge_run`` runs them on every story of a run.

The LLM judge (``LLMJudge``) asks a chat model (the ``shared.llm.ChatModel`` port; in
``eval judge`` the configured OpenAI / Azure OpenAI / OpenAI-compatible endpoint through
``shared.llm.openai_chat``, model ``SYNTH_PIPELINE__JUDGE__MODEL``) with the versioned prompt
``shared/prompts/judge.txt`` and the strict ``JudgeAnswer`` schema for INVEST ratings
(→ ``invest_score``), AC completeness (coverage, negative cases, measurability →
``ac_completeness``), traceability to the source segment (→ ``traceability_score``) and, for
stories tagged ``gap``, whether the gap is a real enhancement and not a contradiction
(``gap_correctness``), each with a short rationale. Ratings are 1-5, scores map them to 0..1. An
unusable answer (malformed JSON, schema violation, a rating outside 1-5) is asked again once;
a second one, or a failed call, is recorded as that story's judge failure, never a crash.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from shared.agents import AgentFailed
from shared.errors import RejectedAnswer
from shared.eval.checks import CHECKS, check_story
from shared.ids import segment_of_story
from shared.models import GeneratedItem, Segment, TaggingRecord, Usage

NO_CHAT_MODEL = (
    "no chat model is configured, so only the model-free checks ran; for the LLM judge set "
    "OPENAI_API_KEY (with OPENAI_BASE_URL for an OpenAI-compatible server) or "
    "AZURE_OPENAI_ENDPOINT (with AZURE_OPENAI_API_KEY or a managed identity) and run "
    "'eval judge' again"
)


# ------------------------------------------------------------------------------------------------
# the LLM judge


class JudgeAnswer(BaseModel):
    """The judge's response schema, sent as a strict JSON schema (every field required; ratings
    are checked to be 1-5 after parsing, as the strict subset has no ranges)."""

    model_config = ConfigDict(extra="forbid")

    independent: int
    negotiable: int
    valuable: int
    estimable: int
    small: int
    testable: int
    invest_rationale: str
    ac_coverage: int
    ac_negative_cases: int
    ac_measurability: int
    ac_rationale: str
    traceability: int
    traceability_rationale: str
    gap_is_real_enhancement: bool | None
    gap_rationale: str | None


INVEST = ("independent", "negotiable", "valuable", "estimable", "small", "testable")
AC_PARTS = ("ac_coverage", "ac_negative_cases", "ac_measurability")
RATINGS = (*INVEST, *AC_PARTS, "traceability")
LLM_SCORES = ("invest_score", "ac_completeness", "traceability_score")
RATIONALE_CHARS = 600
MAX_OUTPUT_TOKENS = 1000


class JudgeFailed(AgentFailed):
    """The judge gave no usable answer for a story (after its retry), or the call failed."""


def _scale(value: float) -> float:
    return round((value - 1) / 4, 4)


def _usage_dict(usage: Any) -> dict[str, Any]:
    return usage.model_dump() if hasattr(usage, "model_dump") else dict(usage or {})


class LLMJudge:
    """INVEST, AC completeness, traceability and gap correctness from a chat model.

    The prompt is the versioned file ``shared/prompts/judge.txt``; the answer is the strict
    ``JudgeAnswer`` schema (structured outputs), rejected when a rating is outside 1-5. The retry
    rule is the agents' (``shared.engine.llm.base.ask``): one more call at a lower temperature
    with the rejected answer and the reason; then ``JudgeFailed``.
    """

    def __init__(
        self, chat: Any, temperature: float = 0.0, max_tokens: int = MAX_OUTPUT_TOKENS
    ) -> None:
        from shared import prompts

        self.chat = chat  # shared.llm.ChatModel
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.template = prompts.load("judge")
        self.version = self.template.version
        self.model: str = getattr(chat, "model", "")

    def messages(
        self,
        story: GeneratedItem,
        segment_text: str,
        record: TaggingRecord | None,
        related: Sequence[str] = (),
    ) -> list[dict[str, str]]:
        from shared.engine.llm.prompting import data_block
        from shared.engine.llm.tagging import story_block

        tag = record.decision_tag if record else "(not tagged)"
        return self.template.messages(
            segment=data_block("segment", segment_text) if segment_text else "(not available)",
            story=story_block(story),
            tag=tag,
            related=data_block("backlog", "\n\n".join(related)) if related else "(none)",
        )

    def judge(
        self,
        story: GeneratedItem,
        segment_text: str,
        record: TaggingRecord | None = None,
        related: Sequence[str] = (),
    ) -> dict[str, Any]:
        """The scores of one story; raises ``JudgeFailed`` when no usable answer came."""
        from shared.engine.llm.base import ask

        def check(answer: JudgeAnswer) -> JudgeAnswer:
            bad = {k: getattr(answer, k) for k in RATINGS if not 1 <= getattr(answer, k) <= 5}
            if bad:
                raise RejectedAnswer(f"ratings must be integers from 1 to 5, got {bad}")
            return answer

        outcome = ask(
            self.chat,
            self.messages(story, segment_text, record, related),
            JudgeAnswer,
            check,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            failure=JudgeFailed,
            what=f"judging {story.item_id}",
        )
        return self._result(outcome.value, record, outcome.model, outcome.attempts, outcome.usage)

    def failure(self, err: Exception) -> dict[str, Any]:
        """The ``llm`` entry of a story the judge could not score (never a crash)."""
        failed = err if isinstance(err, AgentFailed) else None
        return {
            "status": "failed",
            "prompt_version": self.version,
            "model": self.model,
            "attempts": failed.attempts if failed else 1,
            "error_type": type(err).__name__,
            "error": str(err)[:1000],
            "raw_output": failed.raw_output[:2000] if failed else "",
            "usage": _usage_dict(failed.usage if failed else None),
        }

    def _result(
        self,
        a: JudgeAnswer,
        record: TaggingRecord | None,
        model: str,
        attempts: int,
        usage: Any,
    ) -> dict[str, Any]:
        is_gap = record is not None and record.decision_tag == "gap"

        def short(text: str | None) -> str | None:
            return " ".join(text.split())[:RATIONALE_CHARS] if text else None

        return {
            "status": "ok",
            "prompt_version": self.version,
            "model": model,
            "attempts": attempts,
            "invest": {k: getattr(a, k) for k in INVEST},
            "invest_score": _scale(sum(getattr(a, k) for k in INVEST) / len(INVEST)),
            "invest_rationale": short(a.invest_rationale),
            "ac": {k.removeprefix("ac_"): getattr(a, k) for k in AC_PARTS},
            "ac_completeness": _scale(sum(getattr(a, k) for k in AC_PARTS) / len(AC_PARTS)),
            "ac_rationale": short(a.ac_rationale),
            "traceability": a.traceability,
            "traceability_score": _scale(a.traceability),
            "traceability_rationale": short(a.traceability_rationale),
            "gap_correctness": a.gap_is_real_enhancement if is_gap else None,
            "gap_rationale": short(a.gap_rationale) if is_gap else None,
            "usage": _usage_dict(usage),
        }


def judge_chat_model(settings: Any) -> Any | None:
    """The judge's chat model on the configured endpoint (OpenAI, an OpenAI-compatible server or
    Azure OpenAI, through the ``shared.llm`` adapter), or None when none is configured."""
    if not (settings.openai_api_key or settings.azure_openai_endpoint):
        return None
    from shared.llm.client import build_openai_client
    from shared.llm.config import judge_model
    from shared.llm.openai_chat import OpenAIChatModel

    return OpenAIChatModel(build_openai_client(settings), judge_model(settings))


# ------------------------------------------------------------------------------------------------
# a whole run


def judge_run(
    items: list[GeneratedItem],
    records: list[TaggingRecord],
    segments: list[Segment],
    transcript: str | None,
    judge: LLMJudge | None = None,
    related_text: Callable[[TaggingRecord], list[str]] | None = None,
    *,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One row per story (judge_quality.jsonl) and the summary.

    With a ``judge``, every story is also scored by the model (``workers`` calls at a time); a
    story the judge cannot score gets ``llm.status: failed`` with the reason, and the others go on.
    """
    stories = [i for i in items if i.type == "User Story"]
    by_segment = {s.segment_id: s for s in segments}
    tags = {r.story_id: r for r in records}

    def llm_of(story: GeneratedItem) -> dict[str, Any] | None:
        if judge is None:
            return None
        record = tags.get(story.item_id)
        segment = by_segment.get(story.segment_id)
        try:
            related = related_text(record) if related_text and record else []
            return judge.judge(story, segment.raw_text if segment else "", record, related)
        except Exception as err:  # noqa: BLE001 - one story's failure is recorded, not raised
            return judge.failure(err)

    results: list[dict[str, Any] | None] = [None] * len(stories)
    if judge is not None:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(stories)))) as pool:
            for done, result in enumerate(pool.map(llm_of, stories), start=1):
                results[done - 1] = result
                if progress:
                    progress(done, len(stories))

    rows = []
    for story, llm in zip(stories, results, strict=True):
        segment = by_segment.get(story.segment_id)
        merged = [
            by_segment[segment_of_story(m)]
            for m in story.merged_story_ids
            if segment_of_story(m) in by_segment
        ]
        checks = check_story(story, transcript, segment, stories, merged)
        record = tags.get(story.item_id)
        rows.append(
            {
                "run_id": story.run_id,
                "story_id": story.item_id,
                "segment_id": story.segment_id,
                "title": story.title,
                "assigned_tag": record.decision_tag if record else story.assigned_tag,
                "checks": {c.name: c.as_dict() for c in checks},
                "passed": sum(1 for c in checks if c.passed),
                "aqusa_score": round(sum(1 for c in checks if c.passed) / len(checks), 4),
                "judge_status": llm["status"] if llm else "not_run",
                "llm": llm,
            }
        )
    return rows, summarize(rows)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    passed: Counter[str] = Counter()
    for row in rows:
        for name, check in row["checks"].items():
            passed[name] += bool(check["passed"])
    judged = [r["llm"] for r in rows if r["llm"] and r["llm"].get("status", "ok") == "ok"]
    failed = [r["llm"] for r in rows if r["llm"] and r["llm"].get("status") == "failed"]

    def mean_of(key: str) -> float | None:
        values = [j[key] for j in judged if j.get(key) is not None]
        return round(sum(values) / len(values), 4) if values else None

    gaps = [j["gap_correctness"] for j in judged if j.get("gap_correctness") is not None]
    usage = Usage()
    for entry in judged + failed:
        usage = usage + Usage.model_validate(entry.get("usage") or {})
    return {
        "stories": n,
        "pass_rate": {name: round(passed[name] / n, 4) if n else None for name in CHECKS},
        "all_checks_passed": sum(1 for r in rows if r["passed"] == len(r["checks"])),
        "mean_aqusa_score": round(sum(r["aqusa_score"] for r in rows) / n, 4) if n else None,
        "llm_judged": len(judged),
        "llm_failed": len(failed),
        "invest_score": mean_of("invest_score"),
        "ac_completeness": mean_of("ac_completeness"),
        "traceability_score": mean_of("traceability_score"),
        "gap_correctness": round(sum(gaps) / len(gaps), 4) if gaps else None,
        "gap_stories_judged": len(gaps),
        "llm_usage": usage.model_dump(),
    }
