"""Story quality (seed §9.2): the model-free checks of every generated story (``eval judge``;
``shared.eval.quality`` runs them over a run beside the LLM judge).

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
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from shared.models import GeneratedItem, Segment, SourceQuote

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
MIN_TITLE_WORDS, MAX_TITLE_WORDS = 3, 10


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

    # a benefit may say what I can then do ("so that I can show the committee"): one story
    benefits = len(re.findall(r"\bso that\s+" + _WANT.pattern, description, re.IGNORECASE))
    wants = len(_WANT.findall(description)) - benefits
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

    from shared.engine.offline.lexicon import unmeasured_vague_word

    problems = []
    if not story.acceptance_criteria:
        problems.append("no acceptance criteria")
    for n, ac in enumerate(story.acceptance_criteria, 1):
        text = ac.strip()
        vague = unmeasured_vague_word(text)
        if len(text.split()) < 3:
            problems.append(f"AC {n} is too short to test")
        elif text.endswith("?"):
            problems.append(f"AC {n} is a question")
        elif vague:
            problems.append(f"AC {n} is vague ('{vague}' without a measure)")
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
    from shared.engine.offline.wording import (
        ends_with_a_letter,
        ends_with_stranded_preposition,
        ends_with_verb_particle,
    )

    words = title.split()
    problems = []
    if not MIN_TITLE_WORDS <= len(words) <= MAX_TITLE_WORDS:
        problems.append(f"{len(words)} words (3-10 wanted)")
    first = words[0].strip(".,;:!?\"'").lower() if words else ""
    if first in _TITLE_OPENERS_NOT_VERBS or not is_verb(first):
        problems.append(f"opens with '{first}', not a verb")
    last = words[-1].strip(".,;:!?").lower() if words else ""
    if last in _DANGLING_WORDS and not (
        ends_with_verb_particle(title)
        or ends_with_stranded_preposition(title)
        or ends_with_a_letter(title)
    ):
        problems.append(f"ends on '{words[-1]}'")
    if not problems and not reads_as_capability(title):
        problems.append("reads as a clause of talk, not a capability")
    marker = _DISFLUENCY.search(title)
    if marker:
        problems.append(f"disfluency '{marker.group(0)}'")
    return Check("title", not problems, "; ".join(problems) or title)


def _persona_check(role: str | None, story: GeneratedItem) -> Check:
    from shared.engine.offline.lexicon import PERSONA_FORMS, WHERE_THEY_ARE, singular_persona

    named = {
        singular_persona(m.group(1))
        for q in story.source_quotes
        for m in re.finditer(
            rf"\b(?:as (?:an?|the)|for (?:the |our |all |each |every )?)?({PERSONA_FORMS})"
            # "the patients who can't use it": people described, not their need
            r"\b(?=\s+(?!(?:who|that|which)\b)(?:\w+\s+)?(?:should|must|can|could|need"
            # "Finance will be on laptops, big screens": where they will be, no need of theirs
            rf"|(?:will|would)(?!{WHERE_THEY_ARE})"
            r"|needs|want|wants"
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
    from shared.engine.offline.lexicon import base_form
    from shared.text.language import content_words

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
