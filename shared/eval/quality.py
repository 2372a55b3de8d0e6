"""Story quality (seed §9.2): model-free checks for every generated story, and the LLM judge.

Model-free checks, after AQUSA (Lucassen et al., "Improving agile requirements: the Quality User
Story framework and tool", RE 2016), each pass or fail with a reason:

- ``role``, ``means``: the description reads "As a <role>, I want <means>[, so that <ends>]";
- ``benefit``: a "so that" clause only when the story's statements give one: no stock phrase
  ("so that the product meets what was agreed ..."), and most of its words are the meeting's
  (quotes); no clause at all passes (issue 13: a benefit only when stated);
- ``title``: a short verb phrase naming the capability: 3-10 words, a verb first (never a
  pronoun, conjunction, hedge or filler), no disfluency or transcript marker, no dangling last
  word;
- ``persona``: the role is the one the statements name for the need ("the manager",
  "receptionists") and never a silent "user" when they name one;
- ``acs_add``: every acceptance criterion says something the title does not (a content word of
  its own beyond the persona and the words every criterion uses), so none only restates it;
- ``clean_text``: no transcript marker ({disfmarker}) or filler (uh, um) in any generated field
  (title, description, criteria, open questions); quotes stay verbatim and are not checked;
- ``atomic``: one story, one "I want" (not two stories in one description);
- ``conjunctions``: the means joins no two actions with and / or / & / + ("add and delete users"
  should be two stories);
- ``minimal``: nothing beyond the story: no parentheses or brackets, no "e.g." / "etc.", no
  further sentence after it;
- ``unique``: no other story of the run has the same title or the same means;
- ``testable_acs``: at least one acceptance criterion, each a statement of at least three words,
  not a question, without a vague word ("fast", "user-friendly", "appropriate") unless it also
  gives a number;
- ``quote_found``: at least one source quote, each found verbatim in the transcript at its
  offsets and inside the story's own segment.

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

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from shared.agents import AgentFailed
from shared.errors import RejectedAnswer
from shared.ids import segment_of_story
from shared.models import GeneratedItem, Segment, SourceQuote, TaggingRecord, Usage

CHECKS = (
    "role",
    "means",
    "benefit",
    "title",
    "persona",
    "acs_add",
    "clean_text",
    "atomic",
    "conjunctions",
    "minimal",
    "unique",
    "testable_acs",
    "quote_found",
)
NO_CHAT_MODEL = (
    "no chat model is configured, so only the model-free checks ran; for the LLM judge set "
    "OPENAI_API_KEY (with OPENAI_BASE_URL for an OpenAI-compatible server) or "
    "AZURE_OPENAI_ENDPOINT (with AZURE_OPENAI_API_KEY or a managed identity) and run "
    "'eval judge' again"
)

_ROLE = re.compile(r"^\s*as (?:an?|the)\s+(?P<role>[^,]{1,80}?)\s*,", re.IGNORECASE)
_WANT = re.compile(
    r"\bI\s+(?:want|need|would like|wish|expect|can|am able)\b(?:\s+to\b)?\s*", re.IGNORECASE
)
_ENDS = re.compile(r"\bso that\b\s*(?P<ends>.*\S)", re.IGNORECASE | re.DOTALL)
_ACTION_VERBS = frozenset(
    """accept add approve archive assign book browse cancel change check choose close comment
    compare configure copy create delete disable download edit email enable enter export filter
    find hide import invite join list lock log manage mark merge move notify open order pause pay
    play post print publish rate receive register reject remove rename reply report request reset
    restore review save schedule search see select send set share show sign sort start stop submit
    subscribe track unlock update upload view vote withdraw write""".split()
)
_CONJUNCTION = re.compile(
    r"(?:\b(?:and/or|and|or)\b|&|\s\+\s)\s+(?:then\s+|also\s+)?(?:to\s+)?(?:be able to\s+)?"
    r"(?P<verb>[a-z]+)",
    re.IGNORECASE,
)
_NOT_MINIMAL = re.compile(r"[()\[\]{}]|\be\.g\.|\bi\.e\.|\betc\b\.?", re.IGNORECASE)
_VAGUE = re.compile(
    r"\b(?:fast|quick(?:ly)?|easy|easily|user[- ]friendly|intuitive|simple|appropriate(?:ly)?"
    r"|adequate(?:ly)?|efficient(?:ly)?|flexible|robust|nice|good|better|best|seamless(?:ly)?"
    r"|as soon as possible|asap|several|some|many|a lot|state of the art|etc)\b",
    re.IGNORECASE,
)
MIN_TITLE_WORDS, MAX_TITLE_WORDS = 3, 10
_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve)\b", re.I)


@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "detail": self.detail}


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def parts(description: str) -> tuple[str | None, str | None, str | None]:
    """(role, means, ends) of "As a <role>, I want <means>, so that <ends>" (None when absent)."""
    role = _ROLE.match(description)
    want = _WANT.search(description)
    means = None
    if want:
        rest = description[want.end() :]
        means = re.split(r",?\s*\bso that\b", rest, maxsplit=1, flags=re.IGNORECASE)[0]
        means = means.strip().rstrip(".") or None
    ends = _ENDS.search(description)
    return (
        role.group("role").strip() if role else None,
        means,
        ends.group("ends").strip().rstrip(".") if ends else None,
    )


def check_story(
    story: GeneratedItem,
    transcript: str | None = None,
    segment: Segment | None = None,
    others: Sequence[GeneratedItem] = (),
    merged_segments: Sequence[Segment] = (),
) -> list[Check]:
    """Every model-free check of one story; ``others`` are the run's other stories,
    ``merged_segments`` the segments of the stories merged into it (their quotes are its too)."""
    description = story.description.strip()
    role, means, ends = parts(description)
    checks = [
        Check("role", role is not None, role or "no 'As a <role>,' at the start"),
        Check("means", means is not None, means or "no 'I want <means>'"),
        _benefit_check(ends, story, transcript),
        _title_check(story.title),
        _persona_check(role, story),
        _acs_add_check(story, role),
        _clean_text_check(story),
    ]

    wants = len(_WANT.findall(description))
    roles = len(re.findall(r"(?:^|[.;]\s*)as an?\s", description, re.IGNORECASE))
    checks.append(
        Check(
            "atomic",
            wants <= 1 and roles <= 1,
            "" if wants <= 1 and roles <= 1 else f"{max(wants, roles)} stories in one description",
        )
    )

    joined = [
        m.group(0).strip()
        for m in _CONJUNCTION.finditer(means or "")
        if m.group("verb").lower() in _ACTION_VERBS
    ]
    checks.append(
        Check(
            "conjunctions",
            not joined,
            f"'{joined[0]}' joins two actions: split into two stories" if joined else "",
        )
    )

    extra = _NOT_MINIMAL.search(description)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", description) if s.strip()]
    minimal_detail = ""
    if extra:
        minimal_detail = f"'{extra.group(0)}' adds text beyond the story"
    elif len(sentences) > 1:
        minimal_detail = f"{len(sentences)} sentences: '{sentences[1][:60]}' is beyond the story"
    checks.append(Check("minimal", not minimal_detail, minimal_detail))

    title, mine = _norm(story.title), _norm(means or "")
    same = [
        o.item_id
        for o in others
        if o.item_id != story.item_id
        and (_norm(o.title) == title or (mine and _norm(parts(o.description)[1] or "") == mine))
    ]
    checks.append(
        Check("unique", not same, f"same title or means as {', '.join(same[:3])}" if same else "")
    )

    problems = []
    if not story.acceptance_criteria:
        problems.append("no acceptance criteria")
    for n, ac in enumerate(story.acceptance_criteria, 1):
        text = ac.strip()
        vague = _VAGUE.search(text)
        if len(text.split()) < 3:
            problems.append(f"AC {n} is too short to test")
        elif text.endswith("?"):
            problems.append(f"AC {n} is a question")
        elif vague and not _NUMBER.search(text):
            problems.append(f"AC {n} is vague ('{vague.group(0)}' without a measure)")
    checks.append(Check("testable_acs", not problems, "; ".join(problems)))

    checks.append(_quote_check(story, transcript, segment, merged_segments))
    return checks


_STOCK_BENEFIT = re.compile(
    r"\b(?:meets? what was agreed|adds? value|(?:improve|better) (?:the )?(?:user )?experience"
    r"|achieve (?:my|our|their) goals?|(?:is|are) satisfied|business value|as expected"
    r"|the product (?:works|is useful)|i can use (?:it|the product))\b",
    re.IGNORECASE,
)
_DISFLUENCY = re.compile(
    r"\{\s*[a-z_]+\s*\}|(?<![\w'-])(?:u+h+|u+m+|e+r+m+|h+m+|mm+|mm-hmm|uh-huh)(?![\w'-])"
    r"|\byou know\b|\bi mean\b|\b[a-z]_[a-z]_",
    re.IGNORECASE,
)
_TITLE_OPENERS_NOT_VERBS = frozenset(
    """i we you he she it they this that these those there here my our your their its a an the
    and or but so because if when then also just maybe perhaps probably really actually basically
    well okay ok yeah yes no not some any all every each one two three four five six seven eight
    nine ten more most very much many few like kind sort""".split()
)
_DANGLING_WORDS = frozenset(
    """and or but so like the a an to of with that which because for in on at by from as than our
    their your my its some is are be it this we you they i can will would should must not if when
    where what how there very more most any every each just also then into about per via""".split()
)


def _benefit_check(ends: str | None, story: GeneratedItem, transcript: str | None) -> Check:
    if ends is None:
        return Check("benefit", True, "no benefit clause (none stated)")
    stock = _STOCK_BENEFIT.search(ends)
    if stock:
        return Check("benefit", False, f"stock phrase '{stock.group(0)}', not the meeting's")
    said = {w for q in story.source_quotes for w in _content(_line_of(q, transcript))}
    mine = _content(ends)
    if mine and sum(1 for w in mine if w in said) / len(mine) < 0.6:
        return Check("benefit", False, f"'{ends[:60]}' is mostly not in the story's statements")
    return Check("benefit", True, ends)


def _line_of(quote: SourceQuote, transcript: str | None) -> str:
    """The transcript line a quote is on (the quote itself without the transcript)."""
    if transcript is None or transcript[quote.start : quote.end] != quote.text:
        return quote.text
    start = transcript.rfind("\n", 0, quote.start) + 1
    end = transcript.find("\n", quote.end)
    return transcript[start : len(transcript) if end < 0 else end]


def _title_check(title: str) -> Check:
    from shared.engine.offline.lexicon import is_verb, reads_as_capability

    words = title.split()
    problems = []
    if not MIN_TITLE_WORDS <= len(words) <= MAX_TITLE_WORDS:
        problems.append(f"{len(words)} words (3-10 wanted)")
    first = words[0].strip(".,;:!?\"'").lower() if words else ""
    if first in _TITLE_OPENERS_NOT_VERBS or not is_verb(first):
        problems.append(f"opens with '{first}', not a verb")
    if words and words[-1].strip(".,;:!?").lower() in _DANGLING_WORDS:
        problems.append(f"ends on '{words[-1]}'")
    if not problems and not reads_as_capability(title):
        problems.append("reads as a clause of talk, not a capability")
    marker = _DISFLUENCY.search(title)
    if marker:
        problems.append(f"disfluency '{marker.group(0)}'")
    return Check("title", not problems, "; ".join(problems) or title)


def _persona_check(role: str | None, story: GeneratedItem) -> Check:
    from shared.engine.offline.lexicon import PERSONA_FORMS, singular_persona

    named = {
        singular_persona(m.group(1))
        for q in story.source_quotes
        for m in re.finditer(
            rf"\b(?:as (?:an?|the)|for (?:the |our |all |each |every )?)?({PERSONA_FORMS})"
            r"\b(?=\s+(?:\w+\s+)?(?:should|must|can|could|will|would|need|needs|want|wants"
            r"|have to|has to|are able|is able)\b)",
            q.text,
            re.IGNORECASE,
        )
    } - {"user", "end user"}
    if role is None:
        return Check("persona", False, "no role")
    if role.lower() in ("user", "users") and named:
        return Check("persona", False, f"'user' while the statements name {sorted(named)[0]}")
    return Check("persona", True, role)


def _acs_add_check(story: GeneratedItem, role: str | None) -> Check:
    from shared.engine.offline.criteria import adds_to_title

    restating = [
        n
        for n, ac in enumerate(story.acceptance_criteria, 1)
        if not adds_to_title(ac, story.title, role or "")
    ]
    if restating:
        return Check("acs_add", False, f"AC {restating[0]} only restates the title")
    return Check("acs_add", True, "")


def _clean_text_check(story: GeneratedItem) -> Check:
    fields = [story.title, story.description, *story.acceptance_criteria]
    fields += [q.question for q in story.open_questions]
    for text in fields:
        m = _DISFLUENCY.search(text)
        if m:
            return Check("clean_text", False, f"'{m.group(0)}' in '{text[:50]}'")
    return Check("clean_text", True, "")


def _content(text: str) -> list[str]:
    from shared.engine.offline.language import content_words
    from shared.engine.offline.lexicon import base_form

    return [base_form(w) for w in content_words(text)]


def _quote_check(
    story: GeneratedItem,
    transcript: str | None,
    segment: Segment | None,
    merged_segments: Sequence[Segment] = (),
) -> Check:
    if not story.source_quotes:
        return Check("quote_found", False, "no source quote")
    if transcript is None:
        return Check("quote_found", False, "the transcript is not available")
    for q in story.source_quotes:
        if transcript[q.start : q.end] != q.text:
            return Check(
                "quote_found", False, f"quote at {q.start}-{q.end} differs: {q.text[:60]!r}"
            )
        own = [segment, *merged_segments] if segment else []
        if own and not any(s.start_char <= q.start and q.end <= s.end_char for s in own):
            return Check(
                "quote_found", False, f"quote at {q.start}-{q.end} is outside {own[0].segment_id}"
            )
    return Check("quote_found", True, f"{len(story.source_quotes)} quote(s) found")


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
