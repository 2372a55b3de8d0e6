"""Decisions revised during a meeting: a later statement that changes an earlier one.

Two statements about the same need are a revision when the later one

- states the same quantity with another value ("ten users per survey" ... "twenty users per
  survey"), or is a short revision of a figure said just before ("make it twenty", "let's say
  48 hours", "actually six weeks"), or changes how often something happens; or
- rules out what the earlier one asked for, with words that say the decision changed ("let's not
  do the waiting list after all", "the live map is out", "forget the locator").

The story then carries the later decision and lists the earlier statement under
``superseded_quotes``; ``revise_text`` writes the earlier wording with the new figure, so a story
drafted from "each survey can have ten users" after "make it twenty" reads "twenty users".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from shared.analysis.contradiction import (
    Quantity,
    frequencies,
    frequency_cues,
    negation_cues,
    number_cues,
    number_tokens,
    polarity,
    quantities,
)
from shared.text.language import clean, content_words, is_topical, meaningful_word_count

REVISED_WARNING = "revised during the meeting"
_REVISION_CUE = re.compile(
    r"\b(?:make (?:it|that)|let'?s (?:say|make it|go for|do|go with)|change (?:it|that) to"
    r"|actually|instead|rather|after all|on second thought|scratch that|no longer|not anymore"
    r"|any ?more|let'?s not|we won'?t|we will not|don'?t do|drop(?:ped)?|scrap(?:ped)?|forget"
    r"|(?:is|are) out|leave (?:it|that|them) out|not do|then)\b",
    re.IGNORECASE,
)
_DROP_CUE = re.compile(
    r"\b(?:after all|let'?s not|we won'?t|we will not|don'?t do|not do|drop(?:ped)?|scrap(?:ped)?"
    r"|forget|(?:is|are) out|leave (?:it|that|them) out|no longer|not anymore|any ?more)\b",
    re.IGNORECASE,
)
SHORT_REVISION_WORDS = 10
# words that set a figure anew ("let's say one week", "make it twenty", "actually six")
_SETS_FIGURE = re.compile(
    r"\b(?:(?<!to )make (?:it|that)|let'?s (?:say|make it|go for|go with)|change (?:it|that) to|actually"
    r"|instead|rather)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Revision:
    """``later`` changes ``earlier``: ``kind`` number or negation, and for numbers the values
    written in the earlier statement with the ones that replace them."""

    kind: str
    reason: str
    changes: tuple[tuple[str, str], ...] = ()
    restated: bool = True  # the later statement says the need again ("make it twenty" does not)


# "let's say I am on channel eight now": a case supposed for the sake of argument, no decision
_SUPPOSES = re.compile(
    r"\blet'?s say (?:that )?(?:i|you|we|they|he|she|someone|somebody|a user|the user)\b",
    re.IGNORECASE,
)


# a case named first, before what is said of it ("Actually, for unsuccessful ones, ...")
_ANOTHER_CASE = re.compile(
    r"^(?:(?:actually|but|and|oh|though|although|well)\W+)+(?:for|with)\s+(?P<case>[^,]+),",
    re.IGNORECASE,
)


def revision(earlier: str, later: str) -> Revision | None:
    """How ``later`` revises ``earlier``, or None when it does not."""
    if _SUPPOSES.search(clean(later)):
        return None
    case = _ANOTHER_CASE.match(clean(later))
    if case and set(content_words(case.group("case"))).isdisjoint(content_words(earlier)):
        # "Six years after they leave." "Actually, for unsuccessful ones, people who never
        # started, delete them after six months.": the rule of another case, no revision
        return None
    numbers = number_cues(earlier, later) or frequency_cues(earlier, later, fine=True)
    short = meaningful_word_count(later) <= SHORT_REVISION_WORDS
    qualified = _qualified_changes(earlier, later) if _SETS_FIGURE.search(clean(later)) else ()
    lead = leads_with_a_figure(later)
    figures = quantities(earlier)
    unit_changed = bool(numbers) and _unit_changed(figures, lead)
    if lead and (not numbers or unit_changed) and not qualified and len(figures) == 1:
        # "let's say ten working days, two weeks is too long": the one figure said before, set
        # anew first thing, though the old value is said again (and counted in other units)
        new = lead.group("figure").strip()
        set_to = quantities(new)
        if (
            set_to
            and _same_kind(figures[0], set_to[0])
            and round(set_to[0].value, 6) != round(figures[0].value, 6)
        ):
            change = (figures[0].text, set_to[0].text)
            return Revision("number", f"'{change[0]}' changed to '{change[1]}'", (change,), False)
    unitless = (
        _bare_figure_set_anew(earlier, lead) if lead and not numbers and not qualified else None
    )
    if unitless is not None:
        return unitless
    alone = _lone_figure_set_anew(earlier, lead) if lead and not numbers and not qualified else None
    if alone is not None:
        return alone
    if qualified and not numbers:
        # "four hours for high, two days for normal" ... "actually, make it one day for normal,
        # two days is too slow": the figure said of the same thing changed, though the old
        # value is said again
        old, new = qualified[0]
        return Revision("number", f"'{old}' changed to '{new}'", qualified, restated=False)
    often = frequencies(earlier, fine=True), frequencies(later, fine=True)
    if numbers and not number_cues(earlier, later) and short and all(often):
        # "..., refreshed every minute, ..." "Sorry, every thirty seconds.": how often, set anew
        # and nothing else said
        rest = clean(later).replace(often[1][0][1], " ")
        if _only_figure(rest) and len(often[0]) == 1:
            change = (often[0][0][1], often[1][0][1])
            return Revision("number", numbers[0], (change,), restated=False)
    if numbers:
        # "let's say one week": a short revision of the figure, which does not say the need again
        bare = short and bool(_SETS_FIGURE.search(clean(later))) and _only_figure(later)
        # "make it 48 hours, the reviewers can't do 24": the figure set first thing, with why
        bare = bare or (lead is not None and _only_figure(lead.group("said")))
        return Revision("number", numbers[0], _changed_numbers(earlier, later), not bare)
    if short and _REVISION_CUE.search(clean(later)):
        count = _changed_count(earlier, later)
        if count is not None:
            return count
        # a figure said bare ("make that twenty-five, twenty doesn't cover our costs"), not one
        # of a quantity the later statement states ("make it 5 users")
        said = [q.text.lower() for q in quantities(later)]
        new_numbers = [n for n in number_tokens(later) if not any(n.lower() in q for q in said)]
        old_numbers = number_tokens(earlier)
        if new_numbers and old_numbers:
            old, new = old_numbers[0], new_numbers[0]
            if old.lower() != new.lower():
                return Revision(
                    "number", f"'{old}' changed to '{new}'", ((old, new),), restated=False
                )
    if _DROP_CUE.search(clean(later)):
        cues = negation_cues(earlier, later)
        if cues:
            return Revision("negation", cues[0])
    return None


# a figure set anew first thing ("let's say ten working days, ...", "actually, make it six"),
# after who said it when notes name them mid-line ("... 24 hours. Omar: make it 48 hours, ...")
_LEAD_FIGURE = re.compile(
    r"^(?:[A-Z][a-z]+:\s+)?(?P<said>(?:(?:actually|okay|ok|no|so|well|fine|right|hmm)\W+)*"
    r"(?:let'?s say|make it|make that|let'?s make it|(?:let'?s )?change (?:it|that) to"
    r"|let'?s go (?:for|with))"
    r"\s+(?P<figure>[^,;.!?]+))",
    re.IGNORECASE,
)


# a figure said again right after a word that takes back what was just said ("No wait, fifteen,
# thirty is too long on a Saturday.")
_BARE_FIGURE = (
    r"(?P<figure>(?:\d[\d.,]*|(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven"
    r"|twelve|fifteen|twenty|thirty|forty|forty-five|fifty|sixty|ninety|a hundred)\b)[^,;.!?]*))"
)
_TAKEN_BACK_FIGURE = re.compile(
    r"^(?:[A-Z][a-z]+:\s+)?(?P<said>(?:(?:um|uh|oh|hmm)\W+)*(?:no\W+wait|wait|sorry|no\W+sorry)\W+"
    + _BARE_FIGURE,
    re.IGNORECASE,
)


# a figure put forward, given in to ("Two working days would be fairer." "Okay, fine, two
# working days."): said bare after the words that give in, both of them
_GIVEN_IN_FIGURE = re.compile(
    r"^(?:[A-Z][a-z]+:\s+)?(?P<said>(?:(?:um|uh|oh|hmm|yeah)\W+)*(?:okay|ok|alright)\W+"
    r"(?:fine|then)\W+" + _BARE_FIGURE,
    re.IGNORECASE,
)


def leads_with_a_figure(statement: str) -> re.Match[str] | None:
    """The figure ``statement`` sets anew first thing ("Make it 48 hours, the reviewers can't do
    24.": group ``figure`` is "48 hours", group ``said`` all from "Make"; "No wait, fifteen, ...":
    "fifteen"; "Okay, fine, two working days."), or None when it does not open so."""
    said = clean(statement)
    return (
        _LEAD_FIGURE.match(said) or _TAKEN_BACK_FIGURE.match(said) or _GIVEN_IN_FIGURE.match(said)
    )


# a figure said of one thing: "two days for normal", "20 seats per room"
_OF_WHAT = re.compile(r"\s+(?P<of>(?:for|per|on|in|at)\s+(?:the\s+|a\s+|an\s+)?[a-z][\w-]*)", re.I)


_TIME_WORDS = frozenset("minute hour day night week fortnight month year".split())


def _same_kind(a: Quantity, b: Quantity) -> bool:
    """Whether two figures count the same kind of thing; a span of time said in any unit
    ("two weeks", "ten working days") is one kind."""
    return a.comparable(b) or (_spans_time(a) and _spans_time(b))


def _spans_time(q: Quantity) -> bool:
    return "duration" in q.keys or any(
        k.startswith("count:") and k[6:].rstrip("s") in _TIME_WORDS for k in q.keys
    )


def _qualified(text: str) -> dict[str, tuple[str, Quantity]]:
    """The figures ``text`` says of one thing, by that thing ("for normal": "two days for
    normal")."""
    out: dict[str, tuple[str, Quantity]] = {}
    cleaned = clean(text)
    for q in quantities(cleaned):
        at = cleaned.lower().find(q.text.lower())
        of = _OF_WHAT.match(cleaned, at + len(q.text)) if at >= 0 else None
        if of is not None:
            out.setdefault(of.group("of").lower(), (f"{q.text}{of.group(0)}", q))
    return out


def _qualified_changes(earlier: str, later: str) -> tuple[tuple[str, str], ...]:
    """The figures of one thing ``later`` sets anew (the whole phrases, old and new)."""
    before, after = _qualified(earlier), _qualified(later)
    changes: list[tuple[str, str]] = []
    for of, (new_said, new) in after.items():
        old = before.get(of)
        if old and old[1].comparable(new) and round(old[1].value, 6) != round(new.value, 6):
            changes.append((old[0].strip(), new_said.strip()))
    return tuple(changes)


def _unit_changed(figures: list[Quantity], lead: re.Match[str] | None) -> bool:
    """Whether the figure set anew first thing is said in another unit than the one figure said
    before ("Ninety minutes." "No wait, two hours, ..."): the whole figure changes, not its
    number alone ("two minutes")."""
    if lead is None or len(figures) != 1:
        return False
    set_to = quantities(lead.group("figure").strip())
    if not set_to:
        return False
    unit = [q.text.lower().split()[-1].rstrip("s") for q in (figures[0], set_to[0])]
    return unit[0] != unit[1]


def _bare_figure_set_anew(earlier: str, lead: re.Match[str]) -> Revision | None:
    """A figure said without its unit, set anew after the word it was said after ("Delivery
    costs three pounds, free over twenty-five." "Make that free over thirty, ..."), or None."""
    said = lead.group("figure")
    new = number_tokens(said)
    if not new:
        return None
    before = said[: said.lower().rfind(new[-1].lower())].split()
    if not before or before[-1].lower() in ("a", "an", "the", "it", "that"):
        return None
    found = re.search(rf"\b{re.escape(before[-1])}\s+(?P<old>[\w-]+)", earlier, re.IGNORECASE)
    old = found.group("old") if found else ""
    if old not in number_tokens(earlier) or old.lower() == new[-1].lower():
        return None
    return Revision("number", f"'{old}' changed to '{new[-1]}'", ((old, new[-1]),), False)


# what may follow a figure set anew and still leave it alone ("let's say three actually")
_AFTER_FIGURE = frozenset("actually then instead maybe perhaps i think guess".split())


def _lone_figure_set_anew(earlier: str, lead: re.Match[str]) -> Revision | None:
    """A number said alone first thing ("Hmm, let's say three actually, two is too tight ..."),
    setting anew the one number the earlier statement says without a unit ("If any part in a
    van falls under two, ..."), or None."""
    said = lead.group("figure")
    new = number_tokens(said)
    rest = [w for w in re.findall(r"[a-z']+", said.lower()) if w not in _AFTER_FIGURE]
    if len(new) != 1 or not set(rest) <= set(re.findall(r"[a-z']+", new[0].lower())):
        return None
    old = {n.lower() for n in number_tokens(earlier)}
    if len(old) != 1 or new[0].lower() in old:
        return None
    change = (number_tokens(earlier)[0], new[0])
    return Revision("number", f"'{change[0]}' changed to '{change[1]}'", (change,), False)


def sets_a_figure(text: str) -> bool:
    """Whether ``text`` has words that set a figure anew ("actually", "make it", "let's say")."""
    return bool(_SETS_FIGURE.search(clean(text)))


def names_only_a_figure(said: str) -> bool:
    """Whether ``said`` names nothing but its figures and the case they are for ("change it to
    twenty minutes for rooms"), not the need it revises ("make it twenty users per survey")."""
    return _only_figure(_OF_WHAT.sub(" ", clean(said)))


def _only_figure(later: str) -> bool:
    """Whether the later statement names nothing but its figures ("let's say one week"), not
    the need it revises ("let's make it twenty users per survey")."""
    figures = {w for q in quantities(later) for w in content_words(q.text)}
    return len([w for w in content_words(later) if w not in figures and is_topical(w)]) == 0


# how many times something may happen, said as a count ("up to three times") or as a word
# ("once", "twice")
_TIMES = re.compile(r"\b(?:once|twice|(?:\w+) times)\b", re.IGNORECASE)


def _changed_count(earlier: str, later: str) -> Revision | None:
    """A short revision of how many times ("up to three times" ... "actually, let's say twice")."""
    old, new = _TIMES.search(earlier), _TIMES.search(clean(later))
    if old is None or new is None or not _is_count(old.group(0)) or not _is_count(new.group(0)):
        return None
    if old.group(0).lower() == new.group(0).lower():
        return None
    change = (old.group(0), new.group(0))
    return Revision("number", f"'{change[0]}' changed to '{change[1]}'", (change,), restated=False)


def _is_count(said: str) -> bool:
    return said.lower() in ("once", "twice") or bool(number_tokens(said.split()[0]))


def names_what_it_drops(later: str, earlier: str) -> bool:
    """At least half of the topic words the later statement negates are in the earlier one
    ("let's not do the waiting list after all, too complicated" drops "a waiting list";
    "gesture control is dropped: too expensive" does not drop "voice control stays")."""
    _, negated = polarity(later)
    said = set(content_words(earlier))
    topical = [w for w in negated if is_topical(w)]
    return bool(topical) and 2 * sum(1 for w in topical if w in said) >= len(topical)


def _changed_numbers(earlier: str, later: str) -> tuple[tuple[str, str], ...]:
    """(old, new) for each figure of ``later`` that replaces one of ``earlier``: a figure said
    again unchanged replaces none, and each new figure replaces one old one, the nearest in
    value ("a reminder after seven days, and after fourteen days access is paused" ... "let's
    say twenty-one days": fourteen, not both)."""
    olds, news = quantities(earlier), quantities(later)
    used = {
        i
        for i, o in enumerate(olds)
        for n in news
        if o.comparable(n) and round(o.value, 6) == round(n.value, 6)
    }
    fresh = [
        n
        for n in news
        if not any(n.comparable(o) and round(o.value, 6) == round(n.value, 6) for o in olds)
    ]  # a figure said again as it was replaces none
    left = [i for i in range(len(olds)) if i not in used]
    in_order = len(fresh) > 1 and len(fresh) == len(left)
    changes: list[tuple[str, str]] = []
    for k, new_q in enumerate(fresh):
        if in_order:  # as many new figures as old ones: each replaces the one said in its place
            i = left[k]
            if not olds[i].comparable(new_q):
                continue
        else:
            near = [
                (_distance(o.value, new_q.value), i)
                for i, o in enumerate(olds)
                if i not in used and o.comparable(new_q)
            ]
            if not near:
                continue
            i = min(near)[1]
        used.add(i)
        old, new = number_tokens(olds[i].text), number_tokens(new_q.text)
        if old and new and (old[0], new[0]) not in changes:
            changes.append((old[0], new[0]))
    return tuple(changes)


def _distance(a: float, b: float) -> float:
    """How far apart two values are, as a ratio when both are positive."""
    if a > 0 and b > 0:
        return abs(math.log(a / b))
    return abs(a - b)


def revise_text(text: str, found: Revision) -> str:
    """``text`` with each revised figure written in (the first occurrence of each old one)."""
    for old, new in found.changes:
        pattern = re.compile(rf"(?<![\w.]){re.escape(old)}(?![\w])", re.IGNORECASE)
        if new.lower() in ("one", "1"):  # "two weeks" -> "one week", not "one weeks"
            pattern = re.compile(
                rf"(?<![\w.]){re.escape(old)}(?![\w])(?:\s+(?P<unit>\w+?)s\b)?", re.IGNORECASE
            )
            found_one = pattern.search(text)
            if found_one:
                unit = f" {found_one.group('unit')}" if found_one.group("unit") else ""
                text = f"{text[: found_one.start()]}{new}{unit}{text[found_one.end() :]}"
            continue
        text = pattern.sub(new, text, count=1)
    return text
