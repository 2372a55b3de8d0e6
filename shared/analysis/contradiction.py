"""Deterministic contradiction cues between two requirement texts, and limit checks.

Used by the tagger (conflict) and by the generator (architecture constraint violations). Each
detector returns human-readable cues such as ``numbers differ: '15 buttons' vs '8 buttons'``; an
empty list means no contradiction was found. The rules, in the order they are tried:

1. numbers: the same quantity (same unit family - currency, duration, percent, mass, length - or
   the same counted noun, "15 buttons" / "8 physical buttons") with no value in common; spoken
   numbers count ("twelve point five Euros"), dates, versions and ids ("ARC-03") do not; and
   frequencies ("monthly", "once a week", "every 3 days") with no period in common;
2. negation: a content word that one text only negates ("no teletext button", "X is dropped",
   "X are not allowed", "A instead of X") while the other only asserts it. "so that / because"
   clauses are ignored (they give reasons), and so is a negated place ("not on the battery cover");
3. modal flip: "must/required/mandatory" against "optional/may/nice to have" on shared words;
4. quantifiers: "all/every" against "some/only/none" on the same noun;
5. antonyms: an explicit list of pairs (enable/disable, allow/prevent, include/exclude,
   rechargeable/disposable, show/hide, automatic/manual, keep/delete, anonymous/logged in, ...),
   outside "so that / because" clauses.

``limit_violations`` compares a story with a constraint that states a maximum or a minimum
("must not exceed 12.50 EUR", "at least 12 months") about the same thing and reports a value on
the wrong side of it; ``forbidden_mentions`` reports what a constraint rules out and a story asks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from shared.text.language import clean, content_words, is_content, is_topical, lemma
from shared.text.textio import short_text_cache

# ------------------------------------------------------------------------------------------------
# quantities

_SMALL = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    w: 10 * i
    for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split())
    if w != "_"
}
_SCALE = {"hundred": 100, "thousand": 1000}

# unit word -> (family, factor to the family's base unit)
_UNIT_TABLES: dict[str, dict[str, float]] = {
    "currency": {
        "eur": 1,
        "euro": 1,
        "euros": 1,
        "€": 1,
        "$": 1,
        "usd": 1,
        "dollar": 1,
        "dollars": 1,
        "pound": 1,
        "pounds": 1,
        "£": 1,
        "cent": 0.01,
        "cents": 0.01,
    },
    "duration": {
        "ms": 0.001,
        "millisecond": 0.001,
        "milliseconds": 0.001,
        "s": 1,
        "sec": 1,
        "secs": 1,
        "second": 1,
        "seconds": 1,
        "min": 60,
        "mins": 60,
        "minute": 60,
        "minutes": 60,
        "h": 3600,
        "hour": 3600,
        "hours": 3600,
        "day": 86400,
        "days": 86400,
        "week": 604800,
        "weeks": 604800,
        "month": 2629800,
        "months": 2629800,
        "year": 31557600,
        "years": 31557600,
    },
    "percent": {"%": 1, "percent": 1},
    "mass": {"g": 1, "gram": 1, "grams": 1, "kg": 1000, "kilo": 1000, "kilos": 1000},
    "length": {
        "mm": 0.001,
        "cm": 0.01,
        "m": 1,
        "metre": 1,
        "metres": 1,
        "meter": 1,
        "meters": 1,
        "inch": 0.0254,
        "inches": 0.0254,
    },
    "current": {"ua": 1e-6, "ma": 1e-3},
}
_UNITS: dict[str, tuple[str, float]] = {}
for _family, _table in _UNIT_TABLES.items():
    for _word, _factor in _table.items():
        _UNITS[_word] = (_family, float(_factor))

_NUM_TOKEN = r"\d+(?:[.,]\d+)*"
_WORD_NUM = "|".join([*_SMALL, *_TENS, *_SCALE, "point", "half"])
_HALF = r"and an? half\b"  # "twelve and a half", "2 and a half"
_QUANTITY = re.compile(
    rf"(?P<cur>[€$£])?\s?(?<![\w.,/-])(?P<num>(?:{_NUM_TOKEN}|(?:(?:{_WORD_NUM})\b[ -]?)+)"
    rf"(?:\s*{_HALF}[ -]?)?)"
    rf"(?![\w/-]*\d)(?:\s*(?P<unit>%|[a-z€$£]+)(?:\s+(?P<noun>[a-z][a-z-]+))?"
    rf"(?:\s+(?P<noun2>[a-z][a-z-]+))?)?",
    re.IGNORECASE,
)


def _parse_number(token: str) -> float | None:
    token = token.strip().lower().rstrip("-")
    half = re.search(rf"\s*{_HALF}$", token)
    if half:
        whole = _parse_number(token[: half.start()])
        return None if whole is None else whole + 0.5
    if re.fullmatch(_NUM_TOKEN, token):
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", token):
            token = token.replace(",", "")
        token = token.replace(",", ".")
        try:
            return float(token)
        except ValueError:
            return None
    total, current, fraction, after_point = 0.0, 0.0, "", False
    for w in re.split(r"[ -]+", token):
        if w == "point":
            after_point = True
        elif after_point and w in _SMALL and _SMALL[w] < 10:
            fraction += str(_SMALL[w])
        elif w in _SMALL:
            current += _SMALL[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w == "thousand":
            total += max(current, 1) * 1000
            current = 0
        elif w == "half":
            current += 0.5
        else:
            return None
    value = total + current
    return value + float(f"0.{fraction}") if fraction else value


@dataclass(frozen=True)
class Quantity:
    value: float  # in the family's base unit
    keys: frozenset[str]  # {"currency"}, {"duration"}, ... or {"count:button", "count:physical"}
    text: str  # as written, for the reasoning excerpt

    def comparable(self, other: Quantity) -> bool:
        return not self.keys.isdisjoint(other.keys)


def quantities(text: str) -> list[Quantity]:
    """Numbers with what they count; dates, versions and ids ("2026-11-27", "v1", "ARC-03") are
    skipped."""
    return list(_quantities(text))


def figures_said(texts: Iterable[str]) -> set[str]:
    """The figures the texts say, as written and lower-cased ("twenty-four hours", "15 eur"):
    what a revised figure is looked for by."""
    return {q.text.lower() for t in texts for q in quantities(t)}


@short_text_cache()
def _quantities(text: str) -> tuple[Quantity, ...]:
    out: list[Quantity] = []
    for m in _QUANTITY.finditer(clean(text)):
        num = m.group("num").strip().lower()
        value = _parse_number(num)
        if value is None or (
            not m.group("cur") and not re.search(r"\d", num) and value == 1 and not _one_unit(m)
        ):
            continue  # "one" on its own is a pronoun far more often than a number
        unit = (m.group("unit") or "").lower()
        if m.group("cur"):
            shown = f"{m.group('cur')}{m.group('num').strip()}"
            out.append(Quantity(value, frozenset({"currency"}), shown))
        elif unit in _UNITS:
            family, factor = _UNITS[unit]
            shown = f"{m.group('num').strip()} {m.group('unit')}"
            out.append(Quantity(value * factor, frozenset({family}), shown))
        else:
            # a counted noun: "15 buttons", "8 physical buttons" (the next words, any of them)
            nouns = [w for w in (m.group("unit"), m.group("noun"), m.group("noun2")) if w]
            kept = []
            for w in nouns:
                if not is_content(w.lower()) or w.lower() in {"x", "times"}:
                    break
                kept.append(w)
            if kept:
                keys = frozenset(f"count:{lemma(w.lower())}" for w in kept)
                out.append(Quantity(value, keys, " ".join([m.group("num").strip(), *kept])))
    return tuple(out)


def _one_unit(m: re.Match[str]) -> bool:
    """ "one" said of a unit ("let's say one week", "within one hour"): a figure; not "one day
    we might ..." at the start, which is no duration."""
    unit = (m.group("unit") or "").lower()
    said = m.group("num").strip(" -").lower() == "one" and unit in _UNITS
    return said and not (unit == "day" and m.start() == 0)


def number_tokens(text: str) -> list[str]:
    """The numbers of a text as written ("twenty", "48", "twelve point five"), in order; a lone
    "one" is skipped (a pronoun more often than a number)."""
    out = []
    for m in _QUANTITY.finditer(clean(text)):
        num = m.group("num").strip(" -")
        if _parse_number(num) is None or (num.lower() == "one" and not _one_unit(m)):
            continue
        out.append(num)
    return out


def number_cues(a: str, b: str) -> list[str]:
    """The same quantity on both sides with no value in common."""
    qa, qb = quantities(a), quantities(b)
    for x in qa:
        same = [y for y in qb if x.comparable(y)]
        if not same:
            continue
        mine = {round(q.value, 6) for q in qa if q.comparable(same[0])}
        theirs = {round(q.value, 6) for q in same}
        if mine.isdisjoint(theirs):
            return [f"numbers differ: '{x.text}' vs '{same[0].text}'"]
    return []


# how often, in days: "monthly", "bi-weekly", "once a week", "every 3 days", "every other month"
_PERIOD_DAYS = {
    "second": 1 / 86400,
    "minute": 1 / 1440,
    "hour": 1 / 24,
    "day": 1.0,
    "night": 1.0,
    "week": 7.0,
    "fortnight": 14.0,
    "month": 30.0,
    "quarter": 91.0,
    "year": 365.0,
}
_ADVERB_DAYS = {
    "hourly": 1 / 24,
    "daily": 1.0,
    "nightly": 1.0,
    "weekly": 7.0,
    "biweekly": 14.0,
    "bi-weekly": 14.0,
    "fortnightly": 14.0,
    "monthly": 30.0,
    "bimonthly": 60.0,
    "bi-monthly": 60.0,
    "quarterly": 91.0,
    "yearly": 365.0,
    "annually": 365.0,
    "annual": 365.0,
}
_FREQUENCY = re.compile(
    r"\b(?:(?P<adverb>" + "|".join(sorted(_ADVERB_DAYS, key=len, reverse=True)) + r")"
    r"|(?P<times>once|twice) (?:an?|per|each) (?P<per>hour|day|night|week|fortnight|month|quarter|year)"
    r"|every (?:(?P<count>other|second|two|three|four|five|six|ten|fifteen|twenty|thirty|\d+) )?"
    r"(?P<every>second|minute|hour|day|night|week|fortnight|month|quarter|year)s?)\b"
)
_EVERY_COUNT = {
    "other": 2,
    "second": 2,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
}


# what the tagger's pair model was trained on: no seconds or minutes, few counts in words
_COARSE_COUNTS = frozenset(("other", "second", "two", "three", "four"))


def frequencies(text: str, fine: bool = False) -> list[tuple[float, str]]:
    """How often a text says something happens, in days, with the words that say it; with
    ``fine``, every few seconds or minutes and counts up to thirty in words too ("every thirty
    seconds": a revision of a refresh rate), which the tagger does not read."""
    out = []
    for m in _FREQUENCY.finditer(clean(text).lower()):
        count = m.group("count")
        coarse = m.group("every") not in ("second", "minute") and (
            not count or count in _COARSE_COUNTS or count.isdigit()
        )
        if not fine and not coarse:
            continue
        if m.group("adverb"):
            days = _ADVERB_DAYS[m.group("adverb")]
        elif m.group("times"):
            days = _PERIOD_DAYS[m.group("per")] / (2 if m.group("times") == "twice" else 1)
        else:
            count = m.group("count")
            n = _EVERY_COUNT.get(count or "", None) or (int(count) if count else 1)
            days = _PERIOD_DAYS[m.group("every")] * n
        out.append((round(days, 9), m.group(0)))
    return out


def frequency_cues(a: str, b: str, fine: bool = False) -> list[str]:
    """Both texts say how often, and never the same ("monthly" against "bi-weekly")."""
    fa, fb = frequencies(a, fine), frequencies(b, fine)
    if fa and fb and {d for d, _ in fa}.isdisjoint({d for d, _ in fb}):
        return [f"frequency differs: '{fa[0][1]}' vs '{fb[0][1]}'"]
    return []


# ------------------------------------------------------------------------------------------------
# negation, modality, quantifiers, antonyms

_REASON = re.compile(r"\b(?:so that|so|because|'cause|in order to|since)\b.*?(?=[.;\n]|$)")
_CLAUSE_SPLIT = re.compile(r"[.;:!?\n]|,\s(?:but|and|while|whereas)\b|\bbut\b|\bwhile\b")
_NEGATION = re.compile(
    r"\b(?:no|not|never|without|none|cannot|can't|won't|don't|doesn't|mustn't|shouldn't|isn't"
    r"|aren't|nor|neither|exclude[sd]?|excluding|dropped|out of scope|not allowed|forbidden"
    r"|prohibited|removed?|instead of|rather than)\b"
)
_STRONG = re.compile(r"\b(?:must|shall|required|mandatory|always|has to|have to|needs? to)\b")
_OPTIONAL = re.compile(r"\b(?:optional|optionally|may|nice to have|if possible|could)\b")
_UNIVERSAL = {"all", "every", "each", "any"}
_PARTIAL = {"some", "several", "few", "only", "none", "no"}

ANTONYMS: tuple[tuple[str, str], ...] = (
    ("enable", "disable"),
    ("allow", "prevent"),
    ("allow", "forbid"),
    ("allow", "block"),
    ("include", "exclude"),
    ("rechargeable", "disposable"),
    ("show", "hide"),
    ("visible", "hidden"),
    ("automatic", "manual"),
    ("automatically", "manually"),
    ("wired", "wireless"),
    ("mandatory", "optional"),
    ("required", "optional"),
    ("lock", "unlock"),
    ("online", "offline"),
    ("public", "private"),
    ("increase", "decrease"),
    ("add", "remove"),
    ("accept", "reject"),
    ("bigger", "smaller"),
    ("larger", "smaller"),
    ("more", "fewer"),
    ("maximum", "minimum"),
    ("before", "after"),
    ("internal", "external"),
    ("permanent", "temporary"),
    ("encrypted", "unencrypted"),
    ("synchronous", "asynchronous"),
    ("keep", "delete"),
    ("anonymous", "logged"),
    ("anonymously", "logged"),
)


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "d"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    # "delete" and "deleted" share a stem only without the final e
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _clauses(text: str) -> list[str]:
    return list(_clause_tuple(text))


@short_text_cache()
def _clause_tuple(text: str) -> tuple[str, ...]:
    low = _REASON.sub(" ", clean(text).lower())
    return tuple(c.strip() for c in _CLAUSE_SPLIT.split(low) if c and c.strip())


# "X are not allowed", "X is dropped": the negation is the predicate, so the subject is negated
_PREDICATE_NEGATION = re.compile(
    r"\b(?:is|are|be|was|were|being)\s+(?:not|never|no longer)\b"
    r"|\b(?:is|are|was|were|be)\s+(?:dropped|forbidden|prohibited|excluded|removed|out of scope"
    r"|disallowed)\b|\bnot (?:allowed|supported|licensed|permitted|possible|fitted)\b"
)


def _words(text: str) -> list[str]:
    """Content-word lemmas with compounds kept whole ("set-top-box", "hi-fi", "lithium-ion")."""
    found = re.findall(r"[a-z0-9]+(?:[-'][a-z0-9]+)*", clean(text).lower())
    return [lemma(w) for w in found if is_content(w) or "-" in w]


_UNIT_WORDS = frozenset(lemma(w) for w in _UNITS) | {"unit", "per"}
_PLACE = re.compile(r"\s+(?:on|in|at|from|for|to|into|onto|under|over|before|after|during)\b")


def polarity(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """(words only ever asserted, words only ever negated), each with the clause that says so."""
    asserted, negated = _polarity(text)
    return dict(asserted), dict(negated)


@short_text_cache()
def _polarity(text: str) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    asserted: dict[str, str] = {}
    negated: dict[str, str] = {}
    for clause in _clauses(text):
        pred = _PREDICATE_NEGATION.search(clause)
        neg = _NEGATION.search(clause)
        if pred:
            yes, no, shown = "", clause[: pred.start()], clause
        elif neg and _PLACE.match(clause, neg.end()):
            # "not on the battery cover" says where, it does not rule the battery out
            yes, no, shown = clause[: neg.start()], "", clause
        elif neg:
            yes, no, shown = clause[: neg.start()], clause[neg.end() :], clause[neg.start() :]
        else:
            yes, no, shown = clause, "", clause
        for w in _words(yes):
            asserted.setdefault(w, clause)
        for w in _words(no):
            negated.setdefault(w, shown)
    return (
        tuple((w, c) for w, c in asserted.items() if w not in negated),
        tuple((w, c) for w, c in negated.items() if w not in asserted),
    )


def forbidden_mentions(story: str, constraint: str) -> list[str]:
    """Topic words the constraint rules out ("... are not allowed") that the story asks for."""
    asserted, _ = polarity(story)
    _, negated = polarity(constraint)
    hits = sorted(
        (w for w in negated if w in asserted and is_topical(w)), key=lambda w: (-len(w), w)
    )
    return [f"'{w}' is ruled out: '{_short(negated[w], 10)}'" for w in hits[:2]]


def negation_cues(a: str, b: str) -> list[str]:
    pos_a, neg_a = polarity(a)
    pos_b, neg_b = polarity(b)
    words = sorted(set(neg_a) & set(pos_b) | set(neg_b) & set(pos_a), key=lambda w: (-len(w), w))
    cues = []
    for word in words[:2]:
        phrase = neg_a.get(word) or neg_b[word]
        cues.append(f"negation differs on '{word}': '{_short(phrase)}'")
    return cues


def _short(clause: str, n: int = 8) -> str:
    parts = clause.split()
    return " ".join(parts[:n]) + (" ..." if len(parts) > n else "")


def modal_cues(a: str, b: str) -> list[str]:
    for ca in _clauses(a):
        for cb in _clauses(b):
            shared = set(content_words(ca)) & set(content_words(cb))
            if len(shared) < 2:
                continue
            for strong, weak in ((ca, cb), (cb, ca)):
                s, o = _STRONG.search(strong), _OPTIONAL.search(weak)
                if s and o and not _OPTIONAL.search(strong) and not _STRONG.search(weak):
                    return [
                        f"modal differs: '{s.group(0)}' vs '{o.group(0)}' on "
                        f"{', '.join(sorted(shared)[:3])}"
                    ]
    return []


def _quantified(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    tokens = re.findall(r"[a-z0-9']+", clean(text).lower())
    for i, tok in enumerate(tokens):
        if tok in _UNIVERSAL or tok in _PARTIAL:
            kind = "all" if tok in _UNIVERSAL else tok
            for nxt in tokens[i + 1 : i + 4]:
                if kind == "all" and nxt in ("these", "those"):
                    break  # "each of these buttons": the ones just named, not all buttons
                if is_content(nxt):
                    out.setdefault(lemma(nxt), set()).add(kind)
        if tok == "only" and i > 0 and is_content(tokens[i - 1]):
            out.setdefault(lemma(tokens[i - 1]), set()).add("only")  # "TV only"
    return out


def quantifier_cues(a: str, b: str) -> list[str]:
    qa, qb = _quantified(a), _quantified(b)
    for noun in sorted(set(qa) & set(qb)):
        if qa[noun].isdisjoint(qb[noun]) and ("all" in qa[noun]) != ("all" in qb[noun]):
            return [
                f"quantifier differs on '{noun}': {'/'.join(sorted(qa[noun]))} vs "
                f"{'/'.join(sorted(qb[noun]))}"
            ]
    return []


def antonym_cues(a: str, b: str) -> list[str]:
    # reasons ("so that I can keep ...") are not requirements, as for negation
    sa, sb = _stems(a), _stems(b)
    for x, y in ANTONYMS:
        x_, y_ = _stem(x), _stem(y)
        for p, q in ((x_, y_), (y_, x_)):
            if p in sa and q not in sa and q in sb and p not in sb:
                return [f"antonyms: '{p}' vs '{q}'"]
    return []


@short_text_cache()
def _stems(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in re.findall(r"[a-z]+", _REASON.sub(" ", clean(text).lower())))


def contradiction_cues(a: str, b: str) -> list[str]:
    """All cues that a and b contradict each other, strongest kinds first."""
    for detector in (
        number_cues,
        frequency_cues,
        negation_cues,
        modal_cues,
        quantifier_cues,
        antonym_cues,
    ):
        cues = detector(a, b)
        if cues:
            return cues
    return []


# ------------------------------------------------------------------------------------------------
# limits (constraints that state a maximum or a minimum)

_MAX_CUE = re.compile(
    r"(?:must not exceed|not exceed|no more than|not more than|at most|maximum(?: of)?|max\.?"
    r"|up to|under|below|less than|or less|or below|≤|<=?|ceiling)"
)
_MIN_CUE = re.compile(
    r"(?:at least|no less than|not less than|minimum(?: of)?|min\.?|or more|more than|over"
    r"|above|≥|>=?)"
)


@dataclass(frozen=True)
class Limit:
    kind: str  # "max" or "min"
    quantity: Quantity
    about: frozenset[str] = frozenset()  # content words of the clause that states it
    cue: str = ""  # the words before the number that set it ("no more than"); "" when said after


def limits(text: str) -> list[Limit]:
    """Maxima and minima a text states: the cue must sit right before (or after) the number."""
    out: list[Limit] = []
    for clause in re.split(r"[.;:\n]\s+|\n", clean(text)):
        low = clause.lower()
        about = frozenset(_words(clause))
        for q in quantities(clause):
            at = low.find(q.text.lower())
            if at < 0:
                continue
            before, after = low[max(0, at - 24) : at], low[at + len(q.text) : at + len(q.text) + 12]
            kind, cue = "max", re.search(r"(" + _MAX_CUE.pattern + r")\s*$", before)
            if not cue:
                kind, cue = "min", re.search(r"(" + _MIN_CUE.pattern + r")\s*$", before)
            if cue:
                out.append(Limit(kind, q, about, cue.group(1)))
            elif re.match(r"\s*(?:or less|or below|at most)", after):
                out.append(Limit("max", q, about))
            elif re.match(r"\s*(?:or more|at least)", after):
                out.append(Limit("min", q, about))
    return out


def limit_violations(story: str, constraint: str) -> list[str]:
    """Story values beyond a limit the constraint states about the same thing: the clause with
    the value must share a word with the clause of the limit ("cost" in "should cost 18.80 EUR"
    and "production cost ... must not exceed 12.50 EUR"; not "selling price stays at 25 EUR")."""
    cues: list[str] = []
    found = limits(constraint)
    for clause in re.split(r"[.;:\n]\s+|\n", clean(story)):
        words = set(_words(clause))
        for q in quantities(clause):
            for lim in found:
                if not q.comparable(lim.quantity) or not (words & lim.about) - _UNIT_WORDS:
                    continue
                if lim.kind == "max" and q.value > lim.quantity.value + 1e-9:
                    cues.append(f"'{q.text}' exceeds the maximum '{lim.quantity.text}'")
                elif lim.kind == "min" and q.value < lim.quantity.value - 1e-9:
                    cues.append(f"'{q.text}' is below the minimum '{lim.quantity.text}'")
    return cues
