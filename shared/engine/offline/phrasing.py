"""Writing a user story from the sentences that state it (the offline generator's prose).

Owns: title, "As a <role>, I want <means>, so that <ends>" description and acceptance criteria
for a group of quoted sentences, plus ``clarity``: how plainly a sentence states a requirement.
The approach is shallow parsing: cut the sentence into clauses, find the modal that carries the
requirement ("must", "should", "need", "let's go with", ...), take the subject before it and the
verb phrase or noun phrase after it. "We'll need only few buttons" gives the title "Only few
buttons", the means "only few buttons" and the criterion "The product must have only few
buttons.". Statements without a modal (notes bullets, decisions) are kept as said. Criteria only
restate the quotes, so every number in them comes from a quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.agents import StoryDraft
from shared.engine.offline.contradiction import limits, quantities
from shared.engine.offline.language import clean, content_words, is_topical
from shared.textio import jaccard

MAX_TITLE_WORDS = 10
_FIGURE = re.compile(
    r"[$€£]?\d[\d.,]*%?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|forty|fifty|hundred|thousand"
)

_LEAD = re.compile(
    r"^(?:(?:so|and|but|well|okay|ok|also|then|now|yeah|yes|right|alright|basically|actually"
    r"|like|because|'cause|and also|i think(?: that)?|we think(?: that)?|i guess|i believe"
    r"|i mean|you know|of course|first(?: of all)?|second|finally|plus|new|note)\b[\s,:]*)+",
    re.IGNORECASE,
)
# "NEW: ...", "Industrial Design: ...", "Locator: ..." (not "No more than 8 buttons: ...")
_LABEL_PREFIX = re.compile(
    r"^(?:\[[ xX]\]\s*)?(?:(?!(?i:no|not|only|at|max|min|must|should)\b)[A-Z][A-Za-z/&']*"
    r"(?:[ -][A-Za-z/&']+){0,3}:\s+)?"
)
_HEDGES = re.compile(
    r"\b(?:just|really|actually|basically|maybe|probably|perhaps|i think|you know|kind of"
    r"|sort of|i guess)\b\s*,?\s*",
    re.IGNORECASE,
)
# The modal that carries a requirement, and what follows it: a verb phrase ("should be cheap") or
# a noun phrase ("we need a screen"). Fixed noun-phrase decisions come first ("let's go with X").
_MODAL = re.compile(
    r"\b(?:(?P<np1>let's go (?:with|for)|let us go (?:with|for)|go with|stick with)"
    r"|(?P<vp>must|shall|should|ought to|needs? to|have to|has to|had to|got to|gotta"
    r"|would like to|'d like to|wants? to|(?:is|are|'re) going to|decided to|agreed to|let's"
    r"|let us|(?:will|'ll|can|could)(?:(?= also| still) \w+)?(?= (?:have|use|include|keep|make|add"
    r"|put|drop|offer|support|show|provide|go|train|implement|integrate|build)\b))"
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
    r"|everybody|the client|the customer|the product|the device|the system|the remote"
    r"(?: control)?)(?:'ll|'d| will| would| all| really| also| do| still| probably)?\s*)?$",
    re.IGNORECASE,
)
_SUBORDINATORS = frozenset(
    "what which where that who whom if whether when than how time why whatever".split()
)
_SUBJECT_TAIL = re.compile(
    r"(?:^|\s)((?:i|we|you|they|it|people|users?|customers?|viewers?|everyone|everybody"
    r"|the (?:users?|customers?|client|product|device|system|remote(?: control)?))"
    r"(?:'ll|'d| will| would| all| really| also| do| still)?)$",
    re.IGNORECASE,
)
_USER_STORY = re.compile(
    r"\bas an? (?P<role>[\w -]{1,40}?),? i (?:want|need|would like)(?: to)? (?P<means>.+?)"
    r"(?:,? so that (?P<ends>.+))?$",
    re.IGNORECASE,
)
_REASON = re.compile(
    r"(?:\bso that\b|\bin order to\b|\bbecause\b|'cause\b)\s*(?P<ends>[^.;!?]+)",
    re.IGNORECASE,
)
_CONDITION = re.compile(
    r"^(?P<main>.+?),?\s+\b(?:when|whenever|if|as soon as|once)\b\s+(?P<cond>[^,;]+)",
    re.IGNORECASE,
)
_CONDITION_FIRST = re.compile(
    r"^(?:when|whenever|if|as soon as|once)\s+(?P<cond>[^,;]+),\s*(?P<main>.+)$", re.IGNORECASE
)
_ROLES = (
    ("viewer", r"\bviewers?\b|\bwatch(?:es|ing)?\b"),
    ("customer", r"\bcustomers?\b|\bbuyers?\b|\bclients?\b"),
    ("parent", r"\bparents?\b|\bbab(?:y|ies)\b|\bkids?\b|\bchild(?:ren)?\b"),
    ("older user", r"\belderly\b|\bolder (?:people|users)\b|\bold people\b"),
    ("administrator", r"\badmin(?:istrator)?s?\b"),
)
# after these a "must" criterion reads naturally ("The product must have ..."); other verbs get
# "It must be possible to ..."
_PRODUCT_VERBS = frozenset(
    "have be include support offer provide allow show display work fit cost use stay keep".split()
)
_DANGLING = re.compile(
    r"(?:\s+(?:and|or|but|so|like|the|a|an|to|of|with|that|which|because|'cause|uh|um|for|in"
    r"|on|at|by|from|as|than|our|their|your|my|its|some|is|are))+$",
    re.IGNORECASE,
)
_FINITE_VERB = re.compile(
    r"\b(?:is|are|was|were|stays?|goes|has|have|will|can|must|means|does|do|wins|shows|works)\b",
    re.IGNORECASE,
)
_ACRONYM_WORDS = re.compile(r"\b(tv|lcd|led|ui|ux|ir|usb|eur|dvd|rgb|pcb|dsp|ac|dc)\b")


@dataclass
class _Requirement:
    """The clause of a sentence that states the requirement, cut at its modal."""

    clause: str
    subject: str
    kind: str  # "vp": a verb phrase follows the modal, "np": a noun phrase, "": no modal
    rest: str
    embedded: bool = False  # the modal sits in a relative clause ("the buttons that I need")


def write_story(quotes: list[str], primary: int, theme: str) -> StoryDraft:
    """The story these sentences (verbatim quotes) state; ``quotes[primary]`` states it best."""
    body = _body(quotes[primary])
    role = _role(" ".join(quotes))
    story = _USER_STORY.search(body)
    ends = None
    if story:
        role = story.group("role").strip()
        means = _trim(story.group("means"))
        title, ends = capital(_shorten(means)), story.group("ends")
    else:
        title, means, _ = _phrases(_parse(body))
    if not ends:
        for quote in quotes:
            m = _REASON.search(_body(quote))
            if m and 3 <= len(m.group("ends").split()) <= 15 and m.group("ends") not in means:
                ends = m.group("ends")
                break
    ends_text = _trim(ends) if ends else f"the product meets what was agreed for {theme.lower()}"
    return StoryDraft(
        title=title,
        description=f"As a {role}, I want {means}, so that {ends_text}.",
        acceptance_criteria=_criteria(quotes),
        source_quotes=list(quotes),
    )


def clarity(sentence: str, bullet: bool = False) -> float:
    """Bonus for a requirement said plainly, malus for one buried in a long ramble."""
    body = _body(sentence)
    if _USER_STORY.search(body):
        return 0.5
    req = _parse(body)
    if not req.kind:
        return -1.0 if len(body.split()) > 15 and not bullet else 0.0
    if req.embedded or (not _PRONOUN_SUBJECT.match(req.subject) and len(req.subject.split()) > 6):
        return -1.0
    return 0.5


def _body(sentence: str) -> str:
    """The sentence cleaned for writing: no markers, fillers, labels or leading discourse words."""
    text = clean(sentence)
    text = _LABEL_PREFIX.sub("", text, count=1)
    text = re.sub(r"\s*\([^()]*\)", "", re.sub(r",\s*like\s+", " ", text))  # asides out
    text = _LEAD.sub("", text)
    return _HEDGES.sub("", text).strip(" ,;:-")


def _parse(body: str) -> _Requirement:
    clauses = [c for c in _CLAUSE_BREAK.split(body) if c and c.strip()]
    found = [(k, m) for k, c in enumerate(clauses) if (m := _MODAL.search(c))]
    if not found:  # "the user can set ...": a plain "can" only when nothing stronger is said
        found = [(k, m) for k, c in enumerate(clauses) if (m := _WEAK_MODAL.search(c))]
    for k, m in found:
        clause = clauses[k]
        rest = _trim(clause[m.end() :])
        if not content_words(rest) and k + 1 < len(clauses):
            rest = _trim(f"{rest} {clauses[k + 1]}")
        rest = re.sub(r"^to\s+", "", rest)
        if not rest:
            continue
        kind = "vp" if m.group("vp") else "np"
        subject = _LEAD.sub("", clause[: m.start()]).strip(" ,")
        tail = _SUBJECT_TAIL.search(subject)
        # "the volumes we need for the launch": the object of the modal was moved away
        embedded = bool(re.match(r"(?:is|are|was|were)\b", rest, re.IGNORECASE)) or (
            kind == "np" and bool(re.match(r"(?:for|to|in|on|at|with|by|from)\b", rest, re.I))
        )
        if tail:  # "to make it baby-proof it got to be ...": the subject is the pronoun
            before = subject[: tail.start()].split()
            # "what people want to use", "the buttons that I need": a relative clause, not a claim
            embedded = embedded or bool(before and before[-1].lower() in _SUBORDINATORS)
            subject = tail.group(1)
        return _Requirement(_trim(clause), subject, kind, rest, embedded)
    clause = next((c for c in clauses if len(c.split()) >= 3), body)
    return _Requirement(_trim(clause), "", "", _trim(clause))


def _phrases(req: _Requirement) -> tuple[str, str, str]:
    """(title, means for "I want ...", a "must" criterion) for one requirement."""
    rest, subject = req.rest, req.subject
    if not req.kind:
        means = _lower_first(rest)
        if _FINITE_VERB.search(means):  # "I want that the selling price stays at 25 EUR"
            means = f"that {means}"
        return capital(_shorten(rest)), means, f'The product must comply with: "{capital(rest)}".'

    pronoun = bool(_PRONOUN_SUBJECT.match(subject))
    if req.embedded or (not pronoun and len(subject.split()) > 8):  # keep the clause as said
        clause = _lower_first(req.clause)
        return (
            capital(_shorten(req.clause)),
            clause,
            f'The product must comply with: "{capital(clause)}".',
        )
    if req.kind == "np":
        noun = re.sub(r"^(?:a|an|the|some)\s+", "", rest, flags=re.IGNORECASE)
        if pronoun:
            return capital(_shorten(noun)), rest, f"The product must have {rest}."
        return (
            capital(_shorten(req.clause)),
            f"{_lower_first(subject)} to have {rest}",
            f"{capital(subject)} must have {rest}.",
        )
    if not pronoun:
        return (
            capital(_shorten(req.clause)),
            f"{_lower_first(subject)} to {rest}",
            f"{capital(subject)} must {rest}.",
        )
    core = re.sub(
        r"^(?:be able to|have|get|be)\s+(?:(?:a|an|the)\s+)?", "", rest, flags=re.IGNORECASE
    )
    who = subject.lower().split()[0] if subject else ""
    if who in {
        "people",
        "users",
        "user",
        "you",
        "one",
        "everyone",
        "everybody",
        "customers",
        "customer",
        "viewers",
        "viewer",
    }:
        return _title(core, rest), f"to {rest}", f"Users can {rest}."
    if who in {"it", "they", "the"}:
        return (
            _title(core, rest),
            f"{subject.lower()} to {rest}",
            f"{capital(subject)} must {rest}.",
        )
    first = rest.split()[0].lower()
    criterion = (
        f"The product must {rest}."
        if first in _PRODUCT_VERBS or first in {"never", "not", "only", "always", "also"}
        else f"It must be possible to {rest}."
    )
    return _title(core, rest), f"to {rest}", criterion


def _title(core: str, rest: str) -> str:
    """The predicate without "have a" / "be", unless that leaves a single non-topic word."""
    words = core.split()
    if len(words) >= 2 or (words and is_topical(words[0].lower())):
        return capital(_shorten(core))
    return capital(_shorten(rest))


def _criteria(quotes: list[str]) -> list[str]:
    out: list[str] = []
    for quote in quotes[:2]:
        body = _trim(_body(quote))
        req = _parse(body)
        cond = _CONDITION_FIRST.match(req.clause) or _CONDITION.match(req.clause)
        if cond and len(cond.group("cond").split()) >= 2 and len(cond.group("main").split()) >= 2:
            out.append(
                f"Given the product is in use, when {_trim(cond.group('cond'))}, "
                f"then {_lower_first(_trim(cond.group('main')))}."
            )
        else:
            out.append(_phrases(req)[2])
    text = " ".join(quotes)
    seen: set[str] = set()
    for lim in limits(text):
        if lim.quantity.text.lower() in seen:
            continue
        seen.add(lim.quantity.text.lower())
        bound = "at most" if lim.kind == "max" else "at least"
        verb = _measure_verb(lim.quantity.keys, lim.kind)
        out.append(
            f"Given the finished product, when it is checked, then it {verb} {bound} "
            f"{lim.quantity.text}."
        )
    for q in quantities(text):
        if q.text.lower() not in seen and not any(q.text.lower() in c.lower() for c in out):
            seen.add(q.text.lower())
            out.append(f"The stated figure of {q.text} is met.")
    return _dedupe(out)[:4]


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


def _role(text: str) -> str:
    low = clean(text).lower()
    for role, pattern in _ROLES:
        if re.search(pattern, low):
            return role
    return "user"


def _shorten(text: str) -> str:
    """At most MAX_TITLE_WORDS words, cut at a clause break when there is one."""
    text = _trim(text)
    words = text.split()
    if len(words) > MAX_TITLE_WORDS:
        head = re.split(r"[,;:(]|\s(?:so that|because|which|when|and then|but)\s", text)[0]
        if 3 <= len(head.split()) <= MAX_TITLE_WORDS:
            words = head.split()
        else:
            cut = MAX_TITLE_WORDS
            # never end on a bare figure: "at least 12" keeps its unit ("12 months")
            if cut < len(words) and _FIGURE.fullmatch(words[cut - 1].strip(",.;:").lower()):
                cut += 1
            words = words[:cut]
    return _trim(" ".join(words)) or text


def _trim(text: str) -> str:
    """Collapsed whitespace, no surrounding punctuation and no dangling function words."""
    text = re.sub(r"\s+", " ", text).strip(" ,;:.!?-/\"'")
    return _DANGLING.sub("", text).strip(" ,;:.!?-/\"'") or text


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
        if all(jaccard(item, kept) < 0.9 for kept in out):
            out.append(item)
    return out
