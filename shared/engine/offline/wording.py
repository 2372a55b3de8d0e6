"""Small wording helpers of the offline drafting (``phrasing``, ``statement``, ``criteria``):
trimming a phrase to its words, articles, capitals.

Pure functions of their text: deterministic.
"""

from __future__ import annotations

import re

from shared.engine.offline.lexicon import PROPER_NOUNS, VERBS, base_form

# "double A" (WCAG's AA), "grade A", "plan A": a letter, not an article
_LETTER_AFTER = ("double", "triple", "grade", "plan", "level")
_LETTER_NAMED = "".join(f"(?<!{w})" for w in _LETTER_AFTER)
_DANGLING = re.compile(
    rf"(?:{_LETTER_NAMED}\s+(?:and|or|but|so|like|the|a|an|to|of|with|that|which|because|'cause|uh|um|for|in"
    r"|on|at|by|from|as|than|our|their|your|my|its|some|is|are|be|it|this|these|those|we|you"
    r"|they|i|can|will|would|should|must|not|no|if|when|where|what|how|there|here|very|more"
    r"|most|any|every|each|all|just|also|then|into|onto|about|per|via))+$"
    r"|\s+to\s+(?:do|be|have|get|go|make)$",
    re.IGNORECASE,
)
# a question said inside a sentence, ending on its subject and verb ("which vet it is")
_ASKED_WITHIN = re.compile(
    r"\b(?:which|what|who|where|whose|how)\b(?:\s+[a-z'-]+){0,4}\s+(?:it|they|this|that|he|she)"
    r"\s+(?:is|are|was|were)$",
    re.IGNORECASE,
)
# "there" said of where someone is ("that confirms you're there")
_BEING_THERE = re.compile(r"\b(?:you|they|we|i|he|she)(?:'re|'m|\s+are|\s+am|\s+is)\s+there$", re.I)
# a second verb's object, the first one's thing ("ship the order partially or hold it")
_SAME_OBJECT = re.compile(r"\b(?:or|and)\s+(?!to\b)[a-z]+\s+(?:it|them)$", re.IGNORECASE)
# irregular pasts a question inside a need is said with ("which parent gave it")
_PAST_SAID = "|".join(
    """gave made took sent did got saw put set paid wrote chose left brought bought sold told said
    found kept read ran came went won lost spent broke rang""".split()
)
# a question said inside a need, up to its verb ("which parent gave", "who changed")
_ASKED_INSIDE = r"\b(?:who|which|what)\s+(?:[a-z]+\s+){0,2}?"
_OBJECT_LAST = re.compile(r"\b(?P<verb>[a-z]+)\s+(?:it|them|this|these|those)$", re.IGNORECASE)
# a verb with its own subject, said after a subordinator ("before the pharmacy gets", "once the
# manager approves"): the clause's object pronoun is no dangling word
_CLAUSE_VERB = re.compile(
    r"\b(?:before|after|until|once|when|whenever|if|unless|so that)\s+(?:the\s+|a\s+|an\s+)?"
    r"[a-z]+\s+(?:[a-z]+(?<!ss)s|[a-z]+ed)$"
    r"|\b(?:who|which)\s+(?:[a-z]+(?<!ss)s|[a-z]+ed)$"  # "..., who approved it"
    # "..., and the affected residents get it": a clause of its own, with a subject named
    r"|,\s*(?:and|but)\s+(?:the|their|our|every|each)\s+(?:[a-z]+\s+){0,2}[a-z]+s?\s+[a-z]+$"
    # "..., so people know we normally have it": a clause of its own, with a pronoun subject
    r"|(?:,|\bso|\bknow|\bthat)\s+(?:we|they|you|i|he|she)\s+(?:(?:can|could|will|would|do|did"
    r"|normally|always|usually|still|already|also)\s+)*[a-z]+$"
    # "record which parent gave it": a question said inside the need, with its own verb
    rf"|{_ASKED_INSIDE}(?:[a-z]+ed|{_PAST_SAID})$",
    re.IGNORECASE,
)
# a verb of access left without the thing it is done to ("see it", "let only managers see it"):
# the pronoun stays
_ONLY_THE_VERB_LEFT = re.compile(
    r"^(?:(?:let\s+)?only\s+(?:[\w'-]+\s+){1,6}(?:to\s+)?)?(?:see|view|read|access|edit|change"
    r"|open|delete|approve|sign)$|^to\s+[a-z]+$",  # "I want to log it", not "to log"
    re.I,
)
# "record which parent gave it and when": the question's other half, no dangling words
_AND_WHEN = re.compile(
    rf"{_ASKED_INSIDE}(?:[a-z]+(?<!ss)s|[a-z]+ed|{_PAST_SAID})"
    r"\s+(?:it|them)\s+and\s+(?:when|where|how|why)$",
    re.IGNORECASE,
)
_PARTICLE = re.compile(
    r"\b(?P<verb>[a-z]+)\s+(?:(?:it|them|that|this|these|those|everything)\s+)?"
    r"(?P<particle>in|on|out|up|off|over|down|back|away|through)$",
    re.IGNORECASE,
)
_ACRONYM_WORDS = re.compile(r"\b(tv|lcd|led|ui|ux|ir|usb|eur|dvd|rgb|pcb|dsp|ac|dc|gdpr|sms|pdf)\b")
_NOUN_OPENERS = re.compile(
    r"^(?:a|an|the|some|any|our|their|your|its|this|that|these|those)\s+", re.I
)


# a preposition left at the end of a clause said of a thing before it ("a calendar feed link they
# subscribe to", "the rooms we talked about", "the person it's assigned to")
_STRANDED = re.compile(
    r"\b(?:we|they|you|i|people|users|staff|everyone|it's|it is|it was|it|he|she)\s+"
    r"(?:(?:can|could|will|would|should|must|have|has|had|are|were|is|was|already|always|just"
    r"|all|then|also)\s+)*(?P<verb>[a-z]+)(?:\s+(?:in|up|on|back|out))?\s+"
    r"(?:to|about|with|for|from|on|in|into|at|of|by)$",
    re.IGNORECASE,
)


def ends_with_stranded_preposition(text: str) -> bool:
    """Whether the text ends on the preposition of a clause said of the thing before it ("a
    link they subscribe to"), which is no dangling word."""
    found = _STRANDED.search(text.rstrip(" .!?"))
    if found is None:
        return False
    verb = found.group("verb").lower()
    if text.rstrip(" .!?").lower().endswith(" to") and verb in _BEFORE_INFINITIVE:
        return False  # "as you want to", "we have to": a verb left out, no preposition
    return base_form(verb) in VERBS or verb.endswith("ed")


_BEFORE_INFINITIVE = frozenset(
    "want wants wanted have has had need needs needed like love going got ought used try able"
    " supposed meant allowed".split()
)


def _trim(text: str, keep_object: bool = False) -> str:
    """Collapsed whitespace, no surrounding punctuation and no dangling function words (a verb's
    particle stays: "log in", "switch off"; so does a clause's preposition: "a link they
    subscribe to"); with ``keep_object``, a verb's object pronoun too ("when they reach it":
    a condition, not a title that must name its thing)."""
    text = re.sub(r"\s+", " ", text).strip(" ,;:.!?-/\"'")
    if ends_with_verb_particle(text) or ends_with_stranded_preposition(text):
        return text
    if _ASKED_WITHIN.search(text):  # "see which vet it is": the question's own "it is"
        return text
    if _BEING_THERE.search(text):  # "that confirms you're there": where they are
        return text
    if _SAME_OBJECT.search(text):  # "ship the order partially or hold it": the order
        return text
    if _AND_WHEN.search(text):  # "record which parent gave it and when"
        return text
    said = _OBJECT_LAST.search(text)
    verb = said.group("verb").lower() if said else ""
    if (
        said
        and base_form(verb) in VERBS
        and (keep_object or _CLAUSE_VERB.search(text[: said.end("verb")]))
    ):
        return text
    out = _DANGLING.sub("", text).strip(" ,;:.!?-/\"'") or text
    if said and text.lower().startswith(out.lower()) and _ONLY_THE_VERB_LEFT.match(out):
        return text  # "see it", not "see"
    return out


def ends_with_a_letter(text: str) -> bool:
    """Whether the text ends on a letter named after its word ("double A", "grade A"), which is
    no dangling article."""
    return bool(re.search(rf"\b(?:{'|'.join(_LETTER_AFTER)})\s+A$", text.rstrip(" .!?"), re.I))


def ends_with_verb_particle(text: str) -> bool:
    """Whether the text ends on a verb's particle ("log in", "switch on"), which is no dangling
    word."""
    particle = _PARTICLE.search(text.rstrip(" .!?"))
    if particle is not None and re.search(
        r"(?:'s|\bis|\bare|'re|\bbe)$", text[: particle.start("particle")].rstrip(), re.I
    ):
        return True  # "if nobody's in", "while the lights are on": a state, no dangling word
    return particle is not None and base_form(particle.group("verb")) in VERBS


def _the(noun_phrase: str) -> str:
    """'a power button' -> 'the power button'."""
    return "the " + _lower_first(_NOUN_OPENERS.sub("", noun_phrase.strip())) if noun_phrase else ""


def _article(word: str) -> str:
    low = word.lower()
    if low.startswith(("user", "uni", "use", "usu", "uti", "ubi", "eu", "one", "once", "ux")):
        return "a"
    return "an" if low[:1] in "aeiou" or low.startswith(("hour", "honest")) else "a"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


_NO_ARTICLE_BEFORE = frozenset(
    """all any each every either other our own its it if in on of or and at as up us off out
    over only also even into onto upon about under until""".split()
)
_ARTICLE = re.compile(r"(?:^(A|An)|\b(an?)) (?=([a-z][\w-]*))")


def articles(text: str) -> str:
    """'a' or 'an' as the next word is said ("a advanced chip" -> "an advanced chip", "an back
    light" -> "a back light"); before a capital or an acronym the words stay as written, and a
    capital "A" only opens the text ("Plan A is ...")."""

    def said(m: re.Match[str]) -> str:
        if m.group(3).lower() in _NO_ARTICLE_BEFORE:
            return m.group(0)  # "think of a all these ...": a restart, not a wrong article
        article = _article(m.group(3))
        return (_cap(article) if m.group(1) else article) + " "

    return _ARTICLE.sub(said, text)


def capital(text: str) -> str:
    """First letter up, known acronyms upper case ("tv" -> "TV"), 'a' / 'an' as said."""
    text = _ACRONYM_WORDS.sub(lambda m: m.group(1).upper(), articles(text.strip()))
    return text[:1].upper() + text[1:] if text else text


def _lower_first(text: str) -> str:
    if len(text) > 1 and text[1].isupper():
        return text  # an acronym: "LCD ..."
    if re.match(r"I(?:\b|')", text):
        return text  # the pronoun: "so that I can show the committee"
    if _PROPER_FIRST.match(text):
        return text  # a name: "English and Polish for launch" ("Polish the case" is a verb)
    return text[:1].lower() + text[1:]


_PROPER_FIRST = re.compile(
    rf"(?:{'|'.join(sorted(w.capitalize() for w in PROPER_NOUNS))})\b"
    r"(?!\s+(?:the|a|an|it|them|this|that|these|those|up|off)\b)"
)
