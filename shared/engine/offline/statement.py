"""Reading a statement into a ``Capability`` (the offline generator's drafting, ``phrasing``).

A statement is cleaned for writing (``body``: no markers, fillers, labels or leading discourse
words), cut at the modal that carries its requirement (``_parse``), and read as the capability it
asks for (``capability``): a verb phrase for the title and the "I want ..." means ("People want to
have a power button" -> "Provide a power button", "the number is shown on the LCD" -> "Show the
number on the LCD", "No teletext button" -> "Leave out teletext button"). The regular expressions
that read a statement's parts (its modal, subject, purpose, condition) live here too, for the title
(``phrasing``) and the acceptance criteria (``criteria``) to read the same way.

Everything is a pure function of the statement: deterministic.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from shared.analysis.contradiction import number_tokens, quantities
from shared.engine.offline.lexicon import (
    LANGUAGES,
    NUMBER_WORDS,
    PERSONA,
    PERSONA_FORMS,
    QUALIFIER,
    SIGNAL_VERBS,
    VERBS,
    amount_only,
    base_form,
    is_base_verb,
    is_participle,
    is_plain_quality,
    is_quality_word,
    is_verb,
    names_a_thing,
    reads_as_capability,
    singular_persona,
)
from shared.engine.offline.wording import (
    _NOUN_OPENERS,
    _article,
    _cap,
    _lower_first,
    _trim,
    capital,
)
from shared.text.language import clean, content_words
from shared.text.textio import clean_restarts, drop_abandoned

# the fewest and the most words of a title (``phrasing``); the fewest also of a criterion
# (``criteria``)
MIN_TITLE_WORDS, MAX_TITLE_WORDS = 3, 10
_LEAD = re.compile(
    r"^(?:(?:so|and|but|well|okay|ok|also|then|now|yeah|yes|yep|right|alright|basically"
    r"|actually|like|because|'cause|and also|i think(?: that)?|we think(?: that)?|i guess"
    r"|i believe|i mean|you know|of course|first(?: of all)?|second|finally|plus|new|note|oh|ooh"
    r"|ah|ha|hmm|um|uh|agreed|honestly|obviously|sure|great|good|fine|exactly|definitely|absolutely"
    r"|anyway|look|listen|please|just|maybe|perhaps|probably|i'd say|i would say|i reckon"
    r"|i suppose|i feel like|for me|for us|in general|again|and then|or|ideally|preferably"
    # "from the staff side, I need ...": whose need it is (``phrasing.persona_of``), no part of it
    r"|(?:from|on) (?:the|our|my) \w+(?: \w+)? (?:side|point of view|perspective|end))\b"
    r"(?!['\u2019])[\s,:;-]*)+",  # not the "that" of "I think that's the policy"
    re.IGNORECASE,
)
# "NEW: ...", "Industrial Design: ...", "Locator: ..." (not "No more than 8 buttons: ...")
# a verb, which no label holds: "Gesture control is dropped: too expensive" says it was dropped
LABEL_VERBS = (
    r"(?i:is|are|was|were|has|have|had|must|should|will|can|could|would|be|been|gets?|stays?"
    r"|goes)"
)
_LABEL_PREFIX = re.compile(
    r"^(?:\[[ xX]\]\s*)?(?:(?!(?i:no|not|only|at|max|min|must|should)\b)[A-Z][A-Za-z/&']*"
    rf"(?:[ -](?!{LABEL_VERBS}\b)[A-Za-z/&']+){{0,3}}:\s+)?"
)
# what follows a label that only goes on with it ("Search: by title, ...", "Delivery: within
# three days"): a preposition, no clause of its own
_LABEL_WITH_ITS_WORDS = re.compile(
    r"^(?:by|via|within|per|from|through)\s+(?!the way\b)(?!.*\b(?:is|are|must|should|will|can)\b)",
    re.I,
)
_HEDGES = re.compile(
    r"\b(?:just|really|actually|basically|maybe|probably|perhaps|i think|you know|kind of"
    r"|sort of|i guess|i mean|honestly|obviously|definitely|somehow|of course"
    # "like" as a filler, not the verb: after its subject ("I'd like to", "users would like")
    # it is the verb only when what it likes follows ("I like do I take ..." is a filler)
    r"|(?<!would )(?<!'d )(?<!\u2019d )(?<!\bi )(?<!\bwe )(?<!they )(?<!\byou )(?<!n't )"
    r"(?<!people )(?<!users )(?<!\bmight )(?<!really )like"
    r"|(?<!would )(?<!'d )(?<!\u2019d )like"  # "what I'd like is ...": always the verb
    r"(?!\s+(?:to|it|that|this|the|a|an|them|these|those|my|our|your|their|his|her|each"
    r"|every|all|some|any|everyone|everybody|people|us|me|him|\w+ing)\b)"
    r"|i don't know|i dunno|i'm not sure|it seems(?: like| to me)?(?: that)?"
    r"|as (?:we|you) (?:can|could) see(?: here)?"
    # "let's say for now the system checks the limits": a decision put tentatively
    r"|let's say(?: that)?(?:,? for now)?)\b\s*,?\s*",
    re.IGNORECASE,
)
# The modal that carries a requirement, and what follows it: a verb phrase ("should be cheap") or
# a noun phrase ("we need a screen"). Fixed noun-phrase decisions come first ("let's go with X").
_MODAL = re.compile(
    r"\b(?:(?P<np1>let's go (?:with|for)|let us go (?:with|for)|go with|stick with|we'll use"
    r"|we will use|let's use|let's have|we'll have(?! to\b)|we will have(?! to\b)"
    r"|(?:(?:is|are|'re) )?aiming (?:for|at)"
    r"|(?:(?<=\bwe )|(?<=\bi )|(?<=\bthey ))aim (?:for|at)"
    # a design decision said as it stands ("we're having push-buttons on the outside", "we're
    # going for an advanced chip"); a bare "we have" more often tells what is ("at home we have
    # a TV, a video recorder", "then we have thirteen Euros")
    r"|(?<=\bwe)(?:'re| are) having|(?<=\bwe)(?:'re| are) going (?:in )?(?:for|with))"
    r"|(?P<vp>must|shall|should|ought to|needs? to|have to|has to|had to|got to|gotta"
    r"|would like to|'d like to|would love to|'d love to|wants? to|(?:is|are|'re) going to|decided to|agreed to|let's"
    r"|(?:is|are|'re|am|'m) (?:planning|aiming|intending) to|(?:plan|aim|intend)s? to"
    r"|let us|(?:will|'ll|can|could)(?:(?= also| still) \w+)?(?= (?:have(?! to\b)|use|include|keep"
    r"|make|add|put|drop|offer|support|show|provide|go|train|implement|integrate|build|be able)\b))"
    r"|(?P<np>needs?|wants?|would like|'d like|requires?|(?:will|'ll) need(?! to\b))"
    # a prohibition, contracted ("it shouldn't be heavy"; "should not" is the modal and "not")
    r"|(?P<neg>shouldn['\u2019]t|mustn['\u2019]t|shan['\u2019]t|ought not to))\b",
    re.IGNORECASE,
)
# a modal after this states no obligation ("I don't have to chase people")
_NO_OBLIGATION = re.compile(
    r"\b(?:don't|doesn't|do not|does not|didn't|won't|will not|wouldn't|would not|shouldn't"
    r"|never)\s*$",
    re.I,
)
# a need the speaker denies ("I don't think you'd need to know the condition"): none is stated
_DENIED = re.compile(r"\b(?:i|we) (?:don't|do not) (?:think|believe|reckon)\b", re.I)
# "can", "will" carry a requirement only when nothing stronger is said; so do their negations
# ("we can't lose the battery", "it won't be heavy"), read as "not" and the verb phrase
_WEAK_MODAL = re.compile(
    r"\b(?:(?P<vp>can|could|will|'ll|may)(?!['\u2019]t)|(?P<neg>can['\u2019]t|cannot|can not"
    r"|couldn['\u2019]t|won['\u2019]t|will not))\b",
    re.IGNORECASE,
)
# "so the remote can be used in the dark": a purpose said of a thing, its own subject and modal
SO_A_THING = r"so (?:the|their|our) \w+ (?:can|could|will|won't|would|is|are)"
_CLAUSE_BREAK = re.compile(
    r"\s*(?<!\d),\s+|\s*[;:]\s+|\s+(?=(?:but|because|'cause|whereas|although|so that"
    rf"|so (?:we|i|you|they|it|people)|{SO_A_THING})\b)",
    re.IGNORECASE,
)
_PRONOUN_SUBJECT = re.compile(
    r"^(?:(?:i|we|you|they|it|one|people|users?|the users?|customers?|viewers?|everyone"
    r"|everybody|the client|the customer|the product|the device|the system|the app|the remote"
    r"(?: control)?)(?:'ll|'d| will| would| all| really| also| do| still| probably)?\s*)?$",
    re.IGNORECASE,
)
_PRODUCT_PRONOUN = re.compile(r"^(?:it|they|this|that|these|those|we|one)$", re.IGNORECASE)
_PRODUCT_SUBJECT = re.compile(
    r"^(?:it|this|that|the (?:product|device|system|app|remote(?: control)?|page|site|tool))$",
    re.IGNORECASE,
)
_WANTS = re.compile(r"(?:wants?|would like|'d like|would love|'d love) to", re.IGNORECASE)
# a word before a role that says which of them ("company admins", "other managers", "busy
# receptionists"): still people; not a clause opener ("if managers ...") or a letting verb
_DESCRIBED = (
    r"(?:(?!(?:if|when|whether|that|which|what|where|unless|because|let|lets|allow|allows"
    r"|help|helps)\s)[a-z][a-z-]+\s+)"
)
_USER_SUBJECT = re.compile(
    r"^(?:(?:i|you|one|people|users?|the users?|everyone|everybody|customers?|viewers?)\b"
    rf"|(?:the |an? |our |all |each |every |both )?{_DESCRIBED}?(?:{PERSONA_FORMS})\b)(?!['\u2019])",
    re.IGNORECASE,
)  # not "volunteers' phone numbers", "the user's settings": a thing of theirs
_SUBORDINATORS = frozenset(
    "what which where that who whom if whether when than how time why whatever".split()
)
# "time" naming a thing, not opening a clause ("the remaining time", "the time"; not "every
# time", "by the time", "the first time")
_A_TIME_NAMED = re.compile(
    r"^(?:the|our|their|its|a)\s+(?:(?!(?:first|last|next|same|only)\s)[a-z-]+\s+)?time$",
    re.IGNORECASE,
)
_SUBJECT_TAIL = re.compile(
    r"(?:^|\s)((?:i|we|you|they|it|people|users?|customers?|viewers?|everyone|everybody"
    r"|the (?:users?|customers?|client|product|device|system|app|remote(?: control)?))"
    r"(?:'ll|'d| will| would| all| really| also| do| still)?)$",
    re.IGNORECASE,
)
# a role with a hyphenated qualifier ("pay-as-you-go members", "first-time users")
_QUALIFIED_PERSONA = re.compile(rf"(?:[a-z]+(?:-[a-z]+)+\s+)({PERSONA_FORMS})\b", re.IGNORECASE)
_PERSONA_START = re.compile(
    rf"^(?:the |an? |all |our |each |every )?(?:[a-z]+(?:-[a-z]+)+\s+|{QUALIFIER})?({PERSONA_FORMS})\s+"
    r"(?:only |just |also |always |then )?"
    r"(?P<verb>[a-z]+)",
    re.IGNORECASE,
)
_NOT_A_NEED_VERB = frozenset("say said says tell told think thought like liked love".split())
_TALK_AFTER_DONT = frozenset("know worry mind care bother get forget remember mean see".split())
_PURPOSE = re.compile(
    r"\b(?:so that|so (?=(?:they|we|you|people|users?|it|he|she|i|(?:the|their|our) \w+"
    r"|patients|residents"
    r"|customers|staff) (?:can|cannot|can't|could|will|won't|don't|do not|know|have|get|see|are|is)\b)"
    # "..., so it works better for them": what it then does
    r"|so (?=it (?!goes|seems|says|means|happens)[a-z]{3,}s\b)"
    # "..., so it's fairer and you can plan around your exams": how it is better then
    r"|so (?=(?:it|that)(?:'s|\s+is) (?:[a-z]+er|more|less|better)\b)"
    # "..., so small children cannot change the channel": people, and what they then can do
    r"|so (?=(?:(?:small|young|little|older|other|new)\s+)?(?:children|kids|parents|guests"
    r"|visitors|members|students|employees|drivers|owners) (?:can|cannot|can't|could|won't"
    r"|don't|do not)\b))"
    r"\s*(?P<ends>[^.;!?]+)",
    re.IGNORECASE,
)
# "see when a book will be back", "check if it is free": what is seen or asked, no condition
# ("know if it fails" is: to be told when it does)
_ASKS_WHAT = "".join(
    rf"(?<!\b{verb} )"
    for verb in (
        "see sees seeing saw show shows ask asks asking check checks checking decide decides say"
        " says wonder sure understand remember notice clear out idea"
    ).split()
) + "".join(  # "see straight away if it has a valid permit"
    rf"(?<!\b{verb} {how} )"
    for verb in ("see", "check", "tell", "show", "know")
    for how in ("straight away", "right away", "at a glance", "immediately", "instantly")
)
_CONDITION = re.compile(
    r"^(?P<main>.+?),?\s+\b(?:" + _ASKS_WHAT + r"(?:when|whenever|if)|as soon as"
    r"|once(?! ?(?:a|an|every|per|more|again"
    r"|or|in|and|only|twice)\b)|after|before|unless)\b\s+"
    r"(?P<cond>[^,;]+)",
    re.IGNORECASE,
)
_CONDITION_FIRST = re.compile(
    r"^(?:when|whenever|if|as soon as|once|after|unless)\s+(?P<cond>[^,;]+),\s*(?P<main>.+)$",
    re.IGNORECASE,
)
# ... said without the comma, up to where "it" or "they" does what follows ("if an order isn't
# collected within three days it goes back into stock"); not a modal's subject ("if someone wants
# to change the contrast they should be able to do that": the condition is the need)
_CONDITION_FIRST_BARE = re.compile(
    r"^(?:when|whenever|if|as soon as|once|unless)\s+(?P<cond>(?!it\b|they\b)[^,;]+?\s+"
    r"(?:is|are|isn't|aren't|was|wasn't|has|hasn't|have|haven't|does|doesn't|do|don't|can't"
    r"|cannot|[a-z]+ed)\b[^,;]*?)\s+(?P<main>(?:it|they)\s+(?:[a-z]+s|get|go)\b.+)$",
    re.IGNORECASE,
)


# ... and up to where its subject is said again ("when they finish a room they mark it clean")
_CONDITION_FIRST_SAME_SUBJECT = re.compile(
    r"^(?:when|whenever|once|after|as soon as)\s+(?P<cond>(?P<who>they|you|we)\s+[^,;]+?)\s+"
    r"(?P<main>(?P=who)\s+(?!(?:can|could|should|might|may)\b)[a-z]+\b.+)$",
    re.IGNORECASE,
)


def condition_first(text: str) -> re.Match[str] | None:
    """The condition said first and the rest ("if X, Y"; "if X it Y" without the comma; "when
    they X they Y"), as a match with groups ``cond`` and ``main``, or None."""
    return (
        _CONDITION_FIRST_SAME_SUBJECT.match(text)
        or _CONDITION_FIRST.match(text)
        or _CONDITION_FIRST_BARE.match(text)
    )


_NUMBER_WORD = rf"(?:{'|'.join(sorted(NUMBER_WORDS))})"
# a figure in digits or words ("12", "twenty five", "forty-eight")
_FIGURE_SAID = rf"(?:\d+|{_NUMBER_WORD}(?:[ -]{_NUMBER_WORD})*)"
# a place, scope or purpose said before the need, cut off by a comma ("In the day view, ...",
# "For overseas trips, ...")
_PLACE_FIRST = re.compile(
    r"^(?P<where>(?:in|on|at|for|inside|outside|within|from|during|after|before|every|each)\s+"
    r"(?:[\w'-]+\s+){0,2}"
    r"[\w'-]+"
    # ... or a time by its figure ("A month before expiry, alert the coordinator", "Two days
    # before the shift, ...")
    rf"|(?:an?|{_FIGURE_SAID})"
    r"\s+(?:working\s+|business\s+)?(?:minute|hour|day|week|month|year)s?\s+"
    r"(?:before|after|ahead of|prior to)(?:\s+[\w'-]+){1,3}"
    r"),\s*(?!and\b|or\b|but\b)(?P<main>.+)$"
    # ... or said without a comma before who does it ("for overseas trips we pay ...", "outside
    # office hours it should show the help centre")
    r"|^(?P<where2>(?:in|on|at|for|outside|during)\s+"
    r"(?:(?!(?:we|they|people|staff|users|it|i|you)(?:'\w+)?\s)[\w'-]+\s+){0,6}?[\w'-]+)\s+"
    r"(?P<main2>(?:we|they|people|staff|users|it)\s+[a-z]+\b.+)$",
    re.IGNORECASE,
)
# a time said first without its comma ("after each walk the walker sends ...", "every morning
# the driver gets ...")
_TIME_FIRST = re.compile(
    r"^(?P<when>(?:after|before)\s+(?:each|every|the|a|an)\s+[\w'-]+|(?:every|each)\s+(?:morning"
    r"|evening|afternoon|day|night|week|weekday|month|year|monday|tuesday|wednesday|thursday"
    r"|friday|saturday|sunday))\s+(?=(?:the|a|an|each|every|our|their|we|they|you|i|it)\s)",
    re.IGNORECASE,
)
PLACE_IN_TITLE_WORDS = 4  # a longer place or scope said first stays out of the title
# where a need's title stops before the place said first is put after it ("Pay a daily allowance
# instead of ..." + "for overseas trips")
_BEFORE_PLACE = re.compile(
    r",|\s+(?:instead of|rather than|because|'cause|so that|which|but|although|whereas)\s+"
    r"|\s+instead$",
    re.I,
)
# "in fact, ...", "for now, ...": a word of talk, not where the need holds
_DISCOURSE_PLACE = re.compile(
    r"^(?:in|on|at|for|from)\s+(?:fact|general|particular|short|total|addition|principle"
    r"|practice|theory|sure|now|instance|example|a moment|the moment|the end|least|most|last|first"
    r"|any case|that case|this case|my opinion|my view|terms of .+|the other hand|the meantime"
    r"|my side|our side|my point of view|that|this|it|there|(?:some|that|this|whatever|any|one)"
    r" reason|a (?:start|change|while|bit)|once|real|good|now on|the time being|the record)$",
    re.IGNORECASE,
)
_KEEP_WORDS = re.compile(
    r"^(?:under|below|within|at most|at least|less than|no more than|not more than|cheap|small"
    r"|simple|short|light|low|few|lightweight|minimal)\b",
    re.IGNORECASE,
)
# "no teletext button" drops a thing; "no more than 8 buttons" sets a limit
_LEAVE_OUT = re.compile(
    # "no refund unless it's medical" is a rule with its condition, nothing left out
    r"^(?!.*\b(?:unless|if|when|whenever|until)\b)"
    r"(?:no|without)\s+(?!(?:more|less|fewer|later|longer|earlier|sooner|higher|lower|bigger"
    r"|smaller|greater|heavier)\s+than\b)(?P<what>.+)$",
    re.IGNORECASE,
)
_NOT_VP = re.compile(r"^(?:not|never)\s+(?P<vp>.+)$", re.IGNORECASE)
# an instruction not to do something, said of the product: "Don't interfere with other devices"
_IMPERATIVE_NOT = re.compile(
    r"^(?:(?:we|we'll|we will)\s+)?(?:don't|do not|never|won't|will not)\s+(?P<vp>[a-z]+\b.*?)(?:\s+(?:'cause|cause|because|since)\b.*)?$",
    re.IGNORECASE,
)
_LETS_NOT = re.compile(
    r"\b(?:let's not|let us not|we won't|we will not|we don't|don't"
    r"|(?:we're not|we are not|we aren't)(?: going to)?)\s+(?P<verb>do|have|include|add"
    r"|build|offer|make|use|need|go with|go for|bother with|want|support|consider"
    r"|doing|building|including|adding|offering|supporting|using)\s+(?P<what>.+?)"
    r"(?:\s+after all|\s+anymore)?$",
    re.IGNORECASE,
)
# "you won't have to change the batteries", "you wouldn't need to tap in your buttons": a chore
# the product takes away
_NO_CHORE = re.compile(
    r"\b(?:won't|will not|wouldn't|would not|shouldn't|should not|never)\s+(?:have|need)"
    r"\s+(?P<what>to\s+.+?)(?:\s+anymore|\s+any more|\s+again)?$",
    re.IGNORECASE,
)
_NO_NEED = re.compile(
    r"\bno need (?:to|for) (?:have |use |include |add |do )?(?P<what>.+?)(?:\s+(?:on it|at all))?$",
    re.IGNORECASE,
)
# (not "which vans are out today", "drivers are out on the road": where they are; the thing left
# out is named, not a need said of it: "managers need to see which ...")
_IS_OUT = re.compile(
    r"^(?P<what>(?:(?!\b(?:need|needs|should|must|can|could|will|would|want|wants|has to"
    r"|have to|which|who|when|where|whether|if)\b).)+?)\s+(?:is|are)\s+"
    r"(?:out(?!\s+(?:today|tonight|now|on|at|in|of|there|all|most|for\s+(?!now\b)))"
    r"|dropped|gone|off the table|not needed|out of scope)\b",
    re.IGNORECASE,
)
# "the sample sensor will have to go, 'cause ...", "the teletext button can go": let go
_MUST_GO = re.compile(
    r"^(?:(?:yeah|yes|so|ok|okay|well|and|but|i think)[\s,]+)*(?P<what>(?:the|that|this|our)\s+"
    r"(?:[\w-]+\s+){0,3}?[\w-]+)\s+(?:(?:will|would)\s+(?:have|need)\s+to|has\s+to|have\s+to"
    r"|can|could|must|should|needs?\s+to)\s+go\b(?!\s+(?:to|on|in|into|through|back|up|down"
    r"|out|with|at|for)\b)",
    re.IGNORECASE,
)
# "and the locator also goes away", "And the joystick away.", "So the scroll wheel goes.": a part
# of the design let go, said of it alone (not "goes out", "goes on": what it does)
_GOES = re.compile(
    r"^(?:(?:yeah|yes|so|ok|okay|well|and|but|then|mm|right)[\s,]+)*(?P<what>(?:the|that|this|our)"
    r"\s+(?:[\w-]+\s+){0,3}?[\w-]+)\s+(?:(?:also|just|then|can)\s+)?(?:goes(?:\s+away)?|go\s+away"
    r"|away|out)\s*[.!]?$",
    re.IGNORECASE,
)
# "Parents want trip photos, but that's a safeguarding nightmare, let's keep that out": what
# someone wants, left out by the same statement
_WANTED_BUT_OUT = re.compile(
    r"^(?:(?:so|and|well|yeah|yes|now)[\s,]+)*(?:[\w'-]+\s+){0,3}?(?:want|wants|wanted"
    r"|ask for|asks for|asked for|keep asking for|would like|'d like)\s+(?P<what>[^,;]+?),?"
    r"\s+but\b.*\b(?:(?:keep|leave)\s+(?:that|it|them|those)\s+(?:out|for later|till later"
    r"|until later|for (?:a )?later (?:phase|release|version))|park\s+(?:that|it)|(?:that|it)(?:'s|\s+is)"
    r"\s+(?:out|out of scope|not for (?:now|this (?:release|phase|version))|for later)"
    # "..., but the supplier can't integrate yet, so not this year"
    r"|(?:(?:so|but|and)\s+)?not\s+(?:this (?:year|release|phase|version|time)|now|yet|for now)(?=\W*$))\b",
    re.IGNORECASE,
)


# a thing wished for and put off in the same breath ("Loyalty points would be nice, but I know
# that's phase two.")
_NICE_BUT_LATER = re.compile(
    r"^(?:(?:so|and|well|yeah|yes|oh|um|uh)[\s,]+)*(?P<what>[^,;]+?)\s+would\s+be\s+(?:really\s+)?"
    r"(?:nice|good|great|lovely|handy|cool|useful)\W+but\b.*\b(?:that's|that is|it's|it is)\s+"
    r"(?:for\s+)?(?:phase two|phase 2|later|a later phase|next (?:phase|year|release|version))\b",
    re.IGNORECASE,
)


def wanted_but_left_out(text: str) -> bool:
    """Whether a statement leaves out what someone wants ("Parents want trip photos, but ...
    let's keep that out"): they are who want it, not the persona of the decision."""
    return bool(_WANTED_BUT_OUT.search(text) or _NICE_BUT_LATER.search(text))


# "let's keep visitor permits out of this release": left out of what is built now
_KEPT_OUT = re.compile(
    r"\b(?:keep|leave)\s+(?P<what>(?!out\b).+?)\s+out\s+of\s+(?:this|the|our|that)\s+"
    r"(?:release|phase|version|scope|mvp|first\s+\w+|project|iteration|sprint)\b",
    re.IGNORECASE,
)


def keeps_named_out(text: str) -> bool:
    """Whether a statement keeps a thing it names out of what is built now ("Let's keep leavers
    out of this first version."; not "let's keep that out of this release", said of what was
    just said)."""
    kept = _KEPT_OUT.search(clean(text))
    return kept is not None and not re.match(
        r"(?:that|this|it|them|those|these)\b", kept.group("what"), re.IGNORECASE
    )


_POSSESSION = frozenset("have get include contain offer need".split())
# a need said of nobody ("nobody has to log in to see their bin day"): the title keeps the negation
_NOBODY = re.compile(
    r"^(?:nobody|no one|no-one|none of (?:them|us|the \w+))"
    r"(?P<but>\s+else|\s+(?:outside|except|but|other than|apart from|else|from|in)\s+\S.*)?$",
    re.IGNORECASE,
)  # "nobody outside HR": the people it is said of, and who is left out
_OBLIGED = re.compile(r"^\S+(?: \S+)?\s+(?:has to|have to|needs? to|must|got to|gotta)\b", re.I)
_NEW_CLAUSE = re.compile(
    r"^\s*(?:and |but |so |then )?(?:i|we|you|they|it|he|she|there|this|that|people"
    r"|(?:(?:most|all|some|many|none|half) of|half|most|all) (?:the|our|their|them|us)"
    r"(?: \w+){0,2}?(?= (?:are|is|were|was|have|has|do|don't|can't|won't)\b))"
    r"(?:'re|'s|'m|'ve|'ll|'d)?\s+\w+",
    re.IGNORECASE,
)  # "it needs to be easy, most of our staff are not very technical": a reason said after it


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
    cannot: bool = False  # "can't", "won't": a limit or a forecast, not a rule to restate
    wanted: bool = False  # said as someone's want ("Linda wants to see ..."): a person acts


# a word broken off as it was said ("because v our target is", "colour of t", "we could do l the
# logo"): a lone lowercase letter, kept only where it names something ("option b", "vitamin d",
# "the b button") or is a unit after a figure ("a 1 m drop")
_LETTER_NAMES_AFTER = frozenset(
    """option options plan type vitamin grade class version model part section step point letter
    row column channel size""".split()
)
_LETTER_NAMES_BEFORE = frozenset("button buttons key keys side axis drive".split())


# a capital letter cut off at the start ("W LCDs are for feedback"), not a letter that names
# something ("B is cheaper", "X and Y")
_CUT_CAPITAL = re.compile(
    r"^[B-HJ-Z] (?!(?:is|are|was|were|has|have|and|or|will|would|can|could|should|must)\b)\S",
)


# the two-letter words (and abbreviations) a meeting says whole: any other lowercase pair of
# letters is a word broken off ("we should go re original", "te think about", "the bu the mute
# button"); with the few three-letter starts that are never words ("wha", "tha")
_WHOLE_PAIRS = frozenset(
    """ad ah am an as at aw be by do eh et go ha he hi hm id if in is it ma me mm my no of oh ok on
    or ox pa pc pm so to tv ui up us ux we ye yo ai ar bc cd cm db dj dm dr eu gb gp hr ip
    kg km lp mb mg ml ms mr os pr qa qr sd sms uk vr vs xl""".split()
)
_BROKEN_STARTS = frozenset("wha tha thi whe wou cou sho bec".split())
_ARTICLES = frozenset("a an the".split())
_FUNCTION_WORDS = frozenset(
    """at of in on for to with by from and or but is are was were be will would can could should
    the a an""".split()
)


def _stray(word: str, first: bool, prev: str, nxt: str) -> bool:
    """Whether ``word`` (between ``prev`` and ``nxt``, lowercased) was broken off as it was said."""
    if len(word) == 1:
        return (
            (
                word in "bcdefghjklmnopqrstuvwxyz"
                or first
                and bool(_CUT_CAPITAL.match(f"{word} {nxt}"))
            )
            and prev not in _LETTER_NAMES_AFTER
            and nxt.rstrip(",;:.") not in _LETTER_NAMES_BEFORE
            and not prev[-1:].isdigit()
        )
    if not word.isalpha() or not word.islower() or prev[-1:].isdigit():
        return False
    return (len(word) == 2 and word not in _WHOLE_PAIRS) or word in _BROKEN_STARTS


# what closes a sentence after its last word: marks of sound, fillers, punctuation
_CLOSING_NOISE = re.compile(
    r"(?:\s*(?:\{(?:vocalsound|nonvocalsound|gap|comment)\}|[.,;:!?]|\b(?:uh|um|mm|erm)\b))+\s*$",
    re.IGNORECASE,
)
# ("... menu-based thing, or {disfmarker}" said its need, and broke off adding another)
_BREAKS_AFTER = (_FUNCTION_WORDS - {"and", "or", "but"}) | frozenset(
    "my our your their this that these those some any".split()
)


def breaks_off(sentence: str) -> bool:
    """Whether the speaker broke off before the sentence said what it is about: it stops on a
    word cut off ("Change colour of t") or on a function word before a break ("it seems like a
    feasible thing to implement for a {disfmarker}"); what it says is no need of its own."""
    text = _CLOSING_NOISE.sub("", sentence)
    cut = text.endswith("{disfmarker}")
    words = _CLOSING_NOISE.sub("", text.removesuffix("{disfmarker}")).split()
    if not words:
        return False
    last, prev = words[-1], (words[-2].lower() if len(words) > 1 else "")
    if cut and last.lower() in _BREAKS_AFTER:
        return True
    before = words[-3].lower() if len(words) > 2 else ""
    if (
        prev == "to"
        and before in ("need", "needs", "want", "wants", "have", "has", "going")
        and last.isalpha()
        and last.islower()
        and not is_verb(last)
    ):
        return True  # "still we need to cha {vocalsound}": the verb itself was cut off
    if not _CLOSED.search(sentence) and _cut_off(last.lower()):
        return True  # "The length is gonna be difficu": the last word itself was cut off
    return len(words) > 1 and _stray(last, False, prev, "")


# a sentence closed by its speaker: a full stop, a question or an exclamation mark last
_CLOSED = re.compile(r"[.!?]\s*(?:\{\w+\}\s*)*$")


@lru_cache(maxsize=1)
def _whole_words() -> tuple[str, ...]:
    """The packaged tokenizer's whole words (``minilm.vocabulary_words``), sorted, so that the
    words a cut one starts are found by bisection."""
    from shared.embeddings.minilm import vocabulary_words

    return tuple(sorted(vocabulary_words()))


def _cut_off(word: str) -> bool:
    """Whether ``word`` is no word but the start of one ("difficu", "explanat", "requiremen"):
    a word the speaker broke off. A word the vocabulary lacks that starts no longer word stays
    ("recogniser", "spongy"), and so does a verb ("vibrate")."""
    if len(word) < 3 or not word.isalpha() or is_verb(word):
        return False
    words = _whole_words()
    at = bisect.bisect_left(words, word)
    if at < len(words) and words[at] == word:
        return False
    return at < len(words) and words[at].startswith(word)


def _drop_stray_letters(text: str) -> str:
    words = text.split(" ")
    kept: list[str] = []
    for k, w in enumerate(words):
        letter = w.rstrip(",;:")
        prev = kept[-1].lower().strip(",;:") if kept else ""
        nxt = words[k + 1].lower() if k + 1 < len(words) else ""
        if _stray(letter, k == 0, prev, nxt):
            if w != letter and kept:  # "colour of t, and" keeps its comma
                kept[-1] += w[len(letter) :]
            if prev in _ARTICLES and nxt in _FUNCTION_WORDS:
                kept.pop()  # "sell the t at twenty five Euros": the article went with it
            continue
        kept.append(w)
    return " ".join(kept)


# a word of talk that closes the sentence after a comma ("Menu, alright.", "..., right?")
# examples said on their own, marked as such ("Allergies, inhalers, that kind of thing.")
_KIND_OF_THING = re.compile(
    r"^(?P<items>[^\W\d_][\w'-]*(?:\s+[\w'-]+){0,2}(?:,\s*(?:and\s+|or\s+)?[\w'-]+"
    r"(?:\s+[\w'-]+){0,2})+),?\s+(?:that kind of thing|that sort of thing|things like that"
    r"|stuff like that)\W*$",
    re.IGNORECASE,
)


_KIND_OF_THING_LAST = re.compile(
    r",?\s+(?:and\s+)?(?:that kind of thing|that sort of thing|things like that|stuff like that)"
    r"(?=\W*$)",
    re.IGNORECASE,
)


def names_examples(text: str) -> bool:
    """Whether a sentence only lists examples of what was just said ("Allergies, inhalers, that
    kind of thing."): a detail of that need, however little it reads like one on its own."""
    return bool(_KIND_OF_THING.match(clean(text)))


# "By text, ideally, because ...", "Recurring bookings, by the way.", "meet WCAG anyway, it's
# a legal requirement": said of the need, no part of it (the clause break stays)
_TALK_ASIDE = re.compile(
    r"(?:,\s*|\s+)(?:ideally|preferably|by the way|anyway|though)(?=\s*(?:[,.;:!?]|$))",
    re.IGNORECASE,
)
_TAIL_TALK = re.compile(
    r",\s*(?:alright|all right|right|okay|ok|yeah|yes|yep|then|or something|or whatever"
    r"|and stuff|and so on|anyway|i suppose|isn't it|doesn't it|no|honestly|frankly"
    r"|to be honest|i think|i guess|i'd say|say|nice|great|lovely|perfect|cool|sure"
    r"|for sure|please|got it|got that|noted|understood|makes sense)\s*([.!?]*)\s*$",
    re.IGNORECASE,
)

# what the speaker will do about what was just said, closing the sentence ("..., I'll put a
# number on that later.", "..., I'll check.", "..., let me write that down."): the meeting's
# work, no part of the need
_TAIL_PLAN = re.compile(
    r",\s*(?:(?:and|but|so)\s+)?(?:i'll|i will|we'll|we will|let me|let's)\s+(?:just\s+)?"
    r"(?:put a (?:number|figure|date) on|write|note|jot|check|confirm|ask about|look into"
    r"|sort|figure|come back to|get back to|follow up on|chase|add)"
    r"(?:\s+(?:that|this|it|them|those|something(?:\s+(?:proper|properly|up))?))?"
    r"(?:\s+(?:down|out|up|later|afterwards|after the meeting|offline|to the list|on the list"
    r"|in the notes|with (?:the\s+)?\w+))*\s*([.!?]*)\s*$",
    re.IGNORECASE,
)


def without_plan(text: str) -> str:
    """``text`` without what the speaker will do about it, said last ("Ha, okay, fast to open
    ..., I'll put a number on that later.")."""
    return _TAIL_PLAN.sub(r"\1", text)


# a vague "or something" closing the sentence ("A little icon or something.", "we don't want
# BBC or CNN or something else", "the channels and stuff like that"): it names nothing more
_TAIL_VAGUE = re.compile(
    r"(?:,\s*|\s+)(?:or|and)\s+(?:something|anything|whatever|stuff|things|so on)"
    r"(?:\s+(?:else|like that|that|similar))?\s*([.!?]*)\s*$",
    re.IGNORECASE,
)

# a remark on the need closing the sentence ("... control on volume and that makes sense of
# course", "..., which would be nice"): what the speaker thinks of it, not part of it
_TAIL_REMARK = re.compile(
    r"(?:,\s*|\s+)(?:and|which)\s+(?:that|this|it)?\s*(?:'s|is|makes|would be|'d be|would make"
    r"|will be|sounds)\s+(?:(?:really|quite|very|a lot of|so much|total|perfect)\s+)?"
    r"(?:sense|fine|good|great|nice|okay|ok|better|cool|brilliant|lovely|useful|helpful)"
    r"(?:\s+of course|\s+i think|\s+actually|\s+too)?\s*([.!?]*)\s*$",
    re.IGNORECASE,
)
# who asks for the need, said after it ("..., the council requires it", "..., legal insists on
# that"): why it is needed, not part of it
_TAIL_WHO_ASKS = re.compile(
    r",\s*(?:the \w+|our \w+|they|legal|management|compliance|everyone|people)\s+"
    r"(?:(?:really|also|always|all)\s+)?(?:requires?|needs?|wants?|asks? for|expects?|insists? on"
    r"|demands?|mandates?|asked for)\s+(?:it|that|this|them)\s*([.!?]*)\s*$"
    # "..., nobody wants another password": what people do not want, the reason for it
    r"|,\s*(?:nobody|no one|no-one)\s+(?:wants?|needs?|likes?)\s+[^,;]{3,40}?\s*([.!?]*)\s*$"
    # "..., Marta was clear that showing something as available when it isn't is the worst thing
    # we could do": who said it (a name, "they", "we") and why, after the need
    r"|,\s*[a-z]{2,}\s+(?:was|were)\s+(?:very\s+|really\s+)?(?:clear|adamant|firm)\s+(?:that|about)"
    r"\b[^;]*?([.!?]*)\s*$",
    re.IGNORECASE,
)

# what the speaker asks of someone in the meeting by name, closing the sentence ("..., and I'll
# need the actual policy wording, Marcus.", "..., can you send me the rates, Priya?"): the
# meeting's work, no part of the need
_TAIL_ASKED_OF = re.compile(
    r",\s*(?:(?:and|but|so|then)\s+)?(?:(?:i'll|i will|i'd|i would)\s+(?:also\s+)?need"
    r"|(?:can|could|would|will)\s+you)\s+[^,;]{2,60}?,\s*"
    r"(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Today|Tomorrow)\b)"
    r"(?-i:[A-Z][a-z]+)\s*([.!?]*)\s*$",
    re.IGNORECASE,
)

# "I think that'd cut no-shows" is "I think it would cut no-shows": the hedge goes, a subject and
# its modal stay
# "it's got to be simple", "we've got to have it": has to, have to
_GOT_TO = re.compile(
    r"\b(\w+)(?:(['\u2019]s|\s+has)|['\u2019]ve|\s+have)\s+got\s+to\b", re.IGNORECASE
)
_THAT_WOULD = re.compile(r"\b(?:that|this)['\u2019]d\b(?!\s+been\b)", re.I)

_PASSIVE_S = re.compile(
    r"\b((?!(?:it|he|she|that|what|there|here|who|let)\b)\w+)'s\s+(?=(\w+)(\W+\w+)?)", re.I
)
# what follows "'s" when it is "is", not a possessive: a degree or a figure ("our budget's
# twelve point five", "the remote control's very easy to use")
_IS_NEXT = frozenset(
    """very quite really too so pretty fairly rather only just fully completely always still not
    never mostly basically definitely""".split()
)


def _contracted(m: re.Match[str]) -> str:
    """What "X's" is before the word after it: "X has" before got / been, "X is" before a
    participle, a degree, a figure or a word of what it is like said last ("the whole shape's
    curvy"); the possessive as said otherwise ("the doctor's list", "the remote's red button")."""
    said, after, then = m.group(1), m.group(2).lower(), (m.group(3) or "").strip().lower()
    if after in ("got", "been"):
        return f"{said} has "
    if is_participle(after) or after in _IS_NEXT or after in NUMBER_WORDS:
        return f"{said} is "
    if is_quality_word(after) and (not then or not then[0].isalpha() or then in _CLAUSE_GOES_ON):
        return f"{said} is "
    return m.group(0)


# words after a quality word that end the thing it says ("curvy, so ...", "red and yellow")
_CLAUSE_GOES_ON = frozenset("and or but so to because as enough".split())


# what the product sends people ("Send ...": ``_MESSAGE``, ``_GOES_OUT``)
_MESSAGE_NOUN = (
    r"reminders?|notifications?|alerts?|emails?|texts?|text messages?|messages?|digests?|sms"
)
# a thing the product sends, said to go out ("reminders go out a week before the deadline", "the
# invoice should go out on the first of the month")
_GOES_OUT = re.compile(
    r"\b(?P<np>(?:(?:an?|the|some|all|every|our|their)\s+)?(?:[a-z-]+\s+){0,2}?"
    rf"(?:{_MESSAGE_NOUN}|e-mails?|invoices?|newsletters?|reports?|statements?|confirmations?"
    r"|receipts?|surveys?))\s+"
    r"(?:(?P<modal>should|must|will|would|can|could|has to|have to|needs? to)\s+)?"
    r"(?:also\s+)?(?:go|goes)\s+out\b",
    re.IGNORECASE,
)


# a job the product runs, said to run ("the export runs nightly", "the sync should run every
# hour"): run by the product ("Run the export nightly", not "Run nightly")
_RUNS = re.compile(
    r"\b(?P<np>(?:(?:the|an?|our|each|every|this|that)\s+)?(?:[a-z-]+\s+){0,2}?"
    r"(?:exports?|imports?|syncs?|backups?|batch(?:es)?|jobs?|reconciliations?|scans?))\s+"
    r"(?:(?P<modal>should|must|will|would|can|could|has to|have to|needs? to)\s+)?"
    r"(?:also\s+)?(?:run|runs)\b",
    re.IGNORECASE,
)


# verbs whose past participle is their base form, said in the passive ("the export is run")
_SAME_AS_PARTICIPLE = frozenset({"run", "reset", "set"})


# people the product tells something, said as getting it ("late payers get a reminder after
# seven days"): it is sent to them ("Send late payers a reminder", not "Make late payers get")
_GETS_A_MESSAGE = re.compile(
    r"^(?P<who>(?:the\s+|all\s+|our\s+)?[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)\s+(?:get|gets|receive"
    rf"|receives)\s+(?P<message>(?:an?|the|one)\s+(?:[a-z-]+\s+)?(?:{_MESSAGE_NOUN}))\b(?P<rest>.*)$",
    re.IGNORECASE,
)


# people named by a pronoun ("we get an email", "they receive a text"): no one to send it to
_PRONOUN_WHO = re.compile(r"^(?:i|we|you|they|he|she|it|one|people|users?)$", re.IGNORECASE)


# what each one of a kind is given ("each household gets sixty visitor hours a month")
_EACH_GETS = re.compile(
    r"^(?P<who>(?:each|every)\s+[a-z][\w'-]*"
    # "anyone on free school meals gets the trip free", "staff over sixty get an extra day":
    # whom a rule is on, picked out by what is said after them
    rf"|(?:anyone|everyone|anybody|everybody|any\s+[a-z]+|all\s+[a-z]+|{PERSONA_FORMS})\s+"
    r"(?:on|over|under|aged|with|without|in|from|who\s+(?:is|are|has|have))\s+[^,;]{1,40}?)"
    r"\s+(?:gets?|receives?)\s+(?P<what>(?!it\b|them\b)\S.*)$",
    re.IGNORECASE,
)
# a subject said with what picks it out between commas ("Dangerous ones, deeper than forty
# millimetres, have to be fixed within twenty-four hours"): the need is the subject's
_SUBJECT_ASIDE = re.compile(
    r"^(?P<subject>[A-Za-z][\w'-]*(?:\s+[\w'-]+){0,3}),\s*(?:\w+er\s+than|more\s+than|less\s+than"
    r"|over|under|above|below|with|without|older\s+than|younger\s+than)\s+[^,]{1,40},\s+"
    r"(?P<rest>(?:have to|has to|must|should|need to|needs to|will have to)\s+.+)$",
    re.IGNORECASE,
)
# "anyone on free school meals gets the trip free, and the parent shouldn't see a payment
# screen at all": the rule is the need, what follows it a criterion
_RULE_THEN_MORE = re.compile(r"^(?P<rule>[^,;]+?),\s+and\s+(?P<more>.+)$", re.IGNORECASE)


def _done_by_it(found: re.Match[str], participle: str) -> str:
    """What ``_GOES_OUT`` or ``_RUNS`` found, said in the passive: "reminders are sent", "the
    invoice should be sent", "the export is run"."""
    np, modal = found.group("np"), found.group("modal")
    if modal:
        return f"{np} {modal} be {participle}"
    return f"{np} {'are' if np.lower().endswith('s') else 'is'} {participle}"


# examples listed at the end of a sentence (", like received, scheduled, done.")
_EXAMPLES_LAST = re.compile(
    r",\s*like\s+(?P<items>(?:(?:and|or)\s+)?[^\W\d_][\w'-]*(?:\s+[\w'-]+){0,3}"
    r"(?:,\s*(?:and\s+|or\s+)?[\w'-]+(?:\s+[\w'-]+){0,3})+)\s*(?P<end>[.!?]?)\s*$",
    re.I,
)


# an example (or two) said last (", like a council tax bill or a tenancy agreement.")
_EXAMPLE_LAST = re.compile(
    r",\s*like\s+(?P<items>(?:a|an|the|some)\s+[^\W\d_][^,;.!?]{0,60}?(?<!ed))\s*(?P<end>[.!?]?)\s*$",
    re.I,
)
# a name given as the example, said last (", like Bobby.")
_NAME_LAST = re.compile(
    r",\s*(?i:like|say|such as)\s+(?P<items>[A-Z][a-z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s*(?P<end>[.!?]?)\s*$"
)
# an example said in passing, between commas (", like a bar,")
_EXAMPLE_ASIDE = re.compile(r",\s*like\s+((?:a|an|the|some)\s+[\w-]+(?:\s+[\w-]+)?)\s*,", re.I)
# "..., like a brake light is out, ...": an example said as a clause of its own, up to six
# words, goes whole (not "such as a brake light is out")
_EXAMPLE_CLAUSE = re.compile(
    r",\s*like\s+(?:a|an|the|some)\s+[\w-]+(?:\s+[\w'-]+){0,4}?\s+(?:is|are|was|were|took"
    r"|takes|breaks|fails|goes)\b[^,;]{0,30},",
    re.I,
)


# a proviso said as the answer ("Not as long as ...", "As long as ..."), and a main clause after
# it that makes it a condition ("as long as it's cheap, we'll take it")
_PROVIDED_FIRST = re.compile(r"^(?:(?:not|no|fine|okay|sure|yes)[\s,]+)?as long as\s+", re.I)
_MAIN_AFTER = re.compile(
    r",\s*(?!so\b)(?:then\s+)?(?:we|you|they|it|i|people|that)(?:'ll|'d|'s)?\s+\w+", re.I
)


_LIKE_AFTER_A_QUALITY = re.compile(
    r"\b(?P<quality>[a-z-]+)\s+(?P<like>(?:just\s+)?like\s+(?:the|a|an)\s+[a-z][\w\s'-]*?)"
    r"(?P<end>\s*[.!?]*)\s*$",
    re.IGNORECASE,
)


# a condition, what someone then does, and what someone gets ("when an order is ready, the cook
# taps it and the customer gets a text")
_DOES_THEN_GETS = re.compile(
    r"^(?P<when>when|whenever|once|if|after|as soon as)\s+(?P<case>[^,;]+),\s+"
    r"(?P<act>(?:the|a|an|their|our)\s+[a-z]+\s+[a-z]+s\s+(?:it|them|(?:the|their|an?)\s+[a-z]+))"
    r"\s+and\s+(?P<result>(?:the|their|our|every|each)\s+[a-z]+\s+(?:gets?|receives?)\s+\S.*)$",
    re.IGNORECASE,
)


def body(sentence: str, asides: bool = False) -> str:
    """The sentence cleaned for writing: no markers, fillers, labels or leading discourse words;
    asides in parentheses dropped (a title) or kept as a clause (a criterion: "(max 2 voice
    profiles per remote)" is a detail)."""
    text = named_those(_THAT_WOULD.sub("it would", clean(drop_abandoned(sentence))))
    text = _GOT_TO.sub(lambda m: f"{m.group(1)} {'has' if m.group(2) else 'have'} to", text)
    text = re.sub(r"^[-*+•]\s+", "", text)
    if text.startswith("(") and ")" not in text:  # "(Aisha: payroll can't handle more.": the
        text = text[1:].lstrip()  # rest of an aside cut from the sentence before
    label = _LABEL_PREFIX.match(text)
    said = text[label.end() :] if label else text
    if label and label.end() and _LABEL_WITH_ITS_WORDS.match(said):
        # "Search: by title, author, ISBN and subject": the label is what is done by them
        text = f"{text[: label.end()].rstrip().rstrip(':')} {said}"
    else:
        text = said
    # "see the status, like received, scheduled, done": examples of what was said, listed last,
    # are a detail (a criterion keeps them), not the title's words
    examples = _EXAMPLES_LAST.search(text)
    examples = examples or _EXAMPLE_LAST.search(text) or _NAME_LAST.search(text)
    if examples:
        listed = f", such as {examples.group('items')}" if asides else ""
        text = f"{text[: examples.start()]}{listed}{examples.group('end')}"
    # "keep the whole remote control small just like the physical size": what "like" brings in
    # after a quality said last says how it is meant, no part of the need
    liked = _LIKE_AFTER_A_QUALITY.search(text)
    if liked and is_quality_word(liked.group("quality").lower()):
        text = f"{text[: liked.start('like')].rstrip()}{liked.group('end')}"
    # "show progress, like a bar, and ...": an example said in passing
    text = _EXAMPLE_CLAUSE.sub(",", text)
    text = _EXAMPLE_ASIDE.sub(r", such as \1," if asides else ",", text)
    # "a checklist, like five steps, that ...": about five steps, still an aside of its own
    text = re.sub(rf",\s*like\s+(?=(?:\d|{_NUMBER_WORD}\b))", ", ", text, flags=re.I)
    text = re.sub(r",\s*like\s+", " ", text)
    if asides:
        text = re.sub(r"\s*\(([^()]*)\)", r", \1,", text)
        text = re.sub(r",\s*([,.;:])", r"\1", text)
    else:
        text = re.sub(r"\s*\([^()]*\)", "", text)
    text = _drop_stray_letters(text)
    text = _LEAD.sub("", clean_restarts(text))  # "Yeah, or the or the kinetic": "the kinetic"
    provided = _PROVIDED_FIRST.match(text)
    if provided and not _MAIN_AFTER.search(text, provided.end()):
        # "Not as long as the system records that it was a delegate, so I see ...": the answer's
        # proviso is the need (no main clause follows it)
        text = text[provided.end() :]
    kinds = _KIND_OF_THING.match(text)
    if kinds and asides:  # "Allergies, inhalers, that kind of thing.": examples of the need
        return f"Such as {_lower_first(kinds.group('items'))}."
    # "..., like recurring, every Tuesday, that kind of thing.": the examples end there
    text = _KIND_OF_THING_LAST.sub("", text)
    text = _HEDGES.sub("", _TALK_ASIDE.sub("", text))
    text = _TAIL_TALK.sub("", text)
    text = _TAIL_PLAN.sub(r"\1", text)
    text = _TAIL_VAGUE.sub(r"\1", text)
    text = _TAIL_REMARK.sub(r"\1", text)
    text = _TAIL_WHO_ASKS.sub(lambda m: m.group(1) or m.group(2) or "", text)
    text = _TAIL_ASKED_OF.sub(r"\1", text)
    text = clean_restarts(text)  # after the hedges: "it seems like I dunno it seems" repeats
    # "the booking's released" is "the booking is released" (a passive reads as a capability);
    # "someone's got a few problems" has them
    text = _PASSIVE_S.sub(_contracted, text)
    if not asides:  # "reminders go out a week before": sent (a criterion keeps their words)
        text = _GOES_OUT.sub(lambda m: _done_by_it(m, "sent"), text)
        text = _RUNS.sub(lambda m: _done_by_it(m, "run"), text)
    text = re.sub(r"\s*,\s*([.!?;:])", r"\1", text)  # a comma left before the end: ", ."
    # "eye tests and, um, I think the wellbeing allowance": the comma of a filler cut out
    text = re.sub(r"\b(and|or)\s*,\s+(?=[a-z])", r"\1 ", text)
    # "when an order is ready, the cook taps it and the customer gets a text": what someone does
    # is part of when; what the product then does is the need
    then_gets = _DOES_THEN_GETS.match(text)
    if then_gets:
        text = (
            f"{then_gets.group('when')} {then_gets.group('case')} and {then_gets.group('act')}, "
            f"{then_gets.group('result')}"
        )
    announced = _ANNOUNCED.search(text)
    if announced and len(content_words(announced.group("item"))) >= 2:
        # "let us include two nice features into this device, first, power on and off can be
        # made fully automatic": the first of them is what is said
        text = announced.group("item")
    return re.sub(r"\s+", " ", text).strip(" ,;:-")


# "each doctor decides what share of their slots can be booked online": a verb and the question
# it settles; the modal is the question's, the need is deciding it
_SETTLES_QUESTION = re.compile(
    r"\b(?P<verb>[a-z]+)\s+(?:what|which|how many|how much|how long|how often|whether|who)\s+\S",
    re.IGNORECASE,
)


def _asks_within(before_modal: str) -> bool:
    """Whether the words before a modal hold a verb of the statement's own and the question its
    modal is said in ("each doctor decides what share ... can")."""
    found = _SETTLES_QUESTION.search(before_modal)
    if not found:
        return False
    verb = found.group("verb").lower()
    if _is_user(verb):  # "the staff who approve it can see": people, and which of them
        return False
    return verb not in _NOT_SETTLING and is_verb(verb) and not is_participle(verb)


# talk about a question, not settling it ("I don't know what", "see who", "ask which")
_NOT_SETTLING = frozenset(
    """know knows knew wonder wondered ask asked asks see sees saw tell told says said think
    thinks is are was were be been do does did""".split()
)


# "a full history, who created it, every change": the object of a relative clause said last is
# no dangling word ("who created" would leave "it" to the details after it)
_RELATIVE_OBJECT = re.compile(
    r"(?:^|,\s*)(?:who|which|that)\s+(?P<verb>[a-z]+)\s+(?:it|them)$", re.I
)


def _trim_clause(text: str) -> str:
    """``_trim``, but a relative clause keeps its object pronoun ("..., who created it")."""
    bare = re.sub(r"\s+", " ", text).strip(" ,;:.!?-/\"'")
    found = _RELATIVE_OBJECT.search(bare)
    return bare if found and is_verb(found.group("verb")) else _trim(text)


# some of the people named, not a role ("some residents", "a lot of our members")
_SOME_OF_THEM = re.compile(
    r"\b(?:some|many|most|a few|a lot of|lots of|half(?: of)?|plenty of)(?:\s+(?:the|our|your|"
    r"their|of))*$",
    re.IGNORECASE,
)


def _complains(before: str, neg: str) -> bool:
    """Whether a "can't" or "won't" is a complaint or a forecast ("I can't see what my team
    spent", "our patients won't download an app"), not a rule: said of the speaker or of people,
    or a "won't" of anyone; "receptionists can't cancel a paid booking" is a rule on a role."""
    words = before.split() or [""]
    last = words[-1]
    if not _is_user(last):
        return False
    if _SOME_OF_THEM.search(" ".join(words[-4:-1])):
        return True  # "some residents can't get their bin to the kerb": how things are
    rule = neg.lower().startswith("can") and bool(PERSONA.fullmatch(last))
    return not (rule and last.lower() not in ("user", "users", "customer", "customers"))


_REASON_OPENS = re.compile(r"(?:because|'cause|cause|since)\b", re.IGNORECASE)


def _reason_for_imperative(clauses: list[str], k: int) -> bool:
    """Whether clause ``k`` gives the reason ("because ...") for the imperative said in the
    clause before it ("make that date a setting")."""
    if not k or not _REASON_OPENS.match(clauses[k].strip()):
        return False
    before = _LEAD.sub("", clauses[k - 1].strip()).split()
    return bool(before) and is_base_verb(before[0].lower())


# a verb and a pronoun, nothing more ("approve it", "check them"): said of a thing named before
_ONLY_ON_IT = re.compile(r"^(?:to\s+)?[a-z]+\s+(?:it|them|that|this)(?:,?\s+i think)?\W*$", re.I)


def _within_purpose(clause: str, modal: re.Match[str]) -> bool:
    """Whether the modal is said inside a purpose clause, past its own verb ("so they can say if
    they want a swap": the want is theirs, the reason; "so we have to build it" is a need)."""
    purpose = _PURPOSE.match(clause)
    if purpose is None or modal.start() < purpose.start("ends"):
        return False
    return len(clause[purpose.start("ends") : modal.start()].split()) > 2


# what only some people do, said without a modal ("only the staff who approve it see the
# reason"): who (as ``_only_may``) and what they may do
_ONLY_THEY = re.compile(r"^(?:(?:yeah|yes|so|and|okay|ok|right)\W+)*only\s+(?P<said>.+)$", re.I)
_MAY_DO = re.compile(
    r"\b(?P<verb>see|sees|get|gets|view|views|edit|edits|access|accesses|know|knows|change"
    r"|changes|read|reads|receive|receives|open|opens|delete|deletes)\b",
    re.IGNORECASE,
)


def _only_may(text: str) -> str | None:
    """ "only X can V ..." for a statement that says only who does something, without a modal
    ("Only managers see the salary."), or None."""
    only = _ONLY_THEY.match(text.strip())
    if only is None or _MODAL.search(only.group("said")) or _WEAK_MODAL.search(only.group("said")):
        return None
    said = only.group("said")
    verbs = list(_MAY_DO.finditer(said))
    if not verbs:
        return None
    verb = verbs[-1]  # "the staff who approve it see the reason": the last one is theirs
    who = said[: verb.start()].strip()
    if not _people(who):
        return None
    base = base_form(verb.group("verb").lower())
    return f"only {who} can {base}{said[verb.end() :]}"


def _people(who: str) -> bool:
    """Whether ``who`` names people, by its first words ("managers", "the waste services staff
    who approve it": "staff")."""
    head = re.split(r"\s+(?:who|that|which)\b", who)[0].split()
    return bool(head) and (_is_user(who) or _is_user(head[-1]))


# what people may do, said as a permission ("Staff are allowed to book for others."): "can"
_ALLOWED_TO = re.compile(
    r"\b(?:is|are)\s+(?P<not>not\s+)?(?:also\s+)?(?:allowed|permitted)\s+to\b", re.I
)


def _parse(text: str) -> _Requirement:
    only = _only_may(text)
    if only is not None:  # "only the staff who approve it see the reason"
        text = only
    allowed = _ALLOWED_TO.search(text)
    if allowed and _is_user(_LEAD.sub("", text[: allowed.start()]).strip(" ,")):
        can = "cannot" if allowed.group("not") else "can"  # "staff can book ..."
        text = f"{text[: allowed.start()]}{can}{text[allowed.end() :]}"
    clauses = [c for c in _CLAUSE_BREAK.split(text) if c and c.strip()]
    found = [
        (k, m)
        for k, c in enumerate(clauses)
        if (m := _MODAL.search(c))
        and not _NO_OBLIGATION.search(c[: m.start()])
        and not _asks_within(c[: m.start()])
        and not _DENIED.search(c[: m.start()])  # "I don't think you'd need to know ..."
        and not (k and _within_purpose(c, m))  # "..., so they can say if they want a swap"
    ]  # "I don't have to chase people" states no need (``_dropped`` reads "we don't need X")
    if not found:  # "the user can set ...": a plain "can" only when nothing stronger is said
        found = [
            (k, m)
            for k, c in enumerate(clauses)
            if (m := _WEAK_MODAL.search(c))
            and not _asks_within(c[: m.start()])
            and not (k and _PURPOSE.match(c))
            and not (m.group("neg") and _complains(c[: m.start()], m.group("neg")))
        ]  # "..., so the remote can be used in the dark" is the reason, not the need; "I can't
        # see what my team spent", "our patients won't download an app": a complaint or a
        # forecast, no rule that they cannot
    # "Juniors can only book before six on weekdays, and a parent has to approve it": the need
    # said first, with its own verb and thing, not the later clause on "it"
    if (
        found
        and found[0][0] > 0
        and _ONLY_ON_IT.match(_trim(clauses[found[0][0]][found[0][1].end() :]))
    ):
        earlier = [
            (k, m)
            for k, c in enumerate(clauses[: found[0][0]])
            if (m := _WEAK_MODAL.search(c))
            and not m.group("neg")
            and not _asks_within(c[: m.start()])
        ]
        found = earlier[:1] + found if earlier else found
    # "just make that date a setting, because they'll move it again": the reason for an
    # imperative is no need of its own
    found = [(k, m) for k, m in found if not _reason_for_imperative(clauses, k)]
    for k, m in found:
        clause = clauses[k]
        rest = _trim(clause[m.end() :])
        more = k + 1
        while more < len(clauses) and (
            len(rest.split()) < 4
            or not content_words(rest)
            or _SOMETHING_MORE.match(clauses[more])
            or _BOUND_AFTER.match(clauses[more])  # "renew a book, up to three times"
        ):
            if _NEW_CLAUSE.match(clauses[more]) or _PURPOSE.match(clauses[more]):
                break  # "book, move and cancel" continues; "it is late" starts anew, and so
                # does "so the remote can be used in the dark" (the purpose, not the need)
            if _reads_whole(rest) and _list_at(clauses, more):
                break  # "flag possible duplicates, same amount, same date": not one of the list
            rest = _trim_clause(f"{rest}, {clauses[more]}")
            clause = f"{clause}, {clauses[more]}"
            more += 1
        rest = re.sub(r"^to\s+", "", rest)
        if not rest:
            continue
        groups = m.groupdict()
        kind = "np" if (groups.get("np") or groups.get("np1")) else "vp"
        if groups.get("neg") and not re.match(r"(?:not|never)\b", rest, re.IGNORECASE):
            rest = f"not {rest}"
        subject = _LEAD.sub("", clause[: m.start()]).strip(" ,")
        said_of = _LEAD.sub("", ", ".join(clauses[:k])).strip(" ,") if k and not subject else ""
        if said_of and _PEOPLE_QUALIFIED.match(said_of):
            # "anyone doing the lunch club, with the children, or home deliveries, has to have
            # ...": the people the rule is said of, over the commas of their description
            subject, clause = said_of, f"{said_of}, {clause}"
        only_they = _ONLY_THEY.match(subject)  # "only the staff who approve it": all of it
        tail = (
            None
            if only_they and _people(only_they.group("said"))
            else _SUBJECT_TAIL.search(subject)
        )
        embedded = bool(re.match(r"(?:is|are|was|were)\b", rest, re.IGNORECASE)) or (
            # not "needs at least one photo": a limit on the thing needed
            kind == "np"
            and bool(
                re.match(r"(?:for|to|in|on|at(?!\s+(?:least|most)\b)|with|by|from)\b", rest, re.I)
            )
        )
        if tail:
            before = subject[: tail.start()].split()
            embedded = embedded or bool(before and before[-1].lower() in _SUBORDINATORS)
            subject = tail.group(1)
        elif subject.split() and subject.split()[-1].lower() in _SUBORDINATORS:
            # "functions that may be used by the user": a relative clause; "every time it
            # should ...", not "the remaining time should be shown" (a thing)
            embedded = not _A_TIME_NAMED.search(subject)
        aim = re.search(r"\baim(?:ing|s)? (for|at)$", groups.get("np1") or "", re.IGNORECASE)
        if aim:  # "we're aiming for a profit of fifty million": the aim is the need
            kind, rest = "vp", f"aim {aim.group(1).lower()} {rest}"
        elif groups.get("np1"):
            if re.search(r"use$", groups["np1"], re.IGNORECASE):
                kind, rest = "vp", f"use {rest}"
        cannot = bool(groups.get("neg")) and m.re is _WEAK_MODAL
        wanted = bool(_WANTS.fullmatch(m.group(0)))
        return _Requirement(_trim_clause(clause), subject, kind, rest, embedded, cannot, wanted)
    clause = _continued(clauses) or next((c for c in clauses if len(c.split()) >= 3), text)
    first = clauses[0].strip() if clauses else ""
    named = [w.lower() for w in first.split()]
    if (
        clause != first
        and len(content_words(first)) >= 2
        and len(named) <= 4
        and names_a_thing(named)
        and _HOW_IT_IS_HAD.match(clause)
    ):
        # "Same-day slots, online or phone or a split.": the thing named first is what is
        # asked for, the words after it say how (not "Provide online or phone or a split")
        clause = first
    at = clauses.index(clause) if clause in clauses else 0
    if at and _ONLY_A_CONDITION.match(clause) and content_words(clauses[at - 1]):
        # "No refund, unless it's medical.": the condition of the short clause before it
        clause = f"{clauses[at - 1]} {clause}"
    return _Requirement(_trim(clause), "", "", _trim(clause))


# how or where a thing named before it is had ("online or by phone", "by text only")
_HOW_IT_IS_HAD = re.compile(
    r"^\s*(?:online|offline|by|via|through|either|both|only|in person|on (?:the )?(?:phone|web"
    r"|app|site))\b",
    re.IGNORECASE,
)
# a clause that is only the condition of the one before ("unless it's medical")
_ONLY_A_CONDITION = re.compile(r"^\s*(?:unless|if|when|whenever|until|once)\b", re.IGNORECASE)


_CONTINUES = re.compile(r"^\s*(?:to|for|with|on|in|at|from|by|of)\s+\w", re.IGNORECASE)


def _continued(clauses: list[str]) -> str:
    """A short first clause with the prepositional phrases said after it, when that makes the
    thing it names ("automatic reminders, to each person, before their shift": "automatic
    reminders to each person"); "" when the first clause does not go on so."""
    if not clauses or len(clauses[0].split()) >= 3 or not content_words(clauses[0]):
        return ""
    joined = clauses[0]
    for more in clauses[1:]:
        if not _CONTINUES.match(more):
            break
        joined = f"{joined} {more.strip()}"
        if len(joined.split()) >= 3:
            return joined
    return ""


# a word a list item of a clause may not open with: it continues the clause ("except ...",
# "even on a slow phone", "for the approver")
_NOT_AN_ITEM = re.compile(
    r"^(?:except|even|like|for|with|without|to|in|on|at|by|from|of|so|but|because|'cause|if"
    r"|when|which|who|that|where|not|no|or|then|also|just|only|especially|including|such)\b",
    re.IGNORECASE,
)
_MAX_ITEM_WORDS = 4


def _reads_whole(phrase: str) -> bool:
    """Whether a verb phrase already names what it acts on ("flag possible duplicates"), so a list
    said after it details it and is no part of the title."""
    return len(phrase.split()) >= MIN_TITLE_WORDS and len(content_words(phrase)) >= 2


def _list_at(clauses: list[str], at: int) -> bool:
    """Whether the clauses from ``at`` on open a list of at least two short items ("same amount,
    same date, same merchant"; "power, volume and mute"): items of a few words, none a clause of
    its own, that open with the same word or whose last one joins with "and" / "or"."""
    items: list[str] = []
    for clause in clauses[at:]:
        words = clause.strip(" .!?").split()
        if not words or len(words) > _MAX_ITEM_WORDS or _NOT_AN_ITEM.match(clause.strip()):
            break
        if _NEW_CLAUSE.match(clause) or _MODAL.search(clause) or _WEAK_MODAL.search(clause):
            break
        items.append(clause.strip(" .!?").lower())
    if len(items) < 2:
        return False
    firsts = {item.split()[0] for item in items}
    return len(firsts) == 1 or bool(re.search(r"(?:^|\s)(?:and|or)\s", items[-1]))


# a reason given for what was said before it ("book on behalf of someone who rings, because
# we'll still get loads of calls"): the need is what it is the reason for
_REASON_GIVEN = re.compile(r"[,;]?\s+(?:because|'cause|cause|since)\s+", re.IGNORECASE)
# what happens if the need is not met, said after it (", or people will think money
# disappeared"): a reason for it, no part of it
_CONSEQUENCE = re.compile(
    r",\s+or\s+(?:else\s+)?(?:we|they|you|people|users|customers|everyone|nobody|someone|it)"
    r"(?:'ll|\s+will|\s+would|\s+might|\s+won't|\s+can't|\s+end up|\s+just)\b",
    re.IGNORECASE,
)
# what is said before it describes how things are ("two days is maybe too short, because ..."):
# no need of its own, so the reason may name the need
_DESCRIBES = re.compile(
    r"^(?!.*\b(?:must|should|shall|need|needs|want|wants|has to|have to|can|could|will|would)\b)"
    r".*(?:\b(?:is|are|was|were)\b|'s\b|'re\b)",
    re.IGNORECASE,
)


# "a notification when it changes, I'd like that for my own claims too": the want points back
_WANTS_THAT = re.compile(
    r"^(?P<need>[^,;]{6,}),\s*(?:and |so |yeah,? )?(?:i|we)(?:'d| would)? (?:really )?"
    r"(?:like|want|need|love) (?:that|this)\b",
    re.IGNORECASE,
)


# "what I want is that the booking system ...", "all we need is a list of ...", "the only thing
# we need is a power button", "only buttons we need is on off, volume, channels": the need is
# what is said after "is"
_CLEFT = re.compile(
    r"^(?:(?:so|and|but|well|now|okay|ok|yeah|right)\b[,\s]*)*"
    r"(?P<head>what|all|(?:the\s+)?(?:only|main|one|first|key)\s+(?P<noun>thing|things|[a-z\-]+s))"
    r"\s+(?:that\s+)?(?:i|we|you|they|people|users|the\s+[a-z]+)(?:'d|\u2019d)?\s+"
    r"(?:(?:really|still|actually|also|just|would|will|do|mostly)\s+)*"
    r"(?:(?:need|want|require|expect)s?|(?<='d )(?:like|love)|(?<=\u2019d )(?:like|love)"
    r"|(?<=would )(?:like|love))\s+(?:is|are|would be)\s+(?P<what>.+)$",
    re.IGNORECASE,
)


# where a list said after "is" ends: a hedge, a new clause
_LIST_ENDS = re.compile(
    r"\s+(?:and|or)\s+(?:maybe|perhaps|something)\b|,\s+(?:and|but|so)\s|\s+maybe\s"
)


def _cleft(text: str) -> Capability | None:
    """The need a pseudo-cleft states ("what we need is ..."), or None when it is not one."""
    found = _CLEFT.match(text)
    if not found:
        return None
    what = found.group("what").strip()
    if re.match(r"(?:that|for)\s", what, re.IGNORECASE):
        clause = re.sub(r"^that\s+", "", what, flags=re.IGNORECASE)
        if clause.lower().startswith("for "):  # "what I want is for the remote to beep"
            clause = re.sub(r"^for\s+(.+?)\s+to\s+", r"\1 must ", clause, count=1)
        cap = capability(clause)
    elif what.lower().startswith("to "):  # "what we want is to see who is on call"
        cap = capability(f"we need {what}")
    else:
        head = found.group("head").lower()
        only = "only " if "only" in head.split() else ""  # "all we need is": what, not a limit
        noun = (found.group("noun") or "").lower()
        if noun and noun not in ("thing", "things"):  # "only buttons we need is on off, ..."
            items = _trim(_LIST_ENDS.split(what)[0])
            if not items:
                return None
            return Capability(f"Limit the {noun} to {items}", f"the {noun} limited to {items}")
        cap = capability(f"we need {only}{what}")
    return cap if reads_as_capability(cap.title) else None


# what frames a need rather than states it: "it would be nice if users could export ...", "it's
# important that the results are anonymous", "can we make sure that managers get ...", "would it
# be possible to add ...", "my biggest problem is that I can't see who ...", "a calendar view
# would be really useful": the need is the clause inside (``clause``), the verb phrase (``vp``,
# of ``who`` when named), what is asked of the product (``asked``), the thing (``np``), the doing
# (``ing``: "the other thing would be letting coordinators see gaps") or what cannot be done today
# (``cannot``); ``unframed`` says each as a plain statement
_OPENING_WORDS = (
    r"^(?:(?:so|and|but|well|now|okay|ok|yeah|yes|also|i think|i guess|i suppose|i mean|you know"
    r"|actually|honestly|basically|really|um|uh)\b[,\s]*)*"
)
_FOR_US = r"(?:\s+for\s+(?:us|me|them|you|everyone|the\s+\w+))?"
# how much a thing would help ("really useful", "ideal"), said after "would be"
_HELPFUL = r"(?:(?:really|very|quite|super|so)\s+)?(?:useful|helpful|great|nice|good|handy|ideal)"
_FRAMES = (
    # the decision a change of plan leads to ("Okay, changing that: reminder texts go out
    # forty-eight hours before the visit"): what is decided
    re.compile(
        _OPENING_WORDS + r"(?:changing (?:that|it|this)|change of plan|correction|to correct that"
        r"|(?:the )?decision|decided|agreed)\s*:\s*(?P<clause>\S.+)$",
        re.IGNORECASE,
    ),
    re.compile(
        _OPENING_WORDS + r"it(?:'d|'s| would| will| is)(?:\s+(?:really|also|so|just))?\s+be\s+"
        r"(?:nice|great|good|helpful|useful|ideal|cool|handy|brilliant|lovely|amazing|better)"
        + _FOR_US
        + r"\s+(?:if\s+(?P<clause>.+)|to\s+(?P<vp>.+))$",
        re.IGNORECASE,
    ),
    re.compile(
        _OPENING_WORDS + r"it(?:'s| is)(?:\s+(?:really|very|quite|super|also|absolutely))?\s+"
        r"(?:important|essential|crucial|vital|critical|key|a must)"
        + _FOR_US
        + r"\s+(?:that\s+(?P<clause>.+)|to\s+(?P<vp>.+))$",
        re.IGNORECASE,
    ),
    re.compile(
        _OPENING_WORDS + r"(?:(?:the|our|my)\s+(?:(?:key|main|most important|big|biggest"
        r"|important|first|one|other|next|best|easiest|simplest|cheapest|safest|personal|own)\s+)?"
        r"|another\s+)"
        r"(?:thing|point|requirement|priority|idea|plan|proposal|suggestion|ask|request|brief"
        r"|option|solution|choice|approach|preferences?|goal|aim|wish|recommendation"
        r"|(?:(?<=key )|(?<=main )|(?<=big )|(?<=biggest )|(?<=important )|(?<=other ))one)"
        + _FOR_US
        + r"(?:\s+from\s+(?:the\s+|our\s+)?[\w-]+)?"  # "the ask from the business is that ..."
        # "my personal preferences would be, uh, to keep it small": the filler said before it
        + r"\s+(?:is|are|would be)\s*,?\s*(?:(?:uh|um)\s*,?\s*)?"
        + r"(?:that\s+(?P<clause>.+)|to\s+(?P<vp>.+)|(?P<ing>[a-z]+ing\s+.+)"
        # "the best option would be a rubber case": the thing it names
        r"|(?P<np>an?\s+(?!(?:bit|lot|little|good|great|nice|real|big)\b)[a-z][^,;]*))$",
        re.IGNORECASE,
    ),
    # "and another nice feature that I would like to implement is volume control": the feature
    # it names (a feature is a capability, with or without an article)
    re.compile(
        _OPENING_WORDS + r"(?:another|one more|the (?:other|next|last|second|third))\s+"
        r"(?:(?:nice|good|great|cool|big|important|useful|small|key|main)\s+)?"
        r"(?:feature|function|functionality)(?:\s+(?:that\s+)?(?:i|we)(?:'d|\s+would)?\s+"
        r"(?:like|want|love)(?:\s+to\s+(?:implement|add|have|include|propose))?)?"
        r"\s+(?:is|would be)\s*,?\s*(?:(?:uh|um)\s*,?\s*)?"
        r"(?P<np>(?!(?:that|to|a bit|very|not)\b)[a-z][^,;]*)$",
        re.IGNORECASE,
    ),
    re.compile(
        _OPENING_WORDS + r"(?:(?:can|could)\s+(?:we|you)\s+(?:please\s+)?|(?:we|you)\s+"
        r"(?:have to|need to|must|should)\s+|let's\s+|please\s+)?(?:make sure|ensure)\s+"
        r"(?:that\s+)?(?P<clause>.+?)\??$",
        re.IGNORECASE,
    ),
    re.compile(  # "I'd want that written down, reports shouldn't identify students"
        _OPENING_WORDS + r"(?:(?:good|great|right|fine)\b[,\s]*)?(?:i|we)(?:'d|\s+would|\s+want"
        r"|\s+need)?(?:\s+(?:want|like|need))?\s+(?:that|this|it)\s+(?:written\s+down|noted"
        r"(?:\s+down)?|in\s+writing|on\s+record|recorded)[,:;]\s+(?P<clause>.+)$",
        re.IGNORECASE,
    ),
    re.compile(  # "what I'd want, really, is to take a photo of the receipt on my phone"
        _OPENING_WORDS + r"what\s+(?P<who>i|we|they|people|users)(?:'d|\s+would|\s+really"
        r"|\s+actually)*\s+(?:want|need|like|suggest|propose|recommend)"
        r"(?:\s*,?\s*(?:really|honestly|ideally))?\s*,?\s+is"
        r"\s+(?:to\s+(?P<vp>.+)|that\s+(?P<clause>.+))$",
        re.IGNORECASE,
    ),
    re.compile(  # "it should be possible to reopen a closed claim"
        _OPENING_WORDS + r"it\s+(?:should|must|needs to|has to|will|would)\s+be\s+possible"
        r"(?:\s+for\s+(?P<who>(?:the\s+|our\s+)?[a-z]+))?\s+to\s+(?P<vp>.+)$",
        re.IGNORECASE,
    ),
    re.compile(  # "could we have a search by postcode?", "can it remember my last search?"
        _OPENING_WORDS + r"(?:can|could|would|will)\s+(?:(?P<asker>it|the\s+(?:system|app|remote"
        r"|product|device|site|website|tool|dashboard|page|portal))|(?P<we>we))\s+(?:please\s+)?"
        r"(?:also\s+)?(?(we)(?=(?:have|get|add|include|offer|support|provide|build)\b))"
        r"(?P<asked>.+?)\?$",
        re.IGNORECASE,
    ),
    re.compile(  # "if we could just get rid of the paper forms, that would be a huge win"
        _OPENING_WORDS + r"if\s+(?:we|you|they|people|users)\s+could\s+(?P<vp>[^,]+),\s*"
        r"(?:that|it|this)(?:'d|\u2019d|\s+would|'ll|\s+will)\s+be\s+.+$",
        re.IGNORECASE,
    ),
    re.compile(  # "could there be a way to bulk approve?"
        _OPENING_WORDS + r"(?:could|can|would|will)\s+there\s+be\s+(?P<np>.+?)\?$",
        re.IGNORECASE,
    ),
    re.compile(  # "make it so that admins can override a booking"
        _OPENING_WORDS + r"(?:(?:we|you)\s+(?:should|could|can)\s+)?make\s+it\s+so\s+(?:that\s+)?"
        r"(?P<clause>.+)$",
        re.IGNORECASE,
    ),
    re.compile(  # "a calendar view would be really useful": the thing
        _OPENING_WORDS + r"(?:something\s+(?:like\s+)?|some\s+(?:kind|sort)\s+of\s+)?"
        r"(?P<np>(?:an?|some|the)\s+[^,;]+?)\s+(?:would|will)\s+be\s+"
        + _HELPFUL
        + _FOR_US
        + r"[\s.!]*$",
        re.IGNORECASE,
    ),
    re.compile(  # "we were thinking maybe a weekly digest email"
        _OPENING_WORDS + r"(?:we|i)(?:'re|'m|\s+are|\s+am|\s+were|\s+was)\s+(?:also\s+)?thinking"
        r"\s+(?:of\s+|about\s+)?(?:(?:maybe|perhaps|possibly)\s+)?"
        r"(?:that\s+(?P<clause>.+)|(?P<np>(?:an?|some|the)\s+.+))$",
        re.IGNORECASE,
    ),
    re.compile(
        _OPENING_WORDS
        + r"(?:would|will|is)\s+it\s+(?:be\s+)?(?:possible|an option)"
        + _FOR_US
        + r"\s+to\s+(?P<vp>.+?)\??$",
        re.IGNORECASE,
    ),
    re.compile(
        _OPENING_WORDS + r"(?:my|our|the)\s+(?:(?:biggest|main|big|real|only)\s+)?"
        r"(?:problem|issue|frustration|complaint|pain point)"
        r"(?:\s+(?:today|at the moment|right now|now))?\s+is\s+(?:that\s+)?"
        r"(?P<who>i|we|they|people|users|staff|the\s+\w+)\s+(?:can't|cannot|can not|don't know how to)"
        r"\s+(?P<cannot>.+)$",
        re.IGNORECASE,
    ),
)


# "we don't want people to have to log in twice": what they should not have to do
_NOT_WANTED_TO = re.compile(
    _OPENING_WORDS + r"(?:we|i)\s+(?:really\s+)?(?:don't|do not|wouldn't|would not)\s+want\s+"
    r"(?P<who>people|users|anyone|anybody|them|customers|staff|the\s+\w+)\s+to\s+(?P<vp>.+)$",
    re.IGNORECASE,
)


# "..., so photo upload is a must": the thing, said last as what cannot be done without
_A_MUST = re.compile(
    # ("..., and those fields are mandatory" says it of what was just named: no thing of its own)
    r"(?:^|[,;]\s+(?:so\s+|and\s+)?|\bso\s+)(?!(?:(?:and|so)\s+)?(?:those|these|this|that|they|it)\b)"
    r"(?P<np>(?:an?\s+|the\s+)?[a-z][a-z\s-]{2,40}?)\s+"
    r"(?:is|are)\s+(?:an?\s+)?(?:absolute\s+)?(?:must(?:-have)?|essential|non-negotiable"
    r"|mandatory)[\s.!]*$",
    re.IGNORECASE,
)


# "..., like, a text the night before would be ideal": the thing, said last as what would help
_WOULD_HELP = re.compile(
    r"[,;]\s+(?:so\s+|and\s+|like\s+|maybe\s+)*(?P<np>(?:an?|some)\s+[^,;]+?)\s+(?:would|will)\s+be"
    r"\s+" + _HELPFUL + r"[\s.!]*$",
    re.IGNORECASE,
)
# what would help, said as what follows from the trouble told first ("A lot of international
# students ... struggle with the systems, so Chinese would help a lot, maybe Arabic."; "People
# lose receipts all the time, so a photo of the receipt would really help."): that thing is the
# need, the trouble why
_SO_IT_WOULD_HELP = re.compile(
    r",\s+so\s+(?P<np>(?:an?|some)\s+[^,;]+?"
    r"|(?!(?:it|that|this|which|what|there|they|we|you|i|he|she|people|everyone|everybody"
    r"|someone|anyone|nobody|everything|anything|the|[a-z]+ing)\b)[a-z][\w-]*(?:\s+[\w-]+){0,3}?)"
    r"\s+(?:would|will)\s+(?:(?:really|also|definitely)\s+)?"
    r"(?:be\s+" + _HELPFUL + r"|help(?:\s+(?:a lot|a great deal|loads|too|us|them))*)"
    r"(?P<after>(?:,.*)?)[\s.!]*$",
    re.IGNORECASE,
)


# the same said first: "a team calendar would be nice, so people can see who's off", "single
# sign-on with Google would help too, a lot of them asked" (a thing named without an article;
# not a pronoun, "that would help" names nothing, nor a thing there is, "the new system will
# help us")
_THING_WOULD_HELP = re.compile(
    r"^(?P<np>(?:an?|some)\s+[^,;]+?"
    r"|(?!(?:it|that|this|which|what|there|they|we|you|i|he|she|everything|anything|the"
    r"|[a-z]+ing|per|for|with|in|on|at|by|from|to|of|about|just|only|also)\b)"
    r"[a-z][\w-]*(?:\s+[\w-]+){0,4}?)"
    r"\s+(?:would|will)\s+(?:be\s+" + _HELPFUL + r"|help(?:\s+(?:a lot|too|us|them))*)"
    r"(?P<after>(?:[,;].*)?)[\s.!]*$",
    re.IGNORECASE,
)


def unframed(text: str) -> str:
    """What a frame around a need says, as a plain statement of it ("it's important that the
    results are anonymous": "the results are anonymous"; "it would be great to have a dark
    mode": "we need to have a dark mode"; ``_FRAMES``), else the text as it is."""
    said = text.strip()
    unwanted = _NOT_WANTED_TO.match(said)
    if unwanted:
        return f"{unwanted.group('who')} should not {unwanted.group('vp')}"
    for frame in _FRAMES:
        found = frame.match(said)
        if not found:
            continue
        groups = found.groupdict()
        if groups.get("clause"):
            return _subjunctive(groups["clause"])
        if groups.get("asked"):
            return f"{groups['asker'] or groups['we']} should {groups['asked']}"
        if groups.get("vp"):
            return f"{groups.get('who') or 'we'} need to {groups['vp']}"
        if groups.get("np"):
            return f"we need {groups['np']}"
        if groups.get("ing"):  # "the other thing would be letting coordinators see gaps"
            verb, _, more = groups["ing"].partition(" ")
            return f"we need to {_base_of_gerund(verb)} {more}"
        return f"{groups['who']} need to {groups['cannot']}"
    must = _A_MUST.search(said)
    thing = must.group("np").split() if must else []
    if (
        must
        and (len(thing) > 1 or thing[0].lower().endswith("s"))  # not "security is essential"
        and not re.match(r"(?:it|this|that|there)\b", must.group("np"), re.IGNORECASE)
    ):
        return f"we need {must.group('np')}"
    being = re.match(r"being able to (?P<vp>\S.*)$", said, re.IGNORECASE)
    if being:  # "being able to see a customer's whole order history in one screen"
        return f"we need to {being.group('vp')}"
    helps = _WOULD_HELP.search(said)
    if helps:
        return f"we need {helps.group('np')}"
    follows = _SO_IT_WOULD_HELP.search(said)
    if follows:  # "..., so Chinese would help a lot, maybe Arabic.": a reason said after it
        # is its, a thing added ("maybe Arabic", its hedge gone) no part of the need yet
        after = follows.group("after")
        why = re.match(r",\s*(?:so|because|as|since)\b", after, re.IGNORECASE)
        return f"we need {follows.group('np')}{after if why else ''}"
    nice = None if _NICE_BUT_LATER.match(said) else _THING_WOULD_HELP.match(said)
    if nice:  # "a team calendar would be nice, so people can see who's off" (not "..., but I
        # know that's phase two": left out)
        return f"we need {nice.group('np')}{nice.group('after')}"
    return text


def _gerund(verb: str) -> str:
    """The -ing form of a base verb ("put" -> "putting", "see" -> "seeing", "make" -> "making")."""
    low = verb.lower()
    if low.endswith("ie"):
        return low[:-2] + "ying"
    if low.endswith("e") and not low.endswith(("ee", "ye", "oe")):
        return low[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", low):  # one syllable, a short vowel
        return low + low[-1] + "ing"
    return low + "ing"


def _base_of_gerund(word: str) -> str:
    """'letting' -> 'let', 'having' -> 'have', 'sending' -> 'send'; the word itself when no verb
    of the lexicon is its base."""
    stem = word.lower()[:-3]
    for candidate in (stem, f"{stem}e", stem[:-1]):
        if candidate in VERBS and (candidate != stem[:-1] or stem[-1:] == stem[-2:-1]):
            return candidate
    return word


def _subjunctive(clause: str) -> str:
    """'it was cheap' (said after "it would be good if") -> 'it should be cheap'; 'refunds
    under fifty euros didn't need a supervisor' -> '... shouldn't need a supervisor'."""
    clause = re.sub(
        r"^(it|they|this|that|(?:the|our)\s+\w+)\s+(?:was|were)\s+",
        r"\1 should be ",
        clause,
        flags=re.IGNORECASE,
    )
    return re.sub(
        r"^(\S+(?:\s+\S+){0,5}?)\s+(?:didn't|did not)\s+(need|have to|get|go|show)\b",
        r"\1 shouldn't \2",
        clause,
        count=1,
        flags=re.IGNORECASE,
    )


def _framed(text: str) -> Capability | None:
    """The need a frame around it states (``unframed``), or None when there is no frame or
    what it frames names no capability."""
    inside = unframed(text)
    if inside == text:
        return None
    cap = capability(inside)
    return cap if reads_as_capability(cap.title) else None


# "some of our members use screen readers, so the booking pages have to work with them": what
# "them" is, said as what the people use before the need
_USED_THEN_SO = re.compile(
    r"\b(?:use|uses|rely on|relies on|have|has|carry|carries|bring|brings)\s+"
    r"(?P<things>(?:[a-z-]+\s+){0,2}[a-z-]+s),?\s+so\s+.*\bthem\b",
    re.IGNORECASE,
)


# things named by name before "so", then "those <things>" in the need ("... speak Spanish or
# Portuguese, so the tablet app has to be in those languages too")
_NAMED_THEN_THOSE = re.compile(
    r"\b(?P<things>[A-Z][\w-]+(?:,\s+[A-Z][\w-]+)*,?\s+(?:or|and)\s+[A-Z][\w-]+),?\s+so\s+.*?"
    r"\b(?P<those>(?:those|these)\s+[a-z]+s)\b"
)


def named_those(text: str) -> str:
    """``text`` with "those languages" named when the sentence names them before its need ("our
    staff speak Spanish or Portuguese, so the tablet app has to be in those languages too": "in
    Spanish or Portuguese too"), for the title and the criteria alike."""
    named = _NAMED_THEN_THOSE.search(text)
    if named is None:
        return text
    at = named.start("those")
    return f"{text[:at]}{named.group('things')}{text[named.end('those') :]}"


# the thing a need is said for, named first and then said as "it" ("For health data we'd want
# it hosted in the UK": the health data is what is hosted)
_FOR_THING_FIRST = re.compile(
    r"^for\s+(?P<thing>(?:the\s+|our\s+|all\s+|any\s+)?[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?),?\s+"
    r"(?=(?:we|i|you|they|people|users)\b)",
    re.IGNORECASE,
)

# "for now", "for me", "for example": when or whose, no thing
_NO_SCOPE = frozenset(
    "now me us you them example instance sure once today later starters good real ever".split()
)


def capability(text: str) -> Capability:
    """The capability a (cleaned) statement asks for (``_capability_of``), with "them" named
    when the statement says what it is before its need ("... use screen readers, so the booking
    pages have to work with them": "Work with screen readers")."""
    cap = _capability_of(text)
    scope = _FOR_THING_FIRST.match(text)
    words = scope.group("thing").lower().split() if scope else []
    if scope and words[-1] not in _NO_SCOPE and names_a_thing(words):
        # "For the reports, we need them sorted by date": "Sort the reports by date" (the
        # place said first is no longer said after it)
        thing = _lower_first(scope.group("thing"))
        title, means = cap.title, cap.means
        for_it = f" for {thing}"
        if title.lower().endswith(for_it.lower()):
            title, means = title[: -len(for_it)], re.sub(rf"{re.escape(for_it)}$", "", means)
        it = re.search(r"\b(?:it|them)\b", title)
        if it and thing.lower() not in title.lower():
            return Capability(
                f"{title[: it.start()]}{thing}{title[it.end() :]}",
                re.sub(r"\b(?:it|them)\b", thing, means, count=1),
                obj=cap.obj,
                subject=cap.subject,
            )
    used = _USED_THEN_SO.search(text)
    if used and re.search(r"\bthem$", cap.title) and len(cap.title.split()) < MAX_TITLE_WORDS:
        things = used.group("things")
        return Capability(
            re.sub(r"\bthem$", things, cap.title),
            re.sub(r"\bthem\b", things, cap.means),
            obj=cap.obj,
            subject=cap.subject,
        )
    return cap


def _capability_of(text: str) -> Capability:
    """The capability a (cleaned) statement asks for: what is said before a reason given for it
    when that names one, else the whole statement; what "I'd like that" points back to; what a
    pseudo-cleft says is needed ("what we need is ..."), or a frame ("it would be nice if ...")."""
    inside = _cleft(text) or _framed(text)
    if inside is not None:
        return inside
    rule = _RULE_THEN_MORE.match(text)
    if rule and _EACH_GETS.match(rule.group("rule")):
        return _capability_of(rule.group("rule"))
    aside = _SUBJECT_ASIDE.match(text)
    if aside:  # "Dangerous ones, deeper than forty millimetres, have to be fixed within ..."
        return _capability_of(f"{aside.group('subject')} {aside.group('rest')}")
    wants_that = _WANTS_THAT.match(text)
    if wants_that and len(content_words(wants_that.group("need"))) >= 2:
        back = capability(wants_that.group("need"))
        if reads_as_capability(back.title):
            return back
    reason = _REASON_GIVEN.search(text) or _CONSEQUENCE.search(text)
    said = text[: reason.start()] if reason else ""
    # what it is the reason for: a clause with two content words, or an instruction ("make that
    # date a setting, because they'll move it again")
    bidden = len(said.split()) >= 3 and is_base_verb(said.split()[0].lower())
    if (len(set(content_words(said))) >= 2 or bidden) and not _DESCRIBES.search(said):
        head = _need_said(said)
        if head:
            return head
    whole = _capability(text)
    if said.strip(" ,") and len(said.split()) <= 3 and re.match(_REASON_WORD, whole.obj, re.I):
        # "By text, because it's important.": the reason read as the thing wanted; what it is
        # given for, a few words said first, is the need
        return _need_said(said) or whole
    return whole


_REASON_WORD = r"(?:because|'cause|since)\b"


def _need_said(said: str) -> Capability | None:
    """The capability said before a reason, when it reads as one."""
    head = capability(said)
    return head if reads_as_capability(head.title) else None


# a price said of a thing ("a second permit costs more", "each extra bin should cost five
# pounds a month"): what is charged for it
_COSTS = re.compile(
    r"^(?P<np>(?:an?|the|each|every|one|any|our)\s+(?:[\w'-]+\s+){0,3}?[\w'-]+"
    # "Delivery costs three pounds, free over thirty": a charge named by its one word
    r"|delivery|postage|shipping|p&p|parking|entry|admission|membership|registration)\s+"
    r"(?:(?:should|must|will|would|shall|has to|needs? to)\s+)?(?:costs?)\s+"
    r"(?P<amount>(?:more|less|extra)\b|(?:[£$€]?\d|(?:two|three|four|five|six|seven|eight|nine"
    r"|ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred)\b)[^,;]*)",
    re.IGNORECASE,
)


def _charged(text: str) -> Capability | None:
    """'A second permit costs more, it's ninety pounds ...' -> 'Charge more for a second
    permit' (was "Cost"); None when the statement sets no price of a thing."""
    found = _COSTS.match(text.strip())
    if found is None:
        return None
    np, amount = found.group("np"), _trim(found.group("amount"))
    if len(np.split()) > 1 and not names_a_thing(np.lower().split()[1:]):
        return None
    return Capability(
        _cap(f"Charge {amount} for {_lower_first(np)}"),
        f"to charge {amount} for {_lower_first(np)}",
        obj=np,
        subject=np,
    )


# the notice a thing needs ("Cakes need forty-eight hours notice."): what the product requires
_NEEDS_NOTICE = re.compile(
    r"^(?P<thing>(?:(?:the|all|our|any)\s+)?[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)\s+(?:need|needs"
    r"|require|requires)\s+(?P<notice>(?:at least\s+)?[\w-]+(?:\s+[\w-]+)?\s+(?:hours?|days?"
    r"|weeks?)['\u2019]?\s+(?:notice|lead time|warning))\b",
    re.IGNORECASE,
)
# a service said to be offered only somewhere ("Delivery is only within three miles of the shop")
_ONLY_WHERE = re.compile(
    r"^(?P<what>delivery|deliveries|collection|collections|booking|bookings|parking|access)\s+"
    r"(?:is|are|will be|should be|has to be|must be)\s+only\s+(?P<where>(?:within|in|to|for|on"
    r"|at|inside|from)\s+.+?)[.!]?$",
    re.IGNORECASE,
)
_DONE_AS = {
    "delivery": "Deliver",
    "deliveries": "Deliver",
    "collection": "Collect",
    "collections": "Collect",
    "booking": "Book",
    "bookings": "Book",
    "parking": "Allow parking",
    "access": "Allow access",
}


# an action asked for, then what it should do ("scan the code on the door, and it should book the
# room for an hour"): the action is the need, the rest its result
_ACTION_THEN_RESULT = re.compile(
    r"^(?P<act>[a-z]+\b[^,;]{8,}?),?\s+and\s+(?:then\s+)?(?:it|this|that)\s+"
    r"(?:should|will|must|has to|would|needs to)\s+[a-z]+\b[^;]*?"
    r"(?:,\s*(?:because|'cause|since|so)\b.*)?[.!]?$",
    re.IGNORECASE,
)


def _required_or_limited(text: str) -> Capability | None:
    """'Cakes need forty-eight hours notice.' -> 'Require forty-eight hours notice for cakes'
    (was "Provide forty-eight hours notice"); 'Delivery is only within three miles of the shop.'
    -> 'Deliver only within three miles of the shop' (was "Make delivery only ..."); None for
    anything else."""
    said = text.strip()
    notice = _NEEDS_NOTICE.match(said)
    if notice and names_a_thing(notice.group("thing").lower().split()):
        thing, needed = _lower_first(notice.group("thing")), notice.group("notice")
        return Capability(
            f"Require {needed} for {thing}", f"{needed} for {thing}", obj=thing, subject=thing
        )
    only_says = _ONLY_SAYS.match(said)
    if only_says:
        # "messages only ever say date, time and doctor, nothing clinical": what they may hold
        thing = _lower_first(only_says.group("thing"))
        what = _trim(only_says.group("what"))
        return Capability(
            f"Limit {thing} to {what}", f"{thing} to {only_says.group('rest')}", obj=thing
        )
    bound = _LABELLED_BOUND.match(said)
    if bound and names_a_thing(bound.group("thing").lower().split()):
        # "Group rooms, minimum two people.", "Desks, four hours max.": a bound of the thing
        # named first (was "Provide minimum two people", the thing lost)
        thing = _lower_first(bound.group("thing"))
        amount = (
            f"{bound.group('n') or bound.group('n2')} {bound.group('unit') or bound.group('unit2')}"
        )
        if bound.group("low") or bound.group("low2"):
            return Capability(
                f"Require at least {amount} for {thing}",
                f"at least {amount} for {thing}",
                obj=thing,
                subject=thing,
            )
        return Capability(
            f"Limit {thing} to {amount}", f"{thing} limited to {amount}", obj=thing, subject=thing
        )
    only = _ONLY_WHERE.match(said)
    if only:
        verb = _DONE_AS[only.group("what").lower()]
        where = only.group("where")
        return Capability(
            f"{verb} only {where}",
            f"to {_lower_first(verb)} only {where}",
            subject=only.group("what"),
        )
    return None


# who need not see something: a rule that they may not ("Facilities doesn't need to see payroll
# details."), not a chore taken away ("I don't need to approve them")
_NEED_NOT_SEE = re.compile(
    r"^(?:(?:and|but|so|also|obviously)[\s,]+)*(?!(?:i|we|you|they|it|he|she|that|this)\b)"
    r"(?P<who>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+(?:doesn't|does not|don't|do not)\s+need\s+to\s+"
    r"(?P<verb>see|view|access|know)\s+(?P<what>[^,;.!?]+)",
    re.IGNORECASE,
)


def _capability(text: str) -> Capability:
    need_not_see = _NEED_NOT_SEE.match(text)
    if need_not_see:  # "Facilities doesn't need to see payroll details, obviously."
        who = _lower_first(need_not_see.group("who"))
        verb, what = need_not_see.group("verb").lower(), _trim(need_not_see.group("what"))
        return Capability(
            f"Do not let {who} {verb} {what}", f"{who} never to {verb} {what}", obj=what
        )
    dropped = _dropped(text)
    if dropped:
        return dropped
    done_then = _ACTION_THEN_RESULT.match(text)
    if done_then and is_base_verb(done_then.group("act").split()[0].lower()):
        # "delegate them to another manager for a date range, and it should come back to me
        # when I'm back": the action asked for is the need, what it then does its criterion
        return _capability(done_then.group("act"))
    charged = _charged(text)
    if charged:
        return charged
    required = _required_or_limited(text)
    if required:
        return required
    said_first = condition_first(text)
    if said_first and len(said_first.group("main").split()) >= 2:
        # "when you go to the sofa, take ...": the need is the rest
        text = said_first.group("main")
    # "after each walk the walker sends ...": the time said first, as if with its comma
    text = _TIME_FIRST.sub(r"\g<when>, ", text, count=1)
    placed = _PLACE_FIRST.match(text)
    if placed and placed.group("where2") and _DISCOURSE_PLACE.match(placed.group("where2")):
        placed = None  # "at the moment we use spreadsheets": the situation today, as it was said
    main = (placed.group("main") or placed.group("main2")) if placed else ""
    if placed and len(main.split()) >= 3:
        # "in the day view, online bookings are marked as online": the need, then where or for
        # what it holds ("Use only plastic for the cost"); a word of talk ("in fact, ...") goes
        need = _capability(main)
        where = placed.group("where") or placed.group("where2")
        if _DISCOURSE_PLACE.match(where):
            return need
        where = _lower_first(where)
        title = _BEFORE_PLACE.split(need.title)[0]
        if len(title.split()) < 2:
            title = need.title
        if len(where.split()) > PLACE_IN_TITLE_WORDS:
            title, where_in_title = need.title, ""  # "for companies with more than ten members"
        else:
            where_in_title = f" {where}"
        cut = _BEFORE_PLACE.search(need.means)
        at = cut.start() if cut and len(need.means[: cut.start()].split()) >= 2 else None
        means = f"{need.means[:at]} {where}{need.means[at:]}" if at else f"{need.means} {where}"
        return Capability(f"{title}{where_in_title}", means, obj=need.obj, subject=need.subject)
    imperative_be = re.match(r"^be\s+(?P<what>.+)$", text, re.IGNORECASE)
    if imperative_be:  # "be simple" said of the product
        return _be(imperative_be.group("what"), "it")
    if _qualities_alone(text) or _qualities_to_do(text):
        # "Baby-proof.", "Small, round.", "Quick to set up.": how the product must be
        return _be(_lower_first(text.strip(" .!?;:")), "it")
    imperative_not = _IMPERATIVE_NOT.match(text)
    verb = imperative_not.group("vp").split()[0].strip(".,;:!?").lower() if imperative_not else ""
    if imperative_not and is_verb(verb) and verb not in _NOT_A_NEED_VERB | _TALK_AFTER_DONT:
        vp = _trim(imperative_not.group("vp"))  # "don't interfere with other devices"
        return Capability(f"Do not {vp}", f"the product never to {vp}")
    req = _parse(text)
    inner = _SOMETHING_WHERE.match(req.rest) if req.kind == "vp" else None
    if inner and _MODAL.search(inner.group("clause")):
        # "we should design something where the buttons that are used should be easier to see":
        # what that something must do is the need
        return capability(inner.group("clause"))
    subject = _subject_words(req.subject)
    first, joined, second = subject.partition(" and ")
    if req.kind and joined and len(first.split()) >= 2 and len(second.split()) >= 2:
        # "the booking is released and someone else can have it": the need is the first clause
        return capability(first)
    if req.kind == "vp" and says_nobody(req) and not req.embedded:
        return _nobody(req, subject)
    # a subject of more than eight words is a clause said before the need, unless it names the
    # people and who they are ("students with a support plan from the disability service")
    longest = 14 if re.match(rf"(?:the |all |our )?(?:{PERSONA_FORMS})\b", subject, re.I) else 8
    if _PEOPLE_QUALIFIED.match(subject):
        longest = 24  # "anyone doing the lunch club, with the children, or home deliveries ..."
    if req.embedded or (req.kind and len(_named(req.subject).split()) > longest):
        return _plain(req.clause)
    if req.kind == "np":
        wanted_of = _wanted_of(req.rest)
        if wanted_of:
            return wanted_of
        return _provide(req.rest, subject)
    if req.kind == "vp" and (_reduced_relative(subject, req.rest) or thing_acted_on(req)):
        # "a setting Linda can change": a thing, and who acts on it
        return _provide(_LEAD.sub("", req.clause))
    if req.kind == "vp" and forecasts_a_comparison(req.clause):
        # "then the costs will be much higher": what will follow, no capability (said as it was)
        return Capability(_cap(_LEAD.sub("", req.clause)), _lower_first(req.clause))
    if req.kind == "vp":
        return _from_verb_phrase(req.rest, subject, req.wanted)
    plain = _plain(req.clause)
    named = None if req.kind else _THING_THEN_CONDITION.match(_LEAD.sub("", text.strip()))
    if named and not plain.title.startswith(_A_THING):
        # "Doubles, twenty minutes, if someone's got a few problems.": the thing, and when it
        # applies (not "Get a few problems", the condition's verb)
        thing = capability(named.group("thing"))
        if thing.title.startswith(_A_THING):
            when = _trim(_LEAD.sub("", text.strip())[named.end("thing") :].strip(" ,"))
            return replace(thing, means=f"{thing.means} {when}")
    return plain


_A_THING = ("Provide ", "Send ")  # titles of a thing the product has or sends
# a thing named, then when it applies ("Longer slots if the patient has several problems.")
_THING_THEN_CONDITION = re.compile(
    r"^(?P<thing>[^.;?!]+?),?\s+(?:if|when|whenever|unless|once)\s+\S", re.IGNORECASE
)
# who acts on a thing, said after it without "that" ("a setting Linda can change")
_ACTOR_LAST = re.compile(
    rf"^(?i:a|an|the|some|one)\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?\s+"
    rf"(?P<who>[A-Z][a-z]+|we|you|they|i|people|(?:the\s+)?(?:{PERSONA_FORMS}))$",
)


def thing_acted_on(req: _Requirement) -> bool:
    """Whether the statement names a thing and what people can do with it ("a knowledge base
    they can search before they raise a ticket"): the words before its "can" read so."""
    before = re.split(r"\s+(?:can|could|will)\s+", _LEAD.sub("", req.clause), maxsplit=1)[0]
    return _reduced_relative(before, req.rest)


# what may follow a verb whose object is the thing before it ("a knowledge base they can search
# before they raise a ticket", "a report we can print at the end of the month")
_AFTER_GAP = frozenset("before after when whenever while at on in from by any anytime".split())


def _reduced_relative(subject: str, rest: str) -> bool:
    """Whether a subject and a verb with no object are a thing and a clause said of it ("a
    setting Linda can change", "a report we can print"), not someone who must act."""
    words = rest.split()
    if not words or not is_base_verb(words[0].lower()):
        return False
    if len(words) > 1 and words[1].lower() not in _AFTER_GAP:
        return False  # "a knowledge base they can search | before ...": no object of its own
    found = _ACTOR_LAST.match(subject.strip())
    return found is not None and _other_thing(subject.strip()[: found.start("who")].strip())


# "we want it to be something original", "I'd like the buttons to be bigger", "we need the system
# to send a reminder": what is wanted is how the thing is, or what it (or a person) does; "a way
# to cancel", "a button to switch it off" say what a thing to have is for
_OBJECT_TO = re.compile(
    r"^(?P<obj>it|them|(?:the|our|all|every|each|your|their)\s+[\w'-]+(?:\s+[\w'-]+)?"
    r"|[\w'-]+)\s+to\s+(?P<vp>(?!be\b)[a-z][\w'-]*\b.*|be\s+(?P<how>.+))$",
    re.IGNORECASE,
)


def _quality_or_more(word: str) -> bool:
    """A quality word, or its comparative ("bigger", "easier", "larger")."""
    if is_quality_word(word):
        return True
    if not word.endswith("er") or len(word) < 5:
        return False
    stem = word[:-2]
    return any(is_quality_word(w) for w in (stem, stem[:-1], stem[:-1] + "y", stem + "e"))


# "I want it quick", "we want the buttons bigger": a thing and how it must be
_OBJECT_LIKE = re.compile(
    r"^(?P<obj>it|them|(?:the|our|all|every|each)\s+[\w'-]+)\s+"
    r"(?P<how>(?:(?:very|really|quite|pretty|nice and)\s+)?[\w-]+)$",
    re.IGNORECASE,
)
# "..., something trendy and also something user friendly": the list goes on
_SOMETHING_MORE = re.compile(r"^\s*(?:(?:and|or)\s+)?(?:also\s+)?something\s+\w", re.I)
# a bound with its figure said after the need, part of it ("..., up to three times", "..., at
# most twice a day", "..., no more than 5 per claim"), or what it is counted by ("..., per
# branch")
# a figure said in words ("twenty", "five")
_BOUND_AFTER = re.compile(
    r"^\s*(?:(?:up to|at most|at least|no more than|not more than|max(?:imum)?|min(?:imum)?)\s+"
    rf"(?:once|twice|\d|{_NUMBER_WORD}\b|an?\s+(?:day|week|month|year|hour|minute)\b)"
    r"|(?:per|for each|for every)\s+\w+[\s.!?]*$)",
    re.IGNORECASE,
)
_OBJECT_OPENER = frozenset("the our all every each".split())


def _object_done(rest: str) -> Capability | None:
    """ "it hosted in the UK", "the reports sent every Monday" after a want or need: "Host it in
    the UK", "Send the reports every Monday" (None when the words say no such thing)."""
    words = rest.split()
    first = words[0].lower() if words else ""
    sizes = [1] if first in ("it", "them") else [2, 3] if first in _OBJECT_OPENER else []
    for size in sizes:
        if len(words) <= size:
            break
        said = words[size].lower().strip(",.")
        verb = base_form(said)
        if said != verb and is_participle(said) and verb in VERBS:
            obj, how = " ".join(words[:size]), " ".join(words[size + 1 :])
            return Capability(
                _cap(f"{verb} {obj} {how}".strip()), f"{obj} {said} {how}".strip(), obj=obj
            )
    return None


# "something original , something trendy and also something user friendly": the qualities
_SOMETHING = re.compile(
    r"(?:\balso\s+)?\bsomething\s+(?=[\w-]+(?:\s+[\w-]+)?\s*(?:,|\band\b|\bor\b|$))",
    re.IGNORECASE,
)


def _wanted_of(rest: str) -> Capability | None:
    """The capability of "<thing> to be <how>" or "<thing> to <do>" after a want or need (None
    when the words after it are a thing to have)."""
    done = _object_done(rest)
    if done:
        return done
    like = _OBJECT_LIKE.match(rest)
    if like and _quality_or_more(like.group("how").split()[-1].lower()):
        return _be(like.group("how"), like.group("obj"))  # "I just want it quick": how it is
    found = _OBJECT_TO.match(rest)
    if not found:
        return None
    obj = found.group("obj")
    how = found.group("how")
    if how and not how.lower().startswith("able to "):
        return _be(_SOMETHING.sub("", how), obj)
    acts = _PRODUCT_SUBJECT.match(obj) or obj.lower() == "them" or _is_user(obj)
    if not acts or obj.lower() in ("you", "i", "we"):
        return None  # "a button to switch it off", "you to send me the minutes"
    return _from_verb_phrase(found.group("vp"), obj)


_DEGREE_BEFORE = re.compile(r"^(?:pretty|very|quite|really|fairly|rather|nice and)\s+", re.I)


def _quality_items(text: str) -> list[str]:
    """The items of a statement said as a list of what something is like ("Small , round .",
    "cheap to run and easy to clean"), each without its degree ("pretty thin": "thin")."""
    items = [w for w in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", text.strip(" .!?;:")) if w]
    return [_DEGREE_BEFORE.sub("", w) for w in items]


def _qualities_alone(text: str) -> bool:
    """Whether a statement is two or three words of what something is like, or one made to say
    it ("Small , round .", "Baby-proof.", "Double-curved ."), and nothing else, which would
    otherwise read as a thing to provide ("Provide a baby-proof"). One plain word alone ("Cheap
    .", "Heavy .") is more often a remark in a discussion: it names no need (``names_a_thing``)."""
    items = _quality_items(text)
    if not 0 < len(items) <= 3 or not all(
        len(w.split()) == 1 and is_quality_word(w) for w in items
    ):
        return False
    return len(items) > 1 or "-" in items[0] or not is_plain_quality(items[0])


# what something is like to do with it ("quick to set up", "easy to clean", "fast to open")
_QUALITY_TO_DO = re.compile(r"^(?P<how>[a-z-]+)\s+to\s+(?P<verb>[a-z]+)\b", re.IGNORECASE)


def _qualities_to_do(text: str) -> bool:
    """Whether a statement is only how something is to use, said as a quality and what it is
    like to do ("Quick to set up.", "Fast to open and fast to take a photo.", "Easy to clean,
    and cheap.", "Robust and easy to use."), with no clause of its own: how the product must be,
    not a thing to provide ("Provide quick to set up")."""
    items = _quality_items(text)
    said = [_QUALITY_TO_DO.match(w) for w in items]
    if not items or not any(said) or not 0 < len(items) <= 3:
        return False  # "Robust and easy to use.": a quality alone may come first
    return all(
        (m and _quality_or_more(m.group("how").lower()) and is_base_verb(m.group("verb").lower()))
        or (not m and len(w.split()) == 1 and is_quality_word(w))
        for m, w in zip(said, items, strict=True)
    )


# a count of things announced, then the first of them ("two nice features ..., first, X")
_ANNOUNCED = re.compile(
    r"\b(?:two|three|four|five|a few|several|\d+)\s+(?:\w+\s+){0,2}?(?:features|things|functions"
    r"|functionalities|options|points|requirements|ideas|changes)\b[^.;:!?]*?[,:]\s*"
    r"(?:first(?:ly)?|the first (?:one )?is|one is)\s*[,:]?\s*(?P<item>.+)$",
    re.IGNORECASE,
)
# "design something where ...", "build a remote in which ...": a thing described by what it does
_SOMETHING_WHERE = re.compile(
    r"^(?:design|make|build|create|develop|have|get|find|come up with)\s+"
    r"(?:something|a thing|one|an? \w+)\s+(?:where|in which|so that|such that)\s+(?P<clause>.+)$",
    re.IGNORECASE,
)
# a relative clause in a long subject ("some of the buttons which are those that are used")
_RELATIVE_AFTER_HEAD = re.compile(r"\s+(?:which|that|who|whose)\s+.*$", re.IGNORECASE)


def _named(subject: str) -> str:
    """What a long subject names, without its relative clause ("some of the buttons which are
    those that are used" -> "some of the buttons"): a title names the thing, the description keeps
    the whole subject. A subject of five words or fewer stays whole ("the buttons that are used")."""
    if len(subject.split()) <= 5:
        return subject
    head = _RELATIVE_AFTER_HEAD.sub("", subject)
    return head if 2 <= len(head.split()) < len(subject.split()) else subject


def _nobody(req: _Requirement, subject: str) -> Capability:
    """'Nobody has to log in to see their bin day' -> 'Do not make anyone log in to see their
    bin day'; 'no one should see the phone numbers' -> 'Do not let anyone see the phone
    numbers'. The means keeps the statement's words: 'nobody to have to log in ...'."""
    vp = re.sub(r"^(?:ever|really|actually)\s+", "", req.rest.split(", ")[0])
    who = _lower_first(subject)
    said = _NOBODY.match(_subject_words(subject))
    anyone = f"anyone{said.group('but')}" if said and said.group("but") else "anyone"
    if _OBLIGED.search(req.clause):
        return Capability(f"Do not make {anyone} {vp}", f"{who} to have to {vp}", subject=subject)
    # "nobody should be able to edit a claim once it's approved": what nobody may do
    able = re.sub(r"^be able to\s+", "", vp, flags=re.IGNORECASE)
    limit = _limit_on_anyone(able, (said.group("but") or "") if said else "")
    return Capability(limit or f"Do not let {anyone} {able}", f"{who} to {vp}", subject=subject)


# what nobody may have more of ("get more than two permits per address")
_MORE_THAN = re.compile(
    r"^(?:get|have|hold|book|buy|take|own|borrow|reserve)\s+more\s+than\s+"
    r"(?P<n>\S+)\s+(?P<things>[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)(?P<per>\s+(?:per|a|each)\s+\S.*)?$",
    re.IGNORECASE,
)


def _limit_on_anyone(vp: str, but: str) -> str:
    """'get more than two permits per address', said of nobody: 'Limit permits to two per
    address' (was "Do not let anyone get", the title cut before its figure); "" otherwise."""
    found = _MORE_THAN.match(vp.strip())
    if found is None or but.strip():
        return ""
    per = found.group("per") or ""
    return f"Limit {found.group('things')} to {found.group('n')}{per}"


def says_nobody(req: _Requirement) -> bool:
    """The requirement is said of nobody: its criteria keep the statement's own words (a
    rewritten "nobody logs in" or a limit read from it would turn the need around)."""
    return bool(req.kind) and bool(_NOBODY.match(_subject_words(req.subject)))


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


def _only_a_figure(said: str) -> bool:
    """Whether ``said`` is one figure with its unit and nothing else ("twenty minutes")."""
    found = quantities(said)
    if len(found) != 1 or not content_words(found[0].text):
        return False
    rest = said.lower().replace(found[0].text.lower(), " ")
    return set(re.findall(r"[a-z']+", rest)) <= _ABOUT and len(found[0].text.split()) >= 2


# words that may stand before a figure ("about twenty minutes", "up to five")
_ABOUT = frozenset("up to about around roughly at least most".split())


def _provide(noun_phrase: str, subject: str = "") -> Capability:
    # "a full history, who created it, every change, ...": the thing, its details left to the
    # criteria
    noun_phrase = re.split(r",\s+(?=(?:who|what|which|when|where|whose)\b)", noun_phrase)[0]
    noun_phrase = _lower_first(_trim(noun_phrase))
    # "they still need a slot, but no payment": a slot without payment
    noun_phrase = re.sub(r",?\s+but\s+no\s+(?=[a-z]+$)", " without ", noun_phrase)
    # "doubles, twenty minutes": doubles of twenty minutes
    figure_after = re.fullmatch(r"(?P<np>[^,]+?),\s*(?P<figure>[^,]+)", noun_phrase)
    if figure_after and _only_a_figure(figure_after.group("figure")):
        noun_phrase = f"{figure_after.group('np')} of {figure_after.group('figure')}"
    # "an back light" as said: the article a reviewer would fix first (not "an hour", "an LCD")
    noun_phrase = re.sub(r"^an\s+(?=[b-df-gj-np-tv-z][a-z])", "a ", noun_phrase)
    means = noun_phrase
    owner = _owner(subject)
    if owner and (
        len(re.sub(r"^(?:an?|the)\s+", "", noun_phrase).split()) == 1
        # "each failed item needs at least one photo" (not a list: "..., step-free access")
        or (re.match(r"(?:every|each)\s", owner) and "," not in noun_phrase)
    ):
        means += f" for {owner}"  # "hotels still need receipts": "Provide receipts for hotels"
    acting = _ROLE_TO_ACT.match(noun_phrase)
    if acting and is_base_verb(acting.group("vp").split()[0].lower()):
        # "damaged ones need a finance manager to approve the refund": what the role does, for
        # what the statement is said of ("Approve the refund for damaged ones")
        vp, thing = acting.group("vp"), _lower_first(subject.strip())
        said_of = bool(thing) and not re.match(
            r"(?:we|i|you|they|it|he|she|everyone|everybody|people)\b", thing
        )
        title = _verb_phrase(f"{vp} for {thing}" if said_of else vp)
        if len(title.split()) > MAX_TITLE_WORDS:
            title = _verb_phrase(vp)
        means = (
            f"{acting.group('who')} to {vp} for {thing}"
            if said_of
            else f"{acting.group('who')} to {vp}"
        )
        return Capability(title, means, subject=acting.group("who"))
    rule_of = _trim(re.sub(r"\s+(?:still|also|always)$", "", subject.strip()))
    people = _PEOPLE_QUALIFIED.match(rule_of)
    if people and len(noun_phrase.split()) <= 5:
        # "anyone doing home deliveries has to have an enhanced DBS check": required of them;
        # who they are goes in the title when it has room, else in the description
        who = _lower_first(re.sub(r",\s+", " ", re.sub(r",\s+with\s+[^,]+,", "", rule_of)))
        means = f"{noun_phrase} for {who}"
        short = f"Require {noun_phrase}"
        title = f"Require {means}" if len(means.split()) < MAX_TITLE_WORDS else short
        return Capability(title, f"to require {means}", obj=noun_phrase, subject=subject)
    qualified = _QUALIFIED.match(rule_of)
    if qualified and len(noun_phrase.split()) <= 5:
        # "anything above five hundred pounds also needs the finance director": what the rule
        # is said of, and a person it needs is required, not provided
        person = noun_phrase.split(",")[0].rstrip()
        if re.search(rf"^(?:the|a|an|our)\s+(?:[a-z-]+\s+)?(?:{PERSONA_FORMS})$", person, re.I):
            means = f"{person} for {_lower_first(qualified.group(0))}"
            return Capability(
                f"Require {means}", f"to require {means}", obj=person, subject=subject
            )
        means = f"{noun_phrase} for {_lower_first(qualified.group(0))}"
    if _CHARGE_AT.match(noun_phrase):  # "VAT at twenty percent on everything except ...": a rate
        return Capability(f"Charge {noun_phrase}", f"to charge {means}", obj=noun_phrase)
    if _RULES_TO_MEET.match(noun_phrase):
        # "Public sector accessibility regulations, WCAG 2.2, level AA.": rules are complied
        # with, not provided
        return Capability(
            f"Comply with {means}",
            f"the product to comply with {means}",
            obj=noun_phrase,
            subject=subject,
        )
    if _LANGUAGES_ONLY.match(noun_phrase):  # "Chinese would help a lot": what it comes in
        means = f"the product in {means}"
    verb = "Send" if _MESSAGE.match(noun_phrase) else "Provide"  # "Send an email the day before"
    title = f"{verb} {means}"
    to_whom = _lower_first(_trim(subject))
    if (
        verb == "Send"
        and re.fullmatch(r"(?:the|our)\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?", to_whom)
        and len(f"{title} {to_whom}".split()) <= MAX_TITLE_WORDS
    ):
        # "the warehouse should get an alert": "Send the warehouse an alert", as "the warehouse
        # gets an alert" reads (the one it goes to is what the title names, and what is wanted)
        title = f"Send {to_whom} {means}"
        means = f"{to_whom} to get {means}"
    if re.match(r"(?:by|via)\s", means, re.IGNORECASE):
        means = f"it {means}"  # "By text, ideally.": "I want it by text", not "I want by text"
    return Capability(title=title, means=means, obj=noun_phrase, subject=subject)


# languages alone, what the product comes in ("Chinese", "English and Polish for launch")
_LANGUAGE = "|".join(sorted(w.capitalize() for w in LANGUAGES))
_LANGUAGES_ONLY = re.compile(
    rf"^(?:{_LANGUAGE})(?:(?:,\s*|\s+(?:and|or)\s+|,\s+(?:and|or)\s+)(?:{_LANGUAGE}))*"
    r"(?=\s+(?:for|at|from|by|in)\b|$)"
)
# rules the product must meet, named as a thing ("public sector accessibility regulations",
# "the GDPR", "WCAG 2.2")
_RULES_TO_MEET = re.compile(
    r"^(?:(?:the|all|any|our|their|its)\s+)?(?:[\w-]+\s+){0,3}?(?:(?:regulations?|legislation"
    r"|laws?|standards|guidelines)(?=\s*(?:[,;.]|$)|\s+(?:for|of|on)\s)|(?:gdpr|wcag|hipaa|pci[\s-]dss)\b)",
    re.IGNORECASE,
)
# a role needed to do something ("a finance manager to approve the refund")
_ROLE_TO_ACT = re.compile(
    rf"^(?P<who>(?:the|a|an|our)\s+(?:[a-z-]+\s+)?(?:{PERSONA_FORMS}))\s+to\s+(?P<vp>[a-z].*)$",
    re.IGNORECASE,
)
# a charge at its rate ("VAT at twenty percent", "a late fee of ten pounds")
_CHARGE_AT = re.compile(
    r"^(?:an?\s+|the\s+)?(?:[a-z-]+\s+)?(?:vat|tax|fee|fees|deposit|surcharge|commission)"
    r"\s+(?:at|of)\s+\S",
    re.IGNORECASE,
)


# a message the product sends ("renewal reminder by email", "an email the day before")
_MESSAGE = re.compile(
    rf"^(?:(?:an?|the|some)\s+)?(?:[a-z-]+\s+){{0,2}}(?:{_MESSAGE_NOUN})\b"
    r"(?!\s+(?:address|template|inbox|list)s?\b)",
    re.IGNORECASE,
)


# a thing a rule is said of, with what picks it out ("anything above five hundred pounds",
# "claims over fifty pounds", "anything marked urgent")
_QUALIFIED = re.compile(
    r"^(?:anything|everything|any\s+[a-z]+|all\s+[a-z]+|every\s+[a-z]+|[a-z]+s)\s+"
    r"(?:above|over|under|below|more than|less than|older than|marked|flagged|tagged)\s+\S.*$",
    re.IGNORECASE,
)
# the people a rule is said of, by what they do ("anyone doing the holiday lunch club", "everyone
# working with children"): what they must have is required of them
_PEOPLE_QUALIFIED = re.compile(
    r"^(?:anyone|anybody|everyone|everybody|any\s+[a-z]+|all\s+[a-z]+|every\s+[a-z]+)\s+"
    r"(?:doing|working|driving|running|leading|handling|visiting|who)\s+\S.*$",
    re.IGNORECASE,
)


# what a need of one word is said of, named in its title: a thing ("hotels", "every claim"), not
# a person, the product or a pronoun
_OWNER = re.compile(
    r"^(?:(?:every|each|all|the)\s+(?:[a-z][\w-]*\s+)?)?(?P<head>[a-z][\w-]*?s?)$", re.IGNORECASE
)  # "hotels", "every claim", "each failed item"


def _other_thing(subject: str) -> bool:
    """Whether a subject names a thing other than the product: no product ("the remote", "it"),
    no pronoun, no people ("users", "staff", "patients") and nothing vague ("things")."""
    words = subject.lower().split()
    return bool(words) and not (
        _PRODUCT_SUBJECT.match(subject)
        or _is_user(subject)
        or PERSONA.search(subject)
        or any(w in _PRONOUNS or w in _VAGUE_THINGS for w in words)
    )


# what a part of the product does to signal something, with no object
_SIGNALS = SIGNAL_VERBS | {"glow", "light"}

_PRONOUNS = frozenset(
    """i we you he she it they this that these those who which everyone someone somebody nobody
    anyone""".split()
)
_VAGUE_THINGS = frozenset("things stuff ones others lots loads bits parts options".split())


def _owner(subject: str) -> str:
    """The subject a one-word need is said of, when it names a thing other than the product."""
    words = re.sub(r"\s+(?:still|also|only|just|always|really|then)$", "", subject.strip())
    found = _OWNER.match(words) if words else None
    if not found or not _other_thing(words):
        return ""
    if not found.group("head").lower().endswith("s") and not re.match(
        r"(?:every|each)\s", words, re.I
    ):
        return ""  # "the remote needs buttons" is said of the product: "a claim", "the room"
    return _lower_first(words)


# what a thing must include, show or say names the thing ("Include X in the export")
_SAYS_WHAT = frozenset("include contain show say display list".split())
# what is shown on a thing rather than in it ("Show the channel on the screen")
_SHOWN_ON = frozenset(
    "screen screens display displays page pages dashboard site website button buttons card"
    " cards label labels remote receipt receipts badge badges".split()
)


def _kept(thing: str, verb: str, where: str, obj: str, subject: str = "") -> Capability:
    """A thing that must stay where it is ("the comment stays on the claim"): "Keep the comment
    on the claim", "the comment to stay on the claim"; what wins is kept ("Keep teaching")."""
    means = f"{thing} to {verb} {where}" if where else thing
    return Capability(_trim(f"Keep {thing} {where}"), _trim(means), obj=obj, subject=subject)


def _container(subject: str) -> str:
    """The thing a statement says must include, show or say something ("the export", "each
    report", "the messages", "messages"), named as said; "" for the product, a pronoun or people."""
    words = subject.strip().split()
    plural = len(words) == 1 and len(words[0]) > 3 and words[0].lower().endswith("s")
    # up to four words, or seven with where it is ("the balance on the home screen")
    placed = len(words) <= 7 and any(w.lower() in ("on", "in", "of", "at") for w in words[2:])
    determined = (2 <= len(words) <= 4 or placed) and words[0].lower() in (
        "the",
        "each",
        "every",
        "our",
        "all",
    )
    if not (plural or determined):  # "messages", "the export"
        return ""
    return _lower_first(subject.strip()) if _other_thing(subject.strip()) else ""


# what a team does for others ("parking services approve each application")
_TEAM_VERB = frozenset("approve reject review assign authorise authorize sign".split())
# what only people do: "they" doing it are people
_PEOPLE_VERB = frozenset(
    """see view book rebook renew reserve choose pick select upload download log sign pay request
    search print rate comment reply approve submit register read call phone ask browse attend
    join cancel order buy attach share edit mark tick scan""".split()
)
PEOPLE_VERBS = _PEOPLE_VERB
_DOER_VERB = _PEOPLE_VERB | _TEAM_VERB  # what a plural subject does for others or itself
_LETS = re.compile(r"^(?:let|lets|allow|allows|enable|enables|help|helps)\b", re.IGNORECASE)


def _from_verb_phrase(rest: str, subject: str, wanted: bool = False) -> Capability:
    """``wanted``: said as someone's want; whoever wants is a person who acts ("Linda wants to
    see every doctor's day" -> "to see every doctor's day", not "the product to see ..."), unless
    the subject is the product ("it wants to ...")."""
    limited = re.match(
        r"^only\s+(?P<verb>[a-z]+)\s+(?P<rest>(?:before|after|on|at|in|from|between|during|within|once|twice|up to)\b.+)$",
        rest,
        re.I,
    )
    if limited and is_verb(limited.group("verb").lower()):
        # "juniors can only book before six on weekdays": the limit is the need ("book only
        # before six on weekdays")
        rest = f"{limited.group('verb')} only {limited.group('rest')}"
    rest = re.sub(
        r"^(?:(?:only|just|also|really|always|simply|still|even|definitely|ever)\s+)+", "", rest
    )  # "only ever say the date and time"
    how = re.match(r"^(?P<how>[a-z]+ly)\s+(?P<vp>(?P<verb>[a-z]+)\b.*)$", rest, re.IGNORECASE)
    if how and is_verb(how.group("verb").lower()):
        if how.group("how").lower() in _HEDGE_ADVERBS:  # "we could possibly do away with ..."
            rest = how.group("vp")
        elif _manner_adverb(how.group("how")):  # "archive surveys after 90 days automatically"
            rest = f"{_trim(how.group('vp'))} {how.group('how')}"
    lets = re.match(
        r"^(?:let|allow|enable|help)s?\s+(?:you|us|me|people|everyone|anyone)\s+(?:to\s+)?(?P<vp>.+)$",
        rest,
        re.IGNORECASE,
    )
    if lets and is_verb(lets.group("vp").split()[0].lower()):
        rest, subject = lets.group("vp"), "you"  # "the app should let you book a slot"
    only = re.match(r"^only\s+(?P<who>.+)$", subject.strip(), re.IGNORECASE)
    if only and _people(only.group("who")) and is_verb(rest.split()[0].lower()):
        # "only admins can delete a survey": who may, and what they do
        who = _lower_first(only.group("who"))
        # the title without which of them, when it does not fit ("Let only the waste services
        # staff see the reason"); the description says it all
        named = re.split(r"\s+(?:who|that|which)\b", who)[0]
        title = f"Let only {who} {rest}"
        if len(title.split()) > MAX_TITLE_WORDS:
            title = f"Let only {named} {rest}"
        # wanted as said: "only the teachers on that trip to see it" (not "to see it", which
        # drops the rule)
        return Capability(title, f"only {who} to {rest}", subject=only.group("who"))
    words = rest.split()
    first = words[0].lower()
    user = _is_user(subject) or subject.lower() in ("we", "i")
    user = user or (wanted and bool(subject) and not _PRODUCT_SUBJECT.match(subject))
    # "they should see their bookings": only people see, book, pay ... (not "the product to see")
    user = user or (subject.lower() == "they" and first in _PEOPLE_VERB)
    if first == "be" and len(words) > 2 and words[1].lower() == "able" and words[2] == "to":
        action = " ".join(words[3:])
        return Capability(_verb_phrase(action), f"to {action}", subject=subject)
    signals = 1 if first in _SIGNALS else 0
    if first in ("start", "stop") and len(words) > 1 and _base_of_gerund(words[1]) in _SIGNALS:
        signals = 2
    if signals and _other_thing(subject) and _NO_OBJECT.match(" ".join(words[signals:])):
        # "the battery icon on the LCD should start blinking when ...": a part of the product
        # that signals, named ("Make the battery icon on the LCD start blinking", not "Start
        # blinking when ..."); when it does is its criterion
        thing = _lower_first(subject)
        does = " ".join(words[:signals])
        return Capability(_cap(f"make {thing} {does}"), f"{thing} to {rest}", subject=subject)
    if first in ("stay", "remain") and len(words) > 1 and _other_thing(subject):
        thing = _lower_first(subject)  # "the comment has to stay on the claim"
        return _kept(thing, first, " ".join(words[1:]), obj=thing, subject=thing)
    container = _container(subject) if first in _SAYS_WHAT else ""
    if (
        container
        and len(words) > 1
        and words[1].lower() not in ("to", "it", "them", "up", "on", "in")
    ):
        # "the export has to include everything approved by the eighteenth": what goes in it;
        # "the messages should only say date and time, never the reason": what they say
        what = " ".join(words[1:])
        head, comma, tail = what.partition(", ")
        if comma and _list_at([head, *tail.split(", ")], 0):
            head, comma, tail = what, "", ""  # "the date, time and doctor": one list
        verb = "Include" if first == "contain" else capital(base_form(first))
        # in or on the container's head noun ("in the balance on the home screen")
        held_by = re.split(r"\s(?:on|in|of|at)\s", container)[0]
        on = "on" if held_by.split()[-1].lower() in _SHOWN_ON else "in"
        return Capability(
            f"{verb} {head} {on} {container}{comma}{tail}",
            f"{container} to {first if first != 'contain' else 'include'} {what}",
            subject=subject,
        )
    if first in _POSSESSION and len(words) > 1:
        what = " ".join(words[1:])
        if words[1].lower() in ("to", "it", "them", "that", "this", "rid") or (
            first not in ("have", "need") and _manner_adverb(words[-1])
        ):  # "get a result quickly": the adverb says how to get it, no thing to provide
            return Capability(_verb_phrase(rest), f"to {rest}", subject=subject)
        return _provide(what, subject)
    if first == "be" and len(words) > 1:
        return _be(" ".join(words[1:]), subject)
    negated = _NOT_VP.match(rest)
    if negated:
        return _prohibition(negated.group("vp"), subject, user)
    if user:
        return Capability(_verb_phrase(rest), f"to {rest}", subject=subject)
    acting = subject.split()[0] if subject.split() else ""
    if acting.lower().endswith("ing") and _base_of_gerund(acting) != acting and len(words) > 1:
        # "closing the job should send the tenant a text": what the product does when it is done
        doing = _lower_first(subject)
        title = f"{_verb_phrase(rest)} when {doing}"
        if len(title.split()) > MAX_TITLE_WORDS:
            title = _verb_phrase(rest)
        return Capability(title, f"{doing} to {rest}", subject=subject)
    routed = _routed(subject, words)
    if routed:
        return routed
    # what it is wanted of: a thing the statement names ("the queue has to work on a phone": the
    # queue to work on a phone), else the product
    head = re.split(r"\s+(?:that|which|who)\s+", subject)[0]  # "tickets that nobody has ..."
    determined = re.match(r"(?:the|our|each|every|all|their|its|these|those|your|my)\s", head, re.I)
    plural = len(head.split()) <= 3 and head.lower().endswith("s")  # "facilities"
    named = bool(determined or plural) and head.split()[0].lower() not in _SUBORDINATORS
    named = named and _other_thing(head) and not _LETS.match(rest)  # "let patients ...": theirs
    doer = _lower_first(subject) if named else "the product"
    if len(rest.split()) < MIN_TITLE_WORDS:  # "it has to work offline": "Make it work offline"
        thing = "it" if not subject or _PRODUCT_PRONOUN.match(subject) else subject
        return Capability(
            f"Make {_lower_first(thing)} {rest}", f"{doer} to {rest}", subject=subject
        )
    return Capability(_verb_phrase(rest), f"{doer} to {rest}", subject=subject)


# a thing that arrives in a place ("come into the app", "land in the ledger") or shows there
# ("appear on the dashboard", "show up in my calendar"): the product brings it or shows it
_ARRIVE = frozenset({"come", "arrive", "land", "flow", "feed"})
_APPEAR = frozenset({"appear", "show"})


def _routed(subject: str, words: list[str]) -> Capability | None:
    """'claims over five hundred should go to the finance director' -> 'Send claims over five
    hundred to the finance director' (where a thing goes is where the product sends it; not the
    product itself: 'the app should go to the home screen'); 'the price has to come from the
    tariff table' -> 'Take the price from the tariff table'; None for anything else."""
    first = words[0].lower() if words else ""
    verb = "Send"
    if first == "go" and len(words) > 2 and words[1].lower() == "to":
        where = " ".join(words[2:])
    elif first == "come" and len(words) > 2 and words[1].lower() == "from":
        # "the permit price has to come from the tariff table": where the product takes it
        verb, where = "Take", " ".join(words[2:])
    elif first == "reach" and len(words) > 1:
        where = " ".join(words[1:])
    elif first == "go" and len(words) > 2 and words[1].lower() == "out":
        # "the trip details should go out as a message with the consent request": what the
        # product sends, and how
        verb, where = "Send out", " ".join(words[2:])
    elif first in _ARRIVE and len(words) > 2 and words[1].lower() in ("into", "in"):
        # "the card transactions should come into the app automatically": what the product
        # brings in
        verb, where = "Bring", " ".join(words[2:])
    elif first in _APPEAR and len(words) > 2 and words[1].lower() in ("in", "on", "up"):
        # "new orders should appear on the dashboard", "bookings should show up in Outlook":
        # what the product shows, and where
        verb, where = "Show", " ".join(words[2 if words[1].lower() == "up" else 1 :])
    else:
        return None
    thing = subject.strip()
    if (
        not thing
        or _PRODUCT_PRONOUN.match(thing)
        or _PRODUCT_SUBJECT.match(thing)
        or _is_user(thing)
        or not names_a_thing(thing.lower().split())
    ):
        return None
    joiner = {"Send": "to ", "Take": "from ", "Bring": "into "}.get(verb, "")
    title = f"{verb} {_lower_first(thing)} {joiner}{where}"
    if len(title.split()) > MAX_TITLE_WORDS and verb in ("Bring", "Show"):
        # "..., daily ideally, not monthly": the title ends where the first clause does
        title = title.split(",")[0].strip()
    # "Send out the trip details as a message with ...": the title is cut where it reads
    if len(title.split()) > MAX_TITLE_WORDS and verb != "Send out":
        return None
    return Capability(title, f"{_lower_first(thing)} to {' '.join(words)}", subject=subject)


# words in -ly that are no adverb of manner
_NOT_MANNER = frozenset(
    """only early daily weekly monthly yearly hourly friendly family supply reply assembly anomaly
    monopoly july italy ugly lovely likely elderly costly lonely silly holy jelly belly rally ally
    bully lily fly apply rely comply imply multiply""".split()
)


# how sure the speaker is, not how it is done ("we could possibly do away with all buttons")
_HEDGE_ADVERBS = frozenset(
    """possibly probably presumably potentially hopefully ideally basically actually definitely
    certainly obviously really likely maybe perhaps surely honestly literally essentially
    generally usually normally""".split()
)


def _manner_adverb(word: str) -> bool:
    """'quickly', 'automatically': an adverb that says how something is done."""
    w = word.lower().strip(".,;:!?")
    return (
        len(w) > 4 and w.endswith("ly") and w not in _NOT_MANNER | _HEDGE_ADVERBS and not is_verb(w)
    )


# "we can't lose the battery" keeps it; "we can't have / afford / use X" leaves X out
_KEEP_VERBS = frozenset("lose drop remove ditch sacrifice".split())
_LEAVE_OUT_VERBS = _POSSESSION | frozenset("use afford put add".split())


# a figure that picks out whom a rule is on ("... above $5", "... over 18")
_FIGURE_QUALIFIER = re.compile(
    r"\s+(?:above|over|under|below|more than|less than|older than|younger than)\s+\S*\d\S*.*$"
    rf"|\s+(?:above|over|under|below|more than|less than)\s+{_NUMBER_WORD}\b.*$",
    re.IGNORECASE,
)


def _none_of(what: str) -> str:
    """The means of leaving a thing out: "no teletext"; "not to have my whole diary online" (not
    "no my whole diary online")."""
    if re.match(r"(?:my|our|your|his|her|their)\s", what, re.IGNORECASE):
        return f"not to have {what}"
    bare = re.sub(r"^any\s+", "", what, flags=re.IGNORECASE)  # not "no any extremes"
    return f"no {bare}"


def _prohibition(vp: str, subject: str, user: bool) -> Capability:
    """A need said with a negation: 'it shouldn't be too heavy' -> 'Do not make it too heavy';
    'we can't have solar panels with rubber' -> 'Leave out solar panels with rubber'; 'we can't
    lose the battery' -> 'Keep the battery'; 'users must not see phone numbers' -> 'Do not let
    users see phone numbers' (a rule on them, not their want)."""
    words = vp.split()
    first = words[0].lower()
    what = " ".join(words[1:])
    if first in ("have", "need") and len(words) > 2 and words[1].lower() == "to":
        return _no_need(" ".join(words[2:]))  # "you won't have to change the batteries"
    if first in _KEEP_VERBS and len(words) > 1:
        return Capability(f"Keep {what}", _lower_first(what), obj=what, subject=subject)
    qualified = _QUALIFIED.match(_trim(subject.strip()))
    if first in ("need", "require") and qualified and len(words) > 1:
        # "refunds under fifty euros shouldn't need a supervisor": what the rule is said of
        scope, bare = _lower_first(qualified.group(0)), _NOUN_OPENERS.sub("", what)
        return Capability(
            f"Do not require {what} for {scope}",
            f"no {bare} for {scope}",
            obj=what,
            subject=subject,
        )
    if first in _LEAVE_OUT_VERBS and content_words(what) and words[1].lower() not in ("to", "it"):
        bare = _NOUN_OPENERS.sub("", what)
        return Capability(f"Leave out {what}", _none_of(bare), obj=what, subject=subject)
    people = _subject_words(subject)
    able = re.match(r"be able to (?P<vp>\S.*)$", vp, re.IGNORECASE)
    if able and people.lower() in ("they", "someone", "somebody", "anyone", "anybody"):
        # "if someone misses three classes, they shouldn't be able to book": a rule on them
        who = "them" if people.lower() == "they" else people.lower()
        vp = able.group("vp")
        return Capability(f"Do not let {who} {vp}", f"{who} never to {vp}", subject=subject)
    if able and people and (_is_user(people) or PERSONA.search(people)):
        # "agents shouldn't be able to change the legal wording": a rule on them
        who, vp = _lower_first(people), able.group("vp")
        # "patrons with overdue fines above $5": the figure is for the criterion, the title
        # names who ("Do not let patrons with overdue fines check out items")
        short = _FIGURE_QUALIFIER.sub("", who)
        named = short if len(f"do not let {who} {vp}".split()) > MAX_TITLE_WORDS else who
        return Capability(f"Do not let {named} {vp}", f"{who} never to {vp}", subject=subject)
    if first == "be" and len(words) > 1:
        be = _be(what, subject)
        named = re.sub(r" to be .*$", "", be.means)
        return Capability(
            f"Do not {_lower_first(be.title)}", f"{named} not to be {what}", be.obj, subject
        )
    if user and people and people.lower() not in ("i", "we", "you", "one"):
        # "users must not delete a closed survey": a rule on them, not what they want
        who = _lower_first(people)
        return Capability(f"Do not let {who} {vp}", f"{who} never to {vp}", subject=subject)
    actor = "" if user else "the product "
    return Capability(f"Do not {vp}", f"{actor}never to {vp}".strip(), subject=subject)


def _no_need(vp: str) -> Capability:
    """A chore the product takes away: "I don't need to approve them"."""
    return Capability(f"Remove the need to {vp}", f"not to have to {vp}")


# what a cost must stay within ("our target", "the budget", "our cost target")
_BUDGET = re.compile(
    r"(?P<det>our|the|a)\s+(?P<noun>(?:cost\s+|price\s+)?(?:target|budget))", re.IGNORECASE
)


# a setting of the product, named as the thing it sets ("the limit", "the default priority",
# "the maximum file size", "the retention period")
_SETTING = re.compile(
    r"^(?:the|our|a|an)\s+(?:(?:default|maximum|minimum|max|min)(?:\s+[a-z-]+){0,2}"
    r"|(?:[a-z-]+\s+){0,2}(?:limit|maximum|minimum|default|threshold|cap|timeout|time-out"
    r"|deadline|cut-off|cutoff|quota|interval|retention period))$",
    re.IGNORECASE,
)


def _a_value(words: list[str]) -> bool:
    """Whether the words name a value a setting can take ("ten users per survey", "medium",
    "30 days"): short, no degree ("too low"), no clause."""
    low = [w.lower().strip(",.") for w in words]
    if not low or len(low) > 6 or low[0] in _NOT_A_VALUE:
        return False
    if re.search(r"[a-z](?:able|ible)$", low[0]):
        return False  # "the threshold should be configurable": what it can be done to
    return (
        bool(re.search(r"\d", " ".join(low)))
        or any(w in NUMBER_WORDS for w in low)
        or len(low) <= 2
    )


_NOT_A_VALUE = frozenset(
    "too very quite not never so really a an the that this it there what how".split()
)


# whom a thing is for, no one else ("payroll only", "admins only")
_ONLY_FOR = re.compile(r"(?P<who>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+only", re.IGNORECASE)


def _be(complement: str, subject: str) -> Capability:
    """'it should be fancy' -> 'Make it fancy'; 'the number should be shown on the LCD' ->
    'Show the number on the LCD'; 'users should be notified' -> 'Notify users'; 'we have to be
    careful with that word' is how the team should be, no capability (said as it was)."""
    words = complement.split()
    if subject.lower() == "there" and words and words[0].lower() not in ("not", "never"):
        # "there should be a way to reset your password", "there should be no ads"
        return _plain(complement) if words[0].lower() == "no" else _provide(complement)
    budget = _BUDGET.fullmatch(subject)
    amount = re.sub(r"^(?:only|just|about|around|roughly)\s+", "", complement, flags=re.I)
    if budget and amount_only(amount.lower().split()):
        # "our target is only twelve point five Euros": a limit on what it costs, not a target
        # to make
        noun = budget.group("noun").lower()
        return Capability(
            f"Keep within {budget.group('det').lower()} {noun} of {amount}",
            f"the product to keep within {budget.group('det').lower()} {noun} of {amount}",
            subject=subject,
        )
    setting = _SETTING.match(subject)
    if setting and words and _a_value(words):
        # "the limit is ten users per survey", "the default priority is medium": a setting
        said = f"{_lower_first(subject)} to {complement}"
        means = f"{_lower_first(subject)} to be {complement}"
        return Capability(f"Set {said}", means, obj=subject, subject=subject)
    if subject.lower() in ("we", "i", "you") and words and words[0].lower() in _ATTITUDES:
        said = f"{subject} to be {complement}"
        return Capability(_cap(said), said)
    only = _ONLY_FOR.fullmatch(complement.strip(" .!"))
    if only and subject and not _PRODUCT_PRONOUN.match(subject) and _is_user(only.group("who")):
        # "salary is payroll only": whom the thing is for, no one else ("student only": for
        # students)
        thing, who = _lower_first(subject), only.group("who")
        if singular_persona(who) == who.lower() and not who.lower().endswith("s"):
            who = f"{who}s"
        return Capability(
            f"Restrict {thing} to {who}",
            f"{thing} to be {complement.strip(' .!')}",
            obj=subject,
            subject=subject,
        )
    verb = base_form(words[0])
    thing = subject if subject and not _PRODUCT_PRONOUN.match(subject) else "it"
    named = thing if thing != "it" else "the product"
    if (verb in VERBS and verb != words[0].lower() and is_participle(words[0])) or (
        words[0].lower() in _SAME_AS_PARTICIPLE  # "the sync should be run every hour"
    ):
        tail = " ".join(words[1:])
        # "the receipt shall be printed or emailed, as the patron chooses": one action in the
        # title ("Print the receipt"), both in the statement (its criterion)
        tail = re.sub(
            r"^(?:and|or)\s+(\w+)\b(?!\s+by\b)[\s,]*",
            lambda m: "" if is_participle(m.group(1)) else m.group(0),
            tail,
        )
        title = f"{verb} {_lower_first(thing) if thing != 'it' else ''} {tail}"
        return Capability(
            _cap(re.sub(r"\s+", " ", title).strip()),
            f"{_lower_first(named)} to be {complement}",
            obj=thing if thing != "it" else "",
            subject=subject,
        )
    with_thing = re.match(r"with\s+(?P<what>(?:an?|the|some)\s+.+)$", complement, re.IGNORECASE)
    if with_thing and thing == "it":  # "it has to be with a back light": a thing it has
        return _provide(with_thing.group("what"), subject)
    if (
        _THERE_TO_HAVE.match(complement)
        and thing != "it"
        and names_a_thing(thing.lower().split())
        and not thing.lower().split()[0].endswith("ing")  # "booking online": an action
    ):
        return _provide(thing, subject)  # "speech recogniser can be possible": a thing to have
    if re.match(r"in\s+[A-Z]", complement) and thing != "it":
        # "the booking page should be in Polish and Arabic": a language or a format it comes in
        return Capability(
            f"Provide {_lower_first(_named(thing))} {complement}",
            f"{_lower_first(named)} to be {complement}",
            obj=thing,
            subject=subject,
        )
    placed = _PLACED.match(complement)
    if placed and thing != "it":  # "the joystick is for the volume": where or what it is for
        lead = "Use" if placed.group(1).lower() == "for" else "Put"
        return Capability(
            f"{lead} {_lower_first(_named(thing))} {complement}",
            f"{_lower_first(named)} to be {complement}",
            obj=thing,
            subject=subject,
        )
    if thing == "it" and _A_VALUE_TO_USE.match(complement):
        # "for card transactions it should be the actual sterling amount that was charged": the
        # value to use, not what the product is ("Make it the actual sterling amount")
        return Capability(f"Use {complement}", f"{complement} to be used", obj=complement)
    lead = "Keep" if _KEEP_WORDS.match(complement) else "Make"
    return Capability(
        f"{lead} {_lower_first(_named(thing))} {complement}",
        f"{_lower_first(named)} to be {complement}",
        obj=thing if thing != "it" else "",
        subject=subject,
    )


# a value named as what "it" should be ("the actual sterling amount that was charged", "the rate
# on the date of the transaction")
_A_VALUE_TO_USE = re.compile(
    r"the\s+(?:[\w-]+\s+){0,3}?(?:amount|rate|price|cost|total|figure|value|sum|fee|currency)s?\b",
    re.IGNORECASE,
)

# a thing said to be somewhere or for something ("the joystick is for the volume and the channels",
# "the power button is at the top"): "Make the joystick for the volume ..." does not read
_PLACED = re.compile(
    r"(for|in|on|at|under|above|below|beside|next to)\s+(?:the|a|an|our|its|each|every)\b", re.I
)

# what a thing said to be "possible" or "available" is: a thing the product has
_THERE_TO_HAVE = re.compile(
    r"(?:(?:also|still|really|definitely|always)\s+)?(?:possible|available|included)$", re.I
)


# the words before a "don't have / use" that name who does not, when that is not the team
# deciding ("half the warehouse staff don't have a desk"); "we" / "let's" / a clause start
# decide, and what people don't want or need is theirs ("then they don't need to scan")
_SOMEONE_ELSE_DOESNT = re.compile(
    r"(?<![,;:])\s(?!(?:and|but|so|then|just|please|really|we|i|you|let's|us)\s*$)[a-z']+\s*$",
    re.IGNORECASE,
)


def _dropped(text: str) -> Capability | None:
    """'Let's not do the waiting list after all', 'the live map is out' -> 'Leave out ...'."""
    text = re.sub(r"[\s,]+(?:after all|anymore|any more|then|for now|either)?[\s.!?]*$", "", text)
    for pattern in (
        _WANTED_BUT_OUT,
        _NICE_BUT_LATER,
        _IS_OUT,
        _LETS_NOT,
        _NO_NEED,
        _NO_CHORE,
        _KEPT_OUT,
        _MUST_GO,
        _GOES,
    ):
        m = pattern.search(text)
        if m and re.search(r"\bso(?: that)?\s+\w+\s*$", text[: m.start()], re.IGNORECASE):
            continue  # "..., so I don't have to chase people": the reason, not the need
        if (
            m
            and pattern is _LETS_NOT
            and m.group(0).lower().startswith("don")
            and m.group("verb").lower() in ("have", "use", "using")
            and _SOMEONE_ELSE_DOESNT.search(text[: m.start()])
        ):
            continue  # "..., half the warehouse staff don't have a desk": how they are, no drop
        if m and re.match(r"(?:that|this|it|them)\b", m.group("what"), re.IGNORECASE):
            continue  # "we don't consider that a problem": no thing left out
        if (
            m
            and pattern is _GOES
            and (PERSONA.search(m.group("what")) or _describes_people(m.group("what")))
        ):
            continue  # "then the patient goes away": where someone goes, nothing left out
        first = _PERSONA_START.match(text)
        if (
            m
            and first
            and "," in text[: m.start()]
            and base_form(first.group("verb").lower()) in VERBS
            and first.group("verb").lower() not in _NOT_A_NEED_VERB
        ):
            continue  # "members pay by card or direct debit, we don't want cheques": the need
        if m and content_words(m.group("what")):
            what = re.split(
                r",|\s+(?:after all|anymore|any more|yet|for now|because|too|as well)\b",
                m.group("what"),
            )[0]
            what = _trim(what)
            first_word = what.split()[0] if what.split() else ""
            if m.start("what") == 0 and not re.search(r"[A-Z]", first_word[1:]):
                what = _lower_first(what)  # "Sick leave is out of scope": "Leave out sick leave"
            to = re.match(r"to\s+(?P<verb>\w+)\s+(?P<rest>.+)$", what, re.IGNORECASE)
            if to and to.group("verb").lower() in _POSSESSION | {"use"}:
                what = to.group("rest")  # "we don't have to have a lot of audio options"
            elif to and pattern is _WANTED_BUT_OUT:
                # "Members want to put their match results in ..., but that's for later": what
                # they would do is what is left out ("Leave out putting their match results in")
                rest = re.sub(
                    r"\b(and|or)\s+([a-z]+)\b",
                    lambda a: f"{a.group(1)} {_gerund(a.group(2)) if is_base_verb(a.group(2)) else a.group(2)}",
                    to.group("rest"),
                )  # "... and see a league table": "and seeing"
                doing = f"{_gerund(to.group('verb'))} {rest}"
                return Capability(f"Leave out {doing}", f"{doing} to be left out", obj=doing)
            elif to and m.groupdict().get("verb", "").lower() == "want":
                vp = what[3:]  # "I don't want to lose a photo"
                return Capability(f"Do not {vp}", f"never to {vp}")
            elif to:  # "I don't need to approve them": a chore the product takes away
                return _no_need(what[3:])
            done = _done_to(what)
            if done:
                return done
            bare = _NOUN_OPENERS.sub("", what)
            whom = _DROPPED_FOR.match(text[m.end() :]) if pattern is _IS_OUT else None
            if whom:  # "Fines are dropped for children's cards": for them alone
                what = f"{what} {whom.group('for')}"
                return Capability(f"Leave out {what}", f"no {_lower_first(what)}", obj=what)
            return Capability(f"Leave out {what}", _none_of(bare), obj=what)
    return None


# whom or what a drop applies to, said after it ("... are dropped for children's cards")
_DROPPED_FOR = re.compile(r"^\s+(?P<for>for\s+(?!now\b|good\b|the moment\b)[^,;:.!?]+)", re.I)


_DONE_TO_PRONOUNS = frozenset("it this that them these those things anything everything".split())


def _done_to(what: str) -> Capability | None:
    """'I don't want my location logged' -> 'Do not log my location': what must not be done to
    a thing, not the thing left out ("Leave out my location logged")."""
    words = what.split()
    done = words[-1].lower() if words else ""
    obj = " ".join(words[:-1])
    act = base_form(done)
    if len(words) < 2 or not is_participle(done) or act == done or not is_verb(act):
        return None
    if not content_words(obj) or obj.lower() in _DONE_TO_PRONOUNS:
        return None
    return Capability(f"Do not {act} {obj}", f"{_lower_first(obj)} not to be {done}", obj=obj)


# Said without a modal, "X is / are Y" about people or the speaker's own describes the world, not
# the product: "the early adopters of a new device are young people", "half the no-shows are
# people who couldn't face sitting on hold", "my head of department is Richard" ("Make my head of
# department Richard" is no capability)
_PEOPLE_SUBJECT = re.compile(
    r"(?:people|persons?|adopters?|no-shows?|children|kids|teenagers|men|women|guys|folks"
    rf"|everyone|everybody|nobody|{PERSONA_FORMS})",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(r"(?:my|your|his|her|their)$", re.IGNORECASE)
_RELATIVE_IN = re.compile(r"\b(?:who|that|which|whose)\b", re.IGNORECASE)

_HEAD_ENDS = re.compile(r"\s+(?:of|near|in|at|on|for|with|from)\s.*$", re.I)


def _describes_people(subject: str) -> bool:
    """Whether the subject of a plain "X is / are Y" is people or the speaker's own: its head
    noun, the last word before any "of" / "near" ... ("the early adopters of a new device"; not
    "the only hotel near the client", "nurse appointments"), or a possessive opening ("my head
    of department")."""
    subject = subject.strip()
    if _RELATIVE_IN.search(subject):
        return False  # "the people who are good with computers get them": not its verb
    head = _HEAD_ENDS.sub("", subject).split()
    return bool(head) and bool(
        _POSSESSIVE.match(head[0]) or _PEOPLE_SUBJECT.fullmatch(head[-1].strip(",.;:"))
    )


_COPULA = re.compile(r"^(?P<subject>(?:[\w'-]+,?\s+){1,7}?)(?:is|are)\s+(?P<next>[\w'-]+)", re.I)


def is_people_description(text: str) -> bool:
    """A plain "X is / are Y" said of people or the speaker's own ("the early adopters are young
    people"), not "X is / are done" ("users are notified")."""
    m = _COPULA.match(text.strip())
    return (
        m is not None
        and not is_participle(m.group("next").lower())
        and _describes_people(m.group("subject"))
    )


# what people think, find or say of something is a finding, not a capability ("it seems that
# people find teletext relevant", "users say the buttons are too small")
_OPINION_VERBS = frozenset("find think feel say believe know guess reckon seem tend".split())
_FINDING = re.compile(
    rf"^(?:(?:the |all |our |most |many |some )?(?:people|{PERSONA_FORMS})|they)\s+"
    r"(?:(?:also|often|usually|mostly|generally|always|really)\s+)?(?P<verb>[a-z]+)\b",
    re.IGNORECASE,
)


# a judgement of a figure just said ("Hmm, two weeks is harsh.", "Ten is plenty.", "Seven is
# fine"): said of that need, which it confirms or questions, no need of its own
_JUDGES_A_FIGURE = re.compile(
    r"^(?:(?:but|and|so|well|hmm|um|uh|yeah|yes|no|i think|honestly)[\s,]+)*"
    r"(?P<figure>[\w.-]+(?:\s+[\w-]+)?)\s+(?:is|are|'s|sounds|seems|feels)\s+"
    r"(?:(?:a bit|a little|far|way|too|quite|very|rather|pretty|more than|just)\s+)*"
    r"(?:harsh|long|short|much|little|steep|high|low|strict|tight|generous|ambitious|a lot"
    r"|plenty|enough|fine|ok|okay|right|reasonable|fair|excessive|too many|too few|slow|fast"
    r"|quick|late|early|soon|often|frequent|rare)\b"
    # "at peak", "for us", "in practice": when or for whom it is judged so
    r"(?:\s+(?:at|for|in|on|during)\s+(?:\w+\s+)?\w+)?"
    r"[\s,.!]*(?:though|then|really|i think)?[\s.!]*$",
    re.IGNORECASE,
)
# a span of time said with "a" ("a minute is too slow")
_A_SPAN = re.compile(r"^(?:a|an)\s+(?:second|minute|hour|day|week|fortnight|month|year)$", re.I)


# "But only if the member has an email address on file.": a condition said after the need it
# limits, with no need of its own
_ONLY_IF = re.compile(
    r"^(?:(?:but|and|so|well)[\s,]+)?(?P<cond>(?:only (?:if|when)|unless|as long as"
    r"|provided(?: that)?|except (?:if|when))\b[^,;]*?)[\s.!]*$",
    re.IGNORECASE,
)


def limits_the_need_before(text: str) -> str | None:
    """The condition a sentence adds to the need said before it ("only if the member has an
    email address on file"), or None (``_ONLY_IF``)."""
    m = _ONLY_IF.match(clean(text))
    return m.group("cond") if m else None


# the words a short reply opens with before what it says ("Yes, ...", "Um, ...")
_REPLY_OPENING = r"^(?:(?:and|but|so|yes|yeah|well|okay|ok|um|uh)\W+)*"
# who a need is for, said alone after it ("For under sixteens anyway.", "Only for staff.")
_FOR_WHOM = re.compile(
    _REPLY_OPENING + r"(?P<only>only\s+|just\s+)?for\s+"
    r"(?P<who>(?:the\s+)?[\w-]+(?:\s+[\w-]+){0,3}?)"
    r"(?:\s*,?\s*(?:anyway|only|though|at least|for now|obviously|of course))?\W*$",
    re.IGNORECASE,
)


def for_whom(text: str) -> str | None:
    """Which people the need just said is for, when a sentence says only that: a role ("Only
    for staff." -> "Only for staff") or an age ("For under sixteens anyway." -> "For under
    sixteens"), a limit of that need; None otherwise."""
    said = _FOR_WHOM.match(clean(text))
    if said is None:
        return None
    who = said.group("who")
    if not (PERSONA.search(who) or re.match(r"(?:the\s+)?(?:under|over)[\s-]+\w+", who, re.I)):
        return None
    return f"{'Only for' if said.group('only') else 'For'} {who}"


# how a need is met, said alone after it ("By text, ideally, because it's important.", "By
# email, please."): the channel or means, a hedge, a reason
_BY_WHAT = re.compile(
    _REPLY_OPENING + r"(?P<by>by\s+(?!the way\b)"
    r"(?:(?:a|an|the)\s+)?[\w-]+(?:\s+(?:or|and)\s+(?:(?:a|an|the)\s+)?[\w-]+)?)"
    r"(?:\s*,?\s*(?:ideally|preferably|please|obviously|of course|if possible|i think|i'd say))*"
    r"(?:\s*,?\s*(?:because|'cause|since)\b[^?]*)?[^\w?]*$",
    re.IGNORECASE,
)


def by_what(text: str) -> str | None:
    """How the need just said is met, when a sentence says only that ("By text, ideally, because
    it's important." -> "By text"); None otherwise."""
    said = _BY_WHAT.match(clean(text))
    return capital(said.group("by")) if said else None


# how hard something is to do, said of it ("The carers thing is harder, legally, that's consent
# stuff.", "Refunds are more complicated"): a judgement of the work, no need (a need says it with
# a modal: "it should be harder to delete"; "the voice recognition is simpler" and "the rubber
# is harder" say what a thing is like)
_JUDGES_THE_WORK = re.compile(
    r"^(?:(?:and|but|so|well|yeah|yes|no|oh|um|uh)\W+)*(?:(?:the|that|this)\s+)?[\w -]{0,40}?"
    r"\w(?:\s+(?:is|are|gets|get)|'s)\s+(?:a\s+lot\s+|a\s+bit\s+|much\s+|way\s+|far\s+|even\s+)?"
    r"(?:harder(?=\s*,?\s*(?:legally|technically|to\s))|trickier"
    r"|more\s+(?:difficult|complicated|work|painful))\b",
    re.IGNORECASE,
)
# words that say something is needed now ("we need ...", "it should ...", "can't"): a sentence
# with one says more than how things were or how hard they are
NEEDED_NOW = re.compile(
    r"\b(?:need|needs|must|should|has to|have to|want|wants|'d like|would like|going to|will"
    r"|'ll|can't|cannot)\b",
    re.IGNORECASE,
)


def judges_the_work(text: str) -> bool:
    """Whether a sentence only judges how hard something is (``_JUDGES_THE_WORK``) and says
    nothing needed."""
    said = clean(text)
    return bool(_JUDGES_THE_WORK.match(said)) and not NEEDED_NOW.search(said)


def judges_a_figure(text: str) -> bool:
    """Whether a sentence only judges a figure ("two weeks is harsh"): ``_JUDGES_A_FIGURE``."""
    m = _JUDGES_A_FIGURE.match(clean(text))
    if m is None:
        return False
    return bool(number_tokens(m.group("figure")) or _A_SPAN.match(m.group("figure")))


def is_finding(text: str) -> bool:
    """What people think, find or say of something, said without a modal ("people find teletext
    relevant"): a finding of the meeting, not a capability or a check."""
    m = _FINDING.match(text.strip())
    if not m or m.group("verb").lower() not in _OPINION_VERBS:
        return False
    # "users find the buttons easily in the dark" finds them: a need, not an opinion
    said = re.split(r"[,;:]|\s(?:but|and|if|when|because)\s", text[m.end() :])[0]
    return m.group("verb").lower() != "find" or not re.search(r"\w+ly\b", said)


# how one thing compares with another on cost, ease or worth, or what a cost comes to, said
# without a modal: a finding of the design, no need ("the LCD is cheaper than speech
# recognition", "then the costs will be much higher", "our budget is too low to use an LCD",
# "teletext is less relevant"); "it should be cheaper than the old one" has a modal and is one,
# and "the buttons used most are bigger than the rest" says how the product is made
_COMPARES = re.compile(
    r"^(?P<thing>(?:[\w'-]+,?\s+){1,7}?)(?:is|are|will be|would be|was|were)\s+"
    r"(?:(?:much|a lot|far|way|even|also|still|slightly|so|really|very|a bit|a little)\s+)*"
    r"(?:(?:cheaper|dearer|better|worse|easier|harder|simpler|(?:more|less)\s+[a-z]+)\s+than\b"
    r"|(?:more|less)\s+(?:relevant|important|interesting|popular|common|useful|used|expensive)\b"
    r"|too\s+[a-z]+\s+to\b|(?:very|really|quite|so)\s+(?:relevant|important|interesting)\b"
    r"|(?P<cost>higher|lower|more|less)\s*(?:[,.;!]|$))",
    re.IGNORECASE,
)
# what a cost is named by ("the costs will be much higher")
_COST_THING = re.compile(r"\b(?:costs?|price|prices|bill|spend|budget)\s*$", re.IGNORECASE)
# what a comparison is said of when it is the product itself ("it's lighter than ..."): a quality
_COMPARED_IS_THE_PRODUCT = re.compile(r"^(?:it|this|the product|the app|the system)\s+$", re.I)


# a modal that says what will be, not what must be ("the costs will be much higher")
_FORECAST = re.compile(r"\b(?:will|would)\s+be\b|'ll\s+be\b|'d\s+be\b", re.IGNORECASE)


# what a sum comes to, said of it ("then it's only thirteen Euros", "the total is twelve Euros
# fifty"): the cost worked out in the meeting, no need ("Provide it's only thirteen Euros")
_COMES_TO = re.compile(
    r"^(?:it|that|this|the\s+(?:total|sum))(?:'s|\s+is|\s+comes\s+to)"
    r"\s+(?:(?:only|just|about|around|roughly|exactly)\s+)?(?P<amount>.+?)[.!]?$",
    re.IGNORECASE,
)


def is_comparison(text: str) -> bool:
    """Whether a clause only compares a thing with another, weighs how much it matters or says
    what its cost comes to, without a modal (``_COMPARES``, ``_COMES_TO``): a finding, no
    capability; what the product itself is like stays one ("it is lighter than the old one")."""
    sum_said = _COMES_TO.match(text.strip())
    if sum_said and amount_only(sum_said.group("amount").lower().split()):
        return True
    m = _COMPARES.match(text.strip())
    if m is None or _COMPARED_IS_THE_PRODUCT.match(m.group("thing")):
        return False
    if m.group("cost") and not _COST_THING.search(m.group("thing")):
        return False  # "the volume will be higher": how a thing of the product will be
    # "the price will be lower than twenty Euros": a bound by its figure, a need
    return not (m.group(0).endswith("than") and number_tokens(text[m.end() :].split(",")[0]))


# what people will do anyway, said as a forecast ("if we block it, people will just split the
# hotel into two lines", "they'll just ring reception instead"):
# a risk the meeting weighs, not what the product does for them; the adverb makes it one ("users
# will get an email" is what the product does)
_PEOPLE_WILL = re.compile(
    rf"(?:^|[,;]\s*|\b(?:but|and|so|then|otherwise)\s+)(?:(?:the|our|most|some)\s+)?"
    rf"(?:people|they|everyone|everybody|(?:{PERSONA_FORMS}))(?:\s+will|'ll|\s+would|'d)\s+"
    r"(?:(?:just|simply|probably|still|always|all|only)\s+)+(?P<verb>[a-z]+)\b",
    re.IGNORECASE,
)


def forecast_verb(text: str) -> str:
    """The verb of what people will do anyway, said as a forecast in ``text`` (``_PEOPLE_WILL``:
    "people will just split the hotel into two lines" -> "split"), or ""."""
    found = _PEOPLE_WILL.search(clean(text))
    verb = found.group("verb").lower() if found else ""
    return "" if verb in ("like", "want", "need", "love", "prefer", "be", "have") else verb


# a need whose object points back at what was said before ("I don't want to book that thirteen
# times", "we can load those automatically"): a verb after a modal or "to", then "that" /
# "those" / "these" / "them" that names no clause or things of its own ("know that it ...",
# "those of the council")
NEED_POINTS_BACK = re.compile(
    r"\b(?:to|can|could|should|must|will|'ll|n't|not)\s+(?:just\s+|also\s+)?[a-z]+\s+"
    r"(?P<it>that|those|these|them)\b(?!\s+(?:it|they|we|you|i|he|she|the|a|an|there|this"
    r"|people|of|which|that|who)\b)",
    re.IGNORECASE,
)


def forecasts_a_comparison(clause: str) -> bool:
    """Whether a clause says what a thing will be next to another or what it will cost ("then
    the costs will be much higher"): ``is_comparison`` with "will be" or "would be"."""
    return bool(_FORECAST.search(clause)) and is_comparison(clause)


# what one thing takes, said of it as a fact ("The display requires an advanced chip, which is
# more expensive", "Clap detection means a microphone that is always listening"): a finding of
# the design, no need (a need says who wants it, or a modal: "the app should require a login")
_DEPENDS_ON = re.compile(
    r"^(?:[-*\u2022]\s+)?(?:(?:so|and|but|well|note that|okay)[\s,]+)*"
    r"(?:(?:the|a|an)\s+)?(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})\s+(?:requires|means)\s+"
    r"(?!that\b)",
    re.IGNORECASE,
)
# "so that means we need an advanced thing": what was said before, and the need it gives
_POINTS_BACK = frozenset("it which what that this".split())


def states_a_dependency(text: str) -> bool:
    """Whether a sentence says what a thing takes (``_DEPENDS_ON``), not what anyone needs."""
    m = _DEPENDS_ON.match(clean(text))
    if m is None or PERSONA.match(m.group("thing")):
        return False
    return m.group("thing").split()[0].lower() not in _POINTS_BACK


# how the team should be ("we have to be careful with that word", "we need to be sure of the
# costs"): no capability of the product
_ATTITUDES = frozenset("careful aware sure certain realistic honest clear".split())


# "have a look", "have a think": talk, not a thing to provide
_HAVE_A_TALK = re.compile(
    r"(?:a|an|another)\s+(?:look|go|think|chat|word|try|break|meeting|question|minute|second"
    r"|moment|discussion|vote)\b",
    re.IGNORECASE,
)


# a limit said before what it limits: "under two seconds to show the free slots"
_LIMIT_FIRST = re.compile(
    r"^(?P<limit>(?P<within>in\s+|within\s+)?(?:under|less than|no more than|not more than"
    r"|at most|below|fewer than)?\s*(?P<amount>(?:\d[\d.,]*|a|an|one|two|three|four|five|six"
    r"|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|a few"
    r"|a couple of)\s+[a-z]+))\s+to\s+(?P<vp>(?P<verb>[a-z]+)\b.*)$",
    re.IGNORECASE,
)
# a rule said of nobody without a modal: "nobody bumps anybody"
_NOBODY_DOES = re.compile(
    r"^(?P<who>nobody|no one|no-one)"
    r"(?P<but>\s+else|\s+(?:outside|except|other than|apart from)\s+(?:\S+\s+){0,2}?\S+"
    r"(?=\s+\w+s\b))?"
    r"\s+(?P<verb>[a-z]+)\b\s*(?P<rest>.*)$",
    re.IGNORECASE,
)  # "nobody outside HR sees individual answers"


# what nobody thinks, knows or minds is talk, not a rule ("nobody knows", "nobody cares")
_NOBODY_TALK = (
    _OPINION_VERBS
    | _NOT_A_NEED_VERB
    | frozenset("want need care mind mean remember forget worry bother".split())
)


def _bare_present(word: str) -> str:
    """The base form of a verb in the third person present ("bumps" -> "bump", "pushes" ->
    "push", "carries" -> "carry"), said after a subject such as "nobody"; "" for any other word
    (a form of be, have or do, a word not in -s)."""
    w = word.lower()
    if not w.endswith("s") or w.endswith("ss") or w in ("is", "was", "has", "does", "goes"):
        return ""
    if base_form(w) in VERBS:
        return base_form(w)
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if re.search(r"(?:sh|ch|x|z)es$", w):
        return w[:-2]
    return w[:-1]


# a count said first, and what it bounds ("no more than two people from the same team off on the
# same day", "max 200 photos on the phone before sync")
_BOUND_FIRST = re.compile(
    r"^(?:no more than|not more than|at most|max(?:imum)?|up to)\s+"
    rf"{_FIGURE_SAID}\s+"
    r"(?P<thing>[a-z][\w' -]*[a-z])[.!]?$",
    re.IGNORECASE,
)


# a bound said of a thing named first, as notes and recaps say it ("Group rooms, minimum two
# people.", "Desks, four hours max.", "And bookings, at most two a week.")
_LABELLED_BOUND = re.compile(
    r"^(?:(?:and|so|okay|ok|right)[\s,]+)*"
    r"(?P<thing>(?:the\s+)?[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3}),\s+(?:"
    rf"(?:(?P<low>minimum|min|at least)|(?:maximum|max|at most|up to|no more than))\s+"
    rf"(?P<n>{_FIGURE_SAID})\s+(?P<unit>[a-z]+(?:\s+(?:a|per)\s+[a-z]+)?)"
    rf"|(?P<n2>{_FIGURE_SAID})\s+(?P<unit2>[a-z]+)\s+(?:(?P<low2>minimum|min)|max|maximum|tops)"
    r")\b[^,;]*?(?:[,;]|[.!]?$)",
    re.IGNORECASE,
)


def _limit_first(clause: str) -> Capability | None:
    """A limit said before the verb phrase it limits ("under two seconds to show the free
    slots"): the verb phrase first, the limit after it ("Show the free slots in under two
    seconds")."""
    m = _LIMIT_FIRST.match(clause)
    if not m or m.group("limit").strip().lower() == m.group("amount").strip().lower():
        return None  # "two people to ...": no limit, a figure
    verb = m.group("verb").lower()
    if base_form(verb) != verb or not is_verb(verb):
        return None
    if not any(q.text.lower() == m.group("amount").lower() for q in quantities(m.group("amount"))):
        return None  # "under the hood to ...": no amount
    limit = _lower_first(m.group("limit").strip())
    if not m.group("within"):
        limit = f"in {limit}"
    vp = _trim(m.group("vp"))
    # who does it is not said: people book and pay ("I want to book a room in under five
    # minutes"), the product shows ("I want the product to show the free slots in under two
    # seconds", not "I want under two seconds to show the free slots")
    doer = "to" if verb in PEOPLE_VERBS else "the product to"
    return Capability(f"{_cap(vp)} {limit}", f"{doer} {vp} {limit}")


_CAUSATIVE = frozenset("let make help have see watch hear get keep leave set find".split())


def _plural_subject_first(words: list[str]) -> bool:
    """'Staff bookings show the name': a plural subject and its verb, though its first word can
    be a verb ("staff"); never after a verb that makes something do it ("let users choose")."""
    if len(words) < 3 or words[0].lower() in _CAUSATIVE:
        return False
    second, third = words[1].lower(), words[2].lower().strip(",.")
    return (
        second.endswith("s")
        and not second.endswith("ss")
        and ((is_base_verb(third) and third not in ("be", "have")) or third == "are")
    )  # "Survey results are shown per business unit"


_PREPOSITION_FIRST = frozenset("to on in at for from with by".split())
_PARTICLES = frozenset("back up out down off away over through along".split())
_NOUN_AFTER = frozenset("of per about into".split())  # prepositions, with _PREPOSITION_FIRST
DETERMINERS = frozenset(
    "the a an our their your my his her its all each every these those this some any no".split()
)


# what a message or a screen may hold ("messages only ever say date, time and doctor")
_ONLY_SAYS = re.compile(
    r"^(?P<thing>(?:the |all |our )?(?:[a-z-]+\s+)?(?:messages|texts|emails|notifications|reminders"
    r"|screens|labels|receipts|reports))\s+(?P<rest>only\s+(?:ever\s+)?(?:say|show|contain|include"
    r"|list)\s+(?P<what>[^;.!?]+?))(?:,\s+(?:nothing|no)\s+[^,;.!?]+)?[.!]?$",
    re.IGNORECASE,
)


def _made(thing: str, said: str, means: str) -> Capability:
    """The need that ``thing`` be as ``said`` ("Make slot length depend on the appointment
    type"), wanted as ``means`` ("slot length to depend on ...")."""
    return Capability(_cap(f"make {thing} {said}"), f"{thing} to {means}", obj=thing, subject=thing)


# a verb that only says how one thing goes with another, said of a thing ("slot length depends on
# the appointment type", "the discount applies to members only")
_DEPENDS = re.compile(
    r"^(?!(?:it|this|that|which|everything|all|that's|it's|well|so)\b)"  # "it depends": talk
    r"(?P<subject>(?:the |all |our |each |every )?[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)\s+"
    r"(?P<verb>depends|depend|applies|apply|varies|vary|differs|differ)\s+(?P<rest>(?:on|to|by"
    r"|with|from)\b.*)$",
    re.IGNORECASE,
)
# verbs in -s that are never a plural noun
_THIRD_PERSON_ONLY = frozenset("goes does has says is was stays remains".split())
# a word that is a verb and, with no object after it, a state ("under sixteens free, with an
# adult": free of charge, not "to free" them)
_ALSO_A_STATE = frozenset("free open clear empty clean secure".split())
_NO_OBJECT_AFTER = re.compile(
    r"^(?:\W*$|\s*,|\s+(?:with|for|over|under|until|on|at|after|before|of|in|up|from)\b)", re.I
)


# a message named by what it is about, its first word also a verb ("Reorder alert when ...",
# "Price alert ...", "Stock reminder ..."); not a verb acting on messages ("Send reminders ...",
# "Mute notifications ...")
_NAMED_MESSAGE = re.compile(
    r"^(?!(?:send|get|receive|show|display|schedule|set|turn|switch|enable|disable|mute|snooze"
    r"|add|remove|delete|allow|stop|start|trigger|read|dismiss|clear|hide|configure|create|write"
    r"|edit|forward|escalate|resend|email|text|push|sms|group|batch|limit|log|queue|combine)\b)"
    r"[a-z]+\s+(?:alert|reminder|notification|message|digest|summary)\b(?!\s+(?:the|a|an|to|them"
    r"|him|her|us|me)\b)",
    re.IGNORECASE,
)


# things counted, and nothing said of them ("three strikes and a one week ban", "two reminders,
# then a final notice"), never a count doing something ("three strikes" is no "three" striking)
_COUNTED_THINGS = re.compile(
    rf"^(?:{_NUMBER_WORD}|\d+)\s+[a-z]+s\b(?=\s*(?:,|\band\b|\bthen\b|\bfor now\b|$))",
    re.IGNORECASE,
)


def _plain(clause: str) -> Capability:
    """A statement without a modal: a notes bullet, a decision, a description of behaviour."""
    clause = _trim(clause)
    nobody = _NOBODY_DOES.match(clause)
    verb = _bare_present(nobody.group("verb")) if nobody else ""
    if nobody and verb and verb not in _NOBODY_TALK:  # "nobody bumps anybody": what no one may do
        vp = _trim(f"{verb} {nobody.group('rest')}")
        but = nobody.group("but") or ""
        return Capability(
            _limit_on_anyone(vp, but) or f"Do not let anyone{but} {vp}",
            f"{nobody.group('who').lower()}{but} to {vp}",
            subject=f"{nobody.group('who').lower()}{but}",
        )
    leave = _LEAVE_OUT.match(clause)
    if leave:
        what = re.sub(r"\b(?:and|or) no\s+", "and ", leave.group("what"), flags=re.IGNORECASE)
        what = re.sub(r"\.\s.*$", "", what)
        return Capability(f"Leave out {_trim(what)}", _none_of(_trim(what)), obj=_trim(what))
    timed = _limit_first(clause)
    if timed:
        return timed
    bounded = _BOUND_FIRST.match(clause)
    if bounded and len(bounded.group("thing").split()) >= 3:
        # "no more than two people from the same team off on the same day": what is limited
        # is the title, the figure its criterion (the statement as said)
        thing = bounded.group("thing")
        return Capability(f"Limit {thing}", _lower_first(clause), obj=thing)
    told = _GETS_A_MESSAGE.match(clause)
    if told and _PRONOUN_WHO.match(told.group("who")):
        told = None  # "we get an email": no one named to send it to
    if told:
        # "late payers get a reminder after seven days", "residents get an email when it's fixed"
        who, message, rest = told.group("who"), told.group("message"), told.group("rest")
        # "... gets an alert and decides whether to ...": to get it and decide
        rest = _COORDINATED_PRESENT.sub(_base_of_coordinated, rest)
        return Capability(
            _cap(f"send {_lower_first(who)} {message}{rest}"),
            f"{_lower_first(who)} to get {message}{rest}",
            obj=message,
            subject=who,
        )
    if is_people_description(clause) or is_finding(clause) or is_comparison(clause):
        # "my head of department is Richard", "people find teletext relevant", "the LCD is
        # cheaper than speech recognition": said as it was, which reads as no capability
        return Capability(_cap(clause), _lower_first(clause))
    words = clause.split()
    if _COUNTED_THINGS.match(clause):  # "three strikes and a one week ban": things, counted
        return _provide(clause)
    if _NAMED_MESSAGE.match(clause) and words[0].lower() in VERBS:
        # "Reorder alert when a part drops below its minimum": a message named by what it is
        # about, and sent (not "Reorder alert ...", said as an order)
        thing = " ".join(words[:2]).lower()
        rest = " ".join(words[2:])
        return Capability(
            _cap(f"send {_article(thing)} {thing} {rest}".strip()),
            f"{_article(thing)} {thing} to be sent {rest}".strip(),
            obj=thing,
        )
    if (
        words
        and words[0].lower() in VERBS
        and words[0].lower() not in ("be", "have")
        and not _plural_subject_first(words)
        and not _adjective_first(words)
        # "Staff request leave from their phone": a role, then what it does (not "Staff ...")
        and not (len(words) > 2 and PERSONA.match(clause) and words[1].lower() in VERBS)
    ):
        return Capability(_cap(clause), f"to {_lower_first(clause)}")
    if _adjective_first(words):
        return _provide(clause)  # "separate accounts for each parent": a thing to have
    if (
        len(words) > 1
        and words[0].lower() == "have"
        and words[1].lower() not in ("to", "got", "been", "had")
        and not is_participle(words[1].lower())
        and not _HAVE_A_TALK.match(" ".join(words[1:3]))
    ):
        return _provide(" ".join(words[1:]))  # "and just have pushbuttons for the volume"
    persona = (
        PERSONA.match(clause)
        or _QUALIFIED_PERSONA.match(clause)  # "pay-as-you-go members pay five pounds per class"
        or re.match(r"(?:the |all |our )?(?:people|users|you|we|i|they|one)\b", clause, re.I)
    )
    if persona and len(words) > 2:
        k = len(persona.group(0).split())
        verb = words[k].lower() if k < len(words) else ""
        done = words[k + 1].lower() if k + 1 < len(words) else ""
        if verb in ("get", "gets") and is_participle(done) and base_form(done) in VERBS:
            # "they get blocked from booking for a week": what is done to them, not their want
            who = persona.group(0)
            them = "them" if who.lower() == "they" else _lower_first(who)
            tail = " ".join(words[k + 2 :])
            return Capability(
                _cap(f"{base_form(done)} {them} {tail}".strip()),
                f"{them} to be {done} {tail}".strip(),
                obj=them,
            )
        if verb in VERBS and verb not in ("be", "have"):
            action = " ".join(words[k:])
            return Capability(_cap(action), f"to {action}", subject=persona.group(0))
    depends = _DEPENDS.match(clause)
    if depends:
        # "slot length depends on the appointment type": what it depends on, said of it (was
        # "Make slot length depends on the appointment type", "type" read as the verb)
        verb = base_form(depends.group("verb").lower())
        said = f"{verb} {depends.group('rest').rstrip(' .!')}"
        return _made(_lower_first(depends.group("subject")), said, said)
    allowed = _EACH_GETS.match(clause)
    # "each household gets sixty visitor hours a month", "staff over sixty get an extra day"
    if allowed and (not persona or allowed.group("who").strip() != persona.group(0).strip()):
        who, what = _lower_first(allowed.group("who")), allowed.group("what")
        return Capability(_cap(f"give {who} {what}"), f"{who} to get {what}", subject=who)
    plural = re.match(
        r"^(?P<subject>(?:the |all |our |each |every )?(?:\w+\s+){0,2}\w+s"
        # "bookings from the app go into MedOffice": what the things are, said after them
        r"(?:\s+(?:from|in|on|for|of|with)\s+(?:the|a|an|our)\s+[a-z]+(?=\s+[a-z]+\b))?)\s+"
        r"(?:only |just |also |always |then |ever |only ever )*(?P<verb>[a-z]+)\b(?P<rest>.*)$",
        clause,
        re.IGNORECASE,
    )
    if (
        plural
        and plural.group("verb").lower() == "get"
        and is_participle((plural.group("rest").split() or [""])[0].lower())
    ):
        plural = None  # "closed tickets get archived after ninety days": a passive, read below
    if plural and re.match(r"(?:it|this|that|he|she)\s", plural.group("subject"), re.I):
        plural = None  # "it flips open on the side": "flips" is its verb, no plural thing
    if plural and plural.group("verb").lower() in _PARTICLES:
        plural = None  # "money moves back to the current account": "moves" is its verb
    if plural and plural.group("subject").split()[-1].lower() in _THIRD_PERSON_ONLY:
        plural = None  # "the slot goes back on the waiting list": "goes" is its verb, read below
    if (
        plural
        and plural.group("verb").lower() in _ALSO_A_STATE
        and _NO_OBJECT_AFTER.match(plural.group("rest"))
    ):  # "Under sixteens free, with an adult.": how they are, a state
        said = f"{plural.group('verb').lower()}{plural.group('rest').rstrip(' .!')}"
        return _made(_lower_first(plural.group("subject")), said, f"be {said}")
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
        verb = plural.group("verb").lower()
        if verb in ("stay", "remain") and not _is_user(subject):  # "the phone numbers stay
            return _kept(subject, verb, plural.group("rest").strip(), obj=subject)  # private"
        if verb in _DOER_VERB and len(said.split()) >= MIN_TITLE_WORDS:
            # "parking services approve each application": what they do is the title, not
            # "Make parking services approve ..."
            return Capability(_cap(said), f"{subject} to {said}", subject=subject)
        return Capability(
            f"Make {subject} {said}", f"{subject} to {said}", obj=subject, subject=subject
        )
    for k in range(1, min(len(words), 8)):
        w = words[k].lower().strip(",")
        if words[k - 1].lower() in ("that", "which", "who", "when", "whenever") or (
            words[k - 1].lower() in ("if", "unless") and words[k - 2].lower() == "only"
        ):
            # "one power button that switches the TV on", "a notification when it changes",
            # "refunds only if the school cancels": a thing, and what it does or when
            return _provide(clause)
        if w in ("is", "are", "gets", "get") and k + 1 < len(words):
            participle = words[k + 1].lower()
            verb = base_form(participle)
            subject = " ".join(words[:k])
            if (
                verb in VERBS and verb != participle and is_participle(participle)
            ) or participle in _SAME_AS_PARTICIPLE:  # "the export is run nightly"
                tail = " ".join(words[k + 2 :])
                return Capability(
                    _cap(f"{verb} {_lower_first(subject)} {_and_done(tail)}".strip()),
                    f"{_lower_first(subject)} to be {participle} {tail}".strip(),
                    obj=subject,
                    subject=subject,
                )
            if w in ("is", "are") and words[0].lower() not in _PREPOSITION_FIRST:
                return _be(" ".join(words[k + 1 :]), subject)  # not "to the left is volume down"
        if w in ("stays", "stay", "remains", "remain", "wins", "win"):
            subject = " ".join(words[:k])
            where = " ".join(words[k + 1 :]) if w.startswith(("stay", "remain")) else ""
            return _kept(_lower_first(subject), base_form(w), where, obj=subject)
        verb = base_form(w)
        if _reduced_passive(words, k):
            # "personal booking history kept for one year", "receipts stored for six years": a
            # note of what is done to a thing
            subject, tail = " ".join(words[:k]), " ".join(words[k + 1 :])
            return Capability(
                _cap(f"{verb} {_lower_first(subject)} {tail}".strip()),
                f"{_lower_first(subject)} to be {w} {tail}".strip(),
                obj=subject,
                subject=subject,
            )
        # after "the", "on the left" is no verb "leave", nor "the reports are sent" the verb
        # "report" (a plural after "the" reads as a verb only when no passive follows it)
        # ("the system reports are emailed": a plural before a passive is its subject)
        passive = k + 2 < len(words) and words[k + 1].lower() in ("is", "are")
        passive = passive and is_participle(words[k + 2].lower())
        noun = words[k - 1].lower() in DETERMINERS and (passive or not w.endswith("s"))
        are = w.endswith("s") and k + 2 < len(words) and words[k + 1] == "are"
        verb_like = verb in VERBS or (k == 1 and words[0].lower() in VERBS)
        if are and not passive and verb_like and words[0].lower() not in _PREPOSITION_FIRST:
            # "the colours are basic", "staff calendars are all in Outlook": how things are,
            # said as it was (on dev, reading these as needs wrote stories from descriptions;
            # "the buttons are regular colour" reads as one); what would be wanted is that they
            # be so
            subject, tail = " ".join(words[: k + 1]), " ".join(words[k + 2 :])
            return Capability(
                _cap(clause), f"{_lower_first(subject)} to be {tail}", obj=subject, subject=subject
            )
        noun = noun or (are and passive)
        # after a preposition, a word in -s is a noun ("a monthly report of repairs")
        noun = noun or words[k - 1].lower() in _PREPOSITION_FIRST | _NOUN_AFTER
        # "simple desires into simple actions": a quality before its noun, no subject
        noun = noun or (k == 1 and is_quality_word(words[0].lower()))
        # "Remote controls children proof.": the thing's name, not "remote" that controls
        noun = noun or (w.lower() == "controls" and words[k - 1].lower() in _CONTROLS_NAMED)
        if verb in VERBS and verb != w and not w.endswith(("ed", "en")) and not noun:
            subject = " ".join(words[:k])
            tail = _COORDINATED_PRESENT.sub(_base_of_coordinated, " ".join(words[k + 1 :]))
            said = tail
            if verb in _CHANGES_ITSELF and _NO_OBJECT.match(tail) and _other_thing(subject):
                # "the van stock updates when a part is used": "Update the van stock when ..."
                said = f"{_lower_first(subject)} {tail}".strip()
            title_verb = verb
            if verb == "go" and tail.lower().startswith("back ") and _other_thing(subject):
                # "the slot goes back on the waiting list": "Put the slot back on ..."
                title_verb, said = "put", f"{_lower_first(subject)} {tail}"
            return Capability(
                _cap(f"{title_verb} {said}".strip()),
                f"{_lower_first(subject)} to {verb} {tail}".strip(),
                obj=subject,
                subject=subject,
            )
    return _provide(clause)


# what "controls" is the name of after these ("remote controls", "parental controls")
_CONTROLS_NAMED = frozenset("remote parental volume access voice manual touch".split())


# a verb said of a thing that changes by itself, which a title says the product does to it ("the
# van stock updates when a part is used" -> "Update the van stock when a part is used")
_CHANGES_ITSELF = frozenset(
    "update sync refresh reset close open expire archive lock unlock restart stop start save"
    " reload renew move transfer".split()
)
# no object after the verb: nothing, or when, how often or how
_NO_OBJECT = re.compile(
    r"^(?:$|(?:when|whenever|after|before|once|if|daily|weekly|monthly|nightly"
    r"|automatically|overnight|at|on|within|back|to|into)\b"
    # "every night", "each second week"; not "every button", which is what it does it to
    r"|(?:every|each)\s+(?:[\w-]+\s+)?(?:days?|weeks?|months?"
    r"|years?|hours?|minutes?|seconds?|nights?|mornings?|evenings?|time|term|shift|session|run"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday|weekend)\b)",
    re.IGNORECASE,
)


# a second verb of a statement in the present ("the system warns the doctor and flags the
# affected appointments"): in the base form, as the first one is, after "to" or in a title
_COORDINATED_PRESENT = re.compile(
    r"\b(and|or)\s+([a-z]+s)\b(?=\s+(?:the|a|an|their|his|her|its|our|your|them|it|each|every"
    r"|all|whether)\b|\s+(?:on|off|away|back)\W*$)",
    re.IGNORECASE,
)


def _base_of_coordinated(found: re.Match[str]) -> str:
    verb = base_form(found.group(2).lower())
    if verb == found.group(2).lower() or verb not in VERBS:
        return found.group(0)
    return f"{found.group(1)} {verb}"


# what may follow a participle said of a thing in notes: when, how long, where, how, or nothing
_AFTER_REDUCED_PASSIVE = frozenset(
    """for in on at after before within until every per as to from with automatically daily
    weekly monthly yearly overnight""".split()
)


def _and_done(tail: str) -> str:
    """What follows a passive's participle, with a participle coordinated after it said as a
    verb too ("on the phone and synced later" -> "on the phone and sync later")."""

    def active(m: re.Match[str]) -> str:
        done = m.group("done").lower()
        act = base_form(done)
        if act == done or not is_participle(done) or act not in VERBS:
            return m.group(0)
        return f"{m.group('and')} {act}"

    return re.sub(r"\b(?P<and>and|or|then)\s+(?P<done>[a-z]+)\b", active, tail, count=1)


def _reduced_passive(words: list[str], k: int) -> bool:
    """Whether ``words[k]`` is a past participle said right after the thing it is done to, as in
    notes ("personal booking history kept for one year, anonymised after that"): the subject
    names a thing (no pronoun, no person speaking, not "a ..." introducing one) and no object or
    agent follows the participle ("staff booked rooms" is something that happened)."""
    w = words[k].lower().strip(",")
    if not (1 <= k <= 4 and is_participle(w)) or words[k - 1].lower() in DETERMINERS:
        return False
    subject = [x.lower().strip(",") for x in words[:k]]
    if subject[0] in ("a", "an"):
        return False  # "a simple menu driven by up / down": a thing and what it is like
    if not _other_thing(" ".join(subject)) or not names_a_thing(subject):
        return False
    after = words[k + 1].lower() if k + 1 < len(words) else ""
    return words[k].endswith(",") or not after or after in _AFTER_REDUCED_PASSIVE


# words that are verbs too, but open a name far more often ("direct channel entry", "separate
# accounts", "live chat", "free delivery")
_ADJECTIVE_FIRST = frozenset(
    "direct separate live free empty double secure quiet present round".split()
)


def _adjective_first(words: list[str]) -> bool:
    """Whether a statement opens with one of ``_ADJECTIVE_FIRST`` before a noun (no article or
    pronoun after it: "separate the accounts" is the verb)."""
    if len(words) < 2 or words[0].lower() not in _ADJECTIVE_FIRST:
        return False
    return words[1].lower().strip(",:;") not in DETERMINERS | _OBJECT_PRONOUNS


_OBJECT_PRONOUNS = frozenset("it them him her me us you everything everyone".split())


def _verb_phrase(text: str) -> str:
    """A title phrase that opens with a verb: 'train the recogniser' stays, 'only few buttons'
    becomes 'Provide only few buttons'."""
    text = re.sub(r"^(?:only|just|also|really|always|simply|still|even)\s+", "", _trim(text))
    first = text.split()[0] if text.split() else ""
    if is_verb(first):
        return text
    return f"Provide {text}"
