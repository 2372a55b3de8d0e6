"""Word lists the drafting and the story checks share: verbs, their forms, personas, vague words.

``VERBS`` holds base forms of verbs that can open a story title ("Show survey results per
business unit"); ``base_form`` turns "beeps", "is shown" or "stored" into one. ``PERSONAS`` are
the roles a meeting names for a need ("the manager", "employees", "receptionists"), singular.
"""

from __future__ import annotations

import re

VERBS = frozenset(
    """abandon abolish absorb accelerate accept access accommodate accompany accomplish account
    accumulate accuse achieve acknowledge acquire act activate adapt add address adhere adjust
    administer admit adopt advance advertise advise advocate affect afford agree aid aim alert
    align allocate allow alter amend amplify analyse analyze anchor animate annotate anonymise
    anonymize announce
    answer anticipate appeal appear append apply appoint appreciate approach appropriate approve
    archive argue arise arm arrange arrive ask assemble assert assess assign assist associate assume
    assure attach attack attempt attend attract audit augment authenticate authorise authorize
    automate average avoid award back backfill backup balance ban bar base batch be bear beat become
    beep begin behave believe belong bend benefit bet bid bill bind bite blend bless blink block
    blow blur board boast book boost borrow bounce bound brand break breathe brief bring broadcast
    browse brush buffer build bundle burn bury buy bypass cache calculate calibrate call campaign
    cancel cap capture care carry cast catch categorise categorize cause cease celebrate centralise
    centralize certify chain challenge change charge chart chase chat check choose cite claim clap
    clarify classify clean clear click climb clip clone close coach code collaborate collapse
    collect color colour combine come comfort command commence comment commit communicate compare
    compensate compete compile complain complete complicate comply compose compress comprise compute
    concentrate conclude conduct configure confine confirm conflict conform confront connect
    consent conserve consider consist consolidate constrain construct consult consume contact
    contain continue contract contrast contribute control convert convey convince cooperate
    coordinate cope copy correct correspond cost counsel count cover craft crash crawl create
    credit crop cross crush cry cultivate cure curve customise customize cut cycle damage dance
    date deactivate deal debate debit decide decline decode decorate decrease dedicate deduct
    defend defer define delay delegate delete delight deliver demand demonstrate deny depend
    deploy deposit derive describe deserve design designate desire destroy detach detect determine
    develop devise diagnose dial dictate differ differentiate dig digitise digitize diminish
    direct disable disagree disappear discard disconnect discount discover discuss dismiss
    dispatch display dispose dispute distinguish distribute disturb dive diversify divide do
    document dominate donate double doubt download draft drag draw dream dress drill drink drive
    drop dry dump duplicate earn ease eat edit educate elect elevate eliminate email embed embrace
    emerge emit employ empower empty emulate enable enclose encode encounter encourage encrypt end
    endorse enforce engage enhance enjoy enlarge enrich enrol enroll ensure enter entertain equip
    erase escalate escape establish estimate evaluate examine exceed exchange excite exclude
    execute exercise exhibit exist exit expand expect experience experiment expire explain explore
    export expose express extend extract face facilitate fail fall fasten favor favour fear
    feature feed feel fetch fight file fill filter find finish fire fit fix flag flash flatten
    flip float flow fly focus fold follow forbid force forecast forget forgive form format
    formulate forward foster frame free freeze fulfil fulfill fund furnish gain gather gauge
    generate get give glow go grab grade graduate grant greet grip group grow guarantee guess
    guide halt hand handle hang happen harm have head hear heat help hide highlight hire hit hold
    host hover hunt hurry identify ignore illustrate imagine imitate impact implement import
    impose impress improve include incorporate increase index indicate induce infer influence
    inform initiate inject innovate input insert insist inspect inspire install instruct insure
    integrate intend interact intercept interest interfere interpret interrupt interview introduce
    invent invest investigate invite invoice involve iron isolate issue iterate join jump justify
    keep kick kill knock know label land last laugh launch lay lead lean learn lease leave lend
    let level license lie lift light like limit link list listen live load loan localise localize
    locate lock log look lose love lower maintain make manage manufacture map march mark marry
    master match matter mean measure meet mention merge message migrate mine minimise minimize
    mirror mix mobilise moderate mobilize model modify monitor motivate mount move multiply mute
    name navigate negotiate nest nominate note notice notify nudge nurse obey object observe obtain
    occupy occur offer omit open operate optimise optimize order organise organize originate outline
    output overlay override oversee owe own pack page paint pair park participate partition pass
    patch pause pay perceive perform permit persist persuade phone photograph pick picture pilot pin
    pioneer pitch place plan plant play please pledge plot plug point poll pop populate pose
    position possess post pour power practice practise pray predict prefer prefill prepare present
    preserve preset press pretend prevent preview price print prioritise prioritize proceed process
    procure produce profile program programme progress prohibit project promise promote prompt
    propose prosecute protect prove provide publish pull pump punch punish purchase pursue push put
    qualify quantify query question queue quit quote race rain raise rank rate reach react read
    realise realize rearrange reason rebuild recall receive recharge recite reclaim recognise
    recognize recommend reconcile record recover recruit recycle redact redirect reduce refer refine
    reflect reform refresh refund refuse regard register regulate reinforce reject relate relax
    relay release reload rely remain remember remind remove rename render renew rent reopen
    reorder reorganise reorganize repair repeat replace replicate reply report represent reproduce
    request require reschedule research resemble reserve reset resist resize resolve respect
    respond rest restore restrict restructure result resume retain retire retrieve return reuse
    reveal reverse review revise revoke reward ride ring rise risk roll rotate round route rub rule
    run rush sample satisfy save scale scan scatter schedule score scrap screen script scroll seal
    search secure see seek seem segment seize select sell send sense separate sequence serve set
    settle shake shape share shift ship shoot shop shorten show shrink shut sign simplify sing
    sink sit sketch skip slide slip slow smell smile smooth snap snooze solve sort sound source
    span spare speak specify spend spin split spot spread squeeze stabilise stabilize stack staff
    stage stamp stand standardise standardize start state stay steer step stick stimulate stir
    stock stop store stream strengthen stress stretch strike strip structure study stuff style
    submit subscribe subtract succeed suffer suggest suit sum summarise summarize supervise supply
    support surface surround survey survive suspect suspend sustain swap swing swipe switch sync
    synchronise synchronize tackle tag tailor take talk tap target teach tear tease tell tend
    terminate test text thank think threaten throttle throw tick tie tighten tilt time toggle total
    touch tour trace track trade train transcribe transfer transform translate transmit transport
    trap travel treat trigger trim triple trust try tune turn twist type undo unify unite unlock
    unpack unsubscribe update upgrade upload urge use validate vary verify vibrate view visit
    visualise visualize volunteer vote wait wake walk want warn wash waste watch wear weigh welcome
    widen win wish withdraw wonder work worry wrap write yield zap zoom""".split()
)
# a verb with a prefix and a hyphen is a verb ("pre-fill the company name", "re-send the link")
VERBS = VERBS | frozenset(f"{p}-{v}" for p in ("pre", "re", "auto", "co", "un") for v in VERBS)

# third person singular and participles that do not follow the spelling rules
_IRREGULAR = {
    "is": "be",
    "are": "be",
    "was": "be",
    "were": "be",
    "been": "be",
    "has": "have",
    "had": "have",
    "does": "do",
    "did": "do",
    "done": "do",
    "goes": "go",
    "gone": "go",
    "went": "go",
    "shown": "show",
    "made": "make",
    "sent": "send",
    "given": "give",
    "taken": "take",
    "kept": "keep",
    "built": "build",
    "held": "hold",
    "left": "leave",
    "found": "find",
    "bought": "buy",
    "paid": "pay",
    "written": "write",
    "chosen": "choose",
    "seen": "see",
    "known": "know",
    "drawn": "draw",
    "driven": "drive",
    "hidden": "hide",
    "broken": "break",
    "brought": "bring",
    "got": "get",
    "gotten": "get",
    "told": "tell",
    "sold": "sell",
    "run": "run",
    "set": "set",
    "put": "put",
    "cut": "cut",
    "read": "read",
    "shut": "shut",
    "spoken": "speak",
    "lit": "light",
    "laid": "lay",
    "stuck": "stick",
    "frozen": "freeze",
    "lost": "lose",
    "forgotten": "forget",
    "overridden": "override",
}
PRESENT_OF = {"be": "is", "have": "has", "do": "does", "go": "goes"}


def base_form(word: str) -> str:
    """'beeps' -> 'beep', 'switches' -> 'switch', 'stored' -> 'store', 'shown' -> 'show'; a word
    that is already a base form (or not a verb at all) comes back lowercased."""
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if w in VERBS:
        return w
    candidates: list[str] = []
    if w.endswith("ies") and len(w) > 4:
        candidates.append(w[:-3] + "y")
    if w.endswith("es"):
        candidates.append(w[:-2])
    if w.endswith("s") and not w.endswith("ss"):
        candidates.append(w[:-1])
    if w.endswith("ied") and len(w) > 4:
        candidates.append(w[:-3] + "y")
    if w.endswith("ed"):
        stem = w[:-2]
        candidates += [stem, w[:-1]]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            candidates.append(stem[:-1])
    for candidate in candidates:
        if candidate in VERBS:
            return candidate
    return w


_PREFIXES = ("re", "un", "pre", "de", "dis", "over", "under", "auto", "co")


def is_verb(word: str) -> bool:
    """A verb we know, in any form, also with a common prefix ("revisit", "unlock", "preload")."""
    base = base_form(word.lower().strip(".,;:!?\"'"))
    if base in VERBS:
        return True
    return any(base.startswith(p) and base[len(p) :] in VERBS for p in _PREFIXES)


def is_base_verb(word: str) -> bool:
    """A verb we know, said in its base form ("book", not "books" or "booked")."""
    return word in VERBS and base_form(word) == word


def is_participle(word: str) -> bool:
    """'shown', 'stored', 'told', 'entered': a past participle of a verb we know."""
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w] != w and not w.endswith("s")
    return w.endswith("ed") and base_form(w) in VERBS


# what a product is like, said alone ("Baby-proof.", "Heavy .", "Small , round ."): a quality
# word by its ending, or one of the plain ones a meeting says of a product
_QUALITY_ENDING = re.compile(
    r"[a-z]{2}-?(?:proof|free|friendly|resistant|ible|(?<!et)able|ful|less|ous|curved|shaped"
    r"|coloured|colored|looking|sized|weight)$"
)
_QUALITY_WORDS = frozenset(
    """red green blue yellow black white grey gray orange purple pink brown silver gold
    small big large tiny huge long short wide narrow tall heavy light thin thick flat round curved
    soft hard smooth rough cheap expensive simple easy quick fast slow quiet loud bright dark safe
    secure modern fancy trendy stylish sleek compact portable ergonomic sturdy robust durable
    waterproof colourful colorful transparent shiny matte warm cold wireless rechargeable
    adjustable affordable washable usable readable comfortable reliable replaceable unbreakable
    foldable curvy spongy bulky chunky""".split()
)


# verbs of signalling, which take no object ("beep and block the next step" blocks the step)
SIGNAL_VERBS = frozenset("beep buzz vibrate flash blink ring chime bleep ping".split())

# where people will be, said after "will" or "would" ("Finance will be on laptops, big screens",
# "drivers will be in the van all day"): no need of theirs, so no persona
WHERE_THEY_ARE = r"\s+(?:mostly\s+|all\s+)?be\s+(?:on|in|at|using|working)\b"


def is_quality_word(word: str) -> bool:
    """Whether a word says what something is like ("heavy", "baby-proof", "double-curved"), not
    a thing to provide: said alone it is how the product must be ("Make it heavy")."""
    return is_plain_quality(word) or bool(_QUALITY_ENDING.search(word.lower().strip(".,;:!?\"'")))


def is_plain_quality(word: str) -> bool:
    """One of the plain words of what a product is like ("cheap", "heavy", "green")."""
    return word.lower().strip(".,;:!?\"'") in _QUALITY_WORDS


def third_person(verb: str) -> str:
    """'show' -> 'shows', 'switch' -> 'switches', 'carry' -> 'carries', 'be' -> 'is'."""
    if verb in PRESENT_OF:
        return PRESENT_OF[verb]
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


# the roles a meeting names for a need, singular; multi-word ones first when matching
PERSONAS = (
    "practice manager",
    "project manager",
    "product owner",
    "call-centre agent",
    "call centre agent",
    "call-center agent",
    "customer service agent",
    "support agent",
    "crew driver",
    "business unit lead",
    "team lead",
    "line manager",
    "hiring manager",
    "new starter",
    "new joiner",
    "starter",
    "joiner",
    "older user",
    "elderly user",
    "end user",
    "administrator",
    "admin",
    "manager",
    "employee",
    "staff member",
    "receptionist",
    "doctor",
    "nurse",
    "patient",
    "parent",
    "student",
    "teacher",
    "visitor",
    "guest",
    "member",
    "subscriber",
    "viewer",
    "player",
    "driver",
    "passenger",
    "resident",
    "citizen",
    "agent",
    "operator",
    "supervisor",
    "developer",
    "tester",
    "reviewer",
    "editor",
    "author",
    "moderator",
    "owner",
    "buyer",
    "seller",
    "vendor",
    "supplier",
    "accountant",
    "auditor",
    "clerk",
    "analyst",
    "respondent",
    "participant",
    "organiser",
    "organizer",
    "volunteer",
    "caller",
    "applicant",
    "recruiter",
    "contractor",
    "consultant",
    "director",
    "officer",
    "inspector",
    "courier",
    "pupil",
    "caseworker",
    "technician",
    "engineer",
    "pharmacist",
    "carer",
    "coordinator",
    "approver",
    "dispatcher",
    "planner",
    "librarian",
    "secretary",
    "instructor",
    "tutor",
    "lecturer",
    "trainer",
    "clinician",
    "therapist",
    "dentist",
    "surgeon",
    "physician",
    "cashier",
    "tenant",
    "patron",
    "borrower",
    "picker",
    "packer",
    "cleaner",
    "mechanic",
    "chef",
    "waiter",
    "landlord",
    "householder",
    "homeowner",
    "claimant",
    "traveller",
    "shopper",
    # hospitality, care, trades, schools, retail and finance roles
    "housekeeper",
    "porter",
    "concierge",
    "caretaker",
    "warden",
    "security guard",
    "bartender",
    "barista",
    "cook",
    "steward",
    "attendant",
    "paramedic",
    "midwife",
    "vet",
    "social worker",
    "counsellor",
    "coach",
    "electrician",
    "plumber",
    "installer",
    "fitter",
    "surveyor",
    "assessor",
    "underwriter",
    "broker",
    "headteacher",
    "head teacher",
    "principal",
    "registrar",
    "invigilator",
    "examiner",
    "learner",
    "trainee",
    "apprentice",
    "intern",
    "donor",
    "fundraiser",
    "merchant",
    "retailer",
    "requester",
    "policyholder",
    "investor",
    "treasurer",
    "ranger",
    "stylist",
    "hairdresser",
    "optician",
    "salesperson",
    "sales rep",
    "crew",
    "finance",
    "customer",
    "client",
    "user",
)


# a word that names people in a role without a singular of its own: "staff can book ..." is
# said by and of a staff member, "finance need to ..." of a finance team member (not "As a
# finance, I want ..."), "reception needs a way to ..." of a receptionist
_PERSONA_ALIASES = {
    "staff": "staff member",
    "finance": "finance team member",
    "crew": "crew member",
    "reception": "receptionist",
    "dispatch": "dispatcher",
    "payroll": "payroll team member",
}


def _persona_forms() -> str:
    """A regex alternation of every persona, singular or plural ("receptionists", "admin")."""
    forms = []
    for p in PERSONAS:
        last = p.split()[-1]
        plural = last + ("es" if re.search(r"(?:s|sh|ch|x)$", last) else "s")
        stem = re.escape(p[: len(p) - len(last)])
        forms.append(f"{stem}(?:{re.escape(plural)}|{re.escape(last)})")
    return "|".join([*forms, *(a for a in _PERSONA_ALIASES if a not in PERSONAS)])


PERSONA_FORMS = _persona_forms()
# a role named as who acts, not as whose a thing is ("volunteers' phone numbers")
PERSONA = re.compile(rf"\b({PERSONA_FORMS})\b(?!['\u2019])", re.IGNORECASE)


def singular_persona(found: str) -> str:
    """'Receptionists' -> 'receptionist', 'the admins' -> 'admin'."""
    low = found.lower().strip()
    if low in _PERSONA_ALIASES:
        return _PERSONA_ALIASES[low]
    for p in PERSONAS:
        last = p.split()[-1]
        if low == p or low == p[: len(p) - len(last)] + last + "s" or low == p + "es":
            return p
    return low


# what can stand before a role without narrowing it to whose team it is ("the", "all", "other",
# "busy", "so", "let"): not "company" or "site" ("the company admin", "site managers")
_NOT_A_QUALIFIER = frozenset(
    """the our your their his her its this that these those all each every both any some
    other another same different such many most more few several certain only also just even
    then and but not yes yeah okay right well now still please maybe perhaps really actually
    because since than for into like about from with per via over under after before through
    across without within between among along around off out busy real actual normal usual typical
    average single main let lets allow allows help helps ask tell notify email text remind send
    show give make want wants need needs""".split()
)
# the word said just before a role, when it may narrow it ("company" in "the company admin")
QUALIFIER = rf"(?:(?!(?:{'|'.join(sorted(_NOT_A_QUALIFIER))})\s)[a-z][a-z-]{{2,}}(?<!ly)\s+)"


def qualified_persona(said: str, start: int, end: int) -> str:
    """The role found at ``said[start:end]``, singular, with the noun said just before it that
    narrows it to a team's ("the company admin" -> "company admin", "Site managers" -> "site
    manager"), or as the first word of the role said after it ("the finance manager" -> "finance
    manager", not a finance team member)."""
    found = said[start:end].strip()
    after = PERSONA.match(said, end + 1) if said[end : end + 1] == " " else None
    if after and " " not in found:
        return f"{found.lower()} {singular_persona(after.group(1))}"
    role = singular_persona(found)
    before = re.search(rf"(?:^|[\s,])({QUALIFIER})$", said[:start], re.IGNORECASE)
    if before and " " not in role:
        return f"{before.group(1).strip().lower()} {role}"
    return role


# words that need a measure before a criterion can be tested ("fast", "easy to use"); the judge's
# testable-criteria check (shared.eval.checks) reads the same words
VAGUE = re.compile(
    r"\b(?:fast|quick(?:ly)?|easy|easily|user[- ]friendly|intuitive|simple|appropriate(?:ly)?"
    r"|adequate(?:ly)?|efficient(?:ly)?|flexible|robust|nice|good|better|best|seamless(?:ly)?"
    r"|as soon as possible|asap|several|some|(?<!how )many|a lot|state of the art|etc)\b",
    re.IGNORECASE,
)
_ANY_FIGURE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve)\b", re.IGNORECASE
)


def unmeasured_vague_word(text: str) -> str:
    """The vague word (``VAGUE``) a text rests on when it gives no figure ("easy" in "The remote
    is easy to use"), lower case; "" when it has none or gives a figure ("easy to find in 2
    seconds"). The drafter keeps such a text out of the criteria and the judge fails it."""
    vague = VAGUE.search(text)
    return vague.group(0).lower() if vague and not _ANY_FIGURE.search(text) else ""


# a quality said of something, which a measure would make testable: an adverb of how it is done
# ("opens quickly", "as soon as possible"), or a quality word said of it ("is easy", "looks
# simple", "stays fast enough", "easy to find"); not a quality word before a noun ("a simple
# chip", "some kind of message"), an opinion ("nice", "good", "better") or an amount ("some", "a
# lot", "many"): those ask nothing a figure would answer. VAGUE_QUALITY_WORDS: the quality
# words, as a regular expression with no group of its own (phrasing drops one before its noun)
VAGUE_QUALITY_WORDS = (
    r"(?:fast|quick|easy|user[- ]friendly|intuitive|simple|appropriate|adequate|efficient"
    r"|flexible|robust|seamless)"
)
_QUALITY_DEGREE = (
    r"(?:very|really|quite|more|less|too|so|as|also|still|not|fairly|pretty|super|extra|always"
    r"|even)"
)
VAGUE_QUALITY = re.compile(
    r"\b(?:quickly|easily|appropriately|adequately|efficiently|seamlessly|as soon as possible"
    r"|asap)\b"
    rf"|\b(?:is|are|be|been|being|was|were|'s|'re|look|looks|feel|feels|seem|seems|stay|stays"
    rf"|remain|remains|get|gets|keep \w+|make (?:it|them))(?:\s+{_QUALITY_DEGREE})*\s+(?P<said>{VAGUE_QUALITY_WORDS})\b"
    r"(?=\s*(?:[,.;:!?]|$|(?:and|or|but|to|enough|for|in|on|when|if|so|because|than|with|as)\b))"
    rf"|\b(?P<before>{VAGUE_QUALITY_WORDS})(?:\s+enough\b|(?:\s+|-)to(?:\s+|-)[a-z]+)",
    re.IGNORECASE,
)


def vague_quality(text: str) -> str:
    """The quality ``text`` rests on that a measure would make testable ("easy" in "It is easy to
    find in the dark"), lower case, or "" when it names none (``VAGUE_QUALITY``)."""
    found = VAGUE_QUALITY.search(text)
    if not found:
        return ""
    return (found.group("said") or found.group("before") or found.group(0)).lower()


# a title that reads as a clause of talk, not a capability: a pronoun with its verb inside it
# ("Provide for instance we see ...") or a hedge, pronoun or preposition right after the verb
_CLAUSE_IN_TITLE = re.compile(
    r"(?<!\bmake )(?<!\blet )(?<!\bhelp )(?<!\bkeep )(?<!\bhave )\b(?:we|they|i|you|he|she|there)"
    r"(?:'re|'ll|'ve|'d|'m)?\s+(?!all\b|both\b)[a-z]+",
    re.IGNORECASE,
)
# what a verb of knowing or showing asks for ("Know how many no-shows we get every month", "See
# what my team spent") is a clause, and no talk
_SHOW_OR_KNOW = frozenset(
    "know see show tell display list report track count set choose pick select specify".split()
)
_INDIRECT_QUESTION = re.compile(r"^(?:\S+\s+){0,3}?(?:how|what|which|whether)\b.*$")
# a thing and what its people do with it, said without "that" ("Provide a queue we can filter by
# category", "Provide a report they can print"): the thing is named, the clause says what for
_GIVING_VERB = frozenset("provide have get give add build create offer".split())
_REDUCED_RELATIVE = re.compile(
    r"^(?P<thing>(?:(?:everyone|everybody|them|us|people|users|staff)\s+)?"
    r"(?:an?|the|some|one|every|each)\s+(?:[a-z-]+\s+){0,4}?[a-z-]+)\s+"
    r"(?:we|they|you|people|users)\s+(?:(?:can|could|will)\s+(?!(?:be|do|go|say|see|get)\b)"
    r"(?=[a-z]+\b(?!\s+(?:to|about|with|of)$))|(?=[a-z]+\s+(?:to|about|with|of)$))[a-z]+\b"
    # the verb's object is the thing: nothing but how, when or where follows ("... we can
    # filter by category"), never an object of its own ("you can button the number"); said
    # without a modal, the clause ends on its preposition ("a feed link they subscribe to")
    r"(?=$|\s+(?:by|before|after|when|whenever|while|at|on|in|from|with|for|any|anytime)\b"
    r"|\s+(?:to|about|with|of)$)"
)
_BAD_SECOND = frozenset(
    """for even also maybe if when because so as like just really be been being is are was were
    there we they i you have has had possibly probably perhaps definitely actually basically
    obviously certainly surely hopefully especially okay ok anyway though""".split()
)  # "Provide especially after bank holidays", "Provide okay so the touch screen ..."
# a common verb, which no thing opens with ("Provide depends on the cost", "Provide make the
# remote control long lasting", "Provide looking on the budget", "Put five covers is available")
_NOT_A_THING_VERB = frozenset(
    """make makes made making depend depends depending look looks looking go goes going get gets
    getting do does doing see sees seem seems put puts take takes let lets keep keeps want
    wants""".split()
)
# "Provide what about the idea of ...", "Provide according to your distance": a question or a
# preposition of talk, never a thing to provide
_BAD_AFTER_PROVIDE = (
    frozenset(
        "that it's its it this these those what how why who whom whose when according".split()
    )
    | _NOT_A_THING_VERB
)
# what never follows a title's verb: a conjunction that opens a clause ("Make but the LCD display
# yeah"); "and" / "or" join two verbs ("Add and remove doctors")
_CONJUNCTION_SECOND = frozenset("but so because 'cause".split())
# a verb that says how things are, not what the product is to do ("Depend on the cost", "Tend to
# go to one side", "Mean that count by button")
_DESCRIBING_VERB = frozenset(
    "mean means depend depends tend tends seem seems happen matter".split()
)
# a verb of guessing or believing opens what a speaker thinks, never a need ("Guess people book
# on Sunday evenings a lot")
_THINKING_VERB = frozenset(
    "guess think suppose reckon imagine believe hope wonder assume prefer".split()
)
# a word of talk a verb phrase never ends with
_TALK_LAST = frozenset("yeah yes okay ok yep mm hmm".split())
_ITS_VERB = frozenset("is does do was has did isn't doesn't wasn't".split())
# the title of a decision to leave something out ("Leave out teletext"): drafting, criteria and the
# tagger read it
LEAVE_OUT = "Leave out "


def leaves_out(title: str) -> bool:
    """Whether ``title`` is a decision to leave something out."""
    return title.startswith(LEAVE_OUT)


# what the object of "Provide ..." / "Leave out ..." (a thing) never opens with: a conjunction, a
# preposition, "to", a negation or a word of talk ("Provide and should be red", "Leave out to
# deal", "Provide with the LCD screen", "Provide yeah it must be a remote")
_NOT_A_THING_OPENING = frozenset(
    """and or but so to than that that's there's it's let's what's not never with in into on at of
    per say yeah thus t plus which who whom whose where inside within during after before until
    without out it'd it'll that'd that'll""".split()
)
# what a thing is like or what was done to it, with the when or where of it after it, is how
# something must be, not a thing ("Provide available during opening hours", "Provide locked
# after approval"); "printed receipts", "a locked drawer" are things
_STATE_THEN = frozenset(
    "in on at by for from with into of during after before until within".split()
)
# a finite verb inside that object makes it a clause ("Provide the rubber aspect might be
# important", "Provide everything my agents do is logged"), unless a relative clause opened
# before it ("Provide a calendar that residents can print")
_FINITE = frozenset(
    """is are was were be do does did may might can could will would should must shall has have
    had gonna""".split()
)
# "that's" after a thing opens a relative clause ("a book that's out"), unless the word before
# is one of talk ("so that's fine", "I think that's it")
_RELATIVE_THATS = re.compile(
    r"\b(?!(?:it|so|sure|and|but|because|think|know|mean|guess|say|said|is|was)\b)([a-z]+) that's\b"
)
# words that open a clause of time or condition after the need
_SUBORDINATE = frozenset("when whenever once until before after if unless while".split())
_CONTRACTED_CLAUSE = re.compile(
    r"\b(?:it|that|there|let|what|he|she|who)'s\b|'re\b|'ll\b|\b(?:do|does|did|is|are|ca|wo)n't\b"
)
# words that open a relative or subordinate clause: a finite verb after one is that clause's
# ("Light up softly when the room is dark")
_RELATIVE = frozenset(
    """that which who whom whose where so when whenever while if unless until before after once
    because as than""".split()
)


# the finite verbs that make any title's object a clause ("Form industrial Design is not sure
# titanium"); "have", "do", "can" are left to "Provide": "Show which addresses have ..."
_FINITE_ANYWHERE = frozenset("is are was were would could might may should must shall".split())


def _has_finite_verb(words: list[str], finite: frozenset[str]) -> bool:
    """A finite verb among the words before any relative clause opens (and not after "to")."""
    for i, word in enumerate(words):
        if word in _RELATIVE:
            return False
        if word in finite and (i == 0 or words[i - 1] != "to"):
            return True
    return False


# what opens a degree or a manner, never a thing ("Provide too expensive", "Provide completely
# rule out major functions", "Provide then adjust it")
_NOT_A_THING_ADVERB = frozenset(
    """too very completely totally quite rather then also still already again perhaps
    even""".split()
)


# how things are done now, said before the need that changes it ("at the moment we ring them",
# "most of the time people give us a card slip"): the situation today, not what to build
AS_IS = (
    r"at the moment|at present|currently|right now|nowadays|these days|most of the time"
    # "we still print a letter for every trip": what is still done, by hand, today
    r"|(?:we|they|people|staff|everyone|you)\s+still\s+(?!need|want|have|has|must|should|can"
    r"|could|would|will|get|use)[a-z]+s?\s+(?:a|an|the|all|every|each|it|them)\b"
    # "most trips cost something, ten or fifteen pounds": how most things are, a fact
    r"|^(?:most|many|half|a lot|lots)(?: of)?(?: (?:the|our|their))? [a-z][a-z-]*s"
    r" (?:cost|take|come|go|are|have|use|get|run|last)\b"
    # "trip consent is on paper today": "today" said last, of how it is done
    r"|today(?=\s*(?:,\s*[A-Z][a-z]+\s*)?(?:[;.!?]|$))"
    # "what happens today when a tenant moves in?": asked of how it is done now
    r"|\bwhat happens (?:today|now|at the moment)\b"
    # "the current system emails a PDF timetable every Friday": what is replaced
    r"|(?:the|our) (?:current|existing|old) (?:system|app|tool|process|site|website|setup"
    r"|software|spreadsheet|form|one)"
    # "the auto-release already stops the hoarding, though": what something does already
    r"|^(?:(?:but|and|so|well)\W+)*(?:the|our|this|that|it|everyone|everybody|people)\b"
    r"[^,.;?]{0,40}?\balready\s+[a-z]+(?<!les)(?<!ss)s\b"
    # "the biggest complaint we get is that people can't see ...": the problem, said as it is
    r"|the (?:biggest |main |big |real |only |other |usual )?(?:complaint|problem|issue"
    r"|pain point|frustration)s? (?:we (?:get|have|hear|see)|(?:people|users|members|customers)"
    r" have|(?:is|are) that)"
    # "the main thing is we get tickets by email with no information": the problem, as it is
    r"|the (?:biggest |main |big |real |only )?(?:thing|problem|issue) (?:is|was) (?:that )?"
    r"(?:we|they|people|users|customers) (?:get|have|receive|spend|lose)"
    # "what's the biggest pain from finance?": asked of the problem as it is
    r"|\b(?:biggest|main|worst) (?:pain|headache|hassle)s?\b"
    # "then we check them against the policy by hand": what is done by hand today
    r"|\b(?:we|i)\s+(?:then\s+|just\s+|still\s+|all\s+)?(?!(?:can|could|should|must|will"
    r"|would|need|have|want|shall|may|might|don't|do|did|won't)\b)[a-z]+\s+(?:it|them|that|this"
    r"|everything|all|each|every)\b[^.;?!]{0,80}?\b(?:by hand|manually)\b"
)


# what no thing ends with: a word of talk, a vague tail, a comparison with nothing compared
_NO_THING_LAST = frozenset(
    "yeah okay ok much more less normal expensive cheap possible available important".split()
)
# a word of talk that breaks a noun phrase where the speaker starts again ("only these three
# main basic anyway volume")
_RESTART = frozenset("anyway basically actually whatever um uh erm".split())
_PREPOSITION = frozenset("in on at by for from with into onto of per".split())
_NUMBER_WORD = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred thousand million point and or""".split()
)
NUMBER_WORDS = _NUMBER_WORD - {"and", "or", "point"}  # the words that name a number
_DEGREE = frozenset("most least bit lot much little too very".split())
# names written with a capital wherever they stand: languages and the people who speak them, days,
# months, software people name ("English and Polish for launch" stays "Provide English and Polish
# for launch", "Outlook sync for staff" "Provide Outlook sync for staff"); "May" and "March" left
# out, since they open sentences as other words too
LANGUAGES = frozenset(
    """english french german spanish italian portuguese dutch polish romanian bulgarian russian
    ukrainian czech slovak hungarian greek turkish arabic hebrew persian farsi urdu hindi bengali
    punjabi gujarati tamil chinese mandarin cantonese japanese korean vietnamese thai indonesian
    malay swahili somali welsh irish gaelic swedish norwegian danish finnish icelandic
    lithuanian latvian estonian croatian serbian slovenian albanian""".split()
)
PROPER_NOUNS = LANGUAGES | frozenset(
    """scottish british american european monday tuesday wednesday thursday friday saturday
    sunday january february april june july august september october november december
    outlook excel gmail google microsoft android iphone ipad sharepoint salesforce whatsapp
    facebook linkedin instagram paypal quickbooks jira xero youtube""".split()
)
# what a product is made of: said alone ("So probably plastic or something .") it is what to
# make it of, and takes no article ("Provide a plastic")
MATERIALS = frozenset(
    """plastic plastics rubber wood titanium metal aluminium aluminum steel glass leather
    silicone latex fabric cotton wool cloth paper cardboard foam sponge ceramic carbon bamboo
    cork""".split()
)
# an amount of money or time and the words that say how it applies ("ten pounds a month maximum",
# "two days before", "between five and nine pm"): a value of something said before, not a thing
_AMOUNT_WORDS = frozenset(
    """a an the each per every on top maximum minimum max min between to before after ahead
    earlier later extra more less than at most least about around roughly only pounds pound
    euros euro dollars dollar pence cents percent quid bucks seconds second minutes minute hours
    hour days day weeks week months month years year pm am o'clock""".split()
)


def names_a_thing(words: list[str]) -> bool:
    """Whether the words after "Provide" / "Leave out" name a thing, not a clause of talk: no
    opening conjunction or preposition, no finite verb, not one word that is no thing ("an
    agreed", "a price-wise")."""
    at_least = words[:2] in (["at", "least"], ["at", "most"]) and len(words) > 2
    if not words or words[0] in _NOT_A_THING_OPENING and not at_least:
        return False
    if words[0] in _NOT_A_THING_VERB:
        return False
    if words[0] in ("only", "just") and len(words) > 1 and words[1] in _PREPOSITION:
        return False  # "only for trips over a hundred pounds": what a need before is limited to
    if len(words) > 1 and words[1] in _STATE_THEN and _is_state(words[0]):
        return False
    own = [w for w in words if w not in ("a", "an", "the")]
    last = own[-1] if own else ""
    if len(own) == 1 and (
        is_participle(last) or last.endswith(("wise", "ly")) or is_quality_word(last)
    ):
        return False  # "an agreed", "a price-wise", "a heavy": one word, and not a thing
    if last in _NO_THING_LAST or (len(own) > 1 and own[-2] in _DEGREE):
        return False  # "a little bit bigger", "the most expensive", "banana's yellow, yeah"
    if any(w in _RESTART for w in own) or any(
        a in ("and", "or") and b in _PREPOSITION for a, b in zip(own, own[1:], strict=False)
    ):
        return False  # "only these three main basic anyway volume", "millions and in bulk"
    return not _has_finite_verb(words, _FINITE)


# how often, said as one word ("at least nightly", "twice a day"): an amount of time
_FREQUENCY = frozenset(
    "hourly nightly daily weekly fortnightly monthly quarterly yearly annually once twice".split()
)


def _is_state(word: str) -> bool:
    """'available', 'locked', 'accessible': what something is like or what was done to it."""
    return word in ("available", "possible") or is_participle(word) or is_quality_word(word)


DIGITS = r"[£$€]?\d[\d.,]*%?"  # a figure in digits: "15", "12.50", "£15", "20%"
_DIGITS = re.compile(DIGITS)


def amount_only(words: list[str]) -> bool:
    """Whether the words are only an amount of money or time ("ten pounds a month maximum", "two
    days before", "between five and nine pm", "£15 each", "at least nightly")."""
    parts = [p for w in words for p in w.replace("-", " ").split()]
    figures = [
        p in _NUMBER_WORD - {"and", "or"} or p in _FREQUENCY or bool(_DIGITS.fullmatch(p))
        for p in parts
    ]
    return any(figures) and all(
        is_figure or p in _NUMBER_WORD or p in _AMOUNT_WORDS
        for p, is_figure in zip(parts, figures, strict=True)
    )


# verbs of talk, or of having, that "when" follows in a remark ("Go when you want", "Provide
# when the prototype is ready"), never in a need
_TALK_BEFORE_CLAUSE = frozenset(
    "go come get do look think say know mean see wait try work provide have give put".split()
)
# verbs that take "for" as part of what they do ("Book for their children", "Search for a
# claim"); after any other word "for" opens talk ("Provide for the cost", "Go for it")
_TAKES_FOR = frozenset(
    """book pay search apply register sign ask vote check reserve request order filter scan
    test budget allow account""".split()
)
# what "for" opens in talk ("Book for now"), not whom or what it is for
_NOT_FOR_WHOM = frozenset("instance example now sure me us you him her them it this that".split())


def _complement_second(words: list[str]) -> bool:
    """A verb that takes "for" or "when" after it as part of the need: "Book for their children
    from their own account", "Beep when someone claps twice" (a trigger), not "Go for it"."""
    if len(words) < 4:
        return False
    if words[1] == "for":
        return words[0] in _TAKES_FOR and words[2] not in _NOT_FOR_WHOM
    if _asked_when(words):  # "See when their permit expires": when it does is what is shown
        return True
    return words[1] == "when" and words[0] not in _TALK_BEFORE_CLAUSE


def _asked_when(words: list[str]) -> bool:
    """ "See when their permit expires", "check if the van is free": what is seen or checked is
    when or whether something is so (not "see when we get there")."""
    return (
        len(words) >= 4
        and words[0] in _SHOW_OR_KNOW | {"check"}
        and words[1] in ("when", "if", "whether")
        and words[2] not in ("we", "i", "you", "it")
    )


# a person no one names ("somebody else can grab it"): no role a need is for
_ANYONE = frozenset("somebody someone anybody anyone nobody everybody everyone whoever".split())


def reads_as_capability(title: str) -> bool:
    """Whether a title names a capability: a verb, then what it acts on, and no clause of talk
    inside ("Provide for instance we see", "Be, provide simple" do not)."""
    words = [w.strip(",.;:!?\"'").lower() for w in title.split()]
    if len(words) < 2 or not is_verb(words[0]) or words[0] in ("be", "is", "are"):
        return False
    if (
        words[1] in _BAD_SECOND
        and words[0] not in ("make", "keep", "let", "help")
        and not _complement_second(words)
    ):
        return False
    if words[1] in _CONJUNCTION_SECOND or (words[1] in ("and", "or") and len(words) <= 3):
        return False  # "Colour and shape": two nouns and nothing they act on
    verb = words[2] if words[:2] == ["do", "not"] and len(words) > 2 else words[0]
    if verb in _DESCRIBING_VERB | _THINKING_VERB or words[-1] in _TALK_LAST:
        return False  # "Depend on the cost", "Press two and five and yeah": talk, not a need
    if verb in ("remember", "forget", "note", "consider", "bear") and words[1] == "that":
        return False  # "Remember that our company": the team minding something, no need
    if words[:2] == ["provide", "no"] and words[2:3] != ["more"] and words[3:4] != ["than"]:
        # "Provide no refund unless it's medical": a rule, no thing to provide ("Provide no
        # more than 8 buttons", "no later than ..." are limits)
        return False
    if words[0] in ("provide", "give", "have") and words[1] in ("them", "it"):
        return False  # "Provide them while the case is open": what they are is not said
    if words[0] == "make" and words[1] in _ANYONE:
        return False  # "Make somebody else grab": what anyone may then do is talk, no need
    if words[0] == "do" and words[1] not in ("not", "away") and is_base_verb(words[1]):
        return False  # "Do feel all cold and slimy": an emphatic "does" of talk
    if words[1] in ("it", "this", "that") and len(words) > 2 and words[2] in _ITS_VERB:
        return False  # "Make it does feel all cold and slimy": a clause of its own
    if all(w in _NUMBER_WORD or w.isdigit() for w in words[1:]):
        return False  # "Make forty eight and sixty four": figures, and nothing they are of
    items = [i.split() for i in re.split(r",\s*|\s+(?:and|or)\s+", title.lower()) if i.strip()]
    if (
        len(items) >= 2
        and len(items[0]) <= 2
        and all(len(i) == 1 for i in items[1:])
        and sum(is_participle(i[-1].strip(".,")) for i in items) >= 2
    ):
        return False  # "Pay submitted, approved, whatever" (of "submitted, approved, paid,
        # whatever"): states something goes through, no action on a thing
    if words[0] in ("provide", "make", "have", "get", "give") and amount_only(words[1:]):
        return False  # "Provide ten pounds a month maximum": how much of what was said before
    # "a queue we can filter by category": the thing is "a queue", the clause says what for
    relative = _REDUCED_RELATIVE.match(" ".join(words[1:])) if words[0] in _GIVING_VERB else None
    thing = relative.group("thing").split() if relative else words[1:]
    if (
        words[0] == "provide"
        and (
            "into" in thing  # "simple desires into simple actions": what was turned into what
            or words[1] in _BAD_AFTER_PROVIDE
            or words[1] in _NOT_A_THING_ADVERB
            or words[1:3] in (["more", "of"], ["less", "of"])
            or not names_a_thing(thing)
        )
    ):
        return False
    if words[:2] == ["leave", "out"] and not names_a_thing(words[2:]):
        return False
    # "Know how many no-shows we get every month", "See how many bookings were made online": the
    # clause is what is asked to be known or shown, not talk
    rest = " ".join(words[1:])
    if _asked_when(words):
        rest = ""
    elif words[0] in ("show", "say", "warn", "flag") and words[1] == "that":
        rest = ""  # "Show that the same pothole has already been reported": what is shown
    elif words[0] in _SHOW_OR_KNOW:
        rest = _INDIRECT_QUESTION.sub("", rest)
    elif relative:
        rest = " ".join(thing) + rest[relative.end() :]
    # "Reserve a book that's out": after a thing, "that's" opens a relative clause
    rest = _RELATIVE_THATS.sub(lambda m: f"{m.group(1)} that is", rest)
    # "Scan every item when it's picked": a clause after "when" is that clause's, no talk
    main_words = rest.split()
    opens = next((i for i, w in enumerate(main_words) if w in _SUBORDINATE), len(main_words))
    opens = opens if opens >= 2 else len(main_words)  # "Make if it thin it's likely to break"
    if title.count('"') % 2 or _CONTRACTED_CLAUSE.search(" ".join(main_words[:opens])):
        return False  # a quotation cut open, or a clause of talk ("Keep it's also not good")
    if _has_finite_verb(rest.split(), _FINITE_ANYWHERE):
        return False
    # "Upload a photo when they close the job": the clause after "when" has its own subject
    return not _CLAUSE_IN_TITLE.search(" ".join(main_words[:opens]))
