"""Drafting a user story from the statements that state it (the offline generator's prose).

The offline engine cannot write like a model and does not pretend to: a draft is short, literal
and correct, for a reviewer to finish. From the story's statements (the main one first):

- **title**: a verb phrase of 3-10 words naming the capability in the meeting's words, from the
  predicate of the main statement ("People want to have a power button" -> "Provide a power
  button", "the number is shown on the LCD" -> "Show the number on the LCD", "No teletext
  button" -> "Leave out teletext button"); fillers, markers, hedges and discourse words out;
  never a pronoun, conjunction or hedge first, never a dangling last word;
- **role**: the persona the statements (or the two sentences before the main one) name for the
  need ("the manager", "receptionists"), else the default persona of the settings;
- **benefit**: a "so that" clause only when a statement says one ("so that", "so they can");
  otherwise none;
- **acceptance criteria**: Given/When/Then for a condition, a limit or a figure a statement holds,
  a checklist item for a detail an elaboration adds ("it should be red" -> "The power button is
  red."), the main statement in full when the title had to cut it; nothing that only restates the
  title, no number that no statement says.

Everything is a pure function of the statements: deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shared.agents import StoryDraft
from shared.analysis.contradiction import limits, quantities
from shared.engine.offline.lexicon import (
    PERSONA,
    PERSONA_FORMS,
    VERBS,
    base_form,
    is_participle,
    is_verb,
    singular_persona,
    third_person,
)
from shared.text.language import clean, content_words, is_topical

MAX_TITLE_WORDS = 10
MIN_TITLE_WORDS = 3
MAX_CRITERIA = 5
_FIGURE = re.compile(
    r"[$€£]?\d[\d.,]*%?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|forty|fifty|hundred|thousand"
)
_LEAD = re.compile(
    r"^(?:(?:so|and|but|well|okay|ok|also|then|now|yeah|yes|yep|right|alright|basically"
    r"|actually|like|because|'cause|and also|i think(?: that)?|we think(?: that)?|i guess"
    r"|i believe|i mean|you know|of course|first(?: of all)?|second|finally|plus|new|note|oh|ooh"
    r"|ah|ha|hmm|um|uh|honestly|obviously|sure|great|good|fine|exactly|definitely|absolutely"
    r"|anyway|look|listen|please|just|maybe|perhaps|probably|i'd say|i would say|i reckon"
    r"|i suppose|i feel like|for me|for us|in general|again|and then|or)\b[\s,:;-]*)+",
    re.IGNORECASE,
)
# "NEW: ...", "Industrial Design: ...", "Locator: ..." (not "No more than 8 buttons: ...")
_LABEL_PREFIX = re.compile(
    r"^(?:\[[ xX]\]\s*)?(?:(?!(?i:no|not|only|at|max|min|must|should)\b)[A-Z][A-Za-z/&']*"
    r"(?:[ -][A-Za-z/&']+){0,3}:\s+)?"
)
_HEDGES = re.compile(
    r"\b(?:just|really|actually|basically|maybe|probably|perhaps|i think|you know|kind of"
    r"|sort of|i guess|i mean|honestly|obviously|definitely|somehow|of course|like"
    r"|i don't know|i dunno|i'm not sure)\b\s*,?\s*",
    re.IGNORECASE,
)
# The modal that carries a requirement, and what follows it: a verb phrase ("should be cheap") or
# a noun phrase ("we need a screen"). Fixed noun-phrase decisions come first ("let's go with X").
_MODAL = re.compile(
    r"\b(?:(?P<np1>let's go (?:with|for)|let us go (?:with|for)|go with|stick with|we'll use"
    r"|we will use|let's use|let's have|we'll have|we will have)"
    r"|(?P<vp>must|shall|should|ought to|needs? to|have to|has to|had to|got to|gotta"
    r"|would like to|'d like to|wants? to|(?:is|are|'re) going to|decided to|agreed to|let's"
    r"|let us|(?:will|'ll|can|could)(?:(?= also| still) \w+)?(?= (?:have|use|include|keep|make"
    r"|add|put|drop|offer|support|show|provide|go|train|implement|integrate|build|be able)\b))"
    r"|(?P<np>needs?|wants?|would like|'d like|requires?|(?:will|'ll) need))\b",
    re.IGNORECASE,
)
_WEAK_MODAL = re.compile(r"\b(?P<vp>can|could|will|'ll|may)\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(
    r"\s*(?<!\d),\s+|\s*[;:]\s+|\s+(?=(?:but|because|'cause|whereas|although|so that"
    r"|so (?:we|i|you|they|it|people))\b)",
    re.IGNORECASE,
)
_PRONOUN_SUBJECT = re.compile(
    r"^(?:(?:i|we|you|they|it|one|people|users?|the users?|customers?|viewers?|everyone"
    r"|everybody|the client|the customer|the product|the device|the system|the app|the remote"
    r"(?: control)?)(?:'ll|'d| will| would| all| really| also| do| still| probably)?\s*)?$",
    re.IGNORECASE,
)
_PRODUCT_PRONOUN = re.compile(r"^(?:it|they|this|that|these|those|we|one)$", re.IGNORECASE)
_USER_SUBJECT = re.compile(
    r"^(?:i|you|one|people|users?|the users?|everyone|everybody|customers?|viewers?)\b"
    rf"|(?:the |our |all |each |every )?(?:{PERSONA_FORMS})\b",
    re.IGNORECASE,
)
_SUBORDINATORS = frozenset(
    "what which where that who whom if whether when than how time why whatever".split()
)
_SUBJECT_TAIL = re.compile(
    r"(?:^|\s)((?:i|we|you|they|it|people|users?|customers?|viewers?|everyone|everybody"
    r"|the (?:users?|customers?|client|product|device|system|app|remote(?: control)?))"
    r"(?:'ll|'d| will| would| all| really| also| do| still)?)$",
    re.IGNORECASE,
)
_USER_STORY = re.compile(
    r"\bas an? (?P<role>[\w -]{1,40}?),? i (?:want|need|would like)(?P<to> to)? (?P<means>.+?)"
    r"(?:,? so that (?P<ends>.+))?$",
    re.IGNORECASE,
)
_PERSONA_AS = re.compile(rf"\bas (?:an?|the) ({PERSONA_FORMS})\b", re.IGNORECASE)
_PERSONA_SUBJECT = re.compile(
    rf"\b({PERSONA_FORMS})\b(?:\s+\w+)?\s+(?:should|must|can|could|will|would|need|needs|want"
    r"|wants|have to|has to|are able|is able|get to|gets to|'ll|'d)\b",
    re.IGNORECASE,
)
_PERSONA_START = re.compile(
    rf"^(?:the |all |our |each |every )?({PERSONA_FORMS})\s+(?:only |just |also |always |then )?"
    r"(?P<verb>[a-z]+)",
    re.IGNORECASE,
)
_MODALS = frozenset("can could should must need needs want wants will would have has".split())
_NOT_A_NEED_VERB = frozenset("say said says tell told think thought like liked love".split())
_TALK_AFTER_DONT = frozenset("know worry mind care bother get forget remember mean see".split())
_PERSONA_FOR = re.compile(
    rf"\bfor (?:the |our |all |each |every )?({PERSONA_FORMS})\b", re.IGNORECASE
)
_PURPOSE = re.compile(
    r"\b(?:so that|so (?=(?:they|we|you|people|users?|it|he|she|i|the \w+|patients|residents"
    r"|customers|staff) (?:can|could|will|won't|don't|do not|know|have|get|see|are|is|don't)\b))"
    r"\s*(?P<ends>[^.;!?]+)",
    re.IGNORECASE,
)
_CONDITION = re.compile(
    r"^(?P<main>.+?),?\s+\b(?:when|whenever|if|as soon as|once|after|before|unless)\b\s+"
    r"(?P<cond>[^,;]+)",
    re.IGNORECASE,
)
_CONDITION_FIRST = re.compile(
    r"^(?:when|whenever|if|as soon as|once|after|unless)\s+(?P<cond>[^,;]+),\s*(?P<main>.+)$",
    re.IGNORECASE,
)
_DANGLING = re.compile(
    r"(?:\s+(?:and|or|but|so|like|the|a|an|to|of|with|that|which|because|'cause|uh|um|for|in"
    r"|on|at|by|from|as|than|our|their|your|my|its|some|is|are|be|it|this|these|those|we|you"
    r"|they|i|can|will|would|should|must|not|no|if|when|where|what|how|there|here|very|more"
    r"|most|any|every|each|all|just|also|then|into|onto|about|per|via))+$"
    r"|\s+to\s+(?:do|be|have|get|go|make)$",
    re.IGNORECASE,
)
_PARTICLE = re.compile(
    r"\b(?P<verb>[a-z]+)\s+(?P<particle>in|on|out|up|off|over|down|back|away|through)$",
    re.IGNORECASE,
)
_ACRONYM_WORDS = re.compile(r"\b(tv|lcd|led|ui|ux|ir|usb|eur|dvd|rgb|pcb|dsp|ac|dc|gdpr|sms|pdf)\b")
_NOUN_OPENERS = re.compile(
    r"^(?:a|an|the|some|any|our|their|your|its|this|that|these|those)\s+", re.I
)
_KEEP_WORDS = re.compile(
    r"^(?:under|below|within|at most|at least|less than|no more than|not more than|cheap|small"
    r"|simple|short|light|low|few|lightweight|minimal)\b",
    re.IGNORECASE,
)
_LEAVE_OUT = re.compile(r"^(?:no|without)\s+(?P<what>.+)$", re.IGNORECASE)
_NOT_VP = re.compile(r"^(?:not|never)\s+(?P<vp>.+)$", re.IGNORECASE)
# an instruction not to do something, said of the product: "Don't interfere with other devices"
_IMPERATIVE_NOT = re.compile(
    r"^(?:don't|do not|never)\s+(?P<vp>[a-z]+\b.*?)(?:\s+(?:'cause|cause|because|since)\b.*)?$",
    re.IGNORECASE,
)
_LETS_NOT = re.compile(
    r"\b(?:let's not|let us not|we won't|we will not|we don't|don't)\s+(?:do|have|include|add|build"
    r"|offer|make|use|need|go with|go for|bother with|want)\s+(?P<what>.+?)"
    r"(?:\s+after all|\s+anymore)?$",
    re.IGNORECASE,
)
_NO_NEED = re.compile(
    r"\bno need (?:to|for) (?:have |use |include |add |do )?(?P<what>.+?)(?:\s+(?:on it|at all))?$",
    re.IGNORECASE,
)
_IS_OUT = re.compile(
    r"^(?P<what>.+?)\s+(?:is|are)\s+(?:out|dropped|gone|off the table|not needed|out of scope)\b",
    re.IGNORECASE,
)
_POSSESSION = frozenset("have get include contain offer need".split())
_NOT_DETAIL = re.compile(
    r"^(?:so|so that|because|'cause|but|whereas|although|and then|then|otherwise|since|as)\b",
    re.IGNORECASE,
)
_MORE_REQUIREMENTS = re.compile(
    r",?\s+and\s+(?=(?:the|it|they|each|every|all)\b[^,;]{0,40}?\b(?:must|should|shall|needs? to"
    r"|has to|have to)\b)",
    re.IGNORECASE,
)
_GWT = re.compile(r"^given\b.+\bwhen\b.+\bthen\b", re.IGNORECASE)
_MEASURE = re.compile(
    r"\d|\b(?:at most|at least|no more than|not more than|within|under|over|below|above"
    r"|before|after|every|daily|weekly|monthly)\b",
    re.IGNORECASE,
)
_NEW_CLAUSE = re.compile(
    r"^\s*(?:and |but |so |then )?(?:i|we|you|they|it|he|she|there|this|that|people)"
    r"(?:'re|'s|'m|'ve|'ll|'d)?\s+\w+",
    re.IGNORECASE,
)
_CLAUSE_CUT = re.compile(
    r"\s*[;:(]\s*|\s+-\s+|,?\s+(?:so that|because|'cause|and that|which|whereas|although|but"
    r"|since|as long as|so (?:we|i|you|they|it|people))\s+|,\s+(?:and|so|or|then)\s+",
    re.IGNORECASE,
)
_CUT_BEFORE = frozenset(
    "for with on in to of from by at into onto about via per during within without through "
    "where which who when while because so and or but that than before after until unless "
    "if".split()
)
# words every criterion may use without saying anything new
_BOILERPLATE = frozenset(
    "given product checked check available possible user able feature story system app".split()
)


@dataclass
class Capability:
    """What the main statement asks for, as a title phrase and the "I want ..." means."""

    title: str  # imperative verb phrase, as long as the statement says it
    means: str  # what follows "I want "
    obj: str = ""  # the thing the need is about ("a power button"), for pronoun criteria
    subject: str = ""  # who or what the statement is about ("it", "the remote", "users")


@dataclass
class _Requirement:
    """The clause of a sentence that states the requirement, cut at its modal."""

    clause: str
    subject: str
    kind: str  # "vp": a verb phrase follows the modal, "np": a noun phrase, "": no modal
    rest: str
    embedded: bool = False  # the modal sits in a relative clause ("the buttons that I need")


def write_story(
    quotes: Sequence[str],
    *,
    main_text: str | None = None,
    context: Sequence[str] = (),
    default_persona: str = "user",
    criteria_from: Sequence[bool] | None = None,
) -> StoryDraft:
    """The story these verbatim statements state; ``quotes[0]`` is the main one (``main_text``,
    when given, is what to write it from: the main statement with a revised figure written in);
    ``context`` are the sentences said just before it (the question a need answers);
    ``criteria_from`` says which quotes may give acceptance criteria (by default all: a quote
    kept only as evidence, a weak statement, gives none)."""
    texts = [body(q, asides=True) for q in quotes]
    written = main_text if main_text is not None else quotes[0]
    main = body(written)
    story = _USER_STORY.search(main)
    benefit = benefit_of(
        [q for k, q in enumerate(quotes) if criteria_from is None or k == 0 or criteria_from[k]]
    )
    extra: list[str] = []  # "..., and the keypad must have 20 buttons": a criterion of its own
    if story:
        persona = story.group("role").strip().lower()
        means, *extra = _MORE_REQUIREMENTS.split(story.group("means"))
        means = _trim(means)
        wanted = f"to {_lower_first(means)}" if story.group("to") else _lower_first(means)
        cap = Capability(title=_verb_phrase(means), means=wanted, obj=means)
        benefit = benefit or (_trim(story.group("ends")) if story.group("ends") else None)
    else:
        cap = capability(main)
        persona = persona_of(quotes, context, default_persona)
    title = make_title(_with_condition(cap.title, main))
    means = re.split(r",?\s+\b(?:i|we) (?:want|need|would like)\b", cap.means, flags=re.I)[0]
    description = f"As {_article(persona)} {persona}, I want {_trim(means) or cap.means}"
    if benefit:
        description += f", so that {benefit}"
    found = criteria(
        [body(written, True)]
        + [
            t
            for k, (q, t) in enumerate(zip(quotes, texts, strict=True))
            if q != written
            and (k > 0 or main_text is None or written == quotes[0])
            and (criteria_from is None or criteria_from[k])
        ]
        + extra,
        cap,
        title,
        persona,
    )
    testable, questions = split_vague(found)
    return StoryDraft(
        title=title,
        description=description + ".",
        acceptance_criteria=testable,
        source_quotes=list(quotes),
        open_questions=questions,
    )


# words that say nothing testable without a figure (the judge's testable-criteria check reads
# the same words, shared.eval.quality)
_VAGUE = re.compile(
    r"\b(?:fast|quick(?:ly)?|easy|easily|user[- ]friendly|intuitive|simple|appropriate(?:ly)?"
    r"|adequate(?:ly)?|efficient(?:ly)?|flexible|robust|nice|good|better|best|seamless(?:ly)?"
    r"|as soon as possible|asap|several|some|many|a lot|state of the art|etc)\b",
    re.IGNORECASE,
)
_ANY_FIGURE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve)\b", re.IGNORECASE
)


def split_vague(found: Sequence[str]) -> tuple[list[str], list[str]]:
    """(testable criteria, open questions): a criterion that rests on a vague word without a
    figure ("The remote is easy to use.") is no check a tester can run; it becomes a question
    for the review ("What measure does 'easy' mean in: The remote is easy to use?")."""
    testable: list[str] = []
    questions: list[str] = []
    for criterion in found:
        vague = _VAGUE.search(criterion)
        if vague and not _ANY_FIGURE.search(criterion):
            questions.append(
                f"What measure does '{vague.group(0).lower()}' mean in: {criterion.rstrip('.')}?"
            )
        elif len(criterion.split()) >= MIN_TITLE_WORDS:
            testable.append(criterion)
    return testable, questions


# ------------------------------------------------------------------------------------------------
# reading a statement


_PASSIVE_S = re.compile(
    r"\b((?!(?:it|he|she|that|what|there|here|who|let)\b)\w+)'s\s+(?=(\w+))", re.I
)


def body(sentence: str, asides: bool = False) -> str:
    """The sentence cleaned for writing: no markers, fillers, labels or leading discourse words;
    asides in parentheses dropped (a title) or kept as a clause (a criterion: "(max 2 voice
    profiles per remote)" is a detail)."""
    text = clean(sentence)
    text = re.sub(r"^[-*+•]\s+", "", text)
    text = _LABEL_PREFIX.sub("", text, count=1)
    text = re.sub(r",\s*like\s+", " ", text)
    if asides:
        text = re.sub(r"\s*\(([^()]*)\)", r", \1,", text)
        text = re.sub(r",\s*([,.;:])", r"\1", text)
    else:
        text = re.sub(r"\s*\([^()]*\)", "", text)
    text = _LEAD.sub("", text)
    text = _HEDGES.sub("", text)
    text = re.sub(r"\b(\w+)(?:\s+\1\b)+", r"\1", text, flags=re.IGNORECASE)
    # "the booking's released" is "the booking is released" (a passive reads as a capability)
    text = _PASSIVE_S.sub(
        lambda m: f"{m.group(1)} is " if is_participle(m.group(2)) else m.group(0), text
    )
    return re.sub(r"\s+", " ", text).strip(" ,;:-")


def _parse(text: str) -> _Requirement:
    clauses = [c for c in _CLAUSE_BREAK.split(text) if c and c.strip()]
    found = [(k, m) for k, c in enumerate(clauses) if (m := _MODAL.search(c))]
    if not found:  # "the user can set ...": a plain "can" only when nothing stronger is said
        found = [
            (k, m)
            for k, c in enumerate(clauses)
            if (m := _WEAK_MODAL.search(c)) and not (k and _PURPOSE.match(c))
        ]  # "..., so the remote can be used in the dark" is the reason, not the need
    for k, m in found:
        clause = clauses[k]
        rest = _trim(clause[m.end() :])
        more = k + 1
        while (len(rest.split()) < 4 or not content_words(rest)) and more < len(clauses):
            if _NEW_CLAUSE.match(clauses[more]):
                break  # "book, move and cancel" continues; "it is late" starts anew
            rest = _trim(f"{rest}, {clauses[more]}")
            clause = f"{clause}, {clauses[more]}"
            more += 1
        rest = re.sub(r"^to\s+", "", rest)
        if not rest:
            continue
        groups = m.groupdict()
        kind = "np" if (groups.get("np") or groups.get("np1")) else "vp"
        subject = _LEAD.sub("", clause[: m.start()]).strip(" ,")
        tail = _SUBJECT_TAIL.search(subject)
        embedded = bool(re.match(r"(?:is|are|was|were)\b", rest, re.IGNORECASE)) or (
            kind == "np" and bool(re.match(r"(?:for|to|in|on|at|with|by|from)\b", rest, re.I))
        )
        if tail:
            before = subject[: tail.start()].split()
            embedded = embedded or bool(before and before[-1].lower() in _SUBORDINATORS)
            subject = tail.group(1)
        if groups.get("np1"):
            rest = re.sub(r"^(?:the|a|an)\s+", "", rest, flags=re.IGNORECASE)
            if re.search(r"use$", groups["np1"], re.IGNORECASE):
                kind, rest = "vp", f"use {rest}"
        return _Requirement(_trim(clause), subject, kind, rest, embedded)
    clause = next((c for c in clauses if len(c.split()) >= 3), text)
    return _Requirement(_trim(clause), "", "", _trim(clause))


def capability(text: str) -> Capability:
    """The capability a (cleaned) statement asks for."""
    dropped = _dropped(text)
    if dropped:
        return dropped
    condition_first = _CONDITION_FIRST.match(text)
    if condition_first and len(condition_first.group("main").split()) >= 2:
        # "when you go to the sofa, take ...": the need is the rest
        text = condition_first.group("main")
    imperative_be = re.match(r"^be\s+(?P<what>.+)$", text, re.IGNORECASE)
    if imperative_be:  # "be simple" said of the product
        return _be(imperative_be.group("what"), "it")
    imperative_not = _IMPERATIVE_NOT.match(text)
    verb = imperative_not.group("vp").split()[0].strip(".,;:!?").lower() if imperative_not else ""
    if imperative_not and is_verb(verb) and verb not in _NOT_A_NEED_VERB | _TALK_AFTER_DONT:
        vp = _trim(imperative_not.group("vp"))  # "don't interfere with other devices"
        return Capability(f"Do not {vp}", f"the product never to {vp}")
    req = _parse(text)
    subject = _subject_words(req.subject)
    first, joined, _ = subject.partition(" and ")
    if req.kind and joined and len(first.split()) >= 2:
        # "the booking is released and someone else can have it": the need is the first clause
        return capability(first)
    if req.embedded or (req.kind and len(req.subject.split()) > 8):
        return _plain(req.clause)
    if req.kind == "np":
        return _provide(req.rest, subject)
    if req.kind == "vp":
        return _from_verb_phrase(req.rest, subject)
    return _plain(req.clause)


def _subject_words(subject: str) -> str:
    subject = re.sub(
        r"(?:'ll|'d|\s+will|\s+would|\s+all|\s+really|\s+also|\s+do|\s+still|\s+probably)$",
        "",
        subject.strip(),
        flags=re.IGNORECASE,
    )
    return subject.strip()


def _is_user(subject: str) -> bool:
    return bool(subject) and bool(_USER_SUBJECT.match(subject.lower()))


def _provide(noun_phrase: str, subject: str = "") -> Capability:
    noun_phrase = _lower_first(_trim(noun_phrase))
    return Capability(
        title=f"Provide {noun_phrase}", means=noun_phrase, obj=noun_phrase, subject=subject
    )


def _from_verb_phrase(rest: str, subject: str) -> Capability:
    rest = re.sub(r"^(?:only|just|also|really|always|simply|still|even|definitely)\s+", "", rest)
    words = rest.split()
    first = words[0].lower()
    user = _is_user(subject) or subject.lower() in ("we", "i")
    if first == "be" and len(words) > 2 and words[1].lower() == "able" and words[2] == "to":
        action = " ".join(words[3:])
        return Capability(_verb_phrase(action), f"to {action}", subject=subject)
    if first in _POSSESSION and len(words) > 1:
        what = " ".join(words[1:])
        if words[1].lower() in ("to", "it", "them", "that", "this"):
            return Capability(_verb_phrase(rest), f"to {rest}", subject=subject)
        return _provide(what, subject)
    if first == "be" and len(words) > 1:
        return _be(" ".join(words[1:]), subject)
    negated = _NOT_VP.match(rest)
    if negated:
        vp = negated.group("vp")
        actor = "" if user else "the product "
        return Capability(f"Do not {vp}", f"{actor}never to {vp}".strip(), subject=subject)
    if user:
        return Capability(_verb_phrase(rest), f"to {rest}", subject=subject)
    if len(rest.split()) < MIN_TITLE_WORDS:  # "it has to work offline": "Make it work offline"
        thing = "it" if not subject or _PRODUCT_PRONOUN.match(subject) else subject
        return Capability(
            f"Make {_lower_first(thing)} {rest}", f"the product to {rest}", subject=subject
        )
    return Capability(_verb_phrase(rest), f"the product to {rest}", subject=subject)


def _be(complement: str, subject: str) -> Capability:
    """'it should be fancy' -> 'Make it fancy'; 'the number should be shown on the LCD' ->
    'Show the number on the LCD'; 'users should be notified' -> 'Notify users'."""
    words = complement.split()
    verb = base_form(words[0])
    thing = subject if subject and not _PRODUCT_PRONOUN.match(subject) else "it"
    named = thing if thing != "it" else "the product"
    if verb in VERBS and verb != words[0].lower() and is_participle(words[0]):
        tail = " ".join(words[1:])
        title = f"{verb} {_lower_first(thing) if thing != 'it' else ''} {tail}"
        return Capability(
            _cap(re.sub(r"\s+", " ", title).strip()),
            f"{_lower_first(named)} to be {complement}",
            obj=thing if thing != "it" else "",
            subject=subject,
        )
    lead = "Keep" if _KEEP_WORDS.match(complement) else "Make"
    return Capability(
        f"{lead} {_lower_first(thing)} {complement}",
        f"{named} to be {complement}",
        obj=thing if thing != "it" else "",
        subject=subject,
    )


def _dropped(text: str) -> Capability | None:
    """'Let's not do the waiting list after all', 'the live map is out' -> 'Leave out ...'."""
    text = re.sub(r"[\s,]+(?:after all|anymore|any more|then|for now)?[\s.!?]*$", "", text)
    for pattern in (_IS_OUT, _LETS_NOT, _NO_NEED):
        m = pattern.search(text)
        if m and content_words(m.group("what")):
            what = re.split(r",|\s+(?:after all|anymore|any more|because)\b", m.group("what"))[0]
            what = _trim(what)
            bare = _NOUN_OPENERS.sub("", what)
            return Capability(f"Leave out {what}", f"no {bare}", obj=what)
    return None


def _plain(clause: str) -> Capability:
    """A statement without a modal: a notes bullet, a decision, a description of behaviour."""
    clause = _trim(clause)
    leave = _LEAVE_OUT.match(clause)
    if leave:
        what = re.sub(r"\b(?:and|or) no\s+", "and ", leave.group("what"), flags=re.IGNORECASE)
        what = re.sub(r"\.\s.*$", "", what)
        return Capability(f"Leave out {_trim(what)}", f"no {_trim(what)}", obj=_trim(what))
    words = clause.split()
    if words and words[0].lower() in VERBS and words[0].lower() not in ("be", "have"):
        return Capability(_cap(clause), f"to {_lower_first(clause)}")
    persona = PERSONA.match(clause) or re.match(
        r"(?:the |all |our )?(?:people|users|you|we|i|they|one)\b", clause, re.I
    )
    if persona and len(words) > 2:
        k = len(persona.group(0).split())
        verb = words[k].lower() if k < len(words) else ""
        if verb in VERBS and verb not in ("be", "have"):
            action = " ".join(words[k:])
            return Capability(_cap(action), f"to {action}", subject=persona.group(0))
    plural = re.match(
        r"^(?P<subject>(?:the |all |our |each |every )?(?:\w+\s+){0,2}\w+s)\s+"
        r"(?:only |just |also |always |then |ever |only ever )*(?P<verb>[a-z]+)\b(?P<rest>.*)$",
        clause,
        re.IGNORECASE,
    )
    if (
        plural
        and plural.group("verb").lower() in VERBS
        and plural.group("verb").lower()
        not in (
            "be",
            "have",
        )
    ):
        subject = _lower_first(plural.group("subject"))
        said = clause[len(plural.group("subject")) :].strip()
        return Capability(
            f"Make {subject} {said}", f"{subject} to {said}", obj=subject, subject=subject
        )
    for k in range(1, min(len(words), 8)):
        w = words[k].lower().strip(",")
        if words[k - 1].lower() in ("that", "which", "who"):
            return _provide(clause)  # "one power button that switches the TV on": a thing
        if w in ("is", "are", "gets", "get") and k + 1 < len(words):
            participle = words[k + 1].lower()
            verb = base_form(participle)
            subject = " ".join(words[:k])
            if verb in VERBS and verb != participle and is_participle(participle):
                tail = " ".join(words[k + 2 :])
                return Capability(
                    _cap(f"{verb} {_lower_first(subject)} {tail}".strip()),
                    f"{_lower_first(subject)} to be {participle} {tail}".strip(),
                    obj=subject,
                    subject=subject,
                )
            if w in ("is", "are"):
                return _be(" ".join(words[k + 1 :]), subject)
        if w in ("stays", "stay", "remains", "remain", "wins", "win"):
            subject = " ".join(words[:k])
            return Capability(f"Keep {_lower_first(subject)}", _lower_first(subject), obj=subject)
        verb = base_form(w)
        if verb in VERBS and verb != w and not w.endswith(("ed", "en")):
            subject = " ".join(words[:k])
            tail = " ".join(words[k + 1 :])
            return Capability(
                _cap(f"{verb} {tail}".strip()),
                f"{_lower_first(subject)} to {verb} {tail}".strip(),
                obj=subject,
                subject=subject,
            )
    return _provide(clause)


def _verb_phrase(text: str) -> str:
    """A title phrase that opens with a verb: 'train the recogniser' stays, 'only few buttons'
    becomes 'Provide only few buttons'."""
    text = re.sub(r"^(?:only|just|also|really|always|simply|still|even)\s+", "", _trim(text))
    first = text.split()[0] if text.split() else ""
    if is_verb(first):
        return text
    return f"Provide {text}"


# ------------------------------------------------------------------------------------------------
# title, persona, benefit


def _with_condition(phrase: str, text: str) -> str:
    """A short title phrase with the condition its statement holds ("Mute" + "if you hold the
    wheel down" -> "Mute when you hold the wheel down")."""
    if len(phrase.split()) >= 4:
        return phrase
    cond = _CONDITION_FIRST.match(text) or _CONDITION.match(text)
    if not cond:
        return phrase
    when = _trim(cond.group("cond"))
    if len(phrase.split()) + 1 + len(when.split()) > MAX_TITLE_WORDS or len(when.split()) < 2:
        return phrase
    return f"{phrase} when {when}"


def make_title(phrase: str) -> str:
    """3-10 words, opening with a verb, cut at a clause break, no dangling last word."""
    phrase = _HEDGES.sub("", _trim(phrase))
    head = _trim(_CLAUSE_CUT.split(phrase)[0])
    if len(head.split()) >= MIN_TITLE_WORDS:
        phrase = head
    words = phrase.split()
    if len(words) > MAX_TITLE_WORDS:
        cuts = [
            k
            for k in range(MAX_TITLE_WORDS, MIN_TITLE_WORDS, -1)
            if k < len(words)
            and words[k].lower() in _CUT_BEFORE
            and not any(w.lower() in _SUBORDINATORS for w in words[1:k])
        ]
        cut = cuts[0] if cuts else MAX_TITLE_WORDS
        if not cuts and _FIGURE.fullmatch(words[cut - 1].strip(",.;:").lower()):
            cut -= 1  # never end on a bare figure
        words = words[:cut]
    if _FIGURE.fullmatch(words[-1].strip(",.;:").lower()) and len(words) > MIN_TITLE_WORDS:
        # "Set the TV to switch off after 15, 30, 60": cut before the figures' preposition
        at = [k for k in range(MIN_TITLE_WORDS, len(words)) if words[k].lower() in _CUT_BEFORE]
        if at:
            words = words[: at[-1]]
    title = _trim(" ".join(words))
    bare = re.fullmatch(r"(Provide|Use|Add|Offer)\s+([a-z][\w-]*)", title)
    if bare and not bare.group(2).endswith("s"):
        title = f"{bare.group(1)} {_article(bare.group(2))} {bare.group(2)}"
    return capital(title)


def persona_of(quotes: Sequence[str], context: Sequence[str], default: str) -> str:
    """The role the statements name for the need, else one named just before, else ``default``."""
    joined = " ".join(clean(t) for t in quotes)
    for pattern in (_PERSONA_AS, _PERSONA_SUBJECT, _PERSONA_FOR):
        m = pattern.search(joined)
        if m:
            return singular_persona(m.group(1))
    for text in quotes:
        m = _PERSONA_START.match(body(text))
        verb = m.group("verb").lower() if m else ""
        if m and verb not in _NOT_A_NEED_VERB and (base_form(verb) in VERBS or verb in _MODALS):
            return singular_persona(m.group(1))
    context_text = " ".join(clean(t) for t in context)  # the question a need answers
    for pattern in (_PERSONA_AS, _PERSONA_SUBJECT):
        m = pattern.search(context_text)
        if m:
            return singular_persona(m.group(1))
    return default


def benefit_of(quotes: Sequence[str]) -> str | None:
    """A purpose a statement states ("so that ...", "so they can ..."), 3-20 words, or None."""
    for quote in quotes:
        m = _PURPOSE.search(body(quote))
        if not m:
            continue
        ends = _trim(_HEDGES.sub("", m.group("ends")))
        ends = re.split(r"\s(?:but|because|and then|whereas|although)\s", ends)[0]
        ends = _trim(ends)
        if 3 <= len(ends.split()) <= 20 and content_words(ends):
            return _lower_first(ends)
    return None


# ------------------------------------------------------------------------------------------------
# acceptance criteria


def criteria(texts: Sequence[str], cap: Capability, title: str, persona: str) -> list[str]:
    """Criteria from the statements (cleaned; the main one first). Each says something the title
    does not; every figure in them is one a statement says."""
    out: list[str] = []
    figures: set[str] = set()
    for k, text in enumerate(texts):
        req = _parse(text)
        clause = req.clause if req.kind else text
        split = _condition(text, first_only=True) or _condition(clause)
        if split:
            when, main_clause = split
            result = _declarative(_parse(main_clause), cap, persona, main_clause)
            if result:
                out.append(
                    f"Given {_article(persona)} {persona}, when {when}, "
                    f"then {_lower_first(result)}."
                )
                continue
        found = limits(text)
        if found:
            for lim in found:
                if lim.quantity.text.lower() in figures:
                    continue
                figures.add(lim.quantity.text.lower())
                bound = "at most" if lim.kind == "max" else "at least"
                verb = _measure_verb(lim.quantity.keys, lim.kind)
                thing = _thing(cap)
                out.append(
                    f"Given {thing}, when it is checked, then it {verb} {bound} "
                    f"{lim.quantity.text}."
                )
            continue
        statement = _declarative(req, cap, persona, text)
        if not statement:
            continue
        numbers = [q.text for q in quantities(text) if q.text.lower() not in figures]
        if numbers and req.kind == "vp" and not _is_user(_subject_words(req.subject)):
            figures.update(n.lower() for n in numbers)
            own = _subject_words(req.subject)
            thing = _thing(Capability("", "", subject=own)) if own else _thing(cap)
            out.append(f"Given {thing}, when it is checked, then {_lower_first(statement)}.")
        elif k > 0 or adds_to_title(statement, title, persona):
            out.append(f"{statement}.")
    kept = [c for c in _dedupe(out) if adds_to_title(c, title, persona)]
    for text in texts:
        for item in _clause_items(text, cap, persona):
            if len(kept) >= MAX_CRITERIA:
                break
            said = {w for c in kept for w in content_words(c)} | set(content_words(title))
            mine = set(content_words(item))
            if len(mine - said) < max(1, len(mine) // 2):
                continue  # mostly said already (the statement's own criterion, the title)
            if adds_to_title(item, title, persona):
                kept.append(item)
    return kept[:MAX_CRITERIA]


_REASON = re.compile(
    r"^(?:because|'cause|cause|since|as|whereas|although|though|so that|in order to|otherwise"
    r"|when|whenever|if|unless|once|after|before|until|while|which|who|that|where)\b",
    re.IGNORECASE,
)
_MAX_ITEM_WORDS = 20
# a clause that opens with a verb has lost its subject to the clause before it
_FRAGMENT = re.compile(
    r"^(?:is|are|was|were|be|been|has|have|had|does|do|did|gets|get|seems?|looks?)\b", re.I
)
_BEHAVIOUR = re.compile(r"^(?:they|it)\s+(?:then\s+|also\s+|automatically\s+)?([a-z]+)\s+\w+", re.I)
_BEHAVIOUR_VERBS = frozenset(
    """get receive see show send notify remind appear open close lock unlock switch turn save
    store sync update book cancel release move delete expire beep light flash play stop start
    go""".split()
)
_DECIDED = re.compile(
    r"^(?:no|not|never|without|only|at least|at most|no more than|up to|max(?:imum)?"
    r"|min(?:imum)?|every|each|all|both|none)\b",
    re.IGNORECASE,
)


def _clause_items(text: str, cap: Capability, persona: str) -> list[str]:
    """Checklist items from the clauses of a statement that the requirement's own clause leaves
    out ("..., so no new chip development", "decision, no GPS tracking, we stick with ..."): a
    clause that states a thing, a decision or a second requirement; never a reason, a purpose, a
    condition cut from its result, a question or talk about the speaker."""
    out = []
    for raw in _CLAUSE_BREAK.split(text):
        clause = _trim(raw or "")
        if not clause or _REASON.match(clause) or _PURPOSE.match(clause) or "?" in clause:
            continue
        clause = _trim(_LEAD.sub("", clause))
        if not clause or _REASON.match(clause) or len(clause.split()) > _MAX_ITEM_WORDS:
            continue
        behaviour = _BEHAVIOUR.match(clause)
        if _MODAL.search(clause):
            item = _declarative(_parse(clause), cap, persona, clause)
        elif behaviour and base_form(behaviour.group(1).lower()) in _BEHAVIOUR_VERBS:
            item = capital(clause)  # "they get a friendly message after two no-shows"
        elif _NEW_CLAUSE.match(clause) or _PERSONA_START.match(clause) or _FRAGMENT.match(clause):
            continue  # "I'm on trains all the time", "you go on a list": talk, not a check
        elif _DECIDED.match(clause) or re.search(r"\d", clause):
            item = capital(clause)  # "no GPS tracking", "only on weekdays", "max 2 profiles"
        else:
            continue  # "channel and volume": a piece of a list, not a check
        if item and len(content_words(item)) >= 2 and len(item.split()) >= MIN_TITLE_WORDS:
            out.append(item.rstrip(".") + ".")
    return out


_CONDITION_WORD = re.compile(r"^(?:when|whenever|if|as soon as|once|after|unless)\s+", re.I)


def _condition(text: str, first_only: bool = False) -> tuple[str, str] | None:
    """(condition, result) of a statement that holds one: "if X, Y", "Y when X" (not with
    ``first_only``: a whole sentence of several clauses), and "if X they can Y" said without a
    comma (the result starts at the subject of its modal)."""
    cond = _CONDITION_FIRST.match(text) or (None if first_only else _CONDITION.match(text))
    if cond:
        when, main = _trim(cond.group("cond")), cond.group("main").strip(" ,;:.!?")
    else:
        lead = _CONDITION_WORD.match(text)
        modal = lead and (_MODAL.search(text, lead.end()) or _WEAK_MODAL.search(text, lead.end()))
        tail = modal and _SUBJECT_TAIL.search(text[: modal.start()].rstrip())
        if not (lead and modal and tail) or tail.start() <= lead.end():
            return None
        when, main = _trim(text[lead.end() : tail.start()]), text[tail.start() :].strip(" ,;:.!?")
    if len(when.split()) < 2 or len(main.split()) < 2:
        return None
    return when, main


def _declarative(req: _Requirement, cap: Capability, persona: str = "user", text: str = "") -> str:
    """The requirement as a present-tense statement, with the details the rest of its sentence
    adds: 'it should be red' -> 'The power button is red'; 'users must be able to cancel, up
    to two hours before' -> 'Users can cancel, up to two hours before'."""
    if not req.kind or " and " in req.subject:  # no modal, or two clauses joined by "and"
        whole = (text or req.clause).strip(" ,;:.!?") if req.kind else _trim(text or req.clause)
        return capital(whole) if len(whole.split()) >= 3 else ""
    statement = _present(req, cap, persona)
    tail = _details_after(req.clause, text)
    return f"{statement}, {tail}" if statement and tail else statement


def _details_after(clause: str, text: str) -> str:
    """What the sentence says after the requirement's clause, when it adds a detail (not a
    reason, a purpose or a new clause)."""
    at = text.find(clause) if clause and text else -1
    if at < 0:
        return ""
    tail = _trim(text[at + len(clause) :])
    if len(content_words(tail)) < 2 or _NEW_CLAUSE.match(tail) or _NOT_DETAIL.match(tail):
        return ""
    return tail


def _present(req: _Requirement, cap: Capability, persona: str) -> str:
    subject = _subject_words(req.subject)
    if subject.lower() in ("i", "me"):
        subject = f"the {persona}"
    elif not subject or _PRODUCT_PRONOUN.match(subject):
        keep = "they" if subject.lower() == "they" else ""  # people, unless the need names a thing
        subject = _the(cap.obj) if cap.obj and subject.lower() in ("it", "they", "") else keep
    if req.kind == "np":
        rest = _trim(req.rest)
        if len(content_words(rest)) < 2 or re.match(r"(?:for|to|in|on|at|by|with)\b", rest, re.I):
            return ""
        return f"{capital(rest)} is available"
    words = _trim(req.rest).split()
    if not words:
        return ""
    plural = bool(re.search(r"(?:s|people|staff|we|they|you)$", subject.lower()))
    head = words[0].lower()
    if head == "be" and words[1:3] == ["able", "to"]:
        verb_phrase = "can " + " ".join(words[3:])
    elif head in ("not", "never") and len(words) > 1:
        inner = base_form(words[1])
        if inner == "be":
            verb_phrase = f"{'are' if plural else 'is'} {head} " + " ".join(words[2:])
        else:
            aux = "do" if plural else "does"
            verb_phrase = f"{aux} {head} {inner} " + " ".join(words[2:])
    elif head == "be":
        verb_phrase = ("are " if plural else "is ") + " ".join(words[1:])
    elif base_form(head) in VERBS:
        verb = base_form(head)
        verb_phrase = (verb if plural else third_person(verb)) + " " + " ".join(words[1:])
    else:
        return ""
    if not subject:
        subject = "the product"
    return capital(_trim(f"{subject} {verb_phrase}"))


def adds_to_title(criterion: str, title: str, persona: str = "") -> bool:
    """Whether a criterion says something the title does not: a content word of its own (verbs
    compared in their base form) that is not the persona or a word every criterion uses, or a
    figure the title lacks. The story checks (``eval judge``) use the same test."""

    def words(text: str) -> set[str]:
        return {base_form(w) for w in content_words(text)}

    said = words(title) | words(persona) | _BOILERPLATE
    own = {w for w in words(criterion) if w not in said and is_topical(w)}
    if own or (re.search(r"\d", criterion) and not re.search(r"\d", title)):
        return True
    # a Given/When/Then that makes a figure or a limit of the title testable adds its check
    return bool(_GWT.match(criterion)) and bool(_MEASURE.search(criterion))


def _thing(cap: Capability) -> str:
    """What a measurable criterion is about: a subject the statement names ("the remote"), else
    the need's object when it is a plain noun phrase, else the product."""
    subject = _subject_words(cap.subject)
    plain = re.compile(r"^(?!no\b|not\b|none\b)", re.IGNORECASE)
    if subject and plain.match(subject) and not _PRODUCT_PRONOUN.match(subject):
        if not _is_user(subject):
            return _the(subject)
    if cap.obj and plain.match(cap.obj) and not _MEASURE.search(cap.obj):
        if len(cap.obj.split()) <= 5:
            return _the(cap.obj)
    return "the product"


def _measure_verb(keys: frozenset[str], kind: str) -> str:
    duration = "takes" if kind == "max" else "lasts"
    for family, verb in (
        ("currency", "costs"),
        ("duration", duration),
        ("mass", "weighs"),
        ("length", "measures"),
        ("percent", "reaches"),
    ):
        if family in keys:
            return verb
    return "has"


# ------------------------------------------------------------------------------------------------
# small helpers


def _trim(text: str) -> str:
    """Collapsed whitespace, no surrounding punctuation and no dangling function words (a verb's
    particle stays: "log in", "switch off")."""
    text = re.sub(r"\s+", " ", text).strip(" ,;:.!?-/\"'")
    particle = _PARTICLE.search(text)
    if particle and base_form(particle.group("verb")) in VERBS:
        return text
    return _DANGLING.sub("", text).strip(" ,;:.!?-/\"'") or text


def _the(noun_phrase: str) -> str:
    """'a power button' -> 'the power button'."""
    return "the " + _lower_first(_NOUN_OPENERS.sub("", noun_phrase.strip())) if noun_phrase else ""


def _article(word: str) -> str:
    low = word.lower()
    if low.startswith(("user", "uni", "use", "eu", "one", "ux")):
        return "a"
    return "an" if low[:1] in "aeiou" or low.startswith(("hour", "honest")) else "a"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def capital(text: str) -> str:
    """First letter up, known acronyms upper case ("tv" -> "TV")."""
    text = _ACRONYM_WORDS.sub(lambda m: m.group(1).upper(), text.strip())
    return text[:1].upper() + text[1:] if text else text


def _lower_first(text: str) -> str:
    if len(text) > 1 and text[1].isupper():
        return text  # an acronym: "LCD ..."
    return text[:1].lower() + text[1:]


def _dedupe(items: list[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        mine = set(content_words(item))
        if all(len(mine ^ set(content_words(kept))) > 1 for kept in out):
            out.append(item)
    return out
