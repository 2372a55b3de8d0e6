"""Acceptance criteria of a drafted story (the offline generator's drafting, ``phrasing``).

From the story's statements (cleaned; the main one first): Given/When/Then for a condition, a
limit or a figure a statement holds, a checklist item for a detail an elaboration adds ("it should
be red" -> "The power button is red."), the main statement in full when the title had to cut it;
nothing that only restates the title (``adds_to_title``, which the story checks of ``eval judge``
use too), no number that no statement says, and no talk: a statement about the speaker, a remark
on what was just said or a piece of a sentence is quoted as evidence but is no criterion
(``_talk``), and a Given/When/Then needs a condition to check by and a behaviour as its result
(``_checkable``).

Everything is a pure function of the statements: deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from shared.analysis.contradiction import limits, quantities
from shared.engine.offline.lexicon import (
    AS_IS,
    DIGITS,
    MATERIALS,
    PERSONA_FORMS,
    VERBS,
    base_form,
    is_base_verb,
    is_participle,
    is_verb,
    leaves_out,
    names_a_thing,
    singular_persona,
    third_person,
)
from shared.engine.offline.statement import (
    _A_VALUE_TO_USE,
    _CLAUSE_BREAK,
    _CONDITION,
    _LEAD,
    _LIMIT_FIRST,
    _MODAL,
    _NEW_CLAUSE,
    _PERSONA_START,
    _PRODUCT_PRONOUN,
    _PURPOSE,
    _QUALIFIED,
    _REASON_GIVEN,
    _SUBJECT_TAIL,
    _WEAK_MODAL,
    MIN_TITLE_WORDS,
    PEOPLE_VERBS,
    Capability,
    _list_at,
    _parse,
    _reduced_relative,
    _Requirement,
    _subject_words,
    _trim_clause,
    body,
    by_what,
    capability,
    condition_first,
    for_whom,
    forecasts_a_comparison,
    is_comparison,
    is_finding,
    is_people_description,
    judges_a_figure,
    judges_the_work,
    limits_the_need_before,
    says_nobody,
    thing_acted_on,
    unframed,
)
from shared.engine.offline.wording import _article, _lower_first, _the, _trim, capital
from shared.text.language import content_words, is_topical

MAX_CRITERIA = 5
_NOT_DETAIL = re.compile(
    r"^(?:so|so that|because|'cause|but|whereas|although|and then|then|otherwise|since|as)\b",
    re.IGNORECASE,
)
_GWT = re.compile(r"^given\b.+\bwhen\b.+\bthen\b", re.IGNORECASE)
_MEASURE = re.compile(
    r"\d|\b(?:at most|at least|no more than|not more than|within|under|over|below|above"
    r"|before|after|every|daily|weekly|monthly)\b",
    re.IGNORECASE,
)
_FREQUENCY = re.compile(
    r"\b(?:hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annually"
    r"|every (?:day|night|week|month|year|hour|minute|morning|evening))\b",
    re.IGNORECASE,
)
FIGURE_WORD = (  # a figure in digits or words (the titles' figures too)
    rf"{DIGITS}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen"
    r"|twenty|thirty|forty|fifty|hundred|thousand"
)
# when or how often, said at the end of a title ("after three days", "every month", "daily"; not
# "at the end of every month", one phrase)
TIMING_TAIL = re.compile(
    rf"(?<!\bof)(?<!\bto)(?<!\bleast)(?<!\bmost)(?<!\bthan)\s+(?P<when>"
    rf"(?:after|within|every|each)\s+(?:(?:{FIGURE_WORD}|a|an|a few|few|several)\s+)?"
    r"(?:working\s+|business\s+)?(?:second|minute|hour|day|week|month|year)s?\b"
    r"|every\s+(?:night|morning|evening|weekday|weekend|(?:mon|tues|wednes|thurs|fri|satur|sun)day)"
    # "every Monday at eight": the hour it comes at is part of when
    rf"(?:\s+at\s+(?:{FIGURE_WORD})(?:[:.]\d\d)?(?:\s*(?:am|pm|a\.m\.|p\.m\.|o'clock))?)?\b"
    r"|(?:hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annually)\b"
    # "forty-eight hours before the appointment", "two weeks ahead": when, said by its figure
    rf"|(?:(?:up\s+to|at\s+least|at\s+most|no\s+more\s+than)\s+)?"
    rf"(?:(?:{FIGURE_WORD})(?:[\s-]+(?:{FIGURE_WORD}))*|a|an)\s+(?:working\s+|business\s+)?"
    r"(?:minute|hour|day|week|month)s?\s+(?:before|ahead|after|beforehand|in advance|prior)\b"
    # "at 7 pm the evening before collection", "at six in the morning": a time by its figure
    rf"|at\s+(?:{FIGURE_WORD})(?:[:.]\d\d)?\s*(?:am|pm|a\.m\.|p\.m\.|o'clock"
    r"|in the (?:morning|evening))(?!\w))"
    r"(?P<after>\s.*)?$",
    re.IGNORECASE,
)


# a word that says a state something is in ("visible", "booked", "available"), not what it is
_STATE_WORD = r"(?:[a-z]+(?:ed|ble|en)|available|visible|open|shown|seen)"
# words every criterion may use without saying anything new
_BOILERPLATE = frozenset(
    "given product checked check available possible user able feature story system app".split()
)


def criteria(texts: Sequence[str], cap: Capability, title: str, persona: str) -> list[str]:
    """Criteria from the statements (cleaned; the main one first). Each says something the title
    does not; every figure in them is one a statement says."""
    out: list[str] = []
    figures: set[str] = set()
    story_persona = persona
    main_said = ""
    said_after: list[str] = []  # criteria that go after the statement's own
    for k, spoken in enumerate(texts):
        out.extend(said_after)
        said_after.clear()
        defined = _DEFINED_BY_A_FIGURE.match(unframed(spoken).strip())
        if defined and quantities(defined.group("what")):
            # "Dangerous ones, deeper than forty millimetres, have to be fixed within ...": which
            # ones the need is for, by the figure said of them
            thing = defined.group("thing").strip()
            be = "are" if _plural(thing.lower().split()) or thing.lower().endswith("ones") else "is"
            said_after.append(f"{capital(thing)} {be} {defined.group('what').strip()}.")
        named = _THING_THEN_FIGURE.match(unframed(spoken).strip())
        if named and _figure_alone(named.group("figure")):
            # "And the cancellation cut-off, two hours.": what the thing is ("The cancellation
            # cut-off is two hours.")
            thing = named.group("thing")
            be = "are" if _plural(thing.lower().split()) else "is"
            out.append(f"{capital(thing)} {be} {named.group('figure').strip()}.")
            continue
        past = _PAST_THE_LIMIT.search(spoken)
        if past and (quantities(spoken[: past.start()]) or (k and quantities(texts[k - 1]))):
            # "Cancellations: free up to 24h before, after that the walk is charged in full",
            # "No refunds after that.": what holds past the limit is a criterion of its own
            said_after.append(f"{capital(past.group('said').strip())}.")
            spoken = f"{spoken[: past.start()]}{spoken[past.end() :]}".strip()
            if len(spoken.split()) < MIN_TITLE_WORDS:
                continue
        limit = limits_the_need_before(spoken)
        if limit:  # "But only if the member has an email address on file.": of the one before
            if k and (out or main_said):
                limited = out.pop() if out else f"{main_said}."
                out.append(f"{limited.rstrip('.')} {_lower_first(limit)}.")
            continue
        whom = for_whom(spoken) if k else None
        if whom:  # "For under sixteens anyway.": who the need is for
            out.append(f"{whom}.")
            continue
        by = by_what(spoken) if k else None
        if by and title:  # "By text, ideally, ...": how, said with the need ("Notify the
            out.append(f"{title} {_lower_first(by)}.")  # patient automatically by text.")
            continue
        if k and _ONLY_RULE.match(spoken):
            out.append(f"{_trim(spoken)}.")  # "Only checkouts need an inspection.": a rule as said
            continue
        set_anew = _SET_ANEW.match(spoken)
        if set_anew and quantities(set_anew.group("what")):
            # "Marta came back on this: make it five days for large items, three days for
            # everything else": the figures set anew are the criterion
            out.append(f"{capital(set_anew.group('what').rstrip(' .!'))}.")
            continue
        if k and title and _names_the_title(spoken, title):
            continue  # "And the joystick away." under "Leave out the joystick": the title again
        text = unframed(spoken)  # "it's important that ...": what is important
        # "as the manager I want to know ...": the statement's own "I", not the story's persona
        own = _SPEAKS_AS.search(spoken)
        persona = singular_persona(own.group(1) or own.group(2)) if own else story_persona
        req = _parse(text)
        if says_nobody(req):  # "nobody has to log in ...": in the statement's own words
            whole = _trim(text)
            if len(whole.split()) >= MIN_TITLE_WORDS:
                out.append(f"{capital(whole)}.")
            continue
        clause = req.clause if req.kind else text
        then = (_then_result(req, text, persona) if k == 0 else "") or _done_then(text, persona)
        if then:  # "mark a transaction as personal, and then it comes off their next pay"
            out.append(then)
            continue
        split = (
            _condition(text, first_only=True)
            or _condition(clause)
            or _condition_after(text, clause)
        )
        if split and req.kind == "vp" and thing_acted_on(req):
            split = None  # "a knowledge base they can search before they raise a ticket": a thing
        if split and k == 0 and leaves_out(cap.title):
            # "Automatic power on / off (TV switches on when you pick up the remote) is dropped":
            # the condition is part of what is left out, nothing the product then does
            split = None
        if split and re.match(r"(?:each|every)\s+[a-z]+$", split[0], re.IGNORECASE):
            # "After each walk the walker sends a short update": a time, no event to check by;
            # the statement as said is the criterion
            whole = _trim(text)
            if _has_verb(split[1]) and len(whole.split()) >= MIN_TITLE_WORDS:
                out.append(f"{capital(whole)}.")
            continue
        last = _CONDITION_LAST.search(text)
        if split and last and last.start() >= text.find(req.clause) + len(req.clause) > 0:
            # "Residents get an email when it's fixed, if they left one.": both conditions
            split = (f"{split[0]} and {_one_named(last.group('cond'), split[1])}", split[1])
        if split:
            when, main_clause = split
            # the clause read lost the verb's object at its end ("when they reach it")
            with_object = re.search(rf"\b{re.escape(when)}\s+(?:it|them|this|these|those)\b", text)
            if with_object:
                when = _trim(with_object.group(0), keep_object=True)
            main_req = _parse(main_clause)
            # "..., so I don't have to chase people": a benefit, not the condition's result
            purpose = _purpose_first(main_clause, main_req)
            result = "" if purpose else _declarative(main_req, cap, persona, main_clause)
            result = _asked_of_the_product(result)
            if _remark(main_clause):
                continue  # "..., then it's something we have to consider": talk, no check
            if not _checkable(when, result):
                thing = result.lower().split()
                if req.kind or _has_verb(result) or len(thing) > 8 or not names_a_thing(thing):
                    continue  # "when we choose, then the thing with this whole": talk, no check
                # "a reminder to Bev and me before someone's DBS expires": a thing, no behaviour
                # to check it by; the statement in full is the item (below)
            elif result:
                out.append(_given_when_then(persona, when, result))
                continue
        found = limits(text)
        if found:
            for lim in found:  # the clause that states the limit, in the meeting's words
                if lim.quantity.text.lower() in figures:
                    continue
                figures.add(lim.quantity.text.lower())
                item = _clause_with(text, lim.quantity.text, cap, persona)
                if item:
                    out.append(item)
            continue
        if (req.kind and _PURPOSE.match(req.clause)) or _purpose_only(_PURPOSE.search(text), req):
            continue  # only its purpose has a modal ("..., so I don't have to chase people")
        team = _TEAM_CHECK.search(text)
        if team and req.kind and req.clause.lower() in text[team.start() :].lower():
            continue  # "we'd need to check the price with finance": the team's work, no check
        statement = _declarative(req, cap, persona, text)
        if k == 0:
            main_said = statement  # what a condition said after it limits
        said_is = _SAID_IS.match(statement)
        if said_is:  # "(the main thing) is that patients can book ...": what it is
            statement = capital(said_is.group("what"))
        if not statement or _FRAGMENT.match(statement):
            continue  # "Depends on the cost.": a clause without its subject, no check
        put_to = _PUT_TO.match(statement)  # "Gareth, the bulky limit.": put to someone
        topic = statement[put_to.end() :] if put_to else statement
        if k and _A_THING_NAMED.match(topic) and (put_to or not _has_verb(topic)):
            continue  # "Okay so, um, the club app.": a thing named, the topic, no check
        if k and _OPTIONS_ARE.search(statement):
            continue  # "The battery, there are few options.": the choices talked of, no check
        announced = _TOPIC_ANNOUNCED.match(statement)
        if k and announced and len(announced.group("what").split()) <= 4:
            continue  # "Another thing, currencies.": the next topic named, no check
        numbers = [q.text.lower() for q in quantities(text) if q.text.lower() not in figures]
        figures.update(numbers)
        if numbers or k > 0 or adds_to_title(statement, title, persona):
            out.append(f"{statement}.")
    out.extend(said_after)
    persona = story_persona
    decided = _decided_by(texts[0], cap) if texts else ""
    if decided:
        out.append(decided)
    # "it got to be a titanium": what it is made of ("The product is made of titanium.")
    out = [_MADE_OF_A.sub(lambda m: f"{m.group('be')} made of {m.group('stuff')}", c) for c in out]
    # "In a given room there might be more than one remote control.": what may happen is a worry
    # or a guess, no check
    out = [c for c in out if not _MIGHT.search(c)]
    kept = [c for c in _dedupe(out) if adds_to_title(c, title, persona) and not _vague(c)]
    # "Ten working days." after "We send the welcome pack ten working days before the start
    # date.": a criterion whose words another says in full adds nothing
    kept = [c for c in kept if not any(len(o) > len(c) and _words(c) <= _words(o) for o in kept)]
    for text in texts:
        for item in [*_enumeration(text), *_clause_items(text, cap, persona)]:
            if len(kept) >= MAX_CRITERIA:
                break
            said = {w for c in kept for w in content_words(c)} | set(content_words(title))
            mine = set(content_words(item))
            if len(mine - said) < max(1, len(mine) // 2):
                continue  # mostly said already (the statement's own criterion, the title)
            if adds_to_title(item, title, persona) and not _vague(item):
                kept.append(item)
    return kept[:MAX_CRITERIA]


def _figure_alone(said: str) -> bool:
    """Whether ``said`` is one figure and nothing else ("two hours", "up to five items")."""
    found = quantities(said)
    if len(found) != 1:
        return False
    rest = said.lower().replace(found[0].text.lower(), " ")
    return not set(content_words(rest)) - {"up", "at", "least", "most", "about", "roughly"}


def _names_the_title(spoken: str, title: str) -> bool:
    """Whether a statement other than the main one asks for what the title says, in its words,
    and says no figure: the need said again ("And the joystick away." under "Leave out the
    joystick"), no criterion of it."""
    if quantities(spoken):
        return False
    said = _article_free(capability(body(spoken)).title)
    return bool(said) and said == _article_free(title)


def _article_free(title: str) -> str:
    return " ".join(w for w in title.lower().split() if w not in ("a", "an", "the"))


# a condition said last, after the need's clause and its own condition ("..., if they left
# one"); not a hedge ("if possible", "if you really need to")
_CONDITION_LAST = re.compile(
    r",\s*(?:but\s+)?(?:only\s+)?if\s+(?P<cond>(?:they|it|we|the\s+\w+|someone|a\s+\w+)\s+"
    r"(?!(?:need|needs|want|wants|like|likes|can|could|would|really)\b)[a-z']+\b[^,;.!?]*)"
    r"[.!?]?$",
    re.IGNORECASE,
)


def _one_named(cond: str, result: str) -> str:
    """``cond`` with a last "one" said as the thing the result names ("they left one", of "get
    an email": "they left an email")."""
    thing = re.search(r"\b(?:a|an)\s+[a-z][\w-]*", result, re.IGNORECASE)
    return re.sub(r"\bone$", thing.group(0), cond.strip()) if thing else cond.strip()


# a thing said with the figure that says which ones it is, between commas, before what is said of
# it ("Dangerous ones, deeper than forty millimetres, have to be fixed ...")
_DEFINED_BY_A_FIGURE = re.compile(
    r"^(?P<thing>(?:[A-Za-z][\w-]*\s+){0,3}[A-Za-z][\w-]*),\s*(?P<what>(?:(?:[a-z]+er|more|less"
    r"|fewer)\s+than|over|under|above|below|at least|at most|up to)\s+[^,]{2,40}),\s*\w",
    re.IGNORECASE,
)


# a material said with an article, as if it were a thing ("is a titanium")
_MADE_OF_A = re.compile(
    rf"\b(?P<be>is|are)\s+an?\s+(?P<stuff>{'|'.join(sorted(MATERIALS))})(?=\s*(?:[.,;!?]|$))",
    re.IGNORECASE,
)


# what holds past a limit said just before: a clause that opens with "after that" ("..., after
# that the walk is charged in full") or closes with it ("No refunds after that.")
_PAST_THE_LIMIT = re.compile(
    r"(?:^|[,;]\s*|\s+and\s+)(?P<said>(?:after|past|beyond)\s+(?:that|this)\b,?\s+[^,;.!?]*\w"
    r"|(?<![^,;]\s)(?<!\w)[^,;.!?]*\w\s+(?:after|past|beyond)\s+(?:that|this))"
    r"(?=\s*(?:[,;.!?]|$))",
    re.IGNORECASE,
)


# a rule on which cases a need holds for ("Only checkouts need an inspection.", "Only managers
# can see it."): said whole, with its verb
_ONLY_RULE = re.compile(
    r"^Only\s+(?:the\s+)?[\w-]+(?:\s+[\w-]+){0,2}?\s+(?:need|needs|are|is|can|must|should|get"
    r"|gets|have|has)\s+\w",
)


# a figure set anew, after who came back on it ("Marta came back on this at the end: make it
# five days for large items, ..."), not a case supposed ("let's say I am on channel eight")
_SET_ANEW = re.compile(
    r"^(?:[^:]{3,80}:\s*)?(?:make (?:it|that)|let'?s make (?:it|that)|change (?:it|that) to)"
    r"\s+(?P<what>.+)$",
    re.IGNORECASE,
)


def _words(text: str) -> set[str]:
    """Every word of ``text``, lowercased (figures and function words too)."""
    return set(re.findall(r"[\w'-]+", text.lower()))


_SPEAKS_AS = re.compile(
    rf"\b(?:as (?:an?|the) ({PERSONA_FORMS}),?\s+(?:i|we)\b|(?:from|on) (?:the|our) "
    rf"({PERSONA_FORMS})['\u2019]? (?:side|point of view|perspective|end)\b)",
    re.IGNORECASE,
)
_REASON = re.compile(
    r"^(?:because|'cause|cause|since|as|whereas|although|though|so that|in order to|otherwise"
    r"|when|whenever|if|unless|once|after|before|until|while|which|who|that|where)\b",
    re.IGNORECASE,
)
_MAX_ITEM_WORDS = 20
# "(the big thing) is that X": X is what was said
_SAID_IS = re.compile(r"(?:is|was) that\s+(?P<what>.+)$", re.IGNORECASE)
# a clause that opens with a verb has lost its subject to the clause before it
_FRAGMENT = re.compile(
    r"^(?:is|are|was|were|be|been|has|have|had|does|do|did|gets|get|seems?|looks?|depends?"
    r"|means|goes|comes)\b",
    re.I,
)
# a thing named with "the" and nothing said of it ("The club app.", "The wood thing.")
_A_THING_NAMED = re.compile(
    r"^(?:the|this|that|these|those|our)\s+[\w'-]+(?:\s+[\w'-]+){0,2}\W*$", re.I
)
# someone named first, the thing put to them after ("Gareth, the bulky limit.")
_PUT_TO = re.compile(r"^[A-Z][a-z]+,\s+(?=(?:the|this|that|these|those|our)\s)")
# a thing named, then its figure, and nothing else ("And the cancellation cut-off, two hours.")
_THING_THEN_FIGURE = re.compile(
    r"^(?:(?:and|so|then|okay|ok|right)\W+)*(?P<thing>(?:the|our)\s+[a-z][\w'-]*(?:\s+[a-z][\w'-]*)"
    r"{0,3})\s*,\s*(?P<figure>[^,;:.!?]+?)\W*$",
    re.IGNORECASE,
)
# how many choices there are ("there are few options", "there are several possibilities")
_OPTIONS_ARE = re.compile(
    r"\bthere(?:'s| is| are)\s+(?:only\s+)?(?:a few|few|many|several|some|lots of|a lot of|not many"
    r"|no other|other|two|three|four|different)\s+(?:\w+\s+)?(?:options|choices|possibilities"
    r"|alternatives|ways)\b",
    re.IGNORECASE,
)
# the next topic announced ("Another thing, currencies.", "One more thing: the colours.")
_TOPIC_ANNOUNCED = re.compile(
    r"^(?:(?:oh|and|so|okay|ok|right)[\s,]+)*(?:another|one more|the other|the next|next)\s+"
    r"(?:thing|point|topic|question|one)\s*[,:;-]\s*(?P<what>[^,.;!?]+)\W*$",
    re.IGNORECASE,
)
_BEHAVIOUR = re.compile(r"^(?:they|it)\s+(?:then\s+|also\s+|automatically\s+)?([a-z]+)\s+\w+", re.I)
_BEHAVIOUR_VERBS = frozenset(
    """get receive see show send notify remind appear open close lock unlock switch turn save
    store sync update book cancel release move delete expire beep light flash play stop start
    go pay""".split()
)
# the behaviour that answers a condition said without a comma ("if we bump someone | they get a
# notification")
_BEHAVIOUR_AFTER = re.compile(
    r"(?<=\s)(they|it|you|we|the\s+[a-z]+)\s+(?:then\s+|also\s+|automatically\s+)?([a-z]+)\b",
    re.IGNORECASE,
)


# what happens once the need is done: "..., and then it comes off their next pay"
_AND_THEN = re.compile(
    r",?\s+and then\s+(?P<result>(?:it|they|this|that|the \w+(?: \w+)?)\s+[a-z]+\b[^,;]*)",
    re.IGNORECASE,
)


def _then_result(req: _Requirement, text: str, persona: str) -> str:
    """A Given/When/Then from a need said with what then happens ("The employee should be able to
    mark a transaction as personal, and then it comes off their next pay" -> "Given an employee,
    when they mark a transaction as personal, then it comes off their next pay."); "" when the
    statement says no such result."""
    if req.kind != "vp" or req.cannot or req.embedded:
        return ""
    found = _AND_THEN.search(text)
    if not found:
        return ""
    action = _trim(text[: found.start()])
    at = action.lower().find(req.rest.split(" and then ")[0].lower())
    if at < 0:
        return ""
    action = re.sub(r"^be able to\s+", "", action[at:], flags=re.IGNORECASE)
    result = _trim(found.group("result"))
    # "mark the room as clean when they're done, and then the supervisor checks it": the action
    # is the condition; its own "when" is no second one
    action = re.split(
        r"\s+(?:when|once|after)\s+(?:they|you|we)(?:'re|\s+are)\s+(?:done|finished)\b", action
    )[0]
    first = action.split()[0].lower() if action.split() else ""
    if not is_base_verb(first) or not _checkable(action, result):
        return ""
    return f"Given {_article(persona)} {persona}, when they {action}, then {result}."


# what someone does and what the product then does, said as a scene ("you want to move to the
# armchair from the sofa or something, and then the volume changes", "you clap and then it
# beeps"): the thing that then acts is the product or a part of it, never a person
_DONE_THEN = re.compile(
    r"^(?:(?:like|so|and|or|well|okay|ok|say|maybe|if)\W+)*(?:you|they|people|the users?)\s+"
    r"(?:(?:want|wanna|need|have|try)\s+(?:to\s+)+)?"
    r"(?P<action>[a-z](?:(?!\band then\b)[^;])*?)\s*,?\s+and then\s+"
    r"(?P<result>(?:it|the\s+(?!user|person|people)[a-z]+(?:\s+[a-z]+)?)\s+"
    r"(?:[a-z]+(?<!s)s|(?:will|would|can)\s+[a-z]+)\b(?:(?!\band then\b)[^,;])*)(?:[,;.]|$)",
    re.IGNORECASE,
)
# "or you want to move ...": the scene's second action, said with its subject again
_DOES_AGAIN = re.compile(
    r"\b(?:or|and)\s+(?:you|they)\s+(?:(?:want|wanna|need|have|try)\s+(?:to\s+)+)?", re.I
)


def _done_then(text: str, persona: str) -> str:
    """A Given/When/Then from a scene said without a modal: what someone does, and then what
    the product does ("Like, you want to change the chair or you want to move to the armchair
    from the sofa or something, and then the volume changes." -> "Given a user, when they change
    the chair or move to the armchair from the sofa, then the volume changes."); "" when the
    statement is no such scene."""
    found = _DONE_THEN.match(text.strip())
    if found is None:
        return ""
    action = re.sub(r"^(?:to\s+)+", "", found.group("action"))
    action = _DOES_AGAIN.sub(lambda m: f"{m.group(0).split()[0]} ", action)
    action = _trim(re.sub(r",?\s+or (?:something|whatever|so)\s*$", "", action))
    result = _trim(found.group("result"))
    first = action.split()[0].lower() if action.split() else ""
    if not is_base_verb(first) or not _checkable(action, result):
        return ""
    return f"Given {_article(persona)} {persona}, when they {action}, then {result}."


# a condition in a clause of its own after the need's ("..., you go on a list, and when someone
# cancels you get a message")
_LATER_CONDITION = re.compile(
    r"(?:,\s*(?:and\s+|then\s+)?|\s+and\s+)(?=(?:when|whenever|if|as soon as|once)\s)", re.I
)


def _condition_after(text: str, clause: str) -> tuple[str, str] | None:
    """(condition, result) of a clause said after the requirement's ``clause`` that holds one
    with its own result ("..., and when someone cancels you get a message"), or None."""
    at = text.find(clause) if clause else -1
    if at < 0:
        return None
    for later in _LATER_CONDITION.finditer(text, at + len(clause)):
        found = _condition(text[later.end() :].rstrip(" .!"), first_only=True)
        if found:
            return found
    return None


# who decides, said after the need ("Carry-over: up to five days ..., decided by HR, not by the
# team lead")
_DECIDED_BY = re.compile(
    r",\s*(?:and\s+)?(?:only\s+)?(?P<verb>decided|approved|set|chosen|agreed|signed off|owned"
    r"|managed)\s+by\s+(?P<who>(?:the\s+)?[\w'-]+(?:\s+[\w'-]+){0,2}?)"
    r"(?:,?\s+not\s+(?:by\s+)?(?P<other>(?:the\s+)?[\w'-]+(?:\s+[\w'-]+){0,2}?))?\s*[.;!]?$",
    re.IGNORECASE,
)


def _decided_by(text: str, cap: Capability) -> str:
    """Who decides the need, as its criterion ("HR decides the carry-over, not the team lead."),
    or "" when the statement names nobody."""
    found = _DECIDED_BY.search(text)
    thing = re.sub(r"^(?:Provide|Allow|Keep|Make)\s+", "", cap.title) if cap.title else ""
    if not found or not thing or len(thing.split()) > 6:
        return ""
    verb, *particle = found.group("verb").lower().split()  # "signed off" -> "signs off"
    decides = " ".join([third_person(base_form(verb)), *particle])
    thing = thing if _plural(thing.lower().split()) else _the(thing)
    other = f", not {_lower_first(found.group('other'))}" if found.group("other") else ""
    return f"{capital(found.group('who'))} {decides} {_lower_first(thing)}{other}."


def _given_when_then(persona: str, when: str, result: str) -> str:
    """The criterion "Given a <persona>, when <when>, then <result>.", the generic "you" said to
    whoever it happens to ("when someone cancels you get a message" -> "then they get a
    message")."""
    when, result = generic_you(when), generic_you(_lower_first(result))
    return f"Given {_article(persona)} {persona}, when {when}, then {result}."


_YOU = re.compile(r"\byou(?P<tail>'re|'ll|'d|'ve|rself|rs|r)?\b", re.IGNORECASE)
# words after which "you" is the object ("it tells you", "for you")
_BEFORE_AN_OBJECT = frozenset(
    """to for with at from by about of into onto than give gives tell tells told send sends sent
    show shows let lets help helps ask asks remind reminds offer offers notify notifies call calls
    email emails text texts warn warns charge charges pay pays""".split()
)
# the generic "you" said as another person: (subject, object, {tail: word})
_THEY = ("they", "them", {"r": "their", "rs": "theirs", "rself": "themselves"})
_I = ("I", "me", {"r": "my", "rs": "mine", "rself": "myself", "'re": "I'm"})


def generic_you(clause: str, first_person: bool = False) -> str:
    """``clause`` with the generic "you" as "they" (a subject: "you'd normally come", "if you
    cancel") or "them" (an object: "it tells you"), and "your" as "their"; with
    ``first_person``, as the story's "I" ("while you're away" -> "while I'm away", "your
    approvals" -> "my approvals")."""
    subject, obj, tails = _I if first_person else _THEY

    def other(found: re.Match[str]) -> str:
        tail = (found.group("tail") or "").lower()
        if tail:
            return tails.get(tail, f"{subject}{tail}")
        before = re.findall(r"[a-z']+", clause[: found.start()].lower())
        return obj if before and before[-1] in _BEFORE_AN_OBJECT else subject

    return _YOU.sub(other, clause)


def _behaviour_at(text: str, start: int) -> re.Match[str] | None:
    """The first "it" / "they" and a behaviour that agrees with it after ``start`` (``_behaves``):
    where the result of a condition said without a comma begins."""
    at = start
    while (b := _BEHAVIOUR_AFTER.search(text, at)) is not None:
        # "if the manager rejects the claim the employee gets ...": not the condition's own
        # subject, and "the claim the" is no behaviour ("the employee gets" may follow it)
        own = b.start() == start and b.group(1).lower() not in ("it", "they")
        if not own and _behaves(b.group(1), b.group(2)):
            return b
        at = b.start() + 1
    return None


def _behaves(subject: str, verb: str) -> bool:
    """Whether ``verb`` is a behaviour in the present tense that agrees with ``subject`` ("it
    moves", "they get"; not "flip it open")."""
    verb = verb.lower()
    base = base_form(verb)
    if base not in _BEHAVIOUR_VERBS:
        return False
    thing = subject.lower().split()
    if thing[0] == "the":  # "the employee gets", "the managers get"
        if thing[-1] in ("same", "other", "next", "first", "last") or is_base_verb(thing[-1]):
            return False
        thing = ["they" if thing[-1].endswith("s") else "it"]
    return (base != verb) if thing[0] == "it" else (base == verb)


# a clause that says who does it, with its participle ("booked by the teacher", "approved by
# finance")
_DONE_BY_SOMEONE = re.compile(
    r"^(?:[a-z]+ed|paid|sent|set|done|made|run|chosen|written|signed off)\s+by\s+"
    r"(?:the\s+|their\s+|a\s+|an\s+|each\s+)?[a-z][\w-]*(?:\s+[a-z][\w-]*)?$",
    re.IGNORECASE,
)
_DECIDED = re.compile(
    r"^(?:no|not|never|without|only|at least|at most|no more than|up to|max(?:imum)?"
    r"|min(?:imum)?|every|each|all|both|none)\b",
    re.IGNORECASE,
)


_BOUND_LAST = re.compile(r"\b(?:at most|at least|or less|or more|or fewer|max|min)$", re.I)


def _trim_keeping_bound(text: str) -> str:
    """``_trim``, but a bound said after its figure stays ("beeps for 30 s at most")."""
    bare = re.sub(r"\s+", " ", text).strip(" ,;:.!?-/\"'")
    return bare if _BOUND_LAST.search(bare) else _trim(text)


def _clause_with(text: str, figure: str, cap: Capability, persona: str) -> str:
    """The clause of a statement that says a figure ("battery life at least 12 months of typical
    use", with the case it holds in: "..., with the backlight on its default setting"), as a
    checklist item, present tense when it has a modal ("the remote must have no more than 8
    buttons" -> "The remote has no more than 8 buttons"); the clause before it joins when the
    figure's clause alone is too short to read ("up to two hours")."""
    clauses = [_trim_keeping_bound(c or "") for c in _CLAUSE_BREAK.split(text)]
    for k, clause in enumerate(clauses):
        if figure.lower() not in clause.lower():
            continue
        clause = _trim_keeping_bound(_LEAD.sub("", clause))
        if len(clause.split()) < MIN_TITLE_WORDS + 1 and k and clauses[k - 1]:
            clause = f"{_LEAD.sub('', clauses[k - 1])}, {clause}"
        if len(clause.split()) < MIN_TITLE_WORDS:
            continue
        if k + 1 < len(clauses) and _CONCESSION.match(clauses[k + 1]):
            clause = f"{clause}, {clauses[k + 1]}"  # "..., even on a slow phone": its condition
        timed = _LIMIT_FIRST.match(clause)
        if timed and not timed.group("within") and is_verb(timed.group("verb")):
            # "under two seconds to show the free slots": what it takes to do it
            return f"It takes {_lower_first(clause.rstrip('.'))}."
        if _MODAL.search(clause):
            stated = _declarative(_parse(clause), cap, persona, clause)
            if stated and figure.lower() in stated.lower():
                return capital(stated.rstrip(".")) + "."
        return capital(clause.rstrip(".")) + "."
    return ""


# a clause that says the case a limit holds in too ("..., even on a slow phone", "..., with the
# backlight on its default setting")
_CONCESSION = re.compile(
    r"^(?:even\s+(?:on|in|with|at|for|when|if|during|under)\b|with\s+(?:the|its|their|a|an)\s+"
    r"[a-z-]+(?:\s+[a-z-]+)?\s+(?:on|off|at|in|set to|switched (?:on|off)|turned (?:on|off))\b)",
    re.IGNORECASE,
)


def _purpose_first(clause: str, req: _Requirement) -> bool:
    """Whether a purpose ("so I don't have to ...") opens before the clause's requirement, or
    holds the clause's only modal (``_purpose_only``)."""
    purpose = _PURPOSE.search(clause)
    if purpose is None:
        return False
    return purpose.start() <= clause.find(req.clause or clause) or _purpose_only(purpose, req)


def _purpose_only(purpose: re.Match[str] | None, req: _Requirement) -> bool:
    """Whether a clause's only modal is in its ``purpose`` ("..., so I don't have to chase
    people": ``_parse`` reads no need from a "don't have to")."""
    return not req.kind and purpose is not None and bool(_MODAL.search(purpose.group(0)))


# a list said after a colon: "No more than 8 physical buttons: power, volume up, ... and back"
_ENUMERATION = re.compile(
    r"^(?P<head>[^:;]{3,80}?):\s*(?P<items>[^:;,]{1,40}(?:,\s*[^:;,]{1,40}){1,}"
    r"\s+(?:and|or)\s+[^:;,]{1,40}?)[\s.!?]*$"
)


def _enumeration(text: str) -> list[str]:
    """A list the statement gives after a colon, as one checklist item in its words (what a
    tester checks item by item)."""
    found = _ENUMERATION.match(_trim(_LEAD.sub("", text.strip())))
    if not found or len(found.group("head").split()) > 10:
        return []
    return [f"{capital(found.group('head').strip())}: {found.group('items').strip()}."]


# the product named, then what it does in the present ("The remote recognises a fixed vocabulary
# of ...", "the app keeps a copy ..."): a behaviour to check
_PRODUCT_NAMES = (
    r"(?:product|device|system|app|remote(?:\s+control)?|site|website|portal|tool|platform"
    r"|service)"
)
_PRODUCT_DOES = re.compile(
    rf"^(?:the|our)\s+{_PRODUCT_NAMES}\s+(?:also\s+|automatically\s+|only\s+)?"
    r"(?P<verb>[a-z]+s)\s+\S",
    re.IGNORECASE,
)
# a sentence whose subject does each of the verbs it lists ("It must not ..., stops ...")
_SHARED_SUBJECT = re.compile(
    rf"^(?P<s>it|the\s+{_PRODUCT_NAMES})\s+"
    r"(?:must|should|will|shall|can|always|never|also|only|then)?\s*[a-z]",
    re.IGNORECASE,
)
# what the statement the story is written from is said of: a thing, not a person ("the alarm")
_NAMES_A_THING = re.compile(
    rf"^the\s+(?!(?:{PERSONA_FORMS})$)[a-z][\w-]*(?:\s+[a-z][\w-]*)?$", re.IGNORECASE
)
_NO_BEHAVIOUR = frozenset("is was does seems looks sounds feels".split())  # how it is, a judgement


def _clause_items(text: str, cap: Capability, persona: str) -> list[str]:
    """Checklist items from the clauses of a statement that the requirement's own clause leaves
    out ("..., so no new chip development", "decision, no GPS tracking, we stick with ..."): a
    clause that states a thing, a decision or a second requirement; never a reason, a purpose, a
    condition cut from its result, a question or talk about the speaker."""
    out = []
    for part in re.split(r"\s*;\s+", text):
        does = _PRODUCT_DOES.match(part.strip())
        verb = does.group("verb").lower() if does else ""
        if does and is_verb(verb) and not is_base_verb(verb) and verb not in _NO_BEHAVIOUR:
            # "The remote recognises a fixed vocabulary of power, volume up, ... and channel
            # numbers; ...": what the product does, its list whole (a comma cuts no item there)
            item = capital(_trim(part))
            if len(item.split()) <= 2 * _MAX_ITEM_WORDS:
                out.append(item.rstrip(".") + ".")
    doer = _SHARED_SUBJECT.match(text.strip())
    for at, raw in enumerate(_CLAUSE_BREAK.split(text)):
        clause = _trim(_LEAD.sub("", _trim(raw or "")))
        first = clause.split()[0].lower() if clause else ""
        if at and doer and first.endswith("s") and is_verb(first) and not is_base_verb(first):
            # "It must not react to ..., stops beeping as soon as any button is pressed, and
            # beeps for 30 s at most": the sentence's subject does each of its verbs
            named = cap.subject if _NAMES_A_THING.match(cap.subject or "") else "the product"
            said = f"{named if doer.group('s').lower() == 'it' else doer.group('s')} {clause}"
            split = _condition(said)
            if split and "?" not in said:
                when, result = split
                stated = _declarative(_parse(result), cap, persona, result)
                if stated and _checkable(when, stated):
                    out.append(_given_when_then(persona, when, stated))
                    continue
            if re.search(r"\d", clause):
                out.append(f"{capital(_trim(said))}.")  # "The remote beeps for 30 s at most."
            continue
        lead = _CONDITION_WORD.match(clause)
        split = lead and _behaviour_at(clause, lead.end()) and _condition(clause)
        if split and "?" not in clause:  # "..., and if we bump someone they get a notification"
            when, result = split
            stated = _declarative(_parse(result), cap, persona, result)
            if stated and _checkable(when, stated) and not _remark(result):
                out.append(_given_when_then(persona, when, stated))
            continue
        clause = _trim(raw or "")
        if not clause or _REASON.match(clause) or _PURPOSE.match(clause) or "?" in clause:
            continue
        clause = _trim(_LEAD.sub("", clause))
        if not clause or _REASON.match(clause) or len(clause.split()) > _MAX_ITEM_WORDS:
            continue
        behaviour = _BEHAVIOUR.match(clause)
        if _MODAL.search(clause):
            if _remark(clause):
                continue  # "I'll go back to stuffing receipts in my pocket": the speaker, no check
            item = _declarative(_parse(clause), cap, persona, clause)
        elif behaviour and base_form(behaviour.group(1).lower()) in _BEHAVIOUR_VERBS:
            item = capital(clause)  # "they get a friendly message after two no-shows"
        elif _NEW_CLAUSE.match(clause) or _PERSONA_START.match(clause) or _FRAGMENT.match(clause):
            continue  # "I'm on trains all the time", "you go on a list": talk, not a check
        elif _DONE_BY_SOMEONE.match(clause):
            item = capital(clause)  # "Up to thirty pupils, booked by the teacher, ...": by whom
        elif _DECIDED.match(clause) or re.search(r"\d", clause):
            item = capital(clause)  # "no GPS tracking", "only on weekdays", "max 2 profiles"
        else:
            continue  # "channel and volume": a piece of a list, not a check
        if item and len(content_words(item)) >= 2 and len(item.split()) >= MIN_TITLE_WORDS:
            out.append(item.rstrip(".") + ".")
    return out


# a time said before "before" / "after" makes it an offset ("two hours before the appointment",
# "seven days after the transaction"), not a condition to check by
_OFFSET = re.compile(
    r"\b(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|nights?)\s+(?:before|after)\s+$",
    re.IGNORECASE,
)
# a condition that opens with its subject is an event ("we bump someone", "you arrive")
_SUBJECT_FIRST = re.compile(
    r"^(?:i|we|you|they|he|she|it|someone|somebody|anyone|anybody|everyone|nobody|people"
    # "if one of them clashes": some of the things just named
    r"|(?:one|any|some|none|each|all)\s+of\s+(?:them|those|these))\s+[a-z]",
    re.IGNORECASE,
)
# the subject and modal of a result said inside a condition without its comma ("once it's
# blocked nobody can book into it")
_RESULT_INSIDE = re.compile(
    r"(?<=\w)\s+(?:nobody|no one|nothing|everyone|everybody|anyone|anybody|someone|somebody)"
    r"\s+(?:can|can't|cannot|could|will|won't|should|must|gets?)\b",
    re.IGNORECASE,
)
_CONDITION_WORD = re.compile(r"^(?:when|whenever|if|as soon as|once|after|unless)\s+", re.I)


def _condition(text: str, first_only: bool = False) -> tuple[str, str] | None:
    """(condition, result) of a statement that holds one: "if X, Y", "Y when X" (not with
    ``first_only``: a whole sentence of several clauses), and "if X they can Y" said without a
    comma (the result starts at the subject of its modal)."""
    cond = condition_first(text) or (None if first_only else _CONDITION.match(text))
    if cond and _OFFSET.search(text[: cond.start("cond")]):
        return None  # "cancel up to two hours before the appointment": when, not a condition
    inner = cond and _RESULT_INSIDE.search(cond.group("cond"))
    if cond and inner and inner.start() >= 2:
        # "once it's blocked nobody can book into it, online or at the desk": the result starts
        # at its own subject and modal, before the comma
        when = _trim(cond.group("cond")[: inner.start()], True)
        main = f"{cond.group('cond')[inner.start() :]}, {cond.group('main')}".strip(" ,;:.!?")
    elif cond:
        when, main = _trim(cond.group("cond"), True), cond.group("main").strip(" ,;:.!?")
    else:
        lead = _CONDITION_WORD.match(text)
        modal = lead and (_MODAL.search(text, lead.end()) or _WEAK_MODAL.search(text, lead.end()))
        tail = modal and _SUBJECT_TAIL.search(text[: modal.start()].rstrip())
        if lead and not modal:  # "if we bump someone they get a notification": its behaviour
            tail = _behaviour_at(text, lead.end())
        if not (lead and tail) or tail.start() <= lead.end():
            return None
        when = _trim(text[lead.end() : tail.start()], True)
        main = text[tail.start() :].strip(" ,;:.!?")
        then = re.search(r"\s+then\s+", when)
        if then:  # "if we are targeting young people then it's something we have to consider"
            when, main = (
                _trim(when[: then.start()]),
                text[lead.end() + then.end() :].strip(" ,;:.!?"),
            )
    main = re.sub(r"^then\s+", "", main, flags=re.IGNORECASE)  # "when X, then there is a bleep"
    if len(when.split()) < 2 or len(main.split()) < 2:
        return None
    if re.search(rf"\bunless\s+{re.escape(when.split()[0])}\b", text, re.IGNORECASE):
        return None  # "..., unless nobody else has reserved it": no "when", its very opposite
    if re.search(rf"\b(?:before|until|till)\s+{re.escape(when.split()[0])}\b", text, re.I):
        return None  # "do the check before they can start the shift": not when they start it
    if not (_has_verb(when) or _SUBJECT_FIRST.match(when)):
        return None  # "before their summer holidays", "after lunch": a time, not an event
    return when, main


def _declarative(req: _Requirement, cap: Capability, persona: str = "user", text: str = "") -> str:
    """The requirement as a present-tense statement, with the details the rest of its sentence
    adds: 'it should be red' -> 'The power button is red'; 'users must be able to cancel, up
    to two hours before' -> 'Users can cancel, up to two hours before'."""
    if req.embedded:  # the modal is a relative clause's ("the feature that I'd like to add is")
        return ""
    if not req.kind or " and " in req.subject or req.cannot:
        # no modal, two clauses joined by "and", or "can't" / "won't" (said as it was: "our
        # patients won't download an app" is no rule that they do not)
        whole = (text or req.clause).strip(" ,;:.!?") if req.kind else _trim(text or req.clause)
        if not req.kind and _talk(text or req.clause):
            return ""
        if not req.kind and not _NOT_WANTED.match(whole):
            # "make that date a setting, because they'll move it": why is no check; what one
            # does not want to happen says its cause ("lose a photo because the upload failed")
            whole = _REASON_GIVEN.split(whole, maxsplit=1)[0].strip(" ,;:")
        return capital(whole) if len(whole.split()) >= 3 else ""
    if req.kind == "vp" and not req.subject and _talk(text or req.clause):
        return ""  # "let's park SSO for the next quarter": the meeting's plan, no check
    if req.kind == "vp" and forecasts_a_comparison(req.clause):
        return ""  # "then the costs will be much higher": what will follow, no check
    if req.wanted and _SOME_OF_THEM.match(text or req.clause):
        # "some people just want to send one invoice": what some want is why, no rule that
        # everyone does it ("People send one invoice")
        whole = _trim(text or req.clause)
        return capital(whole) if len(whole.split()) >= 3 else ""
    verb = req.rest.strip().lower()
    if (
        req.kind == "vp"
        and is_verb(verb)
        and re.search(rf"\b{re.escape(verb)}\s+(?:it|them)\b", text or req.clause, re.IGNORECASE)
    ):
        return ""  # "somebody else can grab it": what "it" is, the sentence does not say
    only_be = re.match(
        rf"only\s+be\s+(?P<rest>{_STATE_WORD}\b.*)$",
        req.rest.strip(),
        re.IGNORECASE,
    )
    if only_be:  # "must only be visible on the day": "is only visible on the day"
        said = _present(replace(req, rest=f"be {only_be.group('rest')}"), cap, persona, "")
        return re.sub(r"^(.+?\s(?:is|are))\s", r"\1 only ", said, count=1) if said else ""
    used = re.match(r"be\s+(?P<value>.+)$", req.rest.strip(), re.IGNORECASE)
    if used and req.subject.strip().lower() == "it" and _A_VALUE_TO_USE.match(used["value"]):
        # "it should be the actual sterling amount that was charged": that value is used
        value = _trim(used.group("value"))
        details = _details_after(req.clause, text)
        return capital(f"{value} is used" + (f", {details}" if details else ""))
    return _present(req, cap, persona, _details_after(req.clause, text))


_NOT_WANTED = re.compile(r"^(?:i|we)\s+(?:don't|do not|never)\s+want\b", re.IGNORECASE)


# some of the people a need is for, not all of them
_SOME_OF_THEM = re.compile(
    r"^(?:(?:and|but|so|also)\s+)?(?:some|most|many|a lot of|lots of|half|a few|few)\s+"
    rf"(?:of\s+(?:the|our|them|these|those)\s+)?(?:people|folks|{PERSONA_FORMS})\b",
    re.IGNORECASE,
)


# what "we" do as a team, not as the product's voice ("we meet again in thirty minutes", "we
# should think about the colour"; "we load the bank holidays automatically" and "we aim for
# three steps" are the product's)
_TEAM_ACTIVITY = frozenset(
    "meet talk discuss decide think wrap review report present consider remember forget mention"
    " note park".split()
)


# A statement without a modal is a criterion in its own words only when it says something of
# the product: not the speaker's own experience or taste ("I can't imagine a wooden remote
# control", "My method was to look at other remotes"), not a remark on what was just said ("That
# costs more than a car", "This is an option", "..., then that's something to consider"), not a
# musing ("I'm guessing that ...", "I don't think ..."). A need said in the first person stays
# ("I don't want to book that thirteen times"), and so does what the speaker was told ("I have
# been told that we don't consider teletext").
_TALK = re.compile(
    r"^(?:i|i'm|i've|i'd|i'll|my|me|personally)\b(?!'| (?:have been|was|were) told\b)"
    r"|^(?:that|this)(?:'s|\s+(?:is|was|would|will|and|doesn't|does|wouldn't|won't|could|can"
    r"|might|costs?|solves?|sends?|helps?|means?|makes?|fits?|goes|gets))\b"
    r"|\b(?:i wonder|i'm guessing|i'm not sure|not quite sure|i don't think|i don't know"
    r"|something (?:to|(?:we|you) (?:have to|should|need to|must|could|might)) (?:consider"
    r"|think about|ignore|look at)|i can't imagine)\b"
    # the situation today, an apology ("At the moment everything is by phone", "Sorry, back to
    # reception for a sec")
    rf"|^(?:{AS_IS}|sorry)\b"
    # a report of what the team did ("we've conducted a survey", "we talked to the nurses")
    r"|^(?:we've|we have|we|we had)\s+(?:already\s+|also\s+)?(?:conducted|done|did|looked|found"
    r"|seen|saw|talked|discussed|asked|tried|tested|interviewed|surveyed)\b"
    # what was done before the meeting ("we abolished fines last year", "we moved to the new
    # payroll two years ago")
    r"|^(?:we|they|the \w+)\s+(?:already\s+)?[a-z]+ed\b.*\b(?:last (?:year|month|week|term"
    r"|spring|summer|autumn|winter)|(?:years?|months?|weeks?) ago|in (?:19|20)\d\d)\b"
    # the meeting's own plan ("we meet again in thirty minutes", "we'll decide that later")
    rf"|^(?:we|we'll|we will|we're going to|let's)\s+(?:then\s+|now\s+|just\s+)?"
    rf"(?:go through|move on|come back|(?:{'|'.join(sorted(_TEAM_ACTIVITY))})\b)",
    re.IGNORECASE,
)
# a question the team takes to someone else ("..., we'd need to check the price with finance"):
# the team's work, no check of the product
_TEAM_CHECK = re.compile(
    r"(?:^|,\s*|\band\s+)(?:we'd|we would|we'll|we will|i'd|i'll|i will)\s+(?:need to\s+"
    r"|have to\s+)?(?:check|confirm|clarify|agree|verify|run)\b.*\b(?:with|by|past)\s+"
    r"(?:the\s+|our\s+)?(?:\w+\s+)?(?:team|department|finance|legal|hr|procurement|payroll"
    r"|auditors?|board|supplier|vendor|cfo|ceo|dpo|lawyers?|unions?|council)\b",
    re.IGNORECASE,
)
_FIRST_PERSON_NEED = re.compile(r"^(?:i|i'm|i'd)\b.*\b(?:want|need|would like|'d like)\b", re.I)


# a piece of a sentence: a condition without its result ("If the OCR thing picks out the VAT
# number."), a relative clause ("Which change colours."), a phrase that opens with a preposition
# and has no verb ("For the LCD.")
_CONDITION_ONLY = re.compile(r"^(?:if|whether|unless)\b", re.IGNORECASE)
_RELATIVE_FIRST = re.compile(r"^(?:which|who|whose|where)\b(?!.*\?)", re.IGNORECASE)
_PREPOSITION_FIRST = re.compile(r"^(?:for|on|in|at|with|to|from|by)\b", re.IGNORECASE)
_SECOND_SUBJECT = re.compile(
    r"^\w+\s+\S+\s+.*\b(?:i|we|you|they|it|there|he|she)(?:'s|'re|'ll|'d)?\s+\w+", re.I
)


def _talk(text: str) -> bool:
    """Whether a statement without a modal is talk or a piece of a sentence rather than something
    to check (``_TALK``, ``_CONDITION_ONLY``, ``_PREPOSITION_FIRST``)."""
    bare = _LEAD.sub("", text.strip()).strip(" ,")
    if _CONDITION_ONLY.match(bare):  # "if it is thin it's likely to break" has its result
        return _condition(bare) is None and not _SECOND_SUBJECT.match(bare)
    if _RELATIVE_FIRST.match(bare):  # "Which change colours.": the rest of a sentence before
        return True
    if _PREPOSITION_FIRST.match(bare) and not _has_verb(bare):
        return not quantities(bare)  # "for this budget twelve Euros" says a figure
    if is_people_description(bare) or is_finding(bare) or is_comparison(bare):
        return True  # "people find teletext relevant", "the LCD is cheaper than speech ..."
    if judges_a_figure(bare) or judges_the_work(bare):  # "two weeks is harsh", "the carers
        return True  # thing is harder": said of the figure or the work, nothing to check
    return _remark(bare)


def _remark(text: str) -> bool:
    """A remark, a report or the situation today (``_TALK``), unless the speaker states a need of
    their own ("I don't want to book that thirteen times")."""
    talk = bool(_TALK.search(text) or _TEAM_CHECK.match(text))
    return talk and not _FIRST_PERSON_NEED.match(text)


_BE_HAVE = frozenset("is are was were be has have had can will would should must s re".split())


def _has_verb(text: str) -> bool:
    """Whether a piece of text has a verb (a known verb in any form, a form of be or have, a
    modal, a contraction such as "it's" or "don't")."""
    words = re.findall(r"[a-z]+(?:n't)?", text.lower())
    return any(is_verb(w) or w.endswith("n't") or w in _BE_HAVE for w in words)


# A condition says when to check only with something to check it by: not just someone wanting
# or choosing ("when we choose", "when you want"); a result is something that then happens: a
# clause with a verb, not a piece of a list or a remark ("then with the LCD", "then but with a
# TV remote it's gonna be quite limited", "then it's a bit of a pain", "then in the next step").
_EMPTY_CONDITION = frozenset(
    "want wants wanted do does did choose chose can could would will".split()
)
_NOT_A_RESULT = re.compile(
    r"^(?:but|and|or|so|then|if|as|how|with|without|what|it's|it is|that's|that is|one thing"
    r"|in|on|at|for|to|from|by)\b",
    re.IGNORECASE,
)

_MIGHT = re.compile(r"\bmight\b", re.IGNORECASE)
# a question the transcript wrote without its mark: whether ..., an alternative asked ("Would we
# have the wheel inside, or would it be on the outer"), what a word means
_ASKED_AUX = r"(?:would|could|should|shall|can|do|does|did|is|are|will)"
_ASKED = re.compile(
    rf"^(?:whether\b|{_ASKED_AUX}\b.*,\s*or\s+{_ASKED_AUX}\b|what\b[^,]*\bmeans\W*$)",
    re.IGNORECASE,
)
# a result told in the past is an anecdote, not a behaviour ("then we had someone claim ...")
_PAST_RESULT = re.compile(r"^(?:\w+\s+){0,3}?(?:had|was|were|did|went|came)\b", re.IGNORECASE)


# what the speaker asks the product to do for them, said as an order ("tell me which one",
# "warn us", "show me the ones left"), with what it must then not do ("..., don't just fail the
# whole thing")
_ASKED_OF_IT = re.compile(
    r"^(?P<verb>tell|show|warn|notify|remind|alert|email|text|ask|let)\s+(?:me|us)\b(?P<rest>.*)$",
    re.IGNORECASE,
)
_AND_NOT = re.compile(r",\s*(?:and\s+)?(?:don't|do not)\s+(?:just\s+)?(?P<verb>[a-z]+)\b", re.I)


def _asked_of_the_product(result: str) -> str:
    """A result said as an order to the product for the speaker ("Tell me which one, don't fail
    the whole thing") as what the product then does ("the product tells them which one, and does
    not fail the whole thing"); any other result as it is."""
    asked = _ASKED_OF_IT.match(result)
    if not asked:
        return result
    rest = _AND_NOT.sub(lambda m: f", and does not {m.group('verb').lower()}", asked.group("rest"))
    return f"the product {third_person(asked.group('verb').lower())} them{rest}"


def _checkable(when: str, result: str) -> bool:
    """Whether a condition and its result make a Given/When/Then a tester can run
    (``_EMPTY_CONDITION``, ``_NOT_A_RESULT``); an empty result is left to the other criteria."""
    if not result:
        return True
    if all(w.lower() in _EMPTY_CONDITION for w in content_words(when)) and not re.search(
        r"\b(?:nobody|no one|someone|somebody|anyone|anybody)(?:'s|\s+is|\s+isn't|\s+was)\s+\w",
        when,
        re.IGNORECASE,
    ):
        return False  # "when we choose", "if it": no event; "if nobody's in" is one
    if _PREPOSITION_FIRST.match(when) or re.match(r"(?:without|as)\b", when, re.IGNORECASE):
        return False  # "when without falling over", "when on the card": no event to check by
    if _PAST_RESULT.match(result) or is_finding(result):
        return False  # "..., then we had someone claim the same hotel twice": what happened once
    if _MIGHT.search(result):
        return False  # "it might be a little clumsy when it opens up": a worry, not a behaviour
    first = result.split()[0].lower()
    if is_verb(first) and base_form(first) == first and first not in _BE_HAVE:
        return False  # "..., then take your control and point it": what to do, not what happens
    if _SAYS_NOTHING.search(result):
        return False  # "they should be able to say so when they apply": said of what, not said
    return _has_verb(result) and not _NOT_A_RESULT.match(result)


# a result that ends on a verb of saying with nothing said ("then they can say", "can tell")
_SAYS_NOTHING = re.compile(
    r"\b(?:can|could|should|must|will)\s+(?:say|tell|ask|mention|explain)\W*$", re.IGNORECASE
)


def _details_after(clause: str, text: str) -> str:
    """What the sentence says after the requirement's clause, when it adds a detail (not a
    reason, a purpose or a new clause)."""
    at = text.find(clause) if clause and text else -1
    if at < 0:
        return ""
    tail = _trim(text[at + len(clause) :])
    if tail and _list_at(_CLAUSE_BREAK.split(tail), 0):
        return tail  # "same amount, same date": the list the requirement's clause leaves out
    if _NEW_CLAUSE.match(tail) or _NOT_DETAIL.match(tail):
        return ""
    if len(content_words(tail)) < 2 and not (
        _FREQUENCY.search(tail) or quantities(tail) or _WITH_THING.match(tail)
    ):
        return ""  # "..., daily", "..., twice a week": how often, a detail of one word
    return tail


# what an action is done with or by, said after it ("..., with a photo", "..., by email", "...,
# even with no signal")
_WITH_THING = re.compile(
    r"^(?:even\s+)?(?:with|without|via|by)\s+"
    r"(?:(?:a|an|the|their|its|his|her|my|our|your|no|any)\s+)?"
    r"(?!(?:way|far|then|now|chance)$)[\w-]+$",
    re.IGNORECASE,
)


# a verb coordinated with the first one of a verb phrase: right after it ("add and remove
# doctors"), or after a comma before its object ("..., set their working hours, and set the ...")
_COORDINATED_VERB = re.compile(
    r"^((?:and|or)\s+)([a-z]+)\b"
    r"|((?:,\s+(?:(?:and|or)\s+)?|\s(?:and|or)\s+))([a-z]+)"
    r"(?=\s+(?:the|a|an|their|his|her|its|our|your|my|them|it|all|any|every|each|one|some"
    r"|this|that|these|those)\b)"
)


def _agree(word: str) -> str:
    """A coordinated verb in its third-person form; any other word as it is."""
    return third_person(word) if is_base_verb(word) else word


# words that make a subject more than a thing named ("a fifteen-year-old might not", "we")
_NOT_A_THING_SUBJECT = frozenset(
    """i me we you it they them this that these those one people who which not might may would
    could can will should must also do does did don't doesn't it's product""".split()
)
_THING_OPENERS = frozenset("the every each all our their your its a an".split())


def _thing_said_of(subject: str) -> list[str] | None:
    """The words of the noun phrase a need is said of, up to its first preposition ("every
    claim", "the switch" of "the switch in our main device", "staff bookings"); None when the
    subject is a pronoun, a person speaking, "anything over ...", longer than five words or
    holds a verb."""
    words = subject.lower().split()
    if not words or len(words) > 5 or any(w in _NOT_A_THING_SUBJECT for w in words):
        return None
    at = next((k for k, w in enumerate(words) if w in ("in", "of", "for", "with", "on")), None)
    head = words[:at] if at else words
    if head[0] in _THING_OPENERS or (len(head) <= 2 and _plural(head)):
        return head
    return None


# where what qualifies a subject's head noun starts ("patrons with overdue fines", "the staff at
# reception", "people who booked online")
_QUALIFIER_START = re.compile(
    r"\s+(?:with|without|of|in|on|at|from|above|below|over|under|for|who|which|that|whose)\s+"
    # "orders placed before two o'clock": a participle and where or when
    r"|\s+[a-z]+ed\s+(?=(?:before|after|by|in|on|at|from|within|during|over|under)\b)"
)


def _plural(head: list[str]) -> bool:
    """ "the buttons", "staff bookings" (not "every claim", "the class")."""
    if head[0] in ("every", "each", "a", "an"):
        return False
    return head[-1].endswith("s") and not head[-1].endswith(("ss", "us", "is"))


# "the managers to approve every claim": people (or a thing) wanted to do something
_WANTED_TO_ACT = re.compile(
    r"^(?P<who>(?:the|all|every|each|our|their)\s+[\w'-]+(?:\s+[\w'-]+)?|them|people|users"
    rf"|an?\s+(?:[\w-]+\s+)?(?:{PERSONA_FORMS})"
    rf"|everyone|everybody|{PERSONA_FORMS})\s+to\s+(?P<verb>[a-z]+)\b(?P<tail>.*)$",
    re.IGNORECASE,
)  # "I'd like them to get a reminder": "They get a reminder"; "customers to order plants"
_HEDGED = re.compile(r"\b(?:might|may|could|maybe|perhaps)$", re.IGNORECASE)
# who says they want someone to act, not a thing it is done for ("we", "I", "the team")
_SAID_BY_PEOPLE = re.compile(
    r"^(?:$|we\b|i\b|you\b|they\b|it\b|he\b|she\b|let'?s\b|let us\b|everyone\b|the team\b"
    rf"|(?:the |our |all |each |every )?(?:[a-z-]+\s+)?(?:{PERSONA_FORMS})\b)",
    re.IGNORECASE,
)


# what a thing shown does: it appears, not the product ("it should show up")
_APPEARS = re.compile(
    r"^(?:show|shows|pop|pops|come|comes|turn|turns)\s+up\b|^(?:appear|appears|disappear|disappears"
    r"|drop off|drops off|go away|goes away)\b",
    re.IGNORECASE,
)


def _present(req: _Requirement, cap: Capability, persona: str, details: str = "") -> str:
    """The requirement in the present tense ("it should be red" -> "The power button is red"),
    with the ``details`` its sentence adds after it; every verb agrees with the subject."""
    subject = _subject_words(req.subject)
    said_of = subject  # who or what the statement says needs it, before any pronoun is resolved
    if _HEDGED.search(subject):
        return ""  # "we might want to flag it for management": a maybe, nothing to check
    team = subject.lower() in ("we", "let's", "let us")
    if subject.lower() in ("i", "me"):
        subject = f"the {persona}"
    elif not subject or _PRODUCT_PRONOUN.match(subject):
        keep = "they" if subject.lower() == "they" else ""  # people, unless the need names a thing
        named = cap.obj and subject.lower() in ("it", "they", "")
        if subject.lower() == "they" and re.search(r"\b(?:it|this)\b", req.rest, re.IGNORECASE):
            named = False  # "they can turn it off": the thing is "it", "they" are people
        first_verb = (req.rest.split() or [""])[0].lower()
        if subject.lower() == "they" and first_verb in PEOPLE_VERBS | {"change", "pause", "see"}:
            named = False  # "they can cancel online": people cancel, not the subscriptions
        if named and cap.obj.lower() in req.rest.lower():
            # "let us include two nice features": the thing is the object, not the subject
            named, keep = False, "the product"
        subject = _the(cap.obj) if named else keep
        if said_of.lower() == "it" and _APPEARS.match(req.rest):
            subject = "it"  # "as soon as the guest checks out, it should show up": the thing shown
    if req.kind == "np":
        rest = _trim_clause(
            _REASON_GIVEN.split(req.rest)[0]
        )  # "a lock button, because kids press ..."
        if (
            len(content_words(rest)) < 2
            or re.match(r"(?:for|to|in|on|at|by|with)\b", rest, re.I)
            or not names_a_thing(rest.lower().split())
        ):
            return ""  # "millions and in bulk", "only these three main basic anyway volume"
        when = ""
        timing = TIMING_TAIL.search(rest)
        if timing and len(rest[: timing.start()].split()) >= 2:  # "the report weekly"
            rest, when = rest[: timing.start()], f" {rest[timing.start() :].strip()}"
        acts = _WANTED_TO_ACT.match(rest)
        if acts and is_base_verb(acts.group("verb").lower()):
            # "we want the managers to approve every claim over fifty pounds": who acts, acting
            who, verb = acts.group("who"), acts.group("verb").lower()
            who = "they" if who.lower() == "them" else who
            plural = who.lower() in ("they", "people", "users", "staff") or _plural(
                who.lower().split()
            )
            # "damaged ones need a finance manager to approve the refund": what it is done for
            needed = re.match(r"an?\s", who, re.I)  # a role needed, not people wanted to act
            of = (
                ""
                if not needed or _SAID_BY_PEOPLE.match(said_of)
                else f" for {_lower_first(said_of)}"
            )
            return capital(
                f"{who} {verb if plural else third_person(verb)}{acts.group('tail')}{of}{when}"
                + (f", {details}" if details else "")
            )
        qualified = _QUALIFIED.match(re.sub(r"\s+(?:also|still|always)$", "", said_of))
        if qualified:
            # "anything marked urgent also needs the duty engineer": the rule as said
            plural = _plural(qualified.group(0).lower().split()[:1])
            also = " also" if re.search(r"\balso$", req.subject.strip(), re.I) else ""
            return (
                f"{capital(qualified.group(0))}{also} {'need' if plural else 'needs'} "
                f"{_lower_first(rest)}{when}" + (f", {details}" if details else "")
            )
        thing = _thing_said_of(said_of)
        if thing is not None:
            # "every claim needs a full history": the thing that has it, not "... is available"
            return (
                f"{capital(said_of)} {'have' if _plural(thing) else 'has'} {_lower_first(rest)}"
                + (f"{when}, {details}" if details else when)
            )
        relative = _RELATIVE_BEHAVIOUR.match(rest)
        verb = relative.group("verb").lower() if relative else ""
        if (
            relative
            and not _plural(relative.group("np").lower().split())
            and (is_verb(verb) and (base_form(verb) != verb or relative.group("modal")))
        ):
            # "a portable device which will send message to the TV": what the thing does
            modal = (relative.group("modal") or "").lower()
            verb = verb if modal == "can" else third_person(base_form(verb))
            does = f"{'can ' if modal == 'can' else ''}{verb}{relative.group('tail')}"
            return capital(f"{_the(relative.group('np'))} {does}{when}") + (
                f", {details}" if details else ""
            )
        done = rest.split()
        if len(done) >= 2 and is_participle(done[-1].lower()) and names_a_thing(done[:-1]):
            # "we want the reports sent every Monday": the reports are sent, every Monday
            np = " ".join(done[:-1])
            are = "are" if _plural([w.lower() for w in done[:-1]]) else "is"
            return capital(f"{np} {are} {done[-1]}{when}") + (f", {details}" if details else "")
        if re.match(r"(?:them|it|these|those)\b", rest, re.IGNORECASE):
            return ""  # "We only need them while the case is open.": what "them" is is not said
        if re.search(
            r",\s+(?:[a-z][\w-]*\s+){1,3}(?:doesn't|don't|does not|do not)\W*$", rest, re.I
        ):
            # "main car park needs approval, overflow doesn't": two cases, as said
            said = re.sub(r"^(?:so|and|okay|ok|right)\W+", "", _trim(req.clause), flags=re.I)
            return capital(said)
        return f"{capital(rest)} is available{when}" + (f", {details}" if details else "")
    if _reduced_relative(req.subject, req.rest) or thing_acted_on(req):
        return capital(_trim(req.clause))  # "A setting Linda can change.": as said
    words = _trim(req.rest).split()
    if not words:
        return ""
    # the number of the subject's head noun, before what qualifies it ("patrons with overdue
    # fines above $5": patrons)
    noun = _QUALIFIER_START.split(subject.lower(), maxsplit=1)[0].strip()
    plural = bool(re.search(r"(?:s|people|staff|we|they|you)$", noun))
    head = words[0].lower()
    if head == "be" and words[1:3] == ["able", "to"]:
        verb_phrase = "can " + " ".join(words[3:])
    elif re.search(rf"\bcan\s+{re.escape(req.rest)}", req.clause) and _phrasal(req.rest):
        verb_phrase = "can " + " ".join(words)  # "they can turn it off": may, not always do
    elif head.endswith(",") and base_form(head.rstrip(",")) in VERBS:
        verb_phrase = "can " + " ".join(words)  # "book, move and cancel appointments"
    elif head in ("not", "never") and len(words) > 1:
        inner = base_form(words[1])
        if inner == "be":
            verb_phrase = f"{'are' if plural else 'is'} {head} " + " ".join(words[2:])
        elif head == "never":  # "never goes", not "does never go"
            verb = inner if plural else third_person(inner)
            verb_phrase = f"never {verb} " + " ".join(words[2:])
        else:
            aux = "do" if plural else "does"
            verb_phrase = f"{aux} {head} {inner} " + " ".join(words[2:])
    elif head == "be":
        verb_phrase = ("are " if plural else "is ") + " ".join(words[1:])
    elif base_form(head) in VERBS:
        verb = base_form(head)
        if verb in ("have", "include") and not names_a_thing([w.lower() for w in words[1:]]):
            return ""  # "The product has millions and in bulk"
        if team and verb in _TEAM_ACTIVITY:
            return ""  # "we should think about the colour": the team's doing, not the product's
        verb_phrase = (verb if plural else third_person(verb)) + " " + " ".join(words[1:])
    else:
        return ""
    if details:
        verb_phrase = f"{verb_phrase}, {details}"
    if not plural and base_form(head) in VERBS and not verb_phrase.startswith("can "):
        # "adds and removes doctors, sets their ..." (after "can" every verb stays as it is)
        verb, _, rest = verb_phrase.partition(" ")
        verb_phrase = f"{verb} " + _COORDINATED_VERB.sub(
            lambda m: (m.group(1) or m.group(3)) + _agree(m.group(2) or m.group(4)), rest
        )
    if not subject:
        subject = "the product"
    if said_of.lower() in ("i", "me"):  # "... and book one myself": the persona does it
        verb_phrase = _I_AS_THEY.sub(lambda m: _THEY_FOR_I[m.group(0)], verb_phrase)
    return capital(_trim(f"{subject} {verb_phrase}"))


# the speaker's "I" said of the persona ("I want to see all my team's claims that are waiting
# for me": "The approver sees all their team's claims that are waiting for them")
_THEY_FOR_I = {
    "myself": "themselves",
    "my": "their",
    "mine": "theirs",
    "me": "them",
    "I'm": "they're",
    "I've": "they've",
    "I'll": "they'll",
    "I'd": "they'd",
    "I": "they",
}
_I_AS_THEY = re.compile(r"\b(?:myself|my|mine|me|I'm|I've|I'll|I'd|I)\b(?!')")


# a thing and what it does, said as a relative clause ("a portable device which will send
# message to the TV", "a screen which can change colours")
_RELATIVE_BEHAVIOUR = re.compile(
    r"^(?P<np>(?:an?|the|one|some)\s+[^,;]+?)\s+(?:which|that)\s+"
    r"(?:(?P<modal>can|will|would|should|must|'ll)\s+)?(?P<verb>[a-z]+)(?P<tail>\b[^,;]*)$",
    re.IGNORECASE,
)


def adds_to_title(criterion: str, title: str, persona: str = "") -> bool:
    """Whether a criterion says something the title does not: a content word of its own (verbs
    compared in their base form) that is not the persona or a word every criterion uses, or a
    figure the title lacks. The story checks (``eval judge``) use the same test."""

    def words(text: str) -> set[str]:
        return {base_form(w) for w in content_words(text)}

    said = words(title) | words(persona) | _BOILERPLATE
    if leaves_out(title):  # "The joystick goes away." under "Leave out the joystick"
        said |= _LET_GO
    own = {w for w in words(criterion) if w not in said and is_topical(w)}
    if own or (re.search(r"\d", criterion) and not re.search(r"\d", title)):
        return True
    titled = {q.value for q in quantities(title)}
    if any(q.value not in titled for q in quantities(criterion)):
        return True  # "..., under two seconds": a figure said in words is a figure too
    if _phrasal(criterion) - _phrasal(title):
        return True  # "they can turn it off": turning off is a check of its own
    if _FREQUENCY.search(criterion) and not _FREQUENCY.search(title):
        return True  # "..., daily ideally, not monthly": how often is something to check
    if _PAST_THE_LIMIT.search(criterion) and not _PAST_THE_LIMIT.search(title):
        return True  # "No refunds after that.": what holds past the limit, a check of its own
    if _ONLY_STATE.search(criterion) and not re.search(r"\bonly\b", title, re.IGNORECASE):
        return True  # "The report is only available to managers": to whom alone, a check
    gwt = _GWT_PARTS.match(criterion)
    if gwt and words(gwt.group("when")) - said - _WHEN_WORDS:
        return True  # "..., when a call comes in, then the light starts flashing": the case
    # a Given/When/Then that makes a figure or a limit of the title testable adds its check
    return bool(_GWT.match(criterion)) and bool(_MEASURE.search(criterion))


_GWT_PARTS = re.compile(r"^given\b.+?\bwhen\b(?P<when>.+?)\bthen\b", re.IGNORECASE)
_WHEN_WORDS = frozenset("user users someone something it they he she".split())


# the words that say a thing is let go, which a title that leaves it out says already
_LET_GO = frozenset("away go goes gone drop dropped remove removed lose lost".split())


# a state that holds for some alone ("is only visible on the day", "are only booked by
# reception"), not what something merely is ("is only a screen")
_ONLY_STATE = re.compile(rf"\b(?:is|are) only\s+{_STATE_WORD}\b", re.I)
_PHRASAL = re.compile(r"\b([a-z]+)\s+(?:it\s+|them\s+)?(off|out)\b", re.IGNORECASE)


def _phrasal(text: str) -> set[str]:
    """The verbs said with "off" or "out" ("turn it off", "opt out"), in their base form."""
    return {
        f"{base_form(verb)} {particle.lower()}"
        for verb, particle in _PHRASAL.findall(text)
        if base_form(verb) in VERBS
    }


# a criterion about "it", "this" or "something" that only says what it is, looks or feels like
# ("It's very expensive.", "It does feel all cold and slimy.", "Something a bit squishy."): a
# remark on an option under discussion, with nothing a tester could check it against
_VAGUE = re.compile(
    r"^(?:it|this|that|there|something)(?:'s\b|\s+(?:is|was|are|were|does|do|looks?|feels?|seems?"
    r"|sounds?|depends|becomes?|become|not|going|gonna|might|would|could|will|won't)\b"
    r"|\s+(?:a|an|the|very|quite|rather|bit|too|more|less|much)\b|\W*$)",
    re.IGNORECASE,
)
# a decision said with "there" ("There's no menu.") is no remark
_THERE_IS_NO = re.compile(r"^there(?:'s| is| are) no\b", re.IGNORECASE)


def _vague(criterion: str) -> bool:
    """Whether a criterion, with no figure to check, is a remark on an unnamed "it" (``_VAGUE``),
    a piece of a sentence with no verb that opens with a preposition ("On the LCD."), or talk
    (``_TALK_FIRST``: a reason alone, "Something to phones.", "Imagine ...", a question), or a
    question whatever it names (``_ASKED``: "Whether the sender does something with voice
    recognition.")."""
    text = criterion.strip()
    if _ASKED.search(text):
        return True
    if quantities(text) or re.search(r"\d", text):
        return False
    if _PIECE_FIRST.match(text) and not _has_verb(text) and not for_whom(text):
        return True  # "On the LCD."; "For under sixteens." says who the need is for
    if _TALK_FIRST.match(text):
        return True
    return bool(_VAGUE.match(text)) and not _THERE_IS_NO.match(text)


# a reason without what it is the reason for ("Since we are focusing only on TV remote
# controls."), a thing with no predicate ("Something to phones."), an invitation to picture
# something ("Think of all these young people ...", "Imagine that popping up on someone's phone.")
# or a question
_TALK_FIRST = re.compile(
    r"^(?:(?:since|because|'cause|although|though|whereas)\b(?!.*,)"
    r"|something (?:to|for|like|in|on)\s+\w+\W*$"
    r"|(?:think of|think about|imagine|suppose|picture)\b"
    # a question said without its mark ("Would it be on the outer.")
    r"|(?:would|could|should|shall|can|do|does|did|is|are|was|were)\s+(?:\w+\s+)?"
    r"(?:we|you|it|they|i|he|she|there)\b)",
    re.IGNORECASE,
)
_PIECE_FIRST = re.compile(
    r"^(?:something|for|on|in|at|with|to|from|by|instead of)\b", re.IGNORECASE
)


def _dedupe(items: list[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        mine = set(content_words(item))
        if all(len(mine ^ set(content_words(kept))) > 1 for kept in out):
            out.append(item)
    return out
