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

This module writes the story, its title, persona and benefit; reading a statement into a
``Capability`` is ``statement``'s, the acceptance criteria are ``criteria``'s and the small wording
helpers ``wording``'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shared.agents import StoryDraft
from shared.analysis.contradiction import limits, quantities
from shared.engine.offline.criteria import FIGURE_WORD, TIMING_TAIL, criteria, generic_you
from shared.engine.offline.lexicon import (
    MATERIALS,
    PERSONA,
    PERSONA_FORMS,
    QUALIFIER,
    SIGNAL_VERBS,
    VAGUE_QUALITY_WORDS,
    VERBS,
    WHERE_THEY_ARE,
    base_form,
    is_base_verb,
    is_participle,
    leaves_out,
    names_a_thing,
    qualified_persona,
    reads_as_capability,
    singular_persona,
    unmeasured_vague_word,
    vague_quality,
)
from shared.engine.offline.statement import (
    _CLAUSE_BREAK,
    _CONDITION,
    _HEDGES,
    _NOT_A_NEED_VERB,
    _PERSONA_START,
    _PURPOSE,
    _SUBORDINATORS,
    LABEL_VERBS,
    MAX_TITLE_WORDS,
    MIN_TITLE_WORDS,
    NEED_POINTS_BACK,
    PEOPLE_VERBS,
    SO_A_THING,
    Capability,
    _verb_phrase,
    body,
    capability,
    condition_first,
    forecast_verb,
    unframed,
    wanted_but_left_out,
)
from shared.engine.offline.wording import _article, _cap, _lower_first, _trim, articles, capital
from shared.text.language import clean, content_words

_FIGURE = re.compile(FIGURE_WORD)
_USER_STORY = re.compile(
    r"\bas an? (?P<role>[\w -]{1,40}?),? i (?:want|need|would like|'d like)(?P<to> to)?"
    r" (?P<means>.+?)"
    r"(?:,? so that (?P<ends>.+))?$",
    re.IGNORECASE,
)
_PERSONA_AS = re.compile(rf"\bas (?:an?|the) {QUALIFIER}?({PERSONA_FORMS})\b", re.IGNORECASE)
# the role before its modal, with one word between ("receptionists really need"), who they
# are ("students with a support plan from the disability service should be able to ...") or
# said again ("and managers, they need to approve ...")
_PERSONA_SUBJECT = re.compile(
    rf"\b({PERSONA_FORMS})\b(?:\s+\w+|,\s*they|\s+(?:with|who|from|that|in|on)\b[^,.;?]*?)?"
    r"\s+(?:should|must|can|could|need|needs|want"
    r"|wants|have to|has to|are able|is able|get to|gets to"
    # "Finance will be on laptops, big screens": where they will be, not what they need
    rf"|(?:will|would|'ll|'d)(?!{WHERE_THEY_ARE}))\b(?!['\u2019]t\b)"
    r"(?!\s+not\s+(?!have to\b|need to\b|need\b))",  # "must not delete": a rule on them
    re.IGNORECASE,
)
_PERSONA_ASKED = re.compile(
    rf"\b(?:what about|how about|and) (?:the |our |your )?(?:[a-z]+ )?({PERSONA_FORMS})\b(?=[^?]*\?)",
    re.IGNORECASE,
)
# "we want the managers to approve every claim": who is wanted to act
_PERSONA_WANTED = re.compile(
    rf"(?<!n't )(?<!not )\b(?:want|wants|need|needs|like)\s+(?:the |our |all |each |every |an? )?"
    rf"{QUALIFIER}?({PERSONA_FORMS})"
    r"\s+to\b",
    re.IGNORECASE,
)
_MODALS = frozenset("can could should must need needs want wants will would have has".split())
# "let patients choose a doctor", "allow the receptionists to move a booking": the persona, and
# what the doer has, when the doer is "I" ("see their list" -> "see my list"); not after "and" /
# "or", where it is more often another's ("see parents and their slots")
_THEIR = re.compile(r"(?<!\band )(?<!\bor )\btheir\b")
# a reflexive said after the object, of who does it ("start a return themselves")
_SELF = frozenset("themselves himself herself ourselves yourselves yourself myself".split())
# the means without the letting ("As a patient, I want to choose a doctor")
_LETS = rf"(?:let|allow|enable|help)s? (?:the |our |all |each |every )?({PERSONA_FORMS})"
_PERSONA_LET = re.compile(rf"\b{_LETS}\b", re.IGNORECASE)
_LET_MEANS = re.compile(rf"^(?:the product to |to )?{_LETS} (?:to )?(?P<rest>.+)$", re.IGNORECASE)
# "from the staff side, I need ...", "on the teachers' end"
_PERSONA_SIDE = re.compile(
    rf"\b(?:from|on) (?:the|our) ({PERSONA_FORMS})['\u2019]? (?:side|point of view|perspective|end)\b",
    re.IGNORECASE,
)
_PERSONA_FOR = re.compile(
    rf"\bfor (?:the |our |all |each |every )?({PERSONA_FORMS})\b", re.IGNORECASE
)
_MORE_REQUIREMENTS = re.compile(
    r",?\s+and\s+(?=(?:the|it|they|each|every|all)\b[^,;]{0,40}?\b(?:must|should|shall|needs? to"
    r"|has to|have to)\b)",
    re.IGNORECASE,
)
# where the means of a description ends: the speaker's next want, or a remark that follows
# "and well" ("... remote controls and well the tables look very nice to read")
_NEXT_REMARK = re.compile(
    r",?\s+\b(?:i|we) (?:want|need|would like)\b"
    r"|,?\s+and,? well,? (?=(?:the|it|we|i|you|they|this|that)\b)"
    # "mark it failed and the customer gets a text": a second clause, its own subject and verb
    r"|,?\s+and\s+(?=(?:the|their|our|every|each)\s+[a-z]+\s+(?:gets?|receives?|is|are|sees?)\b)",
    re.IGNORECASE,
)
_CLAUSE_CUT = re.compile(
    r"\s*[;:(]\s*|\s+-\s+|,?\s+(?:so that|because|'cause|and that|which|whereas|although|but"
    r"|since|as long as|so (?:we|i|you|they|it|people)|for example|for instance|such as)\s+"
    rf"|\s+(?={SO_A_THING}\b)"
    r"|,\s+(?:and|so|or|then|who|what|whether|if|unless|in case)\s+"
    # "cancel their slots and every parent affected gets an email": a second clause, its own
    # subject and verb
    # "know straight away, not on Friday": what it is not, said after it
    r"|,\s+not\s+(?=(?:on|in|at|by|after|before|until|the|a|an|just|only|every|each)\b)"
    r"|\s+and\s+(?=(?:every|each|all|the|their|our)\s+[a-z]+(?:\s+[a-z]+)?\s+(?:gets?|receives?"
    r"|is|are|can|will|should|must|has|have)\b)",
    re.IGNORECASE,
)
# "Pull that in, every night": when it happens needs no comma in a title
_TIMING_AFTER_COMMA = re.compile(
    r",\s+(?=(?:every|each|daily|nightly|weekly|monthly|yearly|hourly|once a|twice a)\b)", re.I
)
_LEADS_TO_FIGURE = frozenset("the a an last next first past within in for after before".split())
# a clause opens after these: a long title is never cut inside it ("... once it's approved")
_OPENS_CLAUSE = _SUBORDINATORS | frozenset("once unless because while".split())
# "time" opens a clause after these ("every time it rings"), not as a thing ("the remaining time")
_TIME_AS_WHEN = frozenset("every each any next first last some one this that".split())


def _opens_clause(words: list[str], j: int) -> bool:
    """Whether ``words[j]`` opens a clause (``_OPENS_CLAUSE``)."""
    word = words[j].lower()
    if word == "time":
        return words[j - 1].lower() in _TIME_AS_WHEN if j else False
    return word in _OPENS_CLAUSE


_CUT_BEFORE = frozenset(
    "for with on in to of from by at into onto about via per during within without through "
    "where which who when while because so and or but that than before after until unless "
    "if that's least most".split()  # "Keep it at least": a bound cut before its figure
)


# a second time said after the need ("..., and again when we leave", "..., and another one the
# day before")
_AGAIN = re.compile(
    r",?\s+and\s+(?:(?P<again>again)|another one|a second one)\s+(?P<when>(?:when|once|after"
    r"|before|at|on|the|in|every)\b[^,.;!?]*)",
    re.IGNORECASE,
)
_ITS_TIME = re.compile(r"\s+(?=(?:when|once|after|if)\s+\w)", re.IGNORECASE)


def write_story(
    quotes: Sequence[str],
    *,
    main_text: str | None = None,
    context: Sequence[str] = (),
    default_persona: str = "user",
    criteria_from: Sequence[bool] | None = None,
    main_adds: bool = False,
    speaker: str | None = None,
    revised: Sequence[str] = (),
) -> StoryDraft:
    """The story these verbatim statements state; ``quotes[0]`` is the main one (``main_text``,
    when given, is what to write it from: the main statement with a revised figure written in);
    ``context`` are the sentences said just before it (the question a need answers);
    ``criteria_from`` says which quotes may give acceptance criteria (by default all: a quote
    kept only as evidence, a weak statement, gives none); ``main_adds``: the story is written
    from another of ``quotes`` (``quotes[0]`` gave no title), so what the main one says is a
    criterion it may give; ``speaker``: who said the statement it is written from, by the
    transcript's label ("Manager: I'd like to assign a job ..." is the manager's need);
    ``revised``: details the meeting revised, with the change written in (their quotes are
    superseded), which give criteria as quotes do."""
    texts = [body(q, asides=True) for q in quotes]
    written = _named_back(main_text if main_text is not None else quotes[0], context)
    main = unframed(body(written))  # "it would be good if it was cheap": "it should be cheap"
    story = _USER_STORY.search(main)
    # the purpose the statement it is written from states: one said with another statement is
    # that statement's ("..., so I don't have to chase people" is the reminders', not the story's)
    benefit = benefit_of([unframed(body(written))])  # not "make it so that ..."
    extra: list[str] = []  # "..., and the keypad must have 20 buttons": a criterion of its own
    if story:
        persona = story.group("role").strip().lower()
        means, *extra = _MORE_REQUIREMENTS.split(story.group("means"))
        means = _trim(means)
        wanted = f"to {_lower_first(means)}" if story.group("to") else _lower_first(means)
        cap = Capability(title=_verb_phrase(means), means=wanted, obj=means)
        benefit = benefit or (_trim(story.group("ends")) if story.group("ends") else None)
    else:
        label = _THING_LABEL.match(re.sub(r"^[-*+\u2022]\s+", "", clean(written)))
        named = label.group("label").split()[-1].lower() if label else ""
        if (
            label
            and not is_participle(named)  # "Target group confirmed: ...": a status, no thing
            and capability(body(label.group("rest"))).title.startswith(("Provide ", "Limit "))
        ):
            # "Visitors' permits: 20 days per household per year": the label names the thing,
            # what follows it is a detail (a criterion)
            main = f"we need {_lower_first(label.group('label'))}"
        item = re.sub(r"^[-*+\u2022]\s+", "", clean(written))
        aimed = _TARGET_LABEL.match(item)
        if aimed:  # "Target group confirmed: 15 to 35 year olds, ...": who the product is for
            main = f"we should aim at {aimed.group('who')}"
        said_of = _LABEL_IS.match(item) or _LABEL_IS.match(body(written))  # "Tips, um, optional"
        if said_of:  # "Cancellations: free up to 24h before, ...": how the thing labelled is
            thing = said_of.group("label")
            be = "are" if thing.endswith("s") and not thing.endswith("ss") else "is"
            main = f"{thing} {be} {said_of.group('rest')}"
        cap = capability(main)
        forecast = forecast_verb(written)
        if forecast and base_form(cap.title.split()[0].lower()) == base_form(forecast):
            # "If we block it, people will just split the hotel into two lines, ...": what people
            # will do anyway, said as it was (no title), not "Split the hotel into two lines"
            cap = Capability(_cap(_trim(clean(written))), _lower_first(_trim(clean(written))))
        # the statement written from names its role first ("Parents book a twelve-minute slot",
        # revised by "actually, make the slots twelve minutes", which names none)
        said = [written, *quotes] if main_text is not None else list(quotes)
        persona = persona_of(said, context, default_persona, speaker)
        if leaves_out(cap.title) and any(wanted_but_left_out(q) for q in said):
            persona = default_persona  # "Parents want trip photos, but ... keep that out"
    named = cap.title
    let_title = _LET_MEANS.match(named)
    if (
        let_title
        and singular_persona(let_title.group(1)) == persona
        and len(make_title(named).split()) < len(named.split()) <= MAX_TITLE_WORDS + 2
        and not any(_figure(w) for w in named.split())  # a limit leaves the title (below)
    ):
        # "The app must let members log in with their library card number and PIN": too long
        # to name in full, it is named by what the persona does (not cut at "card number")
        named = capital(let_title.group("rest"))
    whole = _with_condition(named, main)
    timed = TIMING_TAIL.search(whole)
    # "a report every Monday at eight of permits that expired without renewal": when it comes
    # leaves the title before a long one is cut ("Provide a report of permits")
    long_timed = timed and timed.group("after") and len(whole.split()) > MAX_TITLE_WORDS
    short = _without_limit(whole, main) if long_timed else whole
    if short != whole and len(short.split()) <= MAX_TITLE_WORDS:
        title = _one_action(make_title(short))
    else:
        title = _one_action(_without_limit(make_title(whole), main))
    means = _NEXT_REMARK.split(cap.means)[0]
    tells = re.match(rf"to (?P<told>(?:{_TELLS}) that)\b", means, re.I)
    said_first = condition_first(main) if tells else None
    if tells and said_first and title.lower().startswith(f"{tells.group('told').lower()} "):
        # "to show that the same pothole has already been reported and let them add a plus one"
        shown = f"{tells.group('told')} {_trim(said_first.group('cond'))}"
        means = f"to {shown}{means[tells.end() :]}"
    by = _BY_ROLE.search(title)
    role = singular_persona(by.group("who")) if by and PERSONA.match(by.group("who")) else ""
    if by and role and persona == default_persona and role != persona and _DONE_BY.match(means):
        # "credit notes have to be approved by the finance manager": the finance manager's
        # need ("As a finance manager, I want to approve credit notes")
        persona, title = role, title[: by.start()]
        means = f"to {title[0].lower()}{title[1:]}"
    # "the office to see a list and can send a reminder": "and send a reminder"
    means = re.sub(r"\s+and\s+(?:can|could|will|should|must|may)\s+(?=[a-z])", " and ", means)
    if means.startswith("to "):  # a thing wanted is no action: "start and end locations"
        means = "to " + _one_action(means[3:])
    let = _LET_MEANS.match(means)
    if let and singular_persona(let.group(1)) == persona:  # "the product to let patients choose"
        means = f"to {let.group('rest')}"
    own = re.match(
        rf"(?:the |an? |each |every |all )?{re.escape(persona)}(?:e?s)? to (?P<rest>.+)$",
        means,
        re.IGNORECASE,
    )
    if own:  # "As a practice manager, I want to see ...", not "the practice manager to see"
        means = f"to {own.group('rest')}"
    team = re.match(r"(?P<who>[a-z][\w-]*(?:\s+[a-z][\w-]*)?) to (?P<rest>.+)$", means)
    if not own and team and PERSONA.fullmatch(team.group("who")):
        if singular_persona(team.group("who")) == persona:  # "payroll to get a CSV ..."
            means = f"to {team.group('rest')}"
    said_by_persona = persona != default_persona and re.match(
        rf"^(?:(?:and|so|also|then)\s+)?(?:the |each |every |all )?{re.escape(persona)}(?:e?s)?\s",
        clean(main),
        re.IGNORECASE,
    )
    if not means.startswith("to ") and said_by_persona:
        # "pickers need to get their next order on the scanner": "I want my next order ..."
        means = _THEIR.sub(lambda m: _whose(means, m), means)
    if means.startswith("to "):  # "they can renew a book from their phone": "from my phone"
        # "we need to check their specifications": the TVs' (not when a role is named as the
        # doer: "I'd like each doctor to set their own hours" is the doctor's own)
        if persona != default_persona or not _WE_SAY.match(clean(main)):
            means = _THEIR.sub(lambda m: _whose(means, m), means)
        means = re.sub(r"\b(?:themselves|yourself|ourselves)\b", "myself", means)
        if persona != default_persona or _THEY_SAY.match(clean(main)):
            # "Yes, they should mark the room as clean when they're done": the doers are the
            # story's "I", whoever they are ("when I'm done")
            means = _they_as_i(means)
    if (means.startswith("to ") and _YOU_SAY.match(clean(main))) or re.search(
        r"\byour\b", means, re.IGNORECASE
    ):
        # "you can give a nickname to your remote control", "if you book in the booking system,
        # it appears in your Outlook calendar": the story's "I" and "my"
        means = generic_you(means, first_person=True)
    sent = re.match(
        r"the product to send (?P<who>[a-z]+(?: [a-z]+)?) (?P<what>(?:an?|the) .+)$", means
    )
    if sent and singular_persona(sent.group("who")) == persona:
        # "reception should get a notification when a room is ready", as the receptionist's story:
        # "I want to get a notification when a room is ready"
        means = f"to get {sent.group('what')}"
    lone = re.fullmatch(r"to (\w+)", _trim(means))
    done_to = re.search(rf"\b{lone.group(1)}\s+(?:it|them)\b", main, re.I) if lone else None
    if done_to:  # "the crew should log it": "I want to log it", not "to log"
        means = f"to {done_to.group(0)}"
    description = articles(f"As {_article(persona)} {persona}, I want {_trim(means) or cap.means}")
    if benefit and re.search(r"\bmy\b", means) and not re.search(r"\bmy\b", cap.means):
        # "train the speech recogniser on their own voice, so it works better for them": the
        # doers are the story's "I" ("on my own voice, so that it works better for me")
        benefit = re.sub(r"\bfor them\b", "for me", benefit)
    if benefit:
        description += f", so that {benefit}"
    statements = (
        [body(written, True)]
        + [
            _side_said(q, t)
            for k, (q, t) in enumerate(zip(quotes, texts, strict=True))
            if q != written
            and (k > 0 or main_text is None or written == quotes[0] or main_adds)
            and (criteria_from is None or criteria_from[k])
            and not _DOUBT.match(clean(q))  # "I'm not sure about showing the reason": no rule
        ]
        + [body(t, asides=True) for t in revised]
        + extra
    )
    if wanted_but_left_out(main):  # "Customers want a loyalty card, but let's leave that for
        statements = statements[1:]  # later": what they want is no criterion of leaving it out
    found = criteria(statements, cap, title, persona)
    again = _AGAIN.search(clean(main))
    when = _trim(again.group("when")) if again else ""
    head = (
        (_ITS_TIME.split(title)[0] if again.group("again") else title.split()[0]) if again else ""
    )
    if again and head != title and not any(when.lower() in c.lower() for c in found):
        # "tick kids off when we get on the coach, and again when we leave": the second time is
        # a criterion ("Tick kids off again when we leave."), which the title has no room for
        more = "again" if again.group("again") else "another one"
        found.append(f"{head} {more} {when}.")
    short = title if _reads(title) else _without_limit(make_title(cap.title), main)
    if short != title and _reads(short):
        # "Suggest the match when they've already taken a photo" reads as talk: the condition
        # goes to the Given/When/Then that carries it, when one does
        carried = criteria(statements, cap, short, persona)
        when = _condition_of(main)
        if when and any(f"when {when.lower()}" in c.lower() for c in carried):
            title, found = short, carried
    testable, questions = split_vague(found, title)
    return StoryDraft(
        title=title,
        description=description + ".",
        acceptance_criteria=testable,
        source_quotes=list(quotes),
        open_questions=questions,
    )


# a decision on "them" said of the things the sentence before names ("Visitor permits are
# scratch cards today. Let's keep them out of this release.")
_LEFT_OUT_PRONOUN = re.compile(r"\b(?:keep|leave)\s+(?P<it>them|it|those|these)\s+out\b", re.I)
_NAMED_FIRST = re.compile(
    r"^(?:[A-Z][\w-]*\s*:\s*)?(?P<np>(?:(?i:the|our|all)\s+)?[A-Za-z][\w-]*(?:\s+[a-z][\w-]*)?)"
    r"\s+(?:are|is|were|was)\b"
)


_NOT_NAMED = frozenset("it this that they these those there he she we you i".split())
# a figure set anew for "it" ("let's make it three kilometres", "make that twenty")
_MAKE_IT_FIGURE = re.compile(r"\b(?:make|change|set)\s+(?P<it>it|that)\s+(?:to\s+)?(?=\S)", re.I)
# a question on the figure of a thing it names first ("Delivery radius, we said five
# kilometres?", "The deposit, was it fifty pounds?")
_FIGURE_ASKED_OF = re.compile(
    r"^(?:(?:so|and|okay|ok|right|then)[\s,]+)*(?P<thing>(?:the\s+|our\s+)?[A-Za-z][\w-]*"
    r"(?:\s+[a-z][\w-]*){0,2}),\s+[^?]*\?$",
    re.IGNORECASE,
)


# who does what a passive title says, named last ("Approve credit notes by the finance manager")
_BY_ROLE = re.compile(r"\s+by\s+(?:the|a|an|our)\s+(?P<who>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)$", re.I)
# a means said in the passive with its doer ("credit notes to be approved by the ...")
_DONE_BY = re.compile(r"^.+\bto be \w+\b.*\bby\s+(?:the|a|an|our)\s+\S", re.I)


# "they" said first, of the people the question just before asked about
_THEY_FIRST = re.compile(r"^(?:(?:yes|yeah|so|and|well|oh|okay|ok)\W+)*(?P<they>[Tt]hey)\b")
_WHAT_ABOUT = re.compile(
    r"^(?:(?:and|so|okay|ok|right)\W+)*what about\s+(?P<np>(?:the|our)\s+[a-z][\w-]*"
    r"(?:\s+(?!themselves|himself|herself)[a-z][\w-]*)?)(?:\s+(?:themselves|himself|herself))?"
    r"\s*\?$",
    re.IGNORECASE,
)


def _named_back(said: str, context: Sequence[str]) -> str:
    """``said`` with "them" named when it leaves out what the sentence before is about, and "it"
    when a figure is set anew for the thing the question before named ("Delivery radius, we
    said five kilometres?" "Actually, let's make it three kilometres.")."""
    set_anew = _MAKE_IT_FIGURE.search(said)
    asked = _FIGURE_ASKED_OF.match(clean(context[-1]).strip()) if set_anew and context else None
    if set_anew and asked and quantities(asked.group(0)) and quantities(said[set_anew.end() :]):
        thing = _lower_first(asked.group("thing"))
        said_of = thing if thing.split()[0] in ("the", "our", "their") else f"the {thing}"
        return f"{said[: set_anew.start('it')]}{said_of}{said[set_anew.end('it') :]}"
    they = _THEY_FIRST.match(said)
    about = _WHAT_ABOUT.match(clean(context[-1]).strip()) if they and context else None
    if they and about:
        # "What about the starter themselves?" "They should get a welcome email ...": the
        # starter should
        return f"{said[: they.start('they')]}{capital(about.group('np'))}{said[they.end('they') :]}"
    pronoun = _LEFT_OUT_PRONOUN.search(said)
    named = _NAMED_FIRST.match(clean(context[-1]).strip()) if pronoun and context else None
    np = named.group("np").lower().split() if named else []
    if pronoun is None or named is None or np[0] in _NOT_NAMED or not names_a_thing(np):
        return said
    at = pronoun.start("it")
    return f"{said[:at]}{_lower_first(named.group('np'))}{said[pronoun.end('it') :]}"


# the things a statement is about, named first ("Yes, and the bank holidays, we always forget the
# bank holidays.", "The bank holidays.")
_TOPIC_FIRST = re.compile(
    r"^(?:(?:yes|yeah|and|oh|so|also|plus|but|what about)\W+)*(?P<np>(?:the|our|all the)\s+"
    r"[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})\s*(?:,|[.!?]?$)",
    re.IGNORECASE,
)


# "they" as the subject of what must be done ("..., but they should be attached to the job")
_THEY_MUST = re.compile(
    r"^(?:[A-Za-z]+,\s*(?:but\s+)?)?(?P<they>[Tt]hey)\s+(?:should|must|need to|have to|can|will)\b"
    r"(?!n?['\u2019]t)"
)
# things named alone, as an answer ("Yeah, before and after photos.")
_THINGS_SAID = re.compile(
    r"^(?:(?:yes|yeah|and|so|um|uh|oh|okay|ok|well)\W+)*(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,4})"
    r"\W*$",
    re.IGNORECASE,
)


# words of a question on someone, not things named ("What about the starter themselves?": what
# ``_named_back`` reads)
_ASKED_ABOUT = frozenset("what about themselves himself herself".split())


def named_before(said: str, before: str) -> str:
    """``said`` with "those" / "these" / "them" after its verb named, when the statement said just
    before names the things it is about first ("Yes, and the bank holidays, we always forget the
    bank holidays." "We can load those automatically, ..." -> "We can load the bank holidays
    automatically, ..."); ``said`` as it is otherwise."""
    pointer = NEED_POINTS_BACK.search(said)
    if pointer and pointer.group("it").lower() == "that":
        pointer = None  # one thing, or what was just said: no things to name
    they = None if pointer else _THEY_MUST.search(said)
    things = _THINGS_SAID.match(clean(before).strip()) if they else None
    named = things.group("np").split() if things else []
    if (
        they
        and things
        and named
        and re.fullmatch(r"[a-z-]+[^s']s", named[-1].lower())
        and not _NOT_NAMED.union(("is", "are", "was", "were"), _ASKED_ABOUT).intersection(
            w.lower() for w in named
        )
    ):
        # "Yeah, before and after photos." "Optional, but they should be attached to the job."
        np = things.group("np")
        np = capital(np) if they.start("they") == 0 else _lower_first(np)
        return f"{said[: they.start('they')]}{np}{said[they.end('they') :]}"
    topic = _TOPIC_FIRST.match(clean(before).strip()) if pointer else None
    np = topic.group("np") if topic else ""
    words = np.lower().split()
    if pointer is None or not words or not words[-1].endswith("s") or not names_a_thing(words):
        return said
    return f"{said[: pointer.start('it')]}{np}{said[pointer.end('it') :]}"


def _whose(means: str, their: re.Match[str]) -> str:
    """ "my" for the persona's "their", unless people named before it are whose it is ("see
    which of my new starters have finished their paperwork")."""
    before = means[: their.start()]
    if PERSONA.search(before) or re.search(r"\b(?:them|people|everyone)\b", before, re.I):
        return their.group(0)
    return "my"


def _side_said(quote: str, text: str) -> str:
    """The cleaned statement with the role whose side it is said from ("From the instructor
    side, I need to see who's booked" -> "As the instructor, I need to see who's booked"): its
    "I" is that role's in a criterion, not the story's persona."""
    side = _PERSONA_SIDE.search(clean(quote))
    if side and re.match(r"(?:i|i'd|i'm|we)\b", text, re.IGNORECASE):
        return f"As the {singular_persona(side.group(1))}, {text}"
    return text


# verbs said one after another on one object ("book, move and cancel appointments"), or a second
# verb phrase joined on ("look up any address and see its collection days")
_COORDINATED_FIRST = re.compile(
    r"^(?P<verb>[a-z]+)(?P<more>(?:,\s*[a-z]+)*,?\s+(?:and|or)\s+[a-z]+)\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_AND_VERB = re.compile(
    r",?\s+(?:and|or)\s+(?:then\s+|also\s+)?(?P<verb>[a-z]+)\s+(?:the|a|an|its|their|his|her|my"
    r"|our|your|it|them|one|any|all|each|every|which|whichever|what|whatever|if|whether"
    # "apply for a permit online and upload proof of address": a noun and what it is of
    r"|[a-z]+\s+of)\b",
    re.IGNORECASE,
)


# a speaker's doubt about something, which decides nothing ("I'm not sure about showing the
# reason though", "I don't know if we need that"), or a denial whose hedge a criterion would
# drop ("I don't think you'd need to know the condition" read "You know the condition")
_DOUBT = re.compile(
    r"^(?:(?:but|and|so|well|yeah|hmm|um|uh|no)[\s,]+)*(?:i'?m not sure|not sure|i am not sure"
    r"|i don'?t know (?:if|whether|about)|i wonder|i don'?t think|i do not think"
    # "Maybe batch picking next year.": a maybe for later, nothing to check now
    r"|(?:maybe|perhaps|possibly)\b.*\b(?:next year|later|one day|some day|in (?:the )?future"
    r"|down the line|(?:in )?phase two|next (?:phase|release|version))\W*$)",
    re.IGNORECASE,
)
# a list item's label that names a thing, and what it says of it ("Visitors' permits: 20 days
# per household per year"); not a meta label ("NEW:", "Decision:"), nor a label of one word: that
# is a category ("Locator:", "Battery:") and what follows it is the need
_THING_LABEL = re.compile(
    r"^(?!(?i:new|note|notes|todo|decision|decided|action|agreed|idea|question|open|issue|risk"
    r"|must|should|could|won't|nice to have|update|status|done|next)\b)"
    # a label names a thing: no verb in it ("Gesture control is dropped: too expensive")
    rf"(?P<label>[A-Z][a-z][\w'\u2019-]*(?: (?!{LABEL_VERBS}\b)[a-z][\w'\u2019-]*){{1,3}}"
    r"|[A-Z][a-z]+-[a-z][\w'\u2019-]*):\s+(?P<rest>\S.*)$"  # "Carry-over: up to five days"
)


# who the product is for, said as a label ("Target group confirmed: 15 to 35 year olds, ...")
_TARGET_LABEL = re.compile(
    r"^(?:the\s+|our\s+)?target\s+(?:group|audience|users|market|customers)"
    r"(?:\s+(?:confirmed|agreed|decided|is|are))?\s*:\s+(?P<who>[^,;.]+)",
    re.IGNORECASE,
)
# a label of one word and how the thing it names is ("Cancellations: free up to 24h before",
# "Feedback: optional", "Tips, optional, and ..."): said of it, not a need of its own
_LABEL_IS = re.compile(
    r"^(?!(?i:yeah|yes|okay|well|right|sure|fine|great|good|also|then|now|plus|and|but|so)\b)"
    r"(?P<label>[A-Z][a-z]{3,})[:,]\s+(?P<rest>(?:free|optional|mandatory|required|compulsory"
    r"|private|public|visible|hidden|anonymous|automatic|manual|unlimited|paid|refundable"
    r"|non-refundable)\b.*)$"
)


# "when they close the job": the persona's own time, when nothing before it is many things
_THEY_WHEN = re.compile(
    r"^(?P<act>to .+?)\s(?P<when>when|whenever|before|after|once|until|as soon as|if|and then)\s+"
    r"they(?P<verb>'re|'ve|\s+are|\s+were|\s+have|\s+\w+)\b(?P<rest>.*)$",
    re.IGNORECASE,
)
_FIRST_PERSON = {"'re": "'m", "'ve": "'ve", " are": " am", " were": " was"}

# who a statement is said of, after its opening words ("Yes, they should ...", "So we need ...")
_OPENING = r"^(?:(?:so|and|or|but|well|then|also|yes|yeah)[\s,]+)*"
# the doers said as "they" ("they should mark the room as clean when they're done")
_THEY_SAY = re.compile(
    rf"{_OPENING}they\s+(?:should|must|need to|have to|can|will|would|want to)\b", re.I
)
# the team or the speaker ("we need to check their specifications": the TVs', not the story's)
_WE_SAY = re.compile(rf"{_OPENING}(?:we|i)(?:'d|'ll)?\s", re.I)
# a need said of anyone as "you" ("you can give some nickname to your remote control", "so
# you'd want to hand your approvals to someone else while you're away"): the story's "I"
_YOU_SAY = re.compile(rf"{_OPENING}you(?:'d)?\s", re.I)


def _they_as_i(means: str) -> str:
    """ "to upload a photo when they close the job", said of contractors by a contractor's story:
    "to upload a photo when I close the job"; unchanged when what comes before names things
    "they" may be ("to approve claims before they go to payroll")."""
    m = _THEY_WHEN.match(means)
    counted = (
        {w.lower() for q in quantities(m.group("act")) for w in q.text.split()} if m else set()
    )
    # "to pay five pounds per class when they book": a figure's unit is no thing "they" may be
    things = [w for w in m.group("act").split()[2:] if w.lower() not in counted] if m else []
    if not m or any(_plural_word(w) for w in things):
        return means
    verb = m.group("verb")
    verb = _FIRST_PERSON.get(verb.lower(), verb)
    return f"{m.group('act')} {m.group('when')} I{verb}{m.group('rest')}"


def _plural_word(word: str) -> bool:
    """A word that reads as a plural noun ("claims", "jobs"), not "bus" or "glass"."""
    w = word.lower().strip(".,;:")
    return len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "'s"))


def _one_action(phrase: str) -> str:
    """The first action of a verb phrase that joins several ("book, move and cancel appointments
    for any patient" -> "book appointments for any patient", "look up any address and see its
    collection days" -> "look up any address"): one story, one action in its title and means
    (the conjunction check of ``eval judge``); the statement in full is its criterion."""
    first = phrase.split()[0].lower().strip(",") if phrase.split() else ""
    if not is_base_verb(first):
        return phrase
    joined = _COORDINATED_FIRST.match(phrase)
    if joined:
        verbs = re.split(
            r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+",
            joined.group(0)[: joined.start("rest")].strip(),
        )
        if all(is_base_verb(v.lower()) for v in verbs if v):
            verb = joined.group("verb")
            if verb.lower() in SIGNAL_VERBS and verbs[-1]:  # "beep and block the next step"
                verb = verbs[-1].capitalize() if verb[0].isupper() else verbs[-1]
            one = f"{verb} {joined.group('rest')}"
            return one if len(one.split()) >= MIN_TITLE_WORDS else phrase
    last = re.search(r",?\s+(?:and|or)\s+(?P<verb>[a-z]+)$", phrase)
    before = phrase[: last.start()] if last else ""
    if (
        last
        and is_base_verb(last.group("verb"))
        and len(before.split()) >= 3
        and not re.search(r"\bto\s+\w+$", before)  # "easier to see and use": how it is
        and not re.search(r"\b(?:by|via|through|over)\s+\w+$", before)  # "by text or email"
        and not re.search(r"^provide\b|\s(?:and|or)\s", before, re.IGNORECASE)  # a list of things
    ):
        return before  # "use this jog wheel and select | which ever option"
    for more in _AND_VERB.finditer(phrase):
        verb = more.group("verb").lower()
        before = _trim(phrase[: more.start()])
        if is_base_verb(verb) and len(before.split()) >= MIN_TITLE_WORDS:
            return before
    return phrase


_ANYTHING_LEFT = re.compile(r"\s+for\s+(?:anything|everything|any\s+\w+|all\s+\w+)$", re.I)


def _without_limit(title: str, main: str) -> str:
    """The title without the limit the main statement sets ("Provide online cancellation" from
    "online cancellation up to two hours before", "Limit the production cost per remote" from
    "Keep the production cost per remote at most 15 EUR"), when what is left still names a
    capability: the limit is then the criterion that adds to the title."""
    keep = title.split()[0].lower() in ("keep", "make")
    for lim in limits(main):
        said = rf"\s+{re.escape(lim.cue)}\s+{re.escape(lim.quantity.text)}\b"
        cut = re.search(said, title, re.I) if lim.cue else None
        if cut and keep and lim.kind != "max":
            continue  # "Keep battery life at least 12 months": the limit is the need
        if cut:
            # "Require the finance director for anything | above five hundred pounds": what
            # picked the thing out is cut, so "for anything" names nothing
            short = _ANYTHING_LEFT.sub("", _trim(title[: cut.start()]))
            if keep:  # "Keep the production cost per remote at most 15 EUR"
                short = "Limit " + short.split(" ", 1)[1] if " " in short else short
            if _still_a_title(short):
                return short
    timing = TIMING_TAIL.search(title)
    while timing:  # the first cut that leaves a title ("Get a summary every Monday | at 9 am")
        after = _WHAT_IT_IS_OF.match(timing.group("after") or "")
        if re.match(r"(?:within|after)\s", timing.group("when"), re.I) and re.match(
            r"\s*of\s", timing.group("after") or ""
        ):
            after = None  # "within thirty days of delivery": what the span counts from, cut too
        if after and _still_a_title(short := _trim(f"{title[: timing.start()]} {after.group(0)}")):
            return short  # "Provide a report | every Monday at eight | of permits that expired"
        if _still_a_title(short := _trim(title[: timing.start()])):
            if any(short.lower().endswith(q.text.lower()) for q in quantities(short)):
                return title  # "... ten working days | before the start date": the figure is when
            return short  # "Provide a reminder to the approver after three days": a criterion
        timing = TIMING_TAIL.search(title, timing.start() + 1)
    return title


# what a thing is of, said after when it comes ("a report every Monday of permits that expired")
_WHAT_IT_IS_OF = re.compile(r"\s*(?:of|about|on|for|with)\s+\S.*$", re.IGNORECASE)


def _still_a_title(short: str) -> bool:
    """Whether a title cut short still names a capability and does not end on a word that needs
    what was cut."""
    last = short.split()[-1].lower() if short else ""
    # "Notify admins when a claim": a condition cut before its verb
    cut_condition = any(w.lower() in _CONDITION_OPENERS for w in short.split()[-3:])
    return (
        len(short.split()) >= MIN_TITLE_WORDS
        # "Provide a reminder" names too little to stand ("Know how many no-shows we get" does)
        and (len(content_words(short)) >= 2 or len(short.split()) >= 5)
        and last not in _CUT_BEFORE
        and last not in ("make", "be", "keep", "let")  # "Do not make"
        # "Do not let anyone get": a verb cut from what it gets ("how many we get" stands)
        and not (last in _NEEDS_ITS_OBJECT and short.split()[-2].lower() in _ANYONE_WORDS)
        and not cut_condition
        and reads_as_capability(short)
    )


_NEEDS_ITS_OBJECT = frozenset("get have give take use need want".split())
_ANYONE_WORDS = frozenset("anyone anybody someone somebody everyone everybody".split())
_CONDITION_OPENERS = frozenset("when whenever if once unless after before until".split())


def split_vague(found: Sequence[str], title: str = "") -> tuple[list[str], list[str]]:
    """(testable criteria, open questions): a criterion with a vague word and no figure ("The
    remote is easy to use.") is no check a tester can run. When it rests on a quality said of
    something it becomes a question for the review ("What measure does 'easy' mean in: The remote
    is easy to use?"); a vague word that asks nothing a figure answers ("some kind of message",
    "a simple chip", "a good idea") makes it neither (``lexicon.vague_quality``), unless the
    criterion says more without the word and ``title`` keeps it ("Provide a simple menu": "A
    simple menu driven by up / down and OK" -> "A menu driven by up / down and OK")."""
    testable: list[str] = []
    questions: list[str] = []
    kept = title.lower()  # a vague word may go only where the title keeps it

    def unsaid(m: re.Match[str]) -> str:
        return "" if m.group(0).lower() + m.group(1).lower() in kept else m.group(0)

    for criterion in found:
        # "follows some conventions": "some" before a plural is no amount to measure, only an
        # indefinite article ("some kind of", "some of" stay vague)
        criterion = _SOME_BEFORE_PLURAL.sub("", criterion)
        if unmeasured_vague_word(criterion):
            quality = vague_quality(criterion)
            if quality:
                questions.append(f"What measure does '{quality}' mean in: {criterion.rstrip('.')}?")
                continue
            criterion = capital(_VAGUE_BEFORE_NOUN.sub(unsaid, criterion))
            if unmeasured_vague_word(criterion):
                continue
        if len(criterion.split()) >= MIN_TITLE_WORDS:
            testable.append(criterion)
    return testable, questions


# a vague quality word before its noun ("a simple menu driven by up / down and OK"): what the
# rest of the criterion says is a check without it (the title keeps the word)
_SOME_BEFORE_PLURAL = re.compile(
    r"(?<=\s)some\s+(?=(?!kinds?\b|sorts?\b|types?\b|of\b|times\b|ways\b)[a-z][\w-]*[^s\W]s\b)",
    re.IGNORECASE,
)
_VAGUE_BEFORE_NOUN = re.compile(rf"\b{VAGUE_QUALITY_WORDS}\s+(?=([a-z][\w-]*))", re.IGNORECASE)


# ------------------------------------------------------------------------------------------------
# title, persona, benefit


def _reads(title: str) -> bool:
    """Whether a title is long enough and names a capability (``reads_as_capability``)."""
    return len(title.split()) >= MIN_TITLE_WORDS and reads_as_capability(title)


def _condition_match(text: str) -> re.Match[str] | None:
    """The condition a statement holds, said first or after its need, as a match (``cond``)."""
    return condition_first(text) or _CONDITION.match(text)


def _condition_of(text: str) -> str:
    """The condition a statement holds ("if they've already taken a photo"), or ""."""
    cond = _condition_match(text)
    return _trim(cond.group("cond")) if cond else ""


def _with_condition(phrase: str, text: str) -> str:
    """A short title phrase with the condition its statement holds ("Mute" + "if you hold the
    wheel down" -> "Mute when you hold the wheel down"); a time said by "before", "after",
    "unless" or "once" keeps its word ("Book those first before they open to everyone", never
    "when they open")."""
    tells = _TELLS_THAT.match(phrase)
    said_first = condition_first(text) if tells else None
    if tells and said_first and len(said_first.group("cond").split()) >= 2:
        # "If the same pothole has already been reported, we should show that and let them add a
        # plus one": what "that" is, the condition says ("Show that the same pothole has ...")
        shown = f"{tells.group('verb')} that {_trim(said_first.group('cond'))}"
        if len(shown.split()) + len(tells.group("rest").split()) <= MAX_TITLE_WORDS:
            shown += tells.group("rest")
        return shown
    head = _head_of(phrase)  # "Know straight away, not on Friday"
    if len(head.split()) < len(phrase.split()) and len(head.split()) >= MIN_TITLE_WORDS:
        phrase = head
    if len(phrase.split()) >= 4:
        return phrase
    when = _condition_of(text)
    said = _CONDITION.match(text)
    if said and not condition_first(text):
        # "it has to be right, and it has to change when the lift breaks": the condition of
        # the last clause before it, not of the one the title says
        last = [c for c in _CLAUSE_BREAK.split(said.group("main")) if c.strip()][-1:]
        if last and not set(content_words(phrase)) & set(content_words(last[0])):
            return phrase
    words = len(when.split())
    if words < 2 or len(phrase.split()) + 1 + words > MAX_TITLE_WORDS:
        return phrase
    raw = _condition_match(text)
    if raw and re.search(r"\b(?:this|that|these|those)\W*$", raw.group("cond")):
        return phrase  # "If we choose this, we cannot use titanium": "when we choose" names nothing
    said = re.search(rf"\b(before|after|unless|once|as soon as)\s+{re.escape(when)}", text, re.I)
    return f"{phrase} {said.group(1).lower() if said else 'when'} {when}"


# a verb that says what someone is told, and whom ("show that ...", "warn them that ...")
_TELLS = r"show|say|tell \w+|warn \w+|flag"
_TELLS_THAT = re.compile(rf"^(?P<verb>{_TELLS})\s+that\b(?P<rest>.*)$", re.IGNORECASE)


_OBJECT_THAT = re.compile(
    r"(?<=[a-z]) that (?=(?:nobody|no one|we|they|you|i|people|someone|somebody|he|she|users)\b)"
)


# "a book that's on loan", "the tickets that are assigned to me": the relative clause's "that's"
# can go before a place or a participle ("a book on loan")
_RELATIVE_BE = re.compile(
    r"(?<=[a-z]) (?:that|which|who)(?:'s|\u2019s| is| are) (?=(?:on|in|at|for|from|with|under"
    r"|over|by|of|without|[a-z]{3,}ed)\b)",
    re.IGNORECASE,
)


_ONE_MORE_LAST = re.compile(r"(?<=\w)[\s,]+(?:as well|too)[\s.!]*$", re.IGNORECASE)


_SEES = frozenset("see know show check tell find".split())  # a question can be their object


def _head_of(phrase: str) -> str:
    """A title phrase cut at its first clause break (``_CLAUSE_CUT``), unless what follows the
    break is the question a verb of seeing asks ("See on a tablet which rooms are free to
    clean": what is seen)."""
    head = _trim(_CLAUSE_CUT.split(phrase)[0])
    words = phrase.split()
    asked = re.match(rf"{re.escape(head)}\s+(?:which|what|whether)\b", phrase, re.IGNORECASE)
    if asked and words and words[0].lower() in _SEES and len(words) <= MAX_TITLE_WORDS:
        return phrase
    return head


# a word that opens a preposition going on with "of" ("out of the box", "instead of the daily
# one"); "in front of" needs no place here: the cut goes before its "in"
_OF_OPENERS = frozenset("out because instead ahead inside outside regardless irrespective".split())


def make_title(phrase: str) -> str:
    """3-10 words, opening with a verb, cut at a clause break, no dangling last word."""
    phrase = _HEDGES.sub("", _trim(phrase))
    # "a red button as well", "beep too": that it is one more need is no part of its name
    one = _ONE_MORE_LAST.sub("", phrase)
    phrase = one if len(one.split()) >= MIN_TITLE_WORDS else phrase
    words = phrase.split()
    again = [
        k
        for k in range(1, min(4, len(words)))
        if words[k].lower() == words[0].lower()
        and words[1].lower() not in ("out", "up", "off", "back", "down")  # "Leave out sick leave"
    ]
    if again:  # "put literally put it on the table", "keep it option keep an option": restarted
        phrase = " ".join(words[again[-1] :])
    head = _head_of(phrase)
    if len(head.split()) >= MIN_TITLE_WORDS:
        phrase = head
    # "Start a return themselves from their order page": who does it, said again (not "Lock
    # itself", what the verb is done to)
    alone = [w for k, w in enumerate(phrase.split()) if k < 2 or w.lower() not in _SELF]
    if len(alone) >= MIN_TITLE_WORDS:
        phrase = " ".join(alone)
    words = phrase.split()
    if len(words) > MAX_TITLE_WORDS:
        # "tickets that nobody has touched": "that" before the clause's own subject can go
        phrase = _RELATIVE_BE.sub(" ", _OBJECT_THAT.sub(" ", phrase))
        words = phrase.split()
    if len(words) > MAX_TITLE_WORDS:
        cuts = [
            k
            for k in range(MAX_TITLE_WORDS, MIN_TITLE_WORDS, -1)
            if k < len(words)
            and words[k].lower() in _CUT_BEFORE
            and not any(_opens_clause(words, j) for j in range(1, k))
        ]
        # "... collections in order | of pick-up time": a noun cut from its "of" names half a
        # thing; the cut goes before the phrase it is in
        cuts = [k for k in cuts if words[k].lower() != "of"] or cuts
        cut = cuts[0] if cuts else MAX_TITLE_WORDS
        if (
            cuts
            and cut > MIN_TITLE_WORDS
            and words[cut].lower() == "to"
            and words[cut - 1].lower() in ("up", "down")
        ):
            cut -= 1  # "Book teaching rooms | up to the end of the next term" (not "pick | up")
        if cut < len(words) and words[cut].lower() == "of":
            # "Work with the five best-selling TV brands | out of the box": the cut goes before
            # the whole preposition ("out of", "instead of")
            if cut - 1 > MIN_TITLE_WORDS and words[cut - 1].lower() in _OF_OPENERS:
                cut -= 1
        if not cuts:
            cut = _before_figure(words, cut)
        timed = cut < len(words) and words[cut].lower() in ("before", "after", "ahead")
        words = words[:cut]
        if (
            len(words) - 2 >= MIN_TITLE_WORDS
            and words[-2].lower() in ("and", "or")
            and words[-1].lower() in (w.lower() for w in words[:-2])
        ):  # "Make it fast to open and fast | to take a photo": a second item cut in half
            words = words[:-2]
        if timed:
            # "Send the welcome pack ten working days | before the start date": when it is
            # done goes whole, the figure with it
            kept = " ".join(words)
            said = [q.text for q in quantities(kept) if kept.lower().endswith(q.text.lower())]
            if said and len(words) - len(said[0].split()) >= MIN_TITLE_WORDS:
                words = words[: len(words) - len(said[0].split())]
        if cuts and len(words) > MIN_TITLE_WORDS and is_participle(words[-1].lower()):
            words = words[:-1]  # "a simple menu driven | by up / down ...": not "... driven"
    if _figure(words[-1]) and len(words) > MIN_TITLE_WORDS:
        # "Set the TV to switch off after 15, 30, 60": cut before the figures' preposition
        at = [k for k in range(MIN_TITLE_WORDS, len(words)) if words[k].lower() in _CUT_BEFORE]
        if at:
            words = words[: at[-1]]
    title = _TIMING_AFTER_COMMA.sub(" ", _trim(" ".join(words)))
    bare = re.fullmatch(r"(Provide|Use|Add|Offer)\s+([a-z][\w-]*)", title)
    if bare and bare.group(2) in MATERIALS and bare.group(1) in ("Provide", "Use"):
        title = f"Make it of {bare.group(2)}"  # "plastic or something": not "Provide a plastic"
    elif bare and not bare.group(2).endswith("s"):
        title = f"{bare.group(1)} {_article(bare.group(2))} {bare.group(2)}"
    # "Take off your usual commute": the title names the thing, not whose it is to the listener
    title = re.sub(r"\byour\b", "the", title)
    # "while away", "when done": who is away or done is who the story is for
    title = re.sub(r"\b(while|when|once)\s+(?:you|they)(?:'re|\s+are)\s+", r"\1 ", title)
    return capital(title)


def _figure(word: str) -> bool:
    return bool(_FIGURE.fullmatch(word.strip(",.;:").lower()))


def _before_figure(words: list[str], cut: int) -> int:
    """Where to cut a long title so that it never ends on a bare figure nor on the words that
    lead to one ("booked within the last | two days" -> "booked")."""
    ahead = cut
    while ahead < len(words) and words[ahead].lower() in _LEADS_TO_FIGURE:
        ahead += 1
    figure_next = ahead < len(words) and _figure(words[ahead])
    if _figure(words[cut - 1]):
        cut -= 1
    elif not (figure_next and words[cut - 1].lower() in _LEADS_TO_FIGURE):
        return cut
    while cut > MIN_TITLE_WORDS and words[cut - 1].lower() in _LEADS_TO_FIGURE:
        cut -= 1
    return cut


# a modal said with "not" of what people do (not of what they have to do): a rule on them
_RESTRICTS = re.compile(
    r"(?:shouldn't|mustn't|can't|cannot|won't|(?:should|must|can|may|will) not)\s+"
    r"(?!have to\b|need to\b|need\b|be made\b|be asked\b)",
    re.IGNORECASE,
)


# a need said of oneself ("I'd like to assign a job", "I need to see ...", "my list")
_SAID_OF_ONESELF = re.compile(
    r"^(?:(?:and|but|so|also|yes|yeah|well)[\s,]+)*(?:i|i'd|i'm|my)\b", re.I
)
# roles of the team that builds the product, never its users ("Project Manager:" in a design
# meeting wants things for the product's users)
_TEAM_ROLES = frozenset(
    (
        "project manager",
        "product manager",
        "product owner",
        "analyst",
        "business analyst",
        "facilitator",
        "designer",
        "developer",
        "engineer",
        "moderator",
        "interviewer",
        "scrum master",
        "chair",
    )
)


def _speaker_role(speaker: str | None) -> str:
    """The persona a speaker's label names ("Manager", "Receptionist"), none for a name or a
    role of the team ("Project Manager", "Analyst")."""
    label = (speaker or "").strip().lower()
    named = re.fullmatch(r".+?\s*\((?P<role>[^)]+)\)", label)
    if named:  # "Tom (librarian)": the role in brackets
        label = named.group("role").strip()
    qualified = re.fullmatch(rf"[a-z]+\s+({PERSONA_FORMS})", label)
    if qualified and label not in _TEAM_ROLES and qualified.group(1) not in _TEAM_ROLES:
        return f"{label.split()[0]} {singular_persona(qualified.group(1))}"  # "fleet manager"
    if not label or label in _TEAM_ROLES or not re.fullmatch(rf"(?:{PERSONA_FORMS})", label):
        return ""
    return singular_persona(label)


def _persona_named(quotes: Sequence[str]) -> str:
    """The role these statements name for the need, or ""."""
    # "the thing would be letting ...": what the frame says; "the crews start at six, so people
    # need to know the night before": the need said after "so" is whose it is, not the reason's
    joined = " ".join(_need_said_after_so(unframed(clean(t))) for t in quotes)
    # "for staff" names the persona only in a statement's first clause, not in a list of rules
    # ("seven days for desks, ..., and end of next term for staff")
    need = " ".join(re.split(r"[,;:]", clean(t))[0] for t in quotes)
    for pattern, said in (
        (_PERSONA_AS, joined),
        (_PERSONA_SIDE, joined),
        (_PERSONA_SUBJECT, joined),
        (_PERSONA_WANTED, joined),
        (_PERSONA_LET, joined),
        (_PERSONA_FOR, need),
    ):
        m = pattern.search(said)
        if m:
            return qualified_persona(said, m.start(1), m.end(1))
    for text in quotes:
        said = _need_said_after_so(unframed(body(text)))  # "can we make sure that managers get"
        first = condition_first(said)
        if first and not _PERSONA_START.match(said):
            said = first.group("main")  # "if an item is out of stock, the picker marks it ..."
        m = _PERSONA_START.match(said)
        verb = m.group("verb").lower() if m else ""
        if verb in ("shouldn", "mustn", "needn"):  # "patients shouldn't have to call"
            verb = verb[:-1]
        if m and _RESTRICTS.match(said[m.start("verb") :]):
            continue  # "users must not delete a closed survey": a rule on them, not their want
        if (
            m
            and verb in ("will", "would")
            and re.match(WHERE_THEY_ARE, said[m.end("verb") :], re.I)
        ):
            continue  # "Finance will be on laptops, big screens": where they are, not a need
        if m and _NOUN_THEN_BE.match(said[m.end("verb") :]):
            continue  # "The nurse stuff is a whole thing", "the patient list is long": a thing
        if (
            m
            and m.start(1) == 0
            and singular_persona(m.group(1)) == m.group(1).lower()
            and not content_words(said[m.end("verb") :])
        ):
            continue  # "Visitor permits too.": a role said bare names a thing of theirs
        if m and verb not in _NOT_A_NEED_VERB and (base_form(verb) in VERBS or verb in _MODALS):
            return qualified_persona(said, m.start(1), m.end(1))
        agent = _AGENT_SUBJECT.match(said)
        if agent and agent.group("who").lower() not in _THINGS_IN_ERS:
            if agent.group("verb").lower() in PEOPLE_VERBS:
                return agent.group("who").lower()[:-1]  # "walkers see their walks": a walker
    return ""


_NEED_WORD = r"\b(?:need|needs|must|should|have to|has to|want|wants)\b"
# a form of "be" or "have" right after the word read as a role's verb: that word is the head of a
# thing named after the role ("the nurse stuff is", "the patient list has")
_NOUN_THEN_BE = re.compile(r"^\s+(?:is|are|was|were|isn't|aren't|has|have|'s)\b", re.IGNORECASE)
_SO_NEED = re.compile(
    rf"^(?P<why>[^,;]+),\s+so\s+(?!that\b)(?P<need>[^,;]*{_NEED_WORD}.*)$", re.IGNORECASE
)


def _need_said_after_so(text: str) -> str:
    """The need of "<a fact>, so <the need>" ("the crews start at six, so people need to know
    the night before"); the text as it is when the fact says no need of its own."""
    found = _SO_NEED.match(text)
    if found is None or re.search(_NEED_WORD, found.group("why"), re.IGNORECASE):
        return text
    return found.group("need")


# people the lexicon does not name, said as who does what people do ("Walkers see their walks
# for the day", "Florists can upload ..."): a plural in -ers, -ists or -ians as the subject
_AGENT_SUBJECT = re.compile(
    r"^(?:the |all |our |each |every )?(?P<who>[a-z]{3,}(?:er|ist|ian)s)\s+"
    r"(?:(?:can|should|must|will|only|also|just|then|need to|want to|have to)\s+)*"
    r"(?P<verb>[a-z]+)\b",
    re.IGNORECASE,
)
# things, not people, in the same shape ("orders see ..." never names a role)
_THINGS_IN_ERS = frozenset(
    """orders numbers letters reminders filters folders papers answers printers scanners
    computers servers containers timers stickers chargers headers footers markers layers covers
    corners others offers transfers registers meters posters banners trailers lockers vouchers
    browsers routers speakers controllers""".split()
)


def persona_of(
    quotes: Sequence[str], context: Sequence[str], default: str, speaker: str | None = None
) -> str:
    """The role the statements name for the need, else the ``speaker``'s when the transcript
    labels them by a role and they say it of themselves ("Manager: I'd like to assign a job"),
    else one named just before, else ``default``."""
    # the role the main statement names first ("members should be able to book classes
    # online"), then one its evidence names ("from the instructor side, I need ...")
    for scope in (quotes[:1], quotes[1:]):
        named = _persona_named(scope)
        if named:
            return named
    role = _speaker_role(speaker)
    if role and quotes and _SAID_OF_ONESELF.match(unframed(clean(quotes[0]))):
        return role
    # the persona a story said just before names ("As a viewer, I want ..."), or the question a
    # need answers ("what do teachers need?"); a role said as the subject of another need is
    # that need's ("payroll needs an export" before "it has to work on the old laptops")
    # "Right, and they can cancel ..." after "the gym wants members to book classes": "they"
    # are the role the sentence before names
    they = re.match(
        r"^(?:(?:right|yes|yeah|okay|ok|and|so|also|but)[\s,]+)*they\b", clean(quotes[0]), re.I
    )
    named_before = PERSONA.search(clean(context[-1])) if they and context else None
    if named_before:
        return singular_persona(named_before.group(1))
    asked = " ".join(clean(t) for t in context if t.rstrip().endswith("?"))
    for pattern, said in (
        (_PERSONA_AS, " ".join(clean(t) for t in context)),
        (_PERSONA_SUBJECT, asked),
        (_PERSONA_ASKED, asked),  # "What about the drivers, what do they need?"
    ):
        m = pattern.search(said)
        if m:
            return qualified_persona(said, m.start(1), m.end(1))
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
        if re.match(r"(?:and|but|or|then|so)\b", ends, re.IGNORECASE):
            continue  # "so that and we will put ...": no purpose, the sentence goes on
        if 3 <= len(ends.split()) <= 20 and content_words(ends):
            return _lower_first(ends)
    return None
