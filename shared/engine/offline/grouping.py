"""Grouping the requirement sentences of a segment into needs, one need one story (the offline
generator, ``generation``).

A list item is one need: written as a label and its details ("- NEW: sleep timer. From the menu
...") it is named by its label; opened by a need said in full ("- Two standard AA batteries. No
rechargeable battery and no charging dock.") it is named by that need, the rest its details. A
definition ("Baby-proof means: ...") is a detail of the story that says the term. A requirement
sentence joins the story before it when it elaborates it
(said within ``ELABORATION_GAP`` sentences and about the same thing, cosine >=
``ELABORATION_SIMILARITY``, or a short follow-up: "and it should be red", "yes, a big one"), joins
any story of the segment it repeats (cosine >= ``REPEAT_SIMILARITY``), or revises a recent one
(``revision``: a changed figure, "let's not do X after all"); otherwise it starts a story when it
is confident (``SEED_AT``, or ``CUE_SEED_AT`` when it states a need plainly; a short fragment
without a need cue only from ``FRAGMENT_SEED_AT``). The others join the need they sit next to or
resemble; one that joins none starts a story from ``ORPHAN_SEED_AT``; one below ``JOIN_AT``
(quoted mostly as talk around a need) is left out. Joining reads the confidence as the segment's
density made it (``capture.relative_to_density``); starting a story reads it never higher than
the classifier said (``Verdict.p_to_write``, which the drafting reads for criteria too): dense
talk quotes more, it does not split into more needs. A short wish said as a frame round a thing
("Photos would help a lot.") and said in full by the same speaker right after is one need
(``_wished_then_said``). Another speaker's naming of the need just said ("An automatic match
suggestion, okay.", ``_recapped``), summing it up a few statements later ("So, a photo of the
receipt taken on the phone, ...", ``_summed_up``) or naming in full a need named in a few words
("Recurring bookings, by the way." ... "Weekly recurring bookings for staff, ...",
``_named_in_full``) is more of that need, never one of its own; so is their summing up within
two statements of it, opening with "So ..." ("So patients can choose a specific doctor, ...",
``_summed_as_a_need``, which it is then written from when it says the need plainly), and a case
of it with what must then happen ("And if one of them clashes, tell me which one, ...",
``_A_CASE_OF_IT``), a condition of it. Said right after a need by its speaker,
what the need leaves or names ("All the other things can be controlled through the screen.") or
what follows from it said as a need in its words ("So we need to have particular encryption
codes.") is a detail of it (``_points_back``). A sentence attached by meaning alone, said away
from the need's own statements, is quoted as its evidence and never drafted.

Deterministic: a pure function of the sentences, their verdicts and their vectors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from shared.analysis.capture import Sentence, Verdict
from shared.analysis.contradiction import number_tokens, quantities
from shared.analysis.revision import (
    SHORT_REVISION_WORDS,
    Revision,
    leads_with_a_figure,
    names_what_it_drops,
    revise_text,
    revision,
    sets_a_figure,
)
from shared.engine.offline.lexicon import (
    AS_IS,
    PERSONA,
    PERSONA_FORMS,
    QUALIFIER,
    base_form,
    is_participle,
    is_verb,
    leaves_out,
    reads_as_capability,
    singular_persona,
    third_person,
)
from shared.engine.offline.statement import (
    DETERMINERS,
    NEED_POINTS_BACK,
    NEEDED_NOW,
    PEOPLE_VERBS,
    body,
    breaks_off,
    by_what,
    capability,
    for_whom,
    judges_a_figure,
    judges_the_work,
    keeps_named_out,
    limits_the_need_before,
    states_a_dependency,
    unframed,
    wanted_but_left_out,
    without_plan,
)
from shared.engine.offline.wording import _lower_first, capital
from shared.text.language import (
    FILLER_SENTENCES,
    STOPWORDS,
    analysis_words,
    clean,
    content_words,
    cue_flags,
    lemma,
    meaningful_word_count,
)
from shared.text.textio import drop_abandoned

# chosen on dev by leave-one-meeting-out runs of the whole generator (docs/EVALUATION.md)
SEED_AT = 0.85
ELABORATION_GAP = 2
ELABORATION_SIMILARITY = 0.45
SEED_ELABORATION_SIMILARITY = 0.75
ATTACH_SIMILARITY = 0.3
NEAR_ATTACH_SIMILARITY = 0.15
CUE_SEED_AT = 0.5
# how many sentences after a figure corrected in passing the need may be said again in full
RESTATED_CORRECTION_GAP = 3
ORPHAN_SEED_AT = 0.8  # a confident statement that joins no need is a need of its own
JOIN_AT = 0.38  # below this confidence a requirement sentence is left out (mostly talk)
FRAGMENT_WORDS = 4
FRAGMENT_SEED_AT = 0.9
SETTLES_AT = SEED_AT  # a statement that settles what was argued is the main one from here
_NEED_CUES = ("user_story", "modal", "want", "prohibition", "decision")
SHORT_FOLLOW_UP_WORDS = 8
# a need said as "do it" after at most this many words ("And my supervisors need to be able to
# do it ..."); more, and what "it" is may be said before it ("If someone changes the contrast on
# their TV and they should be able to do that")
DOES_IT_SUBJECT_WORDS = 4
# figures said again alone, this many statements after the need that holds them at most
FIGURES_AGAIN_GAP = 6
FIGURE_FRAGMENT_WORDS = 8
REPEAT_SIMILARITY = 0.8
REVISION_WINDOW = 12
SHORT_REVISION_GAP = 4
REVISION_SIMILARITY = 0.6
DROP_SIMILARITY = 0.35
MAX_QUOTES = 12
# a statement between two quotes of one need at most this many statements apart, not talk the
# classifier is sure of, is quoted with it (``quote_what_is_said_between``)
BETWEEN_GAP = 3
BETWEEN_AT = 0.3

_FOLLOW_UP = re.compile(
    r"^(?:and|also|plus|but|so|yes|yeah|yep|okay|ok|right|exactly|it|its|it's|they|that|this"
    r"|those|these|which|with|without|maybe|preferably|ideally|at least|at most|no more"
    # "only on weekdays" goes on; "only coordinators can delete a shift" is a rule of its own
    r"|only(?!(?:\s+\w+){1,2}\s+(?:can|could|should|must|may|will|is|are|has|have)\b)"
    r"|up to|then|or)\b",
    re.IGNORECASE,
)

# words that only take the turn ("Right, ...", "Okay so ...")
_TAKES_THE_TURN = re.compile(r"^(?:(?:right|okay|ok|well)\b\W*)+", re.IGNORECASE)

# a correction of what was said ("actually, make the slots twelve minutes", "let's keep it to
# four steps, five is too many")
_CORRECTS = re.compile(
    r"^(?:actually|no wait|wait|sorry|on second thoughts?|in fact|scratch that|correction"
    r"|(?:let'?s\s+)?(?:keep|cut|bring) (?:it|that|them) (?:down )?(?:to|at)"
    r"|let'?s make (?:it|that)|make that)\b",
    re.IGNORECASE,
)

# the meeting settling what was just argued ("Twenty-four hours is not enough, nobody else can
# use the slot at that notice." - "Okay, changing that: reminder texts go out forty-eight hours
# before the appointment."): the decision is the need, what led to it is evidence
_SETTLES = re.compile(
    r"^(?:(?:okay|ok|right|fine|alright|so|then|well)\W+)*(?:changing (?:that|it)|change (?:that|it)"
    r"|let's change|so let's|then let's|let's make it|we'll change|we will change)\b",
    re.IGNORECASE,
)


@dataclass
class _Story:
    """Sentences (indices into the segment's sentences) that state one need: ``members`` are
    quoted (the main statement first), ``writing`` is the sentence the draft is written from
    (with ``revisions`` applied), ``superseded`` the statements a later one revised."""

    members: list[int]
    strength: float
    writing: int = -1
    superseded: list[int] = field(default_factory=list)
    revisions: list[Revision] = field(default_factory=list)
    drafting: set[int] = field(default_factory=set)  # members drafted whatever their confidence
    evidence: set[int] = field(default_factory=set)  # members quoted, never drafted
    # what the need is written from when no statement says it whole: the proposal a question
    # made, which the answer confirmed ("Would it help if the system grouped ...?" "Yes.")
    said_as: str | None = None
    # details a later statement revised (quoted under ``superseded``), drafted with it applied
    revised_details: dict[int, Revision] = field(default_factory=dict)
    # a figure said in answer to a question on the need, with the question's words: what the
    # criterion is drafted from ("How far ahead can they book?" "Six weeks, I'd say." -> "They
    # can book six weeks ahead.")
    answered: dict[int, str] = field(default_factory=dict)
    # a scope decision: a thing left out of what is built ("Timesheets?" "Not now.")
    decided_out: bool = False

    def __post_init__(self) -> None:
        if self.writing < 0:
            self.writing = self.members[0]

    @property
    def said(self) -> list[int]:
        """The statements that say this need: those quoted, and the one it is written from when
        a later figure corrected it (then quoted under ``superseded``)."""
        return self.members if self.writing in self.members else [*self.members, self.writing]

    @property
    def own(self) -> list[int]:
        """The statements that say this need themselves: those it quotes only as evidence left
        aside (all of them, when every one is evidence)."""
        return [k for k in self.said if k not in self.evidence] or self.said

    @property
    def last(self) -> int:
        return max(self.members)

    def add(self, k: int, p: float, settles: bool = False) -> None:
        """Quote sentence ``k`` too; the strongest statement is the main one (quoted first), or
        one that ``settles`` what was argued before it (``_SETTLES``)."""
        if len(self.members) >= MAX_QUOTES or k in self.members:
            return
        self.members.append(k)
        stronger = p > self.strength or (settles and p >= SETTLES_AT)
        # a need said as its question's answer is written from it, whatever joins it later
        if stronger and self.writing == self.members[0] and not self.revisions and not self.said_as:
            self.members.remove(k)
            self.members.insert(0, k)
            self.writing = k
        self.strength = max(self.strength, p)

    def restated_by(self, k: int, p: float) -> None:
        """Sentence ``k`` says this story's short answer as a need in full: it is the main
        statement (quoted first and written from), the answer its evidence."""
        if k in self.members:
            return
        self.members.insert(0, k)
        self.writing, self.revisions = k, []
        self.strength = max(self.strength, p)

    def take(self, members: list[int], vectors: np.ndarray) -> list[int]:
        """Quote ``members`` as evidence of this need (confidence 0: the main statement stays);
        the ones there is no room for (``MAX_QUOTES``) are returned. They were handed over
        because no need could be written from them, so one that is not about this need is
        quoted, never drafted: no criterion of a need it does not speak of. Not about it: the
        grouping would not have attached it (``_attached``): its cosine to the need's own
        statements (those quoted only left aside) is under ``ATTACH_SIMILARITY``, or under
        ``NEAR_ATTACH_SIMILARITY`` when said within ``ELABORATION_GAP`` + 1 of one of them."""
        own = self.own
        about = _unit(sum(vectors[k] for k in own))
        left = [k for k in members if k not in self.members][MAX_QUOTES - len(self.members) :]
        for k in members:
            if k not in left:
                near = _said_near(k, own)
                least = NEAR_ATTACH_SIMILARITY if near else ATTACH_SIMILARITY  # as `_attached`
                if k not in self.members and float(vectors[k] @ about) < least:
                    self.evidence.add(k)
                self.add(k, 0.0)
        return left

    def quote_in_order(self, k: int) -> None:
        """Quote sentence ``k`` too, among the quotes after the main one in text order."""
        self.members = [*self.members[:1], *sorted([*self.members[1:], k])]

    def add_detail(self, k: int) -> None:
        """Quote sentence ``k`` as a detail of the main statement (which stays the main one)."""
        if len(self.members) < MAX_QUOTES and k not in self.members:
            self.members.append(k)
            self.drafting.add(k)

    def revise(self, k: int, found: Revision, corrects: bool = False) -> None:
        """Sentence ``k`` revises this story: what it replaces moves to ``superseded``; a
        correction of a figure (``corrects``) is written into the statement it corrects."""
        replaced = [self.writing] if found.kind == "number" else list(self.members)
        for old in replaced:
            if old not in self.superseded:
                self.superseded.append(old)
        self.members = [k] + [m for m in self.members if m not in replaced and m != k]
        if (found.restated and not corrects) or found.kind != "number":
            self.writing, self.revisions = k, []
        else:
            self.revisions.append(found)

    def written(self, sentences: list[Sentence]) -> str:
        """What the draft is written from: the statement (or the proposal a question made)
        with every later change of its figures written in."""
        text = self.said_as or sentences[self.writing].text
        for found in self.revisions:
            text = revise_text(text, found)
        return text

    def revise_detail(self, k: int, detail: int, found: Revision) -> None:
        """Sentence ``k`` changes a figure of the detail ``detail`` ("Four hours for high, two
        days for normal" ... "actually, make it one day for normal"): the detail is quoted under
        ``superseded`` and drafted with the change, ``k`` is quoted as its evidence."""
        self.members = [m for m in self.members if m != detail]
        if detail not in self.superseded:
            self.superseded.append(detail)
        if k not in self.members:
            self.members.append(k)
        self.evidence.add(k)
        self.revised_details[detail] = found


def _group(sentences: list[Sentence], verdicts: list[Verdict], vectors: np.ndarray) -> list[_Story]:
    """Stories from the requirement sentences, in order: a confident one (p >= ``SEED_AT``,
    or >= ``CUE_SEED_AT`` when it states a need plainly) starts a story unless it elaborates,
    repeats or revises one; the others only join a story (the nearest one, else the most
    similar one), never start one."""
    stories: list[_Story] = []
    pending: list[int] = []
    held_back: list[int] = []  # needs said as "do it": of the need "it" is
    items = _labelled_items(sentences, verdicts)
    item_story: dict[int, _Story] = {}
    for k, verdict in enumerate(verdicts):
        if (_whole_item(sentences, k) or _answers(sentences, k)) and out_of_scope(sentences, k):
            # "## Won't (this phase)" / "- Timesheets.": a scope decision, whatever the words of
            # the item read like on their own
            stories.append(_Story([k], max(verdict.p_requirement, JOIN_AT)))
            continue
        if (
            _says_a_thing_is_out(sentences[k].text)
            or (
                wanted_but_left_out(sentences[k].text)
                and _left_out_again(stories, sentences, k) is None  # "Photos." "Parents want
            )  # trip photos, but ... let's keep that out": the thing just left out, again
        ) and not any(k in st.members for st in stories):
            # "Okay, reviews are out for now.", "Let's keep leavers out of this first version.",
            # "Loyalty points would be nice, but I know that's phase two.": a scope decision
            # said in a meeting, however little it reads like a requirement
            stories.append(_Story([k], max(verdict.p_requirement, JOIN_AT), decided_out=True))
            continue
        turned_down = _topic_turned_down(sentences, k)
        if turned_down is not None:  # "Timesheets?" "Not now, maybe next year.": a scope
            said_as, questions = turned_down  # decision on the topic asked about
            story = _Story([k, *questions], max(verdict.p_requirement, JOIN_AT), writing=k)
            story.said_as, story.decided_out = said_as, True
            stories.append(story)
            continue
        deferred = _deferred(stories, sentences, k)
        if deferred is not None:  # "Members want to put their match results in ..." "That's
            _join(deferred, sentences, k, verdict.p_requirement)  # nice but, hmm, that's phase
            deferred.evidence.add(k)  # two, honestly.": left out, for later
            said = body(sentences[deferred.writing].text).rstrip(" .!")
            deferred.said_as = f"{said}, but that's for later."
            continue
        left_out = _left_out_again(stories, sentences, k)
        if left_out is not None:  # "Anything we're not doing?" "Photos. Parents want trip
            _join(left_out, sentences, k, verdict.p_requirement)  # photos, but ... keep that out"
            continue
        if describes_the_problem(sentences, k) or frames_the_meeting(sentences[k].text):
            continue  # "## Problems today" / "- Requests come in by email and get lost"
        if left_open(sentences, k):
            continue  # "## Open questions" / "- Video appointments for teenagers."
        asked_need = _ability_said_yes_to(stories, sentences, k) or _statement_asked(sentences, k)
        if asked_need is not None:  # "Should they be able to reorder the jobs?" "Yes, if ...":
            # the need asked about, what the answer adds its criteria
            story = _Story([k - 1, k], max(verdict.p_requirement, JOIN_AT), said_as=asked_need)
            story.drafting.add(k)
            stories.append(story)
            continue
        proposal = _confirmed_proposal(sentences, k) or _answered_condition(sentences, k)
        if proposal is not None:  # "Would it help if the system grouped ...?" "Yes, massively."
            stories.append(
                _Story([k - 1, k], max(verdict.p_requirement, JOIN_AT), said_as=proposal)
            )
            continue
        topic = _confirmed_topic(sentences, k)
        if topic is not None:  # "What about subscriptions? Like a loaf every Saturday." "Yes,
            said_as, raised = topic  # people ask for that all the time.": "We need subscriptions."
            story = _Story(
                [k, *raised], max(verdict.p_requirement, JOIN_AT), writing=k, said_as=said_as
            )
            adds = _CONFIRMS_THEN.match(clean(sentences[k].text))
            if _THING_PROPOSED.match(clean(sentences[raised[0]].text)) and adds:
                # "a reminder to the approver before the cut-off?" "Yes, something like two days
                # before, anything still waiting for me gets a nudge.": what the yes adds is a
                # criterion of the thing proposed
                story.answered[k] = capital(adds.group("rest"))
            stories.append(story)
            continue
        said_whole = _said_with_its_question(sentences, k)  # "Can they ...?" "Yes, ..."
        figure_answer = (
            _answered_figure(sentences, k)
            or _answered_price(sentences, k)
            or _answered_how(sentences, k)
            or _answered_what_to_see(sentences, k)
            or _answered_scope(stories, sentences, k, said_whole)
        )
        if figure_answer is not None:  # "How long before ... do we send the welcome pack?"
            # "Two weeks before.": the answer holds the figure a later statement may revise
            strength = max(verdict.p_requirement, JOIN_AT)
            stories.append(_Story([k, k - 1], strength, writing=k, said_as=figure_answer))
            continue
        of_a_thing = _figure_asked_of(stories, sentences, k)
        if of_a_thing is not None:  # "How many people per slot?" "Two hundred, that's what the
            asked_of, figure_said = of_a_thing  # fire officer allows ...": "Two hundred people
            asked_of.add_detail(k)  # per slot."
            asked_of.answered[k] = figure_said
            continue
        if verdict.label == "NULL":
            # "let's make it six", which the classifier reads as talk, still corrects a figure
            if meaningful_word_count(sentences[k].text) <= SHORT_REVISION_WORDS:
                _revised_story(stories, sentences, vectors, k, short_only=True)
            continue
        lead = leads_with_a_figure(sentences[k].text)
        if lead and _revised_story(stories, sentences, vectors, k, short_only=True) is not None:
            continue  # "Make it 48 hours, the reviewers can't do 24.": a revision, not a detail
        chosen = _option_chosen(stories, sentences, k)
        if chosen is not None:  # "Parents should be able to give consent ..." "With a signature?
            chosen.add_detail(k)  # Or just a tick?" "A tick is fine, but it has to record ...":
            # the option taken, with what it must do, is a detail of that need, as sure as it is
            chosen.strength = max(chosen.strength, verdict.p_requirement)
            continue
        said_no = _answered_no(stories, k, said_whole)
        if said_no is not None:  # "Do they need to log in?" "No, but they can leave an email
            said_no.add_detail(k)  # ...": "They do not need to log in." (drafted below)
            continue
        capped = _count_capped(stories, sentences, k)
        if capped is not None:  # "A reminder three days before the deadline, ..." "Not more than
            capped.add_detail(k)  # that, ..." "Agreed, two reminders max.": a limit of that need
            continue
        settled = _figure_settled(stories, sentences, k, lead)
        if settled is not None:  # "Can parents pay in instalments?" "For the residential trip,
            settled.add_detail(k)  # yes, ..." "Let's say three instalments for the residential."
            continue
        head = items.get(k)
        if head is not None and head != k and head in item_story:
            item_story[head].add_detail(k)  # the item's details: its label stays the title
            continue
        if head == k:
            item_story[k] = _Story([k], max(verdict.p_requirement, JOIN_AT))
            stories.append(item_story[k])
            continue
        if verdict.p_to_write >= CUE_SEED_AT and _corrected_next(sentences, k):
            # a figure decided on ("Each household gets fifty visitor hours a month." "Actually,
            # make it sixty, ..."): a need of its own, which the correction then revises
            stories.append(_Story([k], verdict.p_requirement))
            continue
        text = sentences[k].text
        how_soon = _asked_how_soon(sentences, k)
        if how_soon is not None:
            # "How quickly?" "Same day. Actually, within an hour would be better, ..." "Within
            # an hour, then.": how soon the need said before the question is done
            soon_of = _just_before(stories, how_soon, sentences)
            said_when = _TIME_SAID.search(clean(text))
            if soon_of is not None and said_when is not None:
                soon_of.add_detail(k)
                soon_of.answered[k] = f"{capital(said_when.group(0))}."  # "Within an hour."
                continue
        does = _DOES_IT.search(clean(text))
        if does and len(clean(text)[: does.start()].split()) <= DOES_IT_SUBJECT_WORDS:
            # "And my supervisors need to be able to do it themselves at six in the morning":
            # of the need the next speaker sums up (below), else of the need just said
            near = None if _sums_it_up(sentences, k) else _just_before(stories, k, sentences)
            if near is not None:
                near.add_detail(k)
            else:
                held_back.append(k)
            continue
        figure, listed = _figure_only(text), _list_only(text)
        # a figure or items said on their own belong to the need just said, unless they are an
        # item of notes (a need of their own) or answer a question ("How long before ...?"
        # "Two weeks before.")
        alone = (figure or listed) and not _whole_item(sentences, k) and not _answers(sentences, k)
        if (
            figure
            and _CORRECTS.match(clean(text))
            and _revised_story(stories, sentences, vectors, k, short_only=True) is not None
        ):
            continue  # "Sorry, every thirty seconds.": the figure just said, corrected
        limited = (
            _just_before(stories, k, sentences)
            if alone
            or limits_the_need_before(text)
            or for_whom(text) is not None
            or by_what(text) is not None
            or _capacity_of_the_need_before(stories, sentences, k)
            or (verdict.p_requirement >= JOIN_AT and _points_back(stories, sentences, k))
            or _SAID_OF_THE_FIGURE_BEFORE.match(clean(text))
            or _A_CASE_OF_IT.match(clean(text))
            or _done_to_it(text)
            or _says_its_figure_again(stories, sentences, k)
            else None
        )
        # "And the missed bin window, twenty-four hours." after the bulky bookings: the figure
        # of a thing it names itself, which the need before does not: a need of its own
        own_thing = limited is not None and figure and _names_its_thing(limited, sentences, text)
        if own_thing:
            limited = None
        elif limited is None and figure and alone:
            # "So let's make it up to five items. Same thirty pounds." "Same price?" ... "Five
            # items, thirty pounds.": the figures of a need said a few statements back, again
            limited = _holds_the_figures(stories, sentences, k)
        if limited is not None and listed and not figure:
            # "Contract signed, right-to-work check, ..." after "A checklist per starter":
            # the items of a need that names a list of things, not of any need
            said = sentences[limited.writing].text
            limited = limited if _HOLDS_ITEMS.search(said) else None
        if limited is not None:
            limited.add_detail(k)  # a condition or a figure of the need just said
            continue
        if _revised_story(stories, sentences, vectors, k) is not None:
            continue
        near = _just_before(stories, k) if _CORRECTS.match(clean(text)) else None
        detail = _revised_detail(near, sentences, k) if near is not None else None
        if near is not None and detail is not None:
            # "Delivery costs three pounds, free over twenty-five." "Make that free over
            # thirty, ...": the figure of a detail of the need just said, set anew
            near.revise_detail(k, *detail)
            continue
        defined = _defined_story(stories, sentences, k)
        if defined is not None:  # "Baby-proof means: no part a child can pull off, ..."
            defined.add_detail(k)
            continue
        p = verdict.p_requirement
        if p < JOIN_AT:
            continue
        recapped = _recapped(stories, sentences, vectors, k)
        if recapped is not None and _settles_it(sentences, k, recapped):
            recapped.restated_by(k, p)  # "Okay, English and Polish for launch.": as settled
            continue
        if recapped is not None:  # "Suggest the match, same amount, same date." "An automatic
            _join(recapped, sentences, k, min(p, recapped.strength))  # match suggestion, okay.":
            recapped.evidence.add(k)  # the need just said, named again: quoted, no story
            continue
        named_in_full = _named_in_full(stories, sentences, k)
        if named_in_full is not None:  # "Recurring bookings, by the way." ... "Weekly recurring
            named_in_full.restated_by(k, p)  # bookings for staff, for the whole term.": the need
            continue  # named in full is the main statement
        summed = _summed_up(stories, sentences, k)
        if summed is not None:  # "So what I'd want is to take a photo of the receipt ..." ...
            _join(summed, sentences, k, min(p, summed.strength))  # "So, a photo of the receipt
            continue  # taken on the phone, attached to the expense line.": more of that need
        # a statement that would start a need (a confident one, or one that states a need
        # plainly) is a need of its own unless it is close to the one before
        item = _whole_item(sentences, k)  # "- Engineers see today's jobs on their phone."
        start = verdict.p_to_write  # how sure it is to start a need of its own
        would_seed = start >= SEED_AT or (
            start >= CUE_SEED_AT and (item or states_a_need(sentences[k].text))
        )
        corrected = _restates_a_correction(stories, sentences, k) if would_seed else None
        if corrected is not None:  # "Yes, let's make it forty-eight hours." then "Reminder
            corrected.restated_by(k, p)  # texts go out forty-eight hours before ...": in full
            continue
        again = _figure_said_again(stories, sentences, k)
        if again is not None:  # "Seven days." ... "No, let's keep it simple, seven days for
            _join(again, sentences, k, min(p, again.strength))  # everyone.": said again, kept
            again.evidence.add(k)
            continue
        answered = _answered(stories, sentences, k) or _wished_then_said(stories, sentences, k)
        if answered is not None:  # "Card number and a PIN." then "... log in with their card
            answered.restated_by(k, p)  # number and PIN": the need said in full is the main one
            continue
        summed = _summed_as_a_need(stories, sentences, vectors, k)
        if summed is not None:
            if states_a_need(text):  # "The older ones always want the same GP, ..." "So patients
                summed.restated_by(k, p)  # can choose a specific doctor, ...": the need whole
            else:  # "So messages only ever say date, time and doctor, ...": more of it, the main
                _join(summed, sentences, k, p)  # statement if it is the surer one
            continue
        if _own_need(text, start) or (own_thing and would_seed):
            stories.append(_Story([k], p))  # "When they finish a room they mark it clean, ..."
            continue
        bar = SEED_ELABORATION_SIMILARITY if would_seed else None
        target = _elaborated(stories, sentences, vectors, k, bar) or _repeated(stories, vectors, k)
        if target is not None:
            _join(
                target,
                sentences,
                k,
                p,
                capped=_adds_to(sentences[k].text, sentences[target.writing].text),
                settles=bool(_SETTLES.match(clean(sentences[k].text))),
            )
        elif (
            _seeds(sentences[k].text, start)
            or (item and start >= CUE_SEED_AT and not _said_of_a_need(sentences[k].text))
            or (start >= CUE_SEED_AT and answers_a_topic(sentences, k))  # "And VAT?" "VAT at ..."
        ):
            stories.append(_Story([k], p))  # a need said plainly starts a story
        else:
            pending.append(k)
    for k in held_back:
        # the need "it" is, named by whoever sums it up next ("Supervisors can publish
        # disruption notices directly."), else the need said just before it
        pointed_at = _named_next(stories, sentences, k) or _just_before(stories, k, sentences)
        if pointed_at is not None:
            pointed_at.add_detail(k)
        else:
            pending.append(k)  # as any statement that starts no need
    for k in pending:
        p, start = verdicts[k].p_requirement, verdicts[k].p_to_write
        text = sentences[k].text
        figure = meaningful_word_count(text) <= FIGURE_FRAGMENT_WORDS and bool(
            number_tokens(clean(text))
        )  # "Six weeks, I'd say."
        asked = _asked_about(stories, sentences, k) if figure else None
        whole = answer_said_whole(sentences[k - 1].text, text) if asked is not None else None
        if asked is not None and whole is not None:
            # "How far ahead can they book?" "Six weeks, I'd say.": a detail of that need, drafted
            # with the question's words
            asked.add_detail(k)
            asked.answered[k] = whole
            continue
        remark = _remarked_on(stories, sentences, k)
        if remark is None and _own_need(text, start):
            stories.append(_Story([k], p))
            continue
        went_on = None if remark else _went_on(stories, sentences, k)
        if went_on is not None:  # "Yes, printed." "I don't want to look at a tablet ...": quoted
            _join(went_on, sentences, k, min(p, went_on.strength))  # with the need, as its
            went_on.evidence.add(k)  # evidence (often why), never its main statement
            continue
        target = remark or _attached(stories, vectors, k)
        if target is not None and _answers_a_new_question(sentences, target.writing, [k]):
            target = None  # its story answers a question on something new asked after it
        detail = (
            _revised_detail(target, sentences, k)
            if target is not None and _CORRECTS.match(clean(sentences[k].text))
            else None
        )
        if target is not None and detail is not None:
            # "Within four hours for normal faults." "Actually, let's say two hours, ...": both
            # waited for the need they are details of; the correction revises the detail
            target.revise_detail(k, *detail)
        elif target is not None:
            own = target.own  # before ``k`` joins it
            # how things are done today, said in answer to a question on it ("What happens
            # today when a tenant moves in?" "The agent emails us, ..."): evidence at most
            as_is = answers_how_it_is(sentences, k)
            far = (remark is None and not _said_near(k, own)) or as_is
            # attached by its meaning alone, it never displaces a need stated plainly ("The
            # manager emails us, we email IT for a laptop, ..." said long before "They should
            # get a welcome email a week before they start")
            plain = as_is or _stated_plainly(sentences[target.writing].text)
            _join(target, sentences, k, min(p, target.strength) if far and plain else p)
            if far:
                # attached by its meaning alone, said away from the need: quoted as evidence of
                # it, never drafted (what is said of something else is no criterion of it)
                target.evidence.add(k)
        elif start >= ORPHAN_SEED_AT and not _said_of_a_need(sentences[k].text):
            stories.append(_Story([k], p))  # nothing it belongs to: a need of its own
    for story in stories:  # the main statement first, the others in text order
        story.members = story.members[:1] + sorted(story.members[1:])
        for k in story.members[1:]:
            # "Does every room need an inspection?" "No, only checkouts.": "Only checkouts need
            # an inspection." is the criterion, not the bare answer
            whole = only_said_whole(sentences[k - 1].text, sentences[k].text) if k else None
            # "Do we take payment in the app?" "Not for consultations, ... But for
            # prescriptions, yes, ...": "We take payment in the app for prescriptions."
            question = _asked_before(sentences, k)
            if whole is None and question:
                whole = scope_said_whole(question, sentences[k].text)
            if whole is not None and k not in story.answered:
                story.answered[k] = whole
    return stories


# what a statement is said of, named by the need just said: everything the need leaves ("All the
# other things can be controlled through the screen.", "And the rest is hard plastic."; not a
# topic said first: "and everything else, you can forget about ...") or the things it names
# ("And all these buttons should be easy to find ...", after "We'll need only few buttons.")
_THE_REST = re.compile(
    r"^(?:(?:and|but|so|then)\W+)*(?:all the others?|the others|all the rest|the rest|everything"
    r" else)\b(?!\s*,|\s+of\s+(?:the\s+)?(?:meeting|time|day|week|team|us|you|them)\b)",
    re.IGNORECASE,
)
_THESE = re.compile(
    r"^(?:(?:and|but|so|then)\W+)*(?:all\s+)?(?:these|those)\s+(?P<thing>[a-z][\w-]*)\s+"
    r"(?:can|could|should|must|will|need|have to|has to)\b",
    re.IGNORECASE,
)


# what follows from a need, said as a need by whoever said it ("So we need to have particular
# encryption codes.")
_SO_WE_NEED = re.compile(
    r"^so\W+(?:we|you|they)\s+(?:(?:would|will|'d|'ll|also|still)\s+)?(?:need|have|must|should)\b",
    re.IGNORECASE,
)


def _points_back(stories: list[_Story], sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k``, said right after a need by the speaker who said it, is said of what
    that need names or leaves (``_THE_REST``, ``_THESE`` with a word of the need), or follows
    from it in a word of it ("So ..." right after it): a detail of it."""
    story = _just_before(stories, k, sentences)
    if story is None or k - story.last > 2:
        return False
    if sentences[story.last].speaker != sentences[k].speaker:
        return False
    said = clean(sentences[k].text)
    if _THE_REST.match(said):
        return True
    if (
        _SO_WE_NEED.match(said)
        and k - 1 in story.said
        and sentences[story.writing].speaker == sentences[k].speaker
    ):
        # "So we need to have particular encryption codes." after "So we need to check their
        # specifications and do their encryption ...": what follows from the need, in its words
        return _shared_words(story, sentences, said) > 0
    these = _THESE.match(said)
    if these is not None and _shared_words(story, sentences, these.group("thing")) > 0:
        return True
    # "Recurring bookings, by the way." "I have office hours every Tuesday for the whole term, and
    # I don't want to book that thirteen times.": what the need named just before is for, the
    # need pointed at by "that"
    return (
        k - story.last == 1
        and bool(NEED_POINTS_BACK.search(said))
        and bool(_short_name(sentences[story.writing].text))
    )


# a reply that keeps or rejects what was put to it; not a recap ("Okay, so bulky bookings are up
# to five items for thirty pounds.": what the meeting settles, said in full)
_REPLIES = re.compile(r"^(?:no|yes|yeah|fine)\b\W(?!\s*so\b)", re.IGNORECASE)


# a recap: the need just said named again as a thing and acknowledged ("Performance at peak,
# okay.", "Status tracking with notifications, okay.")
_RECAP = re.compile(
    r"^(?:(?:ha|oh|ooh|so|and)\W+)*(?P<named>[^,.;:?!]+?)\s*,\s*"
    r"(?:okay|ok|yeah|yes|yep|sure|got it|noted|fine|good|great|nice|lovely|perfect|right)"
    r"(?:\W+(?:okay|ok))?\W*$",
    re.IGNORECASE,
)
RECAP_WORDS = 2, 8
# the need just said named again with a "yes" first ("Ooh, yes, a cancel link right in the email,
# that's good.")
_YES_THEN_NAMED = re.compile(
    r"^(?:(?:ha|oh|ooh|ah)\W+)*(?:yes|yeah|yep)\W+(?P<named>(?:an?|some)\s+[^,.;:?!]+?)"
    r"(?:\s*,\s*(?:that's|that is|that'd be)\s+(?:good|great|nice|lovely|perfect|useful))?\W*$",
    re.IGNORECASE,
)
# the need just said named again after an acknowledgement ("Ha, okay, fast to open and fast to
# take a photo", read without what the speaker will do about it: ``statement.without_plan``)
_ACK_THEN_NAMED = re.compile(
    r"^(?:(?:ha|oh|ah|right)\W+)*(?:okay|ok|got it|noted|understood)\W+(?P<named>[^,.;:?!]+?)\W*$",
    re.IGNORECASE,
)


def _settles_it(sentences: list[Sentence], k: int, story: _Story) -> bool:
    """Whether recap ``k`` of ``story`` is said "okay" first, as what was settled, in no fewer
    words than the statement the need is written from ("English and Polish." ... "Okay, English
    and Polish for launch."); not acknowledged after ("Status tracking with notifications,
    okay."), nor a need said in full named short ("Patients must be able to cancel their
    appointment online without phoning us." "Okay, so online cancellation.")."""
    said = clean(sentences[k].text)
    named = _ACK_THEN_NAMED.match(without_plan(said))
    return (
        named is not None
        and not _RECAP.match(said)
        and meaningful_word_count(named.group("named"))
        >= meaningful_word_count(sentences[story.writing].text)
    )


# the need just said named again as a thing, nothing else ("Some kind of automatic reading, so
# OCR.", "A prompt in plain language asking for a full VAT receipt.")
_NAMED_AGAIN = re.compile(
    r"^(?:(?:so|and)\W+)?(?P<named>(?:an?|some)\s+[^,.;:?!]+?)(?:\s*,\s*(?:so|like)\s+\w+)?\W*$",
    re.IGNORECASE,
)


def _has_a_subject(named: str) -> bool:
    """Whether words said as a name read as a clause: a verb after the first word with its
    object after it ("Finance maintains the rates"); "Override the distance with a reason" is
    the need said as an action, "An automatic match suggestion" a thing."""
    words = re.findall(r"[a-z'-]+", named.lower())
    return any(
        is_verb(w) and words[i + 1] in DETERMINERS | {"that"} and words[i - 1] != "to"
        for i, w in enumerate(words[1:-1], start=1)
    )  # "fast to take a photo": what to do, no subject


def _a_name(words: str) -> bool:
    """Whether words name a thing (or an action), with no clause of their own: no pronoun, form
    of "be" / "have" or "not" (``_SAYS_A_CLAUSE``), no subject before a verb
    (``_has_a_subject``)."""
    return not (_SAYS_A_CLAUSE.search(words) or _has_a_subject(words))


def _recapped(
    stories: list[_Story], sentences: list[Sentence], vectors: np.ndarray, k: int
) -> _Story | None:
    """The story just before sentence ``k`` when another speaker names its need again as a
    thing and acknowledges it (``_RECAP``: "Status tracking with notifications, okay." after
    "And a notification when it changes, I'd like that for my own claims too."): the words or
    the meaning of the need (a word of its statements, or cosine >= ``ELABORATION_SIMILARITY``)
    in a name with no clause of its own. One need, one story: the recap is quoted with it."""
    said = clean(sentences[k].text)
    recap = _RECAP.match(said) or _YES_THEN_NAMED.match(said)
    acknowledged = None if recap is not None else _ACK_THEN_NAMED.match(without_plan(said))
    plain = None if recap or acknowledged else _NAMED_AGAIN.match(said)
    recap = recap or acknowledged or plain
    if recap is None or states_a_need(said):
        return None
    named = recap.group("named")
    if not _a_name(named):
        return None
    longer = 4 * bool(plain or acknowledged)  # a name said alone or after "okay" may be longer
    if not RECAP_WORDS[0] <= meaningful_word_count(named) <= RECAP_WORDS[1] + longer:
        return None
    story = _just_before(stories, k, sentences)
    if story is None or sentences[story.writing].speaker == sentences[k].speaker:
        return None
    if plain is not None:  # with no acknowledgement: right after the need, in its words
        return story if k - 1 in story.said and _shared_words(story, sentences, named) else None
    if k - 1 in story.said:  # acknowledged right after the need ("Performance at peak, okay.")
        return story
    return story if _shared_words(story, sentences, named) or _similar(vectors, story, k) else None


# a need said a few statements back, summed up by another speaker as a thing ("So, a photo of
# the receipt taken on the phone, attached to the expense line.")
_SUMS_UP = re.compile(
    r"^(?:(?:okay|ok|right|yes|yeah)\W+)*so\W+(?P<named>(?:an?|the|some)\s+[^.;:?!]+?)\W*$",
    re.IGNORECASE,
)
SUM_UP_GAP = 5  # statements from the need's last quote (talk between it and the summing up)


def _summed_up(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The latest story whose need sentence ``k``, another speaker's words, sums up as a thing
    (``_SUMS_UP``) naming two words of its statements, said within ``SUM_UP_GAP`` statements of
    it with no new topic between ("So what I'd want, really, is to take a photo of the receipt on
    my phone, ..." ... "So, a photo of the receipt taken on the phone, attached to the expense
    line."): more of that need, not a need of its own."""
    said = clean(sentences[k].text)
    summed = _SUMS_UP.match(said)
    if summed is None or states_a_need(said) or not stories:
        return None
    named = summed.group("named")
    if not _a_name(named):
        return None
    for story in reversed(stories):
        if not 0 < k - story.last <= SUM_UP_GAP or _heading_between(sentences, story.last, k):
            return None
        if sentences[story.writing].speaker == sentences[k].speaker:
            continue
        if _shared_words(story, sentences, named) >= 2:
            return story
    return None


NAMED_SHORT_WORDS = 4  # a need named in a few words ("Recurring bookings, by the way.")


def _short_name(text: str) -> frozenset[str]:
    """The words (lemmas) of the need a statement names in a few words with no clause
    ("Recurring bookings, by the way."): two content words at least, ``NAMED_SHORT_WORDS``
    meaningful words at most; empty when it names none so."""
    named = clean(text)
    short = re.split(r"[,;:]", named)[0]
    if states_a_need(named) or _SAYS_A_CLAUSE.search(short):
        return frozenset()
    words = frozenset(lemma(w) for w in content_words(short))
    ok = len(words) >= 2 and meaningful_word_count(short) <= NAMED_SHORT_WORDS
    return words if ok else frozenset()


def _named_in_full(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """One of the last two stories, said within ``ELABORATION_GAP`` + 1 statements before
    sentence ``k``, when it names its need in a few words with no clause ("Recurring bookings,
    by the way.") and ``k`` names the same thing in full, as a thing too, with every content word
    of it ("Weekly recurring bookings for staff, for the whole term."): one need, said again in
    full."""
    said = clean(sentences[k].text)
    first = re.split(r"[,;:]", said)[0]
    if states_a_need(said) or not _a_name(first):
        return None
    full = {lemma(w) for w in content_words(first)}
    for story in stories[-2:][::-1]:
        # its one statement, and the details said of it ("I don't want to book that ...")
        if len(set(story.members) - story.drafting) != 1 or story.superseded or story.said_as:
            continue
        if not 0 < k - story.last <= ELABORATION_GAP + 1:
            continue
        words = _short_name(sentences[story.writing].text)
        if words and words < full:
            return story
    return None


def _shared_words(story: _Story, sentences: list[Sentence], named: str) -> int:
    """How many content words of ``named`` the statements of ``story`` say too, in any form
    (``_same_word``)."""
    said = {lemma(w) for m in story.members for w in content_words(sentences[m].text)}
    return sum(any(_same_word(a, lemma(b)) for a in said) for b in content_words(named))


def _same_word(a: str, b: str) -> bool:
    """Whether two lemmas are one word in another form ("book" and "booking", "save" and
    "saved"): equal, or one of four letters or more begins the other."""
    short, long = sorted((a, b), key=len)
    return len(short) >= 4 and long.startswith(short)


def _similar(vectors: np.ndarray, story: _Story, k: int) -> bool:
    """Whether sentence ``k`` is about the need of ``story`` (cosine to its statements >=
    ``ELABORATION_SIMILARITY``)."""
    return float(vectors[k] @ _centroid(vectors, story)) >= ELABORATION_SIMILARITY


def _figure_said_again(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The story just before sentence ``k`` when ``k`` is a short reply that says again a figure
    the story already holds, and no other ("Seven days." "Well, maybe fourteen for the
    seniors?" "No, let's keep it simple, seven days for everyone."): the figure kept, no need of
    its own."""
    text = clean(sentences[k].text)
    said = number_tokens(text)
    if (
        not said
        or not _REPLIES.match(text)
        or meaningful_word_count(text) > SHORT_FOLLOW_UP_WORDS + 2
    ):
        return None
    story = _just_before(stories, k, sentences)
    if story is None:
        return None
    held = {t.lower() for m in story.members for t in number_tokens(clean(sentences[m].text))}
    return story if {t.lower() for t in said} <= held else None


# a thing named first, then its figure ("And the missed bin window, twenty-four hours.")
_THING_THEN_FIGURE = re.compile(
    r"^(?:(?:and|so|then|okay|ok|right)\W+)*(?:the|our|your)\s+(?P<thing>[^,;:]+?)\s*[,:]\s*\S",
    re.IGNORECASE,
)


def _names_its_thing(story: _Story, sentences: list[Sentence], text: str) -> bool:
    """Whether figure ``text`` names the thing it is a figure of first, with no word of the
    statements of ``story``."""
    named = _THING_THEN_FIGURE.match(clean(text))
    if named is None or number_tokens(named.group("thing")):
        return False
    thing = set(content_words(named.group("thing")))
    return bool(thing) and all(
        thing.isdisjoint(content_words(sentences[m].text)) for m in story.members
    )


# a need said with a verb that only points back at one ("And my supervisors need to be able to
# do it themselves at six in the morning")
_DOES_IT = re.compile(
    r"\b(?:needs? to|ha(?:ve|s) to|must|should|can|could|wants? to)\s+(?:be able to\s+do\s+(?:it|that"
    r"|this)\b|do\s+(?:it|that|this)\s+(?:themselves|himself|herself|myself|ourselves"
    r"|yourself)\b)(?!\s+(?:is|was|would|will|'s)\b)",
    re.IGNORECASE,
)


# a question on how soon, and nothing else ("How quickly?", "And how soon?")
_HOW_SOON = re.compile(
    r"^(?:(?:and|so|okay|ok|right)\W+)*how\s+(?:quickly|soon|fast|often)\s*\?$", re.IGNORECASE
)
# a time said ("within an hour", "every ten minutes", "same day", "overnight")
_TIME_SAID = re.compile(
    r"\b(?:(?:within|in|under|after|before|every|at least|at most)\s+(?:an?|one|two|three|four"
    r"|five|six|ten|twelve|fifteen|twenty|thirty|forty-eight|twenty-four|half an|\d+)\s+"
    r"(?:minute|hour|day|working day|week|month)s?|same day|next day|overnight)\b",
    re.IGNORECASE,
)
HOW_SOON_ANSWERS = 3  # statements after the question that may answer it


def _asked_how_soon(sentences: list[Sentence], k: int) -> int | None:
    """The question on how soon ("How quickly?") that sentence ``k``, another speaker's, answers
    with a time, said at most ``HOW_SOON_ANSWERS`` statements after it, or None."""
    if not _TIME_SAID.search(clean(sentences[k].text)):
        return None
    for q in range(k - 1, max(-1, k - 1 - HOW_SOON_ANSWERS), -1):
        if _HOW_SOON.match(clean(sentences[q].text)):
            return q if sentences[q].speaker != sentences[k].speaker or k - q > 1 else None
    return None


def _sums_it_up(sentences: list[Sentence], k: int) -> bool:
    """Whether another speaker says right after sentence ``k`` what whoever ``k`` says does it
    does ("And my supervisors need to be able to do it themselves ..." "Supervisors can publish
    disruption notices directly.")."""
    if k + 1 >= len(sentences) or sentences[k + 1].speaker == sentences[k].speaker:
        return False
    said = clean(sentences[k].text)
    does = _DOES_IT.search(said)
    who = set(content_words(said[: does.start()])) if does else set()
    return bool(who) and not who.isdisjoint(content_words(sentences[k + 1].text))


def _named_next(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The story of the statement right after sentence ``k`` when it sums up what ``k`` says
    is done (``_sums_it_up``), or None."""
    if not _sums_it_up(sentences, k):
        return None
    return next((st for st in stories if k + 1 in st.members), None)


def _says_its_figure_again(stories: list[_Story], sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k``, stating no need itself, says again a number the need just said
    holds and another one weighed against it ("... we keep everything for seven years, ..." "Six
    is the legal minimum, I think, but we do seven to be safe."): why the figure is what it is,
    a detail of that need."""
    story = _just_before(stories, k, sentences)
    text = clean(sentences[k].text)
    if story is None or states_a_need(text):
        return False
    if sentences[story.writing].speaker != sentences[k].speaker:
        return False  # another speaker's "Two days ahead during the exam period, seven normally."
        # settles the figure: what the need is written from, not why it is so
    said = {t.lower() for t in number_tokens(text)}
    held = {t.lower() for m in story.members for t in number_tokens(clean(sentences[m].text))}
    # the figure held and another weighed against it ("six ... but we do seven")
    return bool(said & held) and bool(said - held)


def _holds_the_figures(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The latest story said within ``FIGURES_AGAIN_GAP`` statements before sentence ``k`` whose
    statements hold every figure ``k`` says, each with its unit ("five items", "thirty pounds"),
    or None."""
    said = {q.text.lower() for q in quantities(clean(sentences[k].text))}
    if not said:
        return None
    for story in reversed(stories):
        if k - story.last > FIGURES_AGAIN_GAP:
            break
        held = {q.text.lower() for m in story.members for q in quantities(clean(sentences[m].text))}
        if said <= held:
            return story
    return None


# how many there are of a thing, said as a limit ("There are only four wheelchair spaces per
# slot in the lift.")
_THERE_ARE_ONLY = re.compile(
    r"^(?:(?:and|but|so|well)\W+)?there(?:'s|\s+is|\s+are)\s+(?:only|just|at most|no more than)"
    r"\s+(?P<what>\S+\s+.+)$",
    re.IGNORECASE,
)


# a count said as a limit, alone ("Agreed, two reminders max.", "No more than three photos.")
_COUNT_CAP = re.compile(
    r"^(?:(?:agreed|yes|yeah|okay|ok|fine|right|so|and)\W+)*(?P<before>(?:max(?:imum)?|at most"
    r"|no more than|not more than|up to)\s+)?(?P<figure>\S+)\s+(?P<what>[a-z][\w-]*?)s?"
    r"(?P<after>\s+(?:max(?:imum)?|at most|tops))?\W*$",
    re.IGNORECASE,
)


def _count_capped(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The story just said (its statements within ``ELABORATION_GAP`` + 1 of ``k``, the latest
    first) that names the thing sentence ``k`` caps the count of ("Agreed, two reminders max."
    after "A reminder three days before the deadline, and another one the day before."): the
    limit is a detail of that need; None when no such story is near."""
    said = _COUNT_CAP.match(clean(sentences[k].text))
    if said is None or not number_tokens(said.group("figure")):
        return None
    if not (said.group("before") or said.group("after")):
        return None  # "Two reminders.": a figure, not a limit
    what = said.group("what").lower()
    near = [
        (max(m for m in st.said if m < k), st)
        for st in stories
        if any(m < k for m in st.said) and len(st.members) < MAX_QUOTES
    ]
    for at, story in sorted(near, key=lambda x: -x[0]):
        if k - at > ELABORATION_GAP + 1 or _heading_between(sentences, at, k):
            break
        said_there = " ".join(sentences[m].text for m in story.said).lower()
        if re.search(rf"\b{re.escape(what)}s?\b", said_there):
            return story
    return None


def _capacity_of_the_need_before(stories: list[_Story], sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k`` limits how many there are of a thing the need just before names
    ("... we need a way to book a wheelchair space." "There are only four wheelchair spaces per
    slot in the lift."): a detail of that need, no need of its own."""
    said = _THERE_ARE_ONLY.match(clean(sentences[k].text))
    story = _just_before(stories, k, sentences) if said else None
    if said is None or story is None or not number_tokens(said.group("what")):
        return False
    named = {w for m in story.members for w in content_words(sentences[m].text)}
    return bool(named & set(content_words(said.group("what"))))


def _corrected_next(sentences: list[Sentence], k: int) -> bool:
    """Whether the next statement corrects a figure of sentence ``k`` ("Each household gets fifty
    visitor hours a month." "Actually, make it sixty, ..."): a figure the meeting decided on, so
    a need of its own, not a detail of another."""
    if k + 1 >= len(sentences) or not _CORRECTS.match(clean(sentences[k + 1].text)):
        return False
    if not any(is_verb(w) for w in re.findall(r"[a-z]+", clean(sentences[k].text).lower())):
        return False  # "Four hours for high, two days for normal.": the figures of the need before
    found = revision(sentences[k].text, sentences[k + 1].text)
    return found is not None and found.kind == "number" and not found.restated


def quote_what_is_said_between(
    stories: list[_Story],
    sentences: list[Sentence],
    verdicts: list[Verdict],
    never: set[int] | frozenset[int] = frozenset(),
) -> dict[int, set[int]]:
    """A statement said between two quotes of one need, close together, that no need quotes is
    evidence of that need: the answer and the follow-up of a discussion the need's statements
    frame ("Can they cancel five minutes before?" "Um, I'd say up to two hours before." "After
    that, ring us." between "Patients need to be able to cancel without phoning." and "Okay,
    online cancellation up to two hours before."). Only what the classifier reads as talk (a
    requirement sentence no need quotes is left to the review page's list of them), and not
    talk it is sure of (``BETWEEN_AT``), a question, a word or two, or a sentence broken off;
    quoted, never drafted. Run on the stories written (it takes no room another need's
    statements would have had); ``never``: statements that are evidence of no need (the team's
    tasks). Returns what it added, by the index of the story."""
    owned = {
        k
        for story in stories
        for k in (*story.members, *story.superseded, *story.revised_details, story.writing)
    }
    added: dict[int, set[int]] = {}
    for n, story in enumerate(stories):
        said = sorted(story.members)
        for a, b in zip(said, said[1:], strict=False):
            if b - a - 1 > BETWEEN_GAP:
                continue
            for k in range(a + 1, b):
                if (
                    k in owned
                    or k in never
                    or sentences[k].line_kind == "heading"
                    or verdicts[k].p_requirement < BETWEEN_AT
                    # one the classifier reads as a requirement is a need of its own: unquoted,
                    # the review page lists it for the reviewer to place
                    or verdicts[k].label != "NULL"
                    or "?" in sentences[k].text
                    or meaningful_word_count(sentences[k].text) < 2  # "Yay yeah.", "God, no."
                    or breaks_off(sentences[k].text)  # "Of course it has to be {disfmarker}"
                    or len(story.members) >= MAX_QUOTES
                ):
                    continue
                story.quote_in_order(k)
                story.evidence.add(k)
                owned.add(k)
                added.setdefault(n, set()).add(k)
    return added


def _stated_plainly(text: str) -> bool:
    """Whether a statement says a need plainly and names it in a title that reads as one ("They
    should get a welcome email a week before they start"; not "We'll have those buttons about,
    and the two important ones we're forgetting")."""
    return states_a_need(text) and reads_as_capability(capability(body(text)).title)


def _join(
    target: _Story,
    sentences: list[Sentence],
    k: int,
    p: float,
    capped: bool = False,
    settles: bool = False,
) -> None:
    """Quote sentence ``k`` (confidence ``p``) in ``target``. The need said in full stays the
    main statement when ``k`` is a fragment ("And, uh, fines."), only adds to it (``capped``),
    or is said with what is left out ("Multi-currency." then "Everyone pays in pounds for
    now."), which it is evidence of, no criterion."""
    left_out = out_of_scope(sentences, target.writing)
    # "So it's clean, then inspected, then ready." after "A supervisor has to inspect the room
    # before it goes back on sale.": said of the need stated, never its main statement
    said_of_it = bool(_OF_IT.match(clean(sentences[k].text))) and states_a_need(
        sentences[target.writing].text
    )
    # "Does every room need an inspection?" "No, only checkouts. Stayovers go straight to
    # ready.": what an answer goes on to say tells more of the need, never its main statement
    in_answer = (
        k - 1 in target.members
        and sentences[k - 1].speaker == sentences[k].speaker
        and _answers(sentences, k - 1)
    )
    said_of_it = said_of_it or (
        in_answer
        and states_a_need(sentences[target.writing].text)
        and not states_a_need(sentences[k].text)
    )
    # "Maybe batch picking next year.": a maybe never displaces a need stated plainly, nor one
    # said without a maybe right before it ("Confirmation email with the date, time, doctor and
    # the surgery address." "And maybe a link to cancel.": the link is more of the email)
    main = sentences[target.writing].text
    hedged = bool(_MAYBE.match(clean(sentences[k].text))) and (
        states_a_need(main) or (k - target.writing == 1 and not _MAYBE.match(clean(main)))
    )
    # "Right now it's paper slips in book bags ...": how things are now, a doubt or a judgement
    # of a figure is quoted with the need, never its main statement
    said_of_it = said_of_it or _said_of_a_need(sentences[k].text)
    # the answer to a question asked of the need tells more of it, never its main statement
    said_of_it = said_of_it or _yes_to_its_question(sentences, k, target)
    # "Okay, reviews are out for now.": the decision stays what the story is written from
    decided_out = bool(_DROP_DECIDED.match(clean(main)))
    weak = capped or left_out or said_of_it or hedged or decided_out or _fragment(sentences[k].text)
    target.add(k, min(p, target.strength) if weak else p, settles)
    if left_out:
        target.evidence.add(k)


_MAYBE = re.compile(r"^(?:(?:so|and|but|or|well|um|uh)[\s,]+)*(?:maybe|perhaps|possibly)\b", re.I)
# a sentence about what was just said, opening with a pronoun for it ("So it's clean, then ...")
_OF_IT = re.compile(r"^(?:(?:so|and|then|but|yes|yeah)[\s,]+)*(?:it|that|this)(?:'s|\s+is)\b", re.I)


def _restates_a_correction(
    stories: list[_Story], sentences: list[Sentence], k: int
) -> _Story | None:
    """The story whose figure was just corrected without the need said again ("we said text,
    twenty-four hours before" ... "Yes, let's make it forty-eight hours."), when sentence ``k``
    says the need with the new figure ("Reminder texts go out forty-eight hours before the
    appointment."): the decision in full, which the story is written from; else None."""
    said = clean(sentences[k].text)
    for story in reversed(stories[-2:]):
        if not story.revisions or k - story.last > RESTATED_CORRECTION_GAP:
            continue
        new = [to for _, to in story.revisions[-1].changes if to.strip()]
        if new and all(re.search(rf"\b{re.escape(to)}\b", said, re.IGNORECASE) for to in new):
            return story
    return None


def _revised_story(
    stories: list[_Story],
    sentences: list[Sentence],
    vectors: np.ndarray,
    k: int,
    short_only: bool = False,
) -> _Story | None:
    """The recent story sentence ``k`` revises (and revises it), or None. A short revision
    ("make it twenty") revises what was just said; a restated one must be about the same thing
    (cosine >= ``REVISION_SIMILARITY``); a drop must name what it drops ("gesture control is
    dropped" does not drop "voice control"). ``short_only``: only a short revision of a figure."""
    for story in reversed(stories):
        if k - story.last > REVISION_WINDOW:
            break
        if _revises(story, sentences, vectors, k, short_only):
            return story
        if not short_only and _sets_a_figure_said_in(story, sentences, k):
            # "actually, make it five days for large items, three days for everything else":
            # the latest need that says a figure of the kind is the one corrected, even when
            # the change cannot be written in; no older one is ("every fifteen minutes")
            changed = revision(story.written(sentences), sentences[k].text)
            if changed is not None and changed.kind == "number" and changed.changes:
                # "actually, make it one hour before the class": said after other needs
                story.revise(k, changed, bool(_CORRECTS.match(clean(sentences[k].text))))
            else:
                story.add_detail(k)
            return story
    return None


def _revises(
    story: _Story, sentences: list[Sentence], vectors: np.ndarray, k: int, short_only: bool
) -> bool:
    """Whether sentence ``k`` revises ``story`` (then revised), as ``_revised_story`` says."""
    text = story.written(sentences)
    found_revision = revision(text, sentences[k].text)
    if found_revision is None and k - story.last <= SHORT_REVISION_GAP:
        detail = _revised_detail(story, sentences, k)
        if detail is not None:
            story.revise_detail(k, *detail)
            return True
    if found_revision is None or (short_only and found_revision.restated):
        return False
    if short_only and not (
        _names_only_figures_or_shares(sentences[k].text, text)
        or _old_figure_said_again(found_revision, sentences[k].text)
    ):
        return False  # "let's say two, minimum two for group rooms" is not of "four hours max"
    # "actually, make the slots twelve minutes" corrects what was just said, as a short
    # revision does ("make it twenty"), however differently it is put
    corrects = found_revision.kind == "number" and _CORRECTS.match(clean(sentences[k].text))
    if not found_revision.restated or corrects:
        if k - story.last > SHORT_REVISION_GAP:
            return False
    elif float(vectors[k] @ vectors[story.writing]) < REVISION_SIMILARITY:
        return False
    elif found_revision.kind == "negation" and not names_what_it_drops(sentences[k].text, text):
        return False
    story.revise(k, found_revision, bool(corrects))
    return True


def _sets_a_figure_said_in(story: _Story, sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k`` sets anew ("actually", "make it", ``sets_a_figure``) a figure of
    the kind a statement of ``story`` says, of the same thing (a word in common besides figures)."""
    later = sentences[k].text
    said = quantities(later)
    if not said or not sets_a_figure(later):
        return False
    named = {w for w in content_words(later) if not number_tokens(w)}
    return any(
        not named.isdisjoint(content_words(sentences[m].text))
        and any(q.comparable(p) for q in quantities(sentences[m].text) for p in said)
        for m in story.members
    )


def _revised_detail(
    story: _Story, sentences: list[Sentence], k: int
) -> tuple[int, Revision] | None:
    """The detail of ``story`` (a statement quoted after the main one) whose figure sentence
    ``k`` sets anew without saying the need again, with that change, when ``k`` names what the
    figure is of ("make it one day for normal"; "let's say I am on channel eight now" sets no
    figure of "Uh, twenty five."); None when there is none."""
    named = {w for w in content_words(sentences[k].text) if not number_tokens(w)}
    corrects = _CORRECTS.match(clean(sentences[k].text))
    for m in reversed(story.members):
        if m == story.writing or m in story.evidence or m > k:
            continue
        # "Each household gets fifty visitor hours a month." "Actually, make it sixty, ...":
        # a correction said right after the detail needs not name what it corrects
        if named.isdisjoint(content_words(sentences[m].text)) and not (corrects and k - m == 1):
            continue
        found = revision(sentences[m].text, sentences[k].text)
        # "Within four hours for normal faults." "Actually, let's say two hours, guests complain
        # a lot.": said right after it, a correction with its reason still sets the figure
        if (
            found is not None
            and found.kind == "number"
            and (not found.restated or (corrects and k - m == 1))
        ):
            return m, found
    return None


def _names_only_figures_or_shares(later: str, earlier: str) -> bool:
    """Whether ``later`` names nothing but figures ("let's make it six") or shares a word with
    ``earlier`` (what it corrects)."""
    said = _CORRECTS.sub("", clean(later))  # "Sorry, every thirty seconds.": no "sorry"
    named = {w for w in content_words(said) if not number_tokens(w) and w not in ("once", "twice")}
    figures = {w for q in quantities(said) for w in content_words(q.text)}
    return not (named - figures) or not named.isdisjoint(content_words(earlier))


def _old_figure_said_again(found: Revision, later: str) -> bool:
    """Whether ``later`` sets a figure anew first thing and then says the old one, the figure it
    replaces ("Let's say three actually, two is too tight for the boilers.")."""
    lead = leads_with_a_figure(later)
    if lead is None or found.kind != "number" or len(found.changes) != 1:
        return False
    old = found.changes[0][0].lower()
    return old in (n.lower() for n in number_tokens(clean(later)[lead.end() :]))


# "Baby-proof means: ...", "By key lock we mean ...": what a term said before is
_DEFINES = re.compile(
    r"^(?:by\s+(?P<by>[\w\-]+(?:\s+[\w\-]+){0,3})\s+we\s+mean\b"
    r"|(?P<term>[\w\-]+(?:\s+[\w\-]+){0,3})\s+means\s*:)",
    re.IGNORECASE,
)


def _defined_story(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The latest story whose statements say the term sentence ``k`` defines ("Baby-proof
    means: ..."): the definition is a detail of that need, not a need of its own."""
    found = _DEFINES.match(clean(sentences[k].text))
    if not found:
        return None
    term = (found.group("by") or found.group("term")).lower()
    said = re.compile(rf"(?<![\w-]){re.escape(term)}(?![\w-])", re.IGNORECASE)
    for story in reversed(stories):
        if any(said.search(sentences[m].text) for m in story.members):
            return story
    return None


def _elaborated(
    stories: list[_Story],
    sentences: list[Sentence],
    vectors: np.ndarray,
    k: int,
    bar: float | None = None,
) -> _Story | None:
    """The story just before ``k`` when ``k`` elaborates it: said within ``ELABORATION_GAP``
    sentences and about the same thing, or a short follow-up ("and it should be red")."""
    if not stories:
        return None
    last = stories[-1]
    if k - last.last > ELABORATION_GAP + 1 or _heading_between(sentences, last.last, k):
        return None
    text = sentences[k].text
    if _answers_a_new_question(sentences, k, last.members):
        return None  # "Do they need a PO number on it?" "Yes, ... can add a PO number ...": new
    follow_up = bool(_FOLLOW_UP.match(clean(text)))  # "yes, ...", "and it should ..."
    # "Right, anyone on free school meals gets the trip free, ...": a word that only takes the
    # turn goes on from nothing; a need said in full after it is one of its own
    opened = _TAKES_THE_TURN.match(clean(text))
    if (
        follow_up
        and opened
        and bar is not None
        and meaningful_word_count(text) > SHORT_FOLLOW_UP_WORDS  # "Okay, unbreakable.": agreed
        and not _POINTS_BACK.search(text)
    ):
        follow_up = bool(_FOLLOW_UP.match(clean(text)[opened.end() :]))
    # "and teachers set which evenings they're available", said after parents' booking: another
    # role's need, not more of this one
    follow_up = follow_up and not _another_role(text, sentences[last.writing].text)
    # "oh, and it has to work on a phone": where the product must work, not more of the need
    follow_up = follow_up and not _WORKS_WHERE.match(clean(text))
    # what people can also do is a need of its own when said confidently (``bar``: it would
    # start one), else more of this one
    own = _OWN_NEED_AFTER.match(clean(text)) or (bar is not None and _CAN_ALSO.match(clean(text)))
    if follow_up and own and not _POINTS_BACK.search(text):
        # "Then we need a PIN reset by email." after the login: a need of its own when it names
        # something the story does not ("and we need it in red" points back: more of it)
        said = {w for m in last.members for w in content_words(sentences[m].text)}
        follow_up = not set(content_words(text)) - said
    if (
        k - last.last == 1
        and _NO_NEED_OF_IT.search(clean(text))
        and out_of_scope(sentences, last.writing)
    ):  # "Live tracking." "The drivers hate being watched, and we don't need it.": why not
        return last
    # "The support team sets it after triage.": "it" is what was just said
    object_back = _ACTS_ON_IT.match(clean(text))
    follow_up = follow_up or bool(object_back and is_verb(object_back.group("verb")))
    short = (
        follow_up
        and meaningful_word_count(text) <= SHORT_FOLLOW_UP_WORDS
        and not _ROLE_RULE.match(clean(text))  # "and contractors shouldn't see ...": a rule
    )
    similarity = float(vectors[k] @ _centroid(vectors, last))
    similar = similarity >= (bar or ELABORATION_SIMILARITY)
    confirms = follow_up and similarity >= ELABORATION_SIMILARITY
    # "So members need to book too?" "Yes, they still need a slot, but no payment.": a yes to
    # another speaker's question on the need is more of it
    confirms = confirms or _yes_to_its_question(sentences, k, last)
    if last.decided_out or _decided_out(sentences, last.writing):
        # "Let's keep leavers out of this first version." "It has to use single sign-on.", "No,
        # not in the app." "But the job report should go to Sage ...": a need said after a thing
        # is left out is a need of its own; what else is said of that thing is more of it
        its_own = states_a_need(text) or leaves_out(capability(body(text)).title)
        return last if similar and not its_own else None  # (a thing left out: its own too)
    return last if (similar or short or confirms) else None


def _decided_out(sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k`` leaves a thing out of what is built ("Okay, reviews are out for
    now.", "Let's keep leavers out of this first version.", an item under "## Won't")."""
    return out_of_scope(sentences, k) or _says_a_thing_is_out(sentences[k].text)


def _says_a_thing_is_out(text: str) -> bool:
    """Whether a statement says a thing is out ("Okay, reviews are out for now.") or keeps one
    it names out ("Let's keep leavers out of this first version.")."""
    return bool(_DROP_DECIDED.match(clean(text))) or keeps_named_out(text)


# a need put to the person who has it, to say yes to ("So you'd want to hand your approvals to
# someone else while you're away.")
_PUT_TO_THEM = re.compile(
    r"^(?:(?:so|okay|ok|right|and)\W+)+you(?:'d|\s+would)?\s+(?:(?:really|also)\s+)?"
    r"(?:want|need|like)\b",
    re.IGNORECASE,
)


# a need just said, summed up by another speaker as what the product or people do ("So patients
# can choose a specific doctor, or just take the first available appointment with anyone.", "So
# messages only ever say date, time and doctor, nothing clinical.", "So capture receipts and draft
# claims with no connection, and sync later."); not the speaker's own ("So I'd like ...", "So we
# need ..."), a plan ("So let's ..."), a reason ("So that ...") or a yes that goes on ("Yes, so if
# the reason looks urgent they can ring the patient.": a need of its own)
_SUMS_UP_A_NEED = re.compile(
    r"^(?:(?:okay|ok|right|good)\W+)*so\W+(?!(?:that|then|i|i'\w+|we|we'\w+|you|you'\w+|let's"
    r"|let|us|me|my|our|your|um|uh|well|yeah|yes|okay|what|how|why|who|do|does|is|are)\b)[a-z]",
    re.IGNORECASE,
)
SUMMED_AS_A_NEED_GAP = 2  # statements from the need's own statement to its summing up


def _summed_as_a_need(
    stories: list[_Story], sentences: list[Sentence], vectors: np.ndarray, k: int
) -> _Story | None:
    """The story just before sentence ``k`` when another speaker sums its need up right after it
    (within ``SUMMED_AS_A_NEED_GAP`` statements of the need's own statement, ``_SUMS_UP_A_NEED``),
    in a word of it or about it (``_similar``): one need, said whole by the summing up ("The
    older ones always want the same GP, ..., other people just want the first thing going." "So
    patients can choose a specific doctor, or just take the first available appointment with
    anyone."; "And it shouldn't go in any emails or texts." "God, no." "So messages only ever say
    date, time and doctor, nothing clinical.")."""
    said_now = clean(sentences[k].text)
    if not _SUMS_UP_A_NEED.match(said_now) or said_now.rstrip().endswith("?"):
        return None
    story = _just_before(stories, k, sentences)
    if story is None or story.said_as:
        return None
    own = [
        m
        for m in story.said
        if m not in story.evidence
        and 0 < k - m <= SUMMED_AS_A_NEED_GAP
        and (m == story.writing or states_a_need(sentences[m].text))
    ]
    speaker = sentences[k].speaker
    if not own or any(sentences[m].speaker == speaker for m in (story.writing, *own)):
        return None
    said = _shared_words(story, sentences, sentences[k].text) > 0
    return story if said or _similar(vectors, story, k) or _said_yes_to(sentences, k, own) else None


def _said_yes_to(sentences: list[Sentence], k: int, own: list[int]) -> bool:
    """Whether the one whose need sentence ``k`` sums up says yes to it next, in other words or
    none of the need's ("And it has to work offline, I'm on trains all the time, ..." "So
    capture receipts and draft claims with no connection, and sync later." "Yes, I don't want to
    lose a photo because the upload failed in a tunnel.")."""
    if k + 1 >= len(sentences) or not sentences[k + 1].speaker:
        return False
    theirs = {sentences[m].speaker for m in own}
    return sentences[k + 1].speaker in theirs and bool(
        re.match(r"^(?:yes|yeah|yep|exactly)\b(?!\W+but\b)", clean(sentences[k + 1].text), re.I)
    )


# what people want, summed up for them to say yes to ("So students want to book desks as well as
# group rooms.")
_THEY_WANT = re.compile(
    r"^(?:(?:so|okay|ok|right)\W+)+(?:the\s+)?[a-z]+s\s+(?:would\s+)?(?:want|need)\s+to\b",
    re.IGNORECASE,
)


# a yes that goes on to something else: another need, or why
_YES_GOES_ON = re.compile(r"^(?:yes|yeah|yep)\W+(?:and|also|plus|so|but|because)\b", re.I)


def _yes_to_its_question(sentences: list[Sentence], k: int, story: _Story) -> bool:
    """Whether sentence ``k`` says yes to a question another speaker asked of ``story`` (the
    question one of its statements), or to its need put to them (``_PUT_TO_THEM``), or to what
    they want summed up (``_THEY_WANT``) in words of it, or to their own need summed up ("So
    capture receipts and draft claims with no connection, ..." "Yes, I don't want to lose a
    photo ...")."""
    before = clean(sentences[k - 1].text)
    theirs = {sentences[m].speaker for m in story.own if m != k - 1}
    return (
        k - 1 in story.members
        and (
            _answers(sentences, k)
            or bool(_PUT_TO_THEM.match(before))
            or (
                bool(_THEY_WANT.match(before))
                and bool(set(content_words(before)) & set(content_words(sentences[k].text)))
            )
            or (
                bool(_SUMS_UP_A_NEED.match(before))
                and sentences[k].speaker in theirs
                # "Yes, and if they've already taken a photo, the app should suggest the match":
                # a need of its own; "Yes, so if the reason looks urgent ...": why
                and not _YES_GOES_ON.match(clean(sentences[k].text))
            )
        )
        and sentences[k - 1].speaker != sentences[k].speaker
        and bool(re.match(r"^(?:yes|yeah|yep)\b", clean(sentences[k].text), re.IGNORECASE))
    )


# a question answered yes or no ("Do they need a PO number on it?"), and its answer
_YES_NO_QUESTION = re.compile(
    r"^(?:(?:and|so|but|okay|ok|right)[\s,]+)*(?:do|does|did|should|shall|can|could|will|would"
    r"|is|are|must|need|has|have)\b[^?]*\?$",
    re.IGNORECASE,
)
_YES_NO = re.compile(r"^(?:yes|yeah|yep|no|nope)\b", re.IGNORECASE)


# a topic raised as a question ("And VAT?", "What about refunds?")
_TOPIC_QUESTION = re.compile(
    r"^(?:(?:so|okay|ok|right|and)[\s,]+)*(?:and|what about|how about)\s+"
    r"(?P<topic>[\w'-]+(?:\s+[\w'-]+){0,3})(?:,\s*(?:like|such as|say)\s+[^?]+)?\s*\?$",
    re.IGNORECASE,
)
# a topic raised by its name alone ("Reminders?")
_BARE_TOPIC = re.compile(
    r"^(?:(?:so|okay|ok|right|and)[\s,]+)*(?P<topic>(?!(?:is|are|do|does|did|can|could|would"
    r"|will|should|really|sorry|right|okay|ok|yes|no|yeah|what|why|how|who|when|where|which"
    r"|anything|everything|more|else|seriously|pardon|about|for|with|in|on|at|to|from|of|by"
    r"|like|and|or|but|so|then|sure|true|done|okay)\b)[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)\s*\?$",
    re.IGNORECASE,
)

# a thing proposed as a question ("Good question, a reminder to the approver before the
# cut-off?"): said with "a", "an" or "some" and two content words or more, so not a check of
# which one was meant ("The red one?")
_THING_PROPOSED = re.compile(
    r"^(?:(?:good question|so|okay|ok|right|and|maybe|perhaps)[\s,]+)*"
    r"(?P<topic>(?:an?|some)\s+[\w'-]+(?:\s+[\w'-]+){1,9})\s*\?$",
    re.IGNORECASE,
)


def _named_words(text: str) -> list[str]:
    """The content words of ``text`` as lemmas, the words of the meeting's own talk included
    ("reminder", "email", "date": a topic asked about by name)."""
    words = re.findall(r"[a-z][\w'-]*", clean(text).lower())
    return [lemma(w) for w in words if len(w) >= 3 and w not in STOPWORDS]


def answers_a_topic(sentences: list[Sentence], k: int, bare: bool = True) -> bool:
    """Whether sentence ``k`` answers a topic just raised as a question by saying it first ("And
    VAT?" "VAT at twenty percent on everything except ..."): a need of its own; with ``bare``,
    a topic raised by its name alone too ("Reminders?" "A reminder the day before, by text.")."""
    asked = clean(sentences[k - 1].text) if k else ""
    raised = _TOPIC_QUESTION.match(asked) or (_BARE_TOPIC.match(asked) if bare else None)
    if raised is None or _fragment(sentences[k].text):
        return False
    topic = _named_words(raised.group("topic"))
    if not topic:
        return False
    said = _named_words(sentences[k].text)
    if said[: len(topic)] == topic:
        return True
    if raised.re is _BARE_TOPIC:
        return False  # "Reminders?" is answered by saying reminders first
    # "What about big orders, like birthday cakes?" "Cakes need forty-eight hours notice.": the
    # answer opens with the thing asked about or its example
    named = set(content_words(asked))
    opens = content_words(sentences[k].text)
    return bool(opens) and opens[0] in named and sentences[k - 1].speaker != sentences[k].speaker


def _answers_a_new_question(sentences: list[Sentence], k: int, said: list[int]) -> bool:
    """Whether sentence ``k`` answers a question asked after the statements ``said`` that names
    something they do not, and names it too: yes or no ("For companies ... one invoice" | "Do
    they need a PO number on it?" "Yes, ... the company admin can add a PO number ..."), or by
    saying the topic raised first (``answers_a_topic``): a need of its own."""
    asked = clean(sentences[k - 1].text) if k > max(said) + 1 else ""
    if asked and answers_a_topic(sentences, k, bare=False):
        return True
    if not (_YES_NO_QUESTION.match(asked) and _YES_NO.match(clean(sentences[k].text))):
        return False
    if quantities(asked) or _fragment(sentences[k].text):
        return False  # "Is three days enough?" asks for a figure, "Yes, fine." says no need
    words = {w for m in said for w in content_words(sentences[m].text)}
    named = set(content_words(asked)) - words
    return bool(named & set(content_words(sentences[k].text)))


_NO_NEED_OF_IT = re.compile(
    r"\b(?:don't|do not|doesn't|does not|won't)\s+(?:really\s+)?(?:need|want)\s+"
    r"(?:it|that|them|this|those)\b",
    re.IGNORECASE,
)
# what people can do, said after a linking word ("Right, and they can cancel up to two hours
# before", after "members book classes from the app"): another action, a need of its own when it
# names something the story does not
_CAN_ALSO = re.compile(
    r"^(?:(?:right|yes|yeah|okay|ok|and|also|plus)[\s,]+)+(?:they|people|users|members)\s+"
    r"(?:can|could|should|will|must)(?:\s+also)?(?:\s+be\s+able\s+to)?\s+[a-z]+\b",
    re.IGNORECASE,
)
# what the product must work on or with ("and it has to work on a phone", "it must work offline")
_WORKS_WHERE = re.compile(
    r"^(?:(?:oh|and|also|plus|but|yes|yeah)[\s,]+)*it\s+(?:also\s+)?(?:has to|must|should|needs"
    r" to|'s got to|will have to)\s+(?:also\s+)?work\s+(?:on|with|without|offline|in|across)\b",
    re.IGNORECASE,
)
# a need the speaker states after a linking word ("Then we need ...", "And I'd also want ...")
_OWN_NEED_AFTER = re.compile(
    r"^(?:(?:then|so|and|also|but|plus)[\s,]+)+(?:we|i)(?:'ll|'d| will| would)?\s+(?:also\s+)?"
    r"(?:need|want|like|must|should|have to)\b",
    re.IGNORECASE,
)


def _adds_to(text: str, main: str) -> bool:
    """Whether ``text`` says what is done to "it", the need its story's main statement states
    plainly ("The support team sets it after triage." after "Users shouldn't set the priority"):
    the main statement, which names the thing, stays the main one."""
    object_back = _ACTS_ON_IT.match(clean(text))
    return bool(object_back and is_verb(object_back.group("verb")) and states_a_need(main))


# who does something to "it" or "them", said first ("The support team sets it after triage")
_ACTS_ON_IT = re.compile(
    r"^(?:the\s+\w+(?:\s+\w+)?|they|we|users?|[a-z]+s)\s+(?:(?:then|also|only|always)\s+)?"
    r"(?P<verb>[a-z]+)\s+(?:it|them)\b",
    re.IGNORECASE,
)
_POINTS_BACK = re.compile(r"\b(?:it|its|them|that|this|these|those|one)\b", re.IGNORECASE)


# how things are done now (``lexicon.AS_IS``): the problem a need answers, not the need
_AS_IS = re.compile(rf"\b(?:{AS_IS})\b", re.IGNORECASE)


def describes_now(text: str) -> bool:
    """Whether a sentence says how things are now (``_AS_IS``) and states no need."""
    return bool(_AS_IS.search(clean(text))) and not states_a_need(text)


def answers_how_it_is(sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k`` is said in the answer to a question on how things are done now,
    and states no need ("So, Dan, how do returns work today?" "Customers email us, we send them
    a PDF label by hand, ..." "It takes about nine days end to end."): the problem, said as it
    is, never a criterion. The answer is the answering speaker's turn; without speakers, the
    sentence right after the question."""
    if states_a_need(sentences[k].text):
        return False
    speaker, j = sentences[k].speaker, k - 1
    while j >= 0 and speaker is not None and sentences[j].speaker == speaker:
        if sentences[j].text.rstrip().endswith("?") or states_a_need(sentences[j].text):
            return False  # their own question, or a need: the answer has moved on
        j -= 1
    if j < 0 or (speaker is None and j != k - 1):
        return False
    asked = clean(sentences[j].text)
    return asked.rstrip().endswith("?") and bool(_AS_IS.search(asked))


# a doubt about what was just said ("I'm not sure about that, some people want to hide their
# savings"): an objection to that need, quoted with it, not a need of its own
_DOUBTS_THAT = re.compile(
    r"^(?:(?:but|and|so|well|hmm|um|uh|yeah|no)[\s,]+)*(?:i'?m|i am)?\s*not\s+(?:so\s+|too\s+)?"
    r"sure\s+(?:about\s+)?(?:that|this|it)\b|^(?:(?:but|and|so|well|hmm)[\s,]+)*i\s+don'?t\s+"
    r"know\s+about\s+(?:that|this)\b",
    re.IGNORECASE,
)


def _said_of_a_need(text: str) -> bool:
    """Whether a sentence is said of a need rather than stating one: how things are now
    (``describes_now``), a doubt about what was just said (``_DOUBTS_THAT``), or a judgement
    of its figure (``statement.judges_a_figure``), or a sentence broken off before it said what
    it is about (``statement.breaks_off``: "Change colour of t")."""
    return (
        describes_now(text)
        or bool(_DOUBTS_THAT.match(clean(text)))
        or judges_a_figure(text)
        or breaks_off(text)
        or states_a_dependency(text)
        or tells_what_happened(text)
        or judges_the_work(text)
        or bool(_WANTS_NOTHING_NAMED.match(clean(text)))
    )


# a want with nothing named ("So I want a number.", "We need something."): what the need is, the
# statements around it say
_WANTS_NOTHING_NAMED = re.compile(
    r"^(?:(?:so|and|but|well|yes|yeah|okay|ok)\W+)*(?:i|we)(?:'d|\s+would)?\s+"
    r"(?:really\s+|just\s+)?(?:want|need|like)\s+"
    r"(?:a\s+number|numbers|something|a\s+thing|that|this|it|one|more)\W*$",
    re.IGNORECASE,
)


# an account of what happened ("When I was in Frankfurt I paid for stuff in euros and then I had
# to work out the exchange rate myself.", "I used to send fifty texts a day"): why a need is
# felt, never the need; on dev every such sentence is talk (five of five with "had to")
_PAST_ACCOUNT = re.compile(
    r"\b(?:i|we|they|he|she|you|people)\s+(?:had to|used to\s+(?!(?:it|that|this|the|them)\b)"
    r"[a-z]+)\b|\bwhen (?:i|we|they) (?:was|were)\b"
    # "Last summer I was away for two weeks and came back to fifteen of them": when it happened
    r"|^(?:(?:and|so|well|oh|yeah)\W+)*(?:last|one)\s+(?:summer|winter|spring|autumn|year|month"
    r"|week|time)\W+(?:i|we|they|he|she|someone|somebody)\s+(?:was|were|had|did|got|went|came"
    r"|[a-z]+ed)\b",
    re.IGNORECASE,
)


def tells_what_happened(text: str) -> bool:
    """Whether a sentence tells what happened or used to happen (``_PAST_ACCOUNT``) and says
    nothing needed now."""
    said = clean(text)
    return bool(_PAST_ACCOUNT.search(said)) and not NEEDED_NOW.search(said)


def _seeds(text: str, p: float) -> bool:
    """Whether a requirement sentence starts a need of its own: a confident one (p >=
    ``SEED_AT``), or one that states a need plainly (p >= ``CUE_SEED_AT``); a short fragment
    without a need cue ("Special colour ,", "And with a normal mouse .") only when very confident
    (p >= ``FRAGMENT_SEED_AT``): said in a discussion, it is more often talk than a need; one
    said of a need (``_said_of_a_need``) never: it joins the need it is said with."""
    if _said_of_a_need(text):
        return False
    if _fragment(text):
        return p >= FRAGMENT_SEED_AT
    return p >= SEED_AT or (states_a_need(text) and p >= CUE_SEED_AT)


def _own_need(text: str, p: float) -> bool:
    """Whether a confident statement (p >= ``ORPHAN_SEED_AT``) is a step of the work the product
    is for, said as people will do it ("When they finish a room they mark it clean, and reception
    sees it straight away."): a need of its own, however alike the need before it reads."""
    said = clean(text)
    return p >= ORPHAN_SEED_AT and bool(_STEP_OF_WORK.match(said)) and not _said_of_a_need(said)


# a step of the work said as people will do it: "when they finish a room they mark it clean",
# "when you arrive, you scan a QR code on the door"
_STEP_OF_WORK = re.compile(
    r"^(?:(?:and|so|then|okay|ok|right)\W+)*(?:when|once|after|as soon as)\s+"
    rf"(?:you|they|(?:the\s+|a\s+|an\s+)?(?:{PERSONA_FORMS}))\s+(?!(?:can|could|should|might)\b)"
    r"[a-z]+\b[^?]*$",
    re.IGNORECASE,
)


def _fragment(text: str) -> bool:
    """A short fragment without a need cue ("Special colour ,", "And, uh, fines.")."""
    return meaningful_word_count(text) < FRAGMENT_WORDS and not states_a_need(text)


def _heading_between(sentences: list[Sentence], a: int, b: int) -> bool:
    """Whether a heading opens a new section between sentences ``a`` and ``b``, or a speaker
    names the next topic there ("Payment. Most trips cost something, ...")."""
    return any(
        sentences[j].line_kind == "heading" or _names_the_topic(sentences, j)
        for j in range(a + 1, b)
    )


# words that open a spoken topic label ("So, the floodlights.")
_TOPIC_OPENERS = frozenset("so and now okay ok right then".split())
# words that answer or remark, never name a topic ("Cool.", "Fine.", "Of course.")
_NO_TOPIC_WORDS = frozenset(
    """cool excellent fabulous great good true nice perfect lovely brilliant exactly fine sure
    indeed absolutely definitely wow super awesome cheers thanks thank sorry kay alright agreed
    done right correct interesting course finally obviously understood ha""".split()
)


# the next topic opened in words ("Let's talk about exams.", "Let's move on to pricing.")
_LETS_TALK_ABOUT = re.compile(
    r"^(?:(?:okay|ok|right|so|and|then|now|good)\W+)*(?:let's|let us|we'll|we will|can we)\s+"
    r"(?:talk about|move on to|turn to|go on to|look at)\s+[^,;:?!]{1,40}[.!]?$",
    re.IGNORECASE,
)


def _names_the_topic(sentences: list[Sentence], j: int) -> bool:
    """Whether sentence ``j`` is a spoken topic label: a speaker takes the turn with a word or
    two that name a thing ("Payment.", "Then the ledger.", "Number two, integration.") and goes
    on, or opens the next topic in words ("Let's talk about exams."). A word of what was just
    said ("Optional, and short."), a figure, or an answer to a question is no label."""
    if 0 < j < len(sentences) and _LETS_TALK_ABOUT.match(clean(sentences[j].text)):
        return True
    if j == 0 or j + 1 >= len(sentences):
        return False
    said, before = sentences[j], sentences[j - 1]
    if before.speaker == said.speaker or sentences[j + 1].speaker != said.speaker:
        return False
    text = said.text.strip()
    if before.text.rstrip().endswith("?") or not text.endswith(".") or "{" in text:
        return False
    words = re.findall(r"[a-z'-]+", text.lower())
    if len(words) > 1 and words[0] in _TOPIC_OPENERS:
        words = words[1:]  # "So, the floodlights.": the label after the word that opens it
    if not 1 <= len(words) <= 3 or number_tokens(clean(text)):
        return False
    if any(
        "'" in w
        or w in FILLER_SENTENCES
        or w in _NO_TOPIC_WORDS
        # a participle before the thing it names is no verb ("Assisted collections.")
        or (is_verb(w) and not (w.endswith(("ed", "ing")) and n + 1 < len(words)))
        for n, w in enumerate(words)
    ):
        return False
    named = set(content_words(text))
    recent = {w for m in sentences[max(0, j - 3) : j] for w in content_words(m.text)}
    return bool(named) and not named & recent


# a heading over what the meeting decided not to do ("## Won't (this phase)", "Out of scope")
_OUT_OF_SCOPE = re.compile(
    r"^(?:won'?t(?: have)?|will not|out of scope|not in scope|non-?goals?|excluded|exclusions"
    r"|not doing|dropped|descoped|de-scoped|not now|not (?:for )?(?:this|the first) (?:release"
    r"|phase|version|time)|parked|parking lot|later|deferred)\b",
    re.IGNORECASE,
)


def _left_out_again(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The story of what was just left out when sentence ``k`` leaves it out again, said as what
    someone wants ("Anything we're not doing?" "Photos." "Parents want trip photos, but that's a
    safeguarding nightmare, let's keep that out."): evidence of that decision, no story."""
    if not stories or not wanted_but_left_out(sentences[k].text):
        return None
    last = stories[-1]
    if last.last < k - 2 or not out_of_scope(sentences, last.writing):
        return None
    named = set(content_words(sentences[last.writing].text))
    if named & set(content_words(sentences[k].text)):
        return last
    # "Audio guides." "People want to rent them online, but ...": "them" is what was just named
    said_next = last.last == k - 1 and sentences[k - 1].speaker == sentences[k].speaker
    return last if said_next and _POINTS_BACK.search(sentences[k].text) else None


# a remark that puts what was just said off for later ("that's phase two", "let's park that")
_DEFERS = re.compile(
    r"\b(?:that's|that is|it's|it is)\s+(?:for\s+)?(?:phase two|phase 2|later|a later phase"
    r"|next (?:phase|year|release|version))\b|\blet's\s+park\s+(?:that|it)\b",
    re.IGNORECASE,
)


# an answer that turns a topic down or puts it off ("Not now, maybe next year.", "No, not in the
# app.", "Later."), not one that only limits it ("Not every day, only Mondays.")
_TURNS_DOWN = re.compile(
    r"^(?:(?:hmm|um|uh|well|honestly|probably)\W+)*(?:no\b(?!\s+(?:more|less|later|longer|idea|clue|problem|worries|doubt))"
    r"|nope\b|not\s+(?:now|yet|for now|at the moment|this (?:time|year|release|version|phase|round)"
    r"|in (?:the )?(?:first|v1|version one)\b|in (?:the|this) app\b)|later\W*$|maybe later\b"
    r"|(?:that's |it's )?(?:for )?(?:phase two|next year|next phase)\b)",
    re.IGNORECASE,
)


# what a chair asks the room, no topic of the product ("Any questions?", "Comments?")
_ASKS_THE_ROOM = frozenset(
    "any questions question comments comment thoughts ideas problems issues objections".split()
)


# a topic asked about as "What about X?" ("What about visitors?", "And how about refunds?")
_WHAT_ABOUT_TOPIC = re.compile(
    r"^(?:(?:so|okay|ok|right|and)[\s,]+)*(?:what|how)\s+about\s+(?P<topic>(?:the\s+)?[a-z][\w'-]*"
    r"(?:\s+[a-z][\w'-]*)?)\s*\?$",
    re.IGNORECASE,
)


def _topic_turned_down(sentences: list[Sentence], k: int) -> tuple[str, list[int]] | None:
    """What sentence ``k`` decides when it turns down a topic another speaker asked about
    bare ("Timesheets?" "Not now, maybe next year.": "We won't do timesheets for now."), or
    asked about bare and then as a yes/no question ("And invoices? Should the app create the
    invoice?" "No, not in the app.": "The app should not create the invoice."), with the
    questions it answers; None otherwise."""
    if k == 0 or not _TURNS_DOWN.match(clean(sentences[k].text)):
        return None
    asker = sentences[k - 1].speaker
    if asker is not None and asker == sentences[k].speaker:
        return None
    asked = clean(sentences[k - 1].text)
    bare = _BARE_TOPIC.match(asked) or _WHAT_ABOUT_TOPIC.match(asked)  # "What about visitors?"
    if bare and bare.group("topic").split()[0].lower() in _ASKS_THE_ROOM:
        return None  # "Any questions?" "Nope.": the meeting's own talk
    if bare:
        return f"We won't do {_lower_first(bare.group('topic'))} for now.", [k - 1]
    if k < 2 or sentences[k - 2].speaker != asker:
        return None
    topic = _BARE_TOPIC.match(clean(sentences[k - 2].text))
    whole = _said_with_its_question(sentences, k)
    if topic is None or whole is None or not _NEGATED.search(whole):
        return None
    said = whole.split(";")[0].rstrip(" .")
    named = {w.rstrip("s") for w in content_words(topic.group("topic"))}
    if not named & {w.rstrip("s") for w in content_words(said)}:
        return None  # "Photos? Do they need a caption?" "No.": said of something else
    return f"{said}.", [k - 2, k - 1]


def _deferred(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The story said just before sentence ``k`` when ``k`` puts it off for later ("Members want
    to put their match results in and see a league table." "That's nice but, hmm, that's phase
    two, honestly."), and the need reads as left out with it (``wanted_but_left_out``)."""
    if not stories or not _DEFERS.search(clean(sentences[k].text)):
        return None
    last = stories[-1]
    if last.writing != k - 1 or last.said_as is not None or out_of_scope(sentences, last.writing):
        return None
    said = body(sentences[last.writing].text).rstrip(" .!")
    return last if wanted_but_left_out(f"{said}, but that's for later.") else None


# a thing decided out, said alone ("Okay, reviews are out for now.", "So the waiting list is
# dropped."): not "the driver is out today" (where someone is)
_DROP_DECIDED = re.compile(
    r"^(?:(?:okay|ok|so|right|fine|then|yes|yeah|alright|and|agreed|decision)[\s,:]+)*"
    rf"(?!(?:it|this|that|they|he|she|we|you|i|{PERSONA_FORMS})\b)"
    r"(?:the\s+)?[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}\s+(?:is|are)\s+(?:out(?:\s+of\s+scope)?|dropped"
    r"|off the table)(?:\s+(?:for now|for the first (?:release|version)|for v1|then|too|as well))?"
    r"[\s.!]*$",
    re.IGNORECASE,
)


def out_of_scope(sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k`` sits under a heading that says what will not be done, or names
    a thing in answer to a question about what to leave out ("Anything you'd want to leave
    out?" "Live tracking.")."""
    if _under(sentences, k, _OUT_OF_SCOPE):
        return True
    said = clean(sentences[k].text)
    return (
        _answers(sentences, k)
        and bool(_ASKS_WHAT_TO_LEAVE_OUT.search(clean(sentences[k - 1].text)))
        and 1 <= meaningful_word_count(said) <= 4
        and not _SAYS_A_CLAUSE.search(said)
    )


# a question on what will not be done ("Anything you'd want to leave out?", "What should we drop
# for the first release?", "Is anything out of scope?")
_ASKS_WHAT_TO_LEAVE_OUT = re.compile(
    r"\b(?:anything|what|which)\b[^?]*(?:\b(?:leave out|leaving out|left out|drop|skip|out of scope"
    r"|not (?:do|doing|build|building|include|including)|do without"
    r"|(?:don't|do not) (?:need|want))\b"
    # "Anything we shouldn't do ...?", "Anything we're not doing in the first release?"
    r"|n't (?:do|doing|build|building|include|including)\b)[^?]*\?\s*$",
    re.IGNORECASE,
)


# a heading over how things are now ("## Problems today", "Pain points", "Current process"):
# the problems the needs answer, none a need ("- Requests come in by email and get lost")
_AS_IS_HEADING = re.compile(
    r"^(?:(?:the\s+)?(?:problems?|pain\s*points?|issues?|frustrations?|complaints?)"
    r"(?:\s+(?:today|now|with\b.*|we\s+have\b.*))?|(?:the\s+)?(?:current|existing)\s+"
    r"(?:situation|state|process|system|setup|workflow)|as[\s-]is(?:\s+\w+)?"
    r"|how\s+(?:it|things|we)\s+(?:works?|work|do\s+it)\s+(?:today|now)"
    r"|(?:the\s+)?situation\s+today)\W*$",
    re.IGNORECASE,
)

# what the meeting is ("Right, so this is the kick-off for the new help desk portal", "Today we're
# going to talk about the booking flow"): its topic, no need
_FRAMES = re.compile(
    r"^(?:(?:right|ok|okay|so|well|good|alright|hi|hello|morning|everyone|all|um|uh)\W+)*"
    r"(?:(?:this|today)\s+is\s+(?:the|our)\s+(?:first\s+|second\s+|last\s+|final\s+)?"
    r"(?:kick-?off|meeting|workshop|session|call|review|stand-?up|retro|interview|demo)\b"
    r"|this(?:\s+(?:meeting|session|call|workshop))?\s+is\s+(?:all\s+)?about\b"
    # "So the goal today is the invoicing module": what the meeting is about
    r"|(?:the\s+)?(?:goal|aim|purpose|focus|topic|plan)\s+(?:for\s+)?today\s+is\b"
    r"|welcome\s+(?:to|back)\b|(?:the\s+)?(?:purpose|goal|aim|point)\s+of\s+(?:this|today'?s)"
    r"\s+(?:meeting|session|call|workshop)\s+is\b|today\s+we(?:'re|\s+are|'ll|\s+will)\s+"
    r"(?:going\s+to\s+)?(?:talk|discuss|look|go\s+through|cover)\b)",
    re.IGNORECASE,
)


def frames_the_meeting(text: str) -> bool:
    """Whether a sentence says what the meeting is or is about (``_FRAMES``) rather than a need."""
    return bool(_FRAMES.match(clean(text)))


# what is still to be decided: a heading over it ("## Open questions", "Still open", "TBD") or a
# line that lists it ("Open: same-day slots, video, teenagers, log retention."): questions, no need
_OPEN_ITEMS = (
    r"(?:still\s+)?(?:open|outstanding|unresolved|undecided|pending)"
    r"(?:\s+(?:questions?|points?|items?|issues?|decisions?))?"
    r"|questions?|tbd|tbc|to\s+be\s+(?:decided|confirmed|agreed)"
    r"|(?:things\s+)?to\s+(?:decide|confirm|check|clarify)"
)
_OPEN_HEADING = re.compile(rf"^(?:{_OPEN_ITEMS})(?:\s+(?:for|to|from)\s+\S.*)?\W*$", re.IGNORECASE)
_OPEN_LABEL = re.compile(rf"^(?:{_OPEN_ITEMS})\s*:\s*\S", re.IGNORECASE)


def _labelled_open(sentence: Sentence) -> bool:
    """A line labelled as what is left open ("Open: same-day slots, video, ...")."""
    return bool(_OPEN_LABEL.match(clean(sentence.text).strip()))


def left_open(sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k`` says what the meeting left open: under a heading over open
    questions, or on a line labelled as such. It states no need."""
    return _labelled_open(sentences[k]) or (
        sentences[k].line_kind != "heading" and _under(sentences, k, _OPEN_HEADING)
    )


def open_item(sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k`` is an item the meeting left open, an open question verbatim: a
    labelled line, or an item under a heading over open questions (its first sentence; the
    others say more about it)."""
    return left_open(sentences, k) and (sentences[k].first_in_line or _labelled_open(sentences[k]))


def describes_the_problem(sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k`` sits under a heading over how things are now (``_AS_IS_HEADING``)."""
    return _under(sentences, k, _AS_IS_HEADING)


def _under(sentences: list[Sentence], k: int, heading: re.Pattern[str]) -> bool:
    """Whether the nearest heading above sentence ``k`` matches ``heading``."""
    for j in range(k - 1, -1, -1):
        if sentences[j].line_kind == "heading":
            return bool(heading.match(clean(sentences[j].text)))
    return False


def _whole_item(sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k`` is a list item of its own, one sentence on its bullet line: in
    notes, one item is one need."""
    sentence = sentences[k]
    last = k + 1 >= len(sentences) or sentences[k + 1].first_in_line
    return sentence.first_in_line and sentence.line_kind in ("bullet", "checkbox") and last


def _labelled_items(sentences: list[Sentence], verdicts: list[Verdict]) -> dict[int, int]:
    """List items opened by a requirement sentence and followed on the same line by at least
    one more: a label and its details ("- NEW: sleep timer. From the menu the user can set the TV
    to switch off after 15, 30, 60 or 90 minutes."), or a need and its details ("- Two standard
    AA batteries. No rechargeable battery and no charging dock."). Each requirement sentence of
    such an item, its first included, is mapped to the first's index: one item is one need,
    named by its first sentence."""
    out: dict[int, int] = {}
    k = 0
    while k < len(sentences):
        first = sentences[k]
        line = [k]
        while line[-1] + 1 < len(sentences) and not sentences[line[-1] + 1].first_in_line:
            line.append(line[-1] + 1)
        # a list item opened by a requirement (a label, or a need said in full) is one need:
        # "- Two standard AA batteries. No rechargeable battery and no charging dock."
        opens_item = (
            first.first_in_line
            and first.line_kind in ("bullet", "checkbox")
            and verdicts[k].label != "NULL"
        )
        runs = [[k]]  # "... a TV remote only. Teletext is out of scope, ...": two decisions
        for j in line[1:]:
            if _another_need(sentences[runs[-1][0]].text, sentences[j].text):
                runs.append([j])
            elif verdicts[j].label != "NULL":
                runs[-1].append(j)
        if opens_item:
            for run in runs:
                if len(run) > 1 or (len(runs) > 1 and verdicts[run[0]].label != "NULL"):
                    out.update({j: run[0] for j in run})
        k = line[-1] + 1
    return out


# a clause said of a thing named first: a noun subject (no pronoun, no "so" or "and" going on),
# then its verb ("the first release is a TV remote only", "Teletext is out of scope")
_NAMED_SUBJECT = re.compile(
    r"^(?!(?:it|this|that|these|those|they|there|we|you|i|he|she|which|so|and|but|or|also|then"
    r"|plus|with|without|in|on|for|from|to|if|when)\b)"
    r"(?:(?:the|a|an|our|their|every|each|all)\s+)?[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3}?\s+"
    r"(?:is|are|will|must|should|shall|stays?|has to|have to|needs? to)\b",
    re.IGNORECASE,
)


def _another_need(first: str, text: str) -> bool:
    """Whether ``text``, said after ``first`` in one list item, is a decision of its own rather
    than a detail: both are clauses said of a thing they name (``_NAMED_SUBJECT``), and they
    name no word in common, figures and their units aside ("Management reminder: the first
    release is a TV remote only. Teletext is out of scope, ..."; not "TV only for v1. No DVD
    player, no hi-fi, ...", which says what "only" leaves out)."""
    said, head = body(text), body(first)
    if not (_NAMED_SUBJECT.match(said) and _NAMED_SUBJECT.match(head)):
        return False

    def words(part: str) -> set[str]:
        for q in quantities(part):
            part = part.replace(q.text, " ")
        return {lemma(w) for w in content_words(part)}

    return not words(said) & words(head)


# how much a thing it names is used or matters ("Channel selection is very often used and
# indeed very relevant."): a finding about that thing
_USE_OR_WEIGHT = re.compile(
    r"^(?!(?:it|this|that|these|those|they|there|which|what)\b)(?:(?:the|a|an|our|their)\s+)?"
    r"(?P<thing>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3}?)\s+(?:is|are)\s+(?:(?:not|very|really|quite"
    r"|so|also|still|indeed|often|rarely|hardly|seldom|always|mostly|more|less|most|least|the)\s+)*"
    r"(?:used|important|relevant|essential|crucial|popular|common|useful)\b",
    re.IGNORECASE,
)


def finding_of_another_thing(text: str, main: str) -> bool:
    """Whether ``text`` says how much a thing is used or matters (``_USE_OR_WEIGHT``), and that
    thing shares no word with ``main``, the statement a story is written from: a finding about
    another need, no criterion of this one ("Channel selection is very often used and indeed
    very relevant." under "People want to have a power button.")."""
    found = _USE_OR_WEIGHT.match(body(text))
    if found is None or states_a_need(text):
        return False
    thing = {lemma(w) for w in content_words(found.group("thing"))}
    return bool(thing) and not thing & {lemma(w) for w in content_words(body(main))}


# agreement, and nothing agreed to ("Agreed.", "Okay, settled.")
_AGREEMENT_ONLY = re.compile(
    r"^\W*(?:(?:yes|yeah|yep|ok|okay|right|fine|sure|good|great|so|then)\W+)*"
    r"(?:agreed|confirmed|settled|decided|deal|done|sounds good)\W*$",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)  # asked twice of a sentence that may start a need (_group, _seeds)
def states_a_need(text: str) -> bool:
    """The sentence says it plainly: a modal or need verb, a decision, a prohibition, the
    user-story form (``language.cue_flags``), a contracted prohibition ("contractors shouldn't
    see ..."), what a named role can do ("staff can raise a ticket"), a message people get ("they
    get an email when ..."), or a frame round a need ("it would be nice if ...",
    ``statement.unframed``)."""
    if _AGREEMENT_ONLY.match(clean(text)):
        return False  # "Agreed.": agreement without content, however decided it sounds
    flags = cue_flags(drop_abandoned(text))  # "we'd really like ..." keeps its "like"
    said = body(text)
    return (
        any(flags[name] for name in _NEED_CUES)
        or bool(_NEEDS_A_THING.search(text) or _MUST_NOT.match(said))
        or bool(_ROLE_CAN.match(said))  # "staff can raise a ticket without emailing us"
        or (bool(_NOTIFIED.search(said)) and not said.rstrip().endswith("?"))
        or unframed(said) != said  # "we were thinking maybe a weekly digest email"
        or bool(_WOULD_WANT.search(said))  # "for health data we'd want it hosted in the UK"
        or bool(_LETS_SETTLE.search(clean(text)))  # "let's say for now the system checks ..."
    )


# what the meeting settles ("Okay, let's say for now the system checks the category limits and
# blocks anything over", "let's change it to twenty minutes for rooms"); not a case imagined
# ("let's say I am on channel eight now")
_LETS_SETTLE = re.compile(
    r"\blet's\s+(?:say|change|make|keep|set|stick with)\b"
    r"(?!\s+(?:i|i'm|you|we|we're|someone|somebody|a user|the user|he|she|they)\b)",
    re.IGNORECASE,
)


# a need said as what one would want or need ("we'd want it hosted in the UK", "what I'd want is
# to take a photo"), not a task ("I'd need to check with the auditors") nor a question said
# inside ("what you'd need from it")
_WOULD_WANT = re.compile(
    r"(?<!\bwhat )\b(?:i|we|they|you)(?:'d|\s+would)\s+(?:really\s+|also\s+|still\s+)?(?:want|need)\b"
    r"(?!\s+to\s+(?:check|ask|think|see|talk|look|find|confirm|discuss|hear|know)\b)",
    re.IGNORECASE,
)


# a rule on a role the meeting names, said after "and" ("and contractors shouldn't see tickets
# from other departments", "but managers must approve it"): a need of its own, not a follow-up
_ROLE_RULE = re.compile(
    rf"^(?:and|but|also|plus)\s+(?:the\s+|our\s+|all\s+|both\s+|an?\s+)?{QUALIFIER}?(?:{PERSONA_FORMS})\s+(?:(?:also|still|"
    r"only|never)\s+)?(?:must|should|shall|can|could|need to|needs to|have to|has to|will|may"
    r"|shouldn['\u2019]t|mustn['\u2019]t|can['\u2019]t|cannot|won['\u2019]t)\b",
    re.IGNORECASE,
)
# a message the product sends people, said as what they get ("they get an email when the status
# changes", "the approver receives a reminder after three days")
_NOTIFIED = re.compile(
    r"(?<!\bi )(?<!\bwe )\b(?:get|gets|receive|receives)\s+(?:an?\s+|the\s+)?(?:[a-z-]+\s+)?"
    r"(?:e-?mail|text|sms|notification|alert|reminder|message)s?\b",
    re.IGNORECASE,
)


# a role the meeting names, and what it does, said in the present ("parents book a slot online",
# "teachers set which evenings they're available"): said of how the product will work as often as
# of how things are done today ("teachers pin a sheet on the door"), so it starts no need by
# itself (on dev 7 of 9 such sentences state one); it tells another role's need from a follow-up
_ROLE_DOES = re.compile(
    rf"^(?:(?:and|so|then|also)\s+)?(?:the\s+|our\s+|all\s+|an?\s+)?{QUALIFIER}?(?:{PERSONA_FORMS})\s+"
    r"(?:(?:also|just|then|only|always)\s+)?(?P<verb>[a-z]+)\s+\w",
    re.IGNORECASE,
)
_NOT_AN_ACTION = frozenset(
    """be am is are was were have has had do does did don't doesn't say says said think thinks
    know knows feel feels like likes love loves hate hates mean means find finds see sees get gets
    go goes come comes tend tends seem seems look looks keep keeps usually often never sometimes
    really actually already still who which that""".split()
)


def _role_does(said: str) -> bool:
    """Whether the sentence says, in the present, what a role the meeting names does."""
    found = _ROLE_DOES.match(said)
    verb = found.group("verb").lower() if found else ""
    return bool(verb) and verb not in _NOT_AN_ACTION and is_verb(base_form(verb))


def _another_role(text: str, main: str) -> bool:
    """Whether ``text`` says what a role does or may do that ``main`` does not name."""
    said = re.sub(r"^(?:and|but|also|plus|so|then)\s+", "", unframed(body(text)), flags=re.I)
    if not (_role_does(said) or _ROLE_CAN.match(said) or _ROLE_RULE.match(f"and {clean(said)}")):
        return False
    role = PERSONA.search(said)
    main_said = re.sub(r"^(?:and|but|also|plus|so|then)\s+", "", unframed(body(main)), flags=re.I)
    actor = PERSONA.match(re.sub(r"^(?:the|our|all)\s+", "", main_said, flags=re.I))
    return role is not None and (
        actor is None or singular_persona(role.group(0)) != singular_persona(actor.group(0))
    )


def names_its_actor(text: str) -> bool:
    """Whether the sentence says what a role the meeting names can, must or must not do ("staff
    can raise a ticket without emailing us", "contractors shouldn't see tickets from other
    departments"): a need of that role's, never a detail of another story."""
    said = unframed(body(text))
    if _ROLE_CAN.match(said) or _ROLE_RULE.match(f"and {clean(said)}") or _role_does(said):
        return True
    # "Yes, some of them do, so the company admin can add a PO number": what follows the answer
    _, so, then = said.partition(", so ")
    return bool(so and _ROLE_CAN.match(then))


# a prohibition said contracted ("contractors shouldn't see other departments' tickets"): the
# classifier's modal cue reads "should" and "must" whole
# (not "and it shouldn't go in any emails": said of what was just said, it goes on from there)
_MUST_NOT = re.compile(
    r"^(?:(?:and|but|so|also)\s+)?(?!(?:it|that|this|they|these|those)\b)[a-z].*?"
    r"\b(?:shouldn|mustn|shan)['\u2019]t\b(?!.*\?\s*$)",
    re.IGNORECASE,
)
# a role the meeting names, and what it can do ("managers can approve claims from their phone");
# not "you can find most functions on a TV set", said of anyone
_ROLE_CAN = re.compile(
    rf"^(?:(?:and|so|also|then|but)\s+)?(?:the\s+|our\s+|all\s+|both\s+)?{QUALIFIER}?"
    rf"(?:{PERSONA_FORMS})"
    r"\s+(?:(?:also|still|only)\s+)?(?:can|could|will be able to|are able to|is able to"
    # "members want to download all their invoices as PDFs"
    r"|wants? to|need to|needs to|would like to)\s+(?!['\u2019]t)\w",
    re.IGNORECASE,
)


# "the remote needs a button ...", "the keys need a soft backlight": the need verb with its
# object (the classifier's modal cue reads "need to" and "we need")
_NEEDS_A_THING = re.compile(
    r"\b(?<!no )needs? (?:a|an|the|some|one|two|three|four|five|\d+)\b", re.IGNORECASE
)


def _answered(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The story just before sentence ``k`` (within ``ELABORATION_GAP``) when it is a short
    answer alone, a thing named without a need ("Card number and a PIN, same as the machines."),
    and ``k`` states a need that names every content word of the answer's first clause ("The app
    must let members log in with their library card number and PIN.")."""
    story = _lone_before_need(stories, sentences, k, ELABORATION_GAP)
    if story is None:
        return None
    answer = sentences[story.writing].text
    if states_a_need(answer) or out_of_scope(sentences, story.writing):
        return None
    named = set(content_words(re.split(r"[,;:(]", clean(answer))[0]))
    return story if len(named) >= 2 and named <= set(content_words(sentences[k].text)) else None


def _wished_then_said(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The story just before sentence ``k`` when it is one short wish said as a frame round a
    thing ("Photos would help a lot.") and ``k``, said right after by the same speaker, states the
    need in full naming that thing ("They should be able to take photos of any damage and attach
    them to the check."): one need, said twice."""
    story = _lone_before_need(stories, sentences, k, 1)
    if story is None:
        return None
    wish = sentences[story.writing]
    said = body(wish.text)
    if (
        wish.speaker != sentences[k].speaker
        or meaningful_word_count(wish.text) > SHORT_FOLLOW_UP_WORDS
        or unframed(said) == said
    ):
        return None
    named = set(content_words(unframed(said)))
    # the thing named again by any word of the need ("a reminder", which content_words leaves
    # out of a longer sentence), compared by lemma
    return story if named & {lemma(w) for w in analysis_words(sentences[k].text)} else None


def _lone_before_need(
    stories: list[_Story], sentences: list[Sentence], k: int, gap: int
) -> _Story | None:
    """The story just before sentence ``k`` when it is one statement alone, not revised, said at
    most ``gap`` sentences before ``k``, and ``k`` states a need: the need said in full after a
    short answer or wish (``_answered``, ``_wished_then_said``)."""
    if not stories or not states_a_need(sentences[k].text):
        return None
    story = stories[-1]
    if len(story.members) != 1 or story.superseded or not 0 < k - story.writing <= gap:
        return None
    return story


def _repeated(stories: list[_Story], vectors: np.ndarray, k: int) -> _Story | None:
    """A story of the segment that sentence ``k`` says again (cosine >= ``REPEAT_SIMILARITY``)."""
    for story in stories:
        if max(float(vectors[k] @ vectors[o]) for o in story.members) >= REPEAT_SIMILARITY:
            return story
    return None


# a short remark on what was just said ("I think that's the policy.", "That's private.")
_REMARK = re.compile(
    r"^(?:(?:i think|i guess|yeah|yes|well|so|and|but|okay|ok|right)[\s,]+)*"
    r"(?:that|this|it)(?:'s|\s+is|\s+was)\b",
    re.IGNORECASE,
)
SHORT_REMARK_WORDS = 6


def _remarked_on(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The story of the statement said just before ``k`` (within ``ELABORATION_GAP``) when ``k``
    is a short remark on it (``_REMARK``): "that" is what was just said, however alike another
    need reads ("I think that's the policy." after the carry-over of days, not the rule on
    people off the same day before it)."""
    text = clean(sentences[k].text)
    if not _REMARK.match(text) or meaningful_word_count(text) > SHORT_REMARK_WORDS:
        return None
    return _just_before(stories, k)


def _figure_only(text: str) -> bool:
    """A short fragment that names a figure and no need ("Every ten thousand miles."): a detail
    of the need said just before it."""
    return (
        meaningful_word_count(text) <= FIGURE_FRAGMENT_WORDS
        and bool(number_tokens(clean(text)))
        and not states_a_need(text)
        and not _SAYS_A_CLAUSE.search(clean(text))
    )


# a question that proposes what the product could do ("Would it help if the system grouped the
# orders by area for you?", "What if it sent them a reminder?")
_PROPOSES = re.compile(
    r"^(?:(?:so|and|okay|ok|right|well|then)\W+)*(?:would it (?:help|be (?:useful|helpful|good"
    r"|better))|would you (?:like|want)|do you (?:want|need)|what if|how about if|how about)"
    r"\s+(?:if\s+)?(?P<subj>the (?:system|app|tool|portal|site|product|software)|it)\s+"
    r"(?:could\s+|would\s+|can\s+)?(?P<verb>[a-z]+)\b(?P<rest>[^?]*?)"
    r"(?:\s+for (?:you|me|us|them))?\s*\?\s*$",
    re.IGNORECASE,
)
# what the asker takes to be needed, put as a question last ("So head of department approval
# for claims over a thousand pounds, ..., and I assume that threshold should be configurable?")
_ASSUMED = re.compile(
    r"(?:^|[,;]\s+|\band\s+)(?:(?:so|and|then)\W+)*i (?:assume|take it|presume|suppose)(?: that)?"
    r"\s+(?P<subj>(?:the|that|this|these|those)\s+[a-z][\w\s-]*?|it|they)"
    r"\s+(?P<modal>should|must|will|would|needs? to|has to|have to)\s+(?P<rest>[^?]+?)\s*\?\s*$",
    re.IGNORECASE,
)
# what people would do, put to them as a question ("And they'd see, like, a calendar of free
# slots?")
_THEY_WOULD = re.compile(
    r"^(?:(?:so|and|okay|ok|right|then)\W+)*(?P<subj>they|you|people)(?:'d|\s+would|\s+could)\s+"
    r"(?P<verb>[a-z]+)\b(?:\W+like\b)?\W*(?P<rest>[^?]*?)\s*\?\s*$",
    re.IGNORECASE,
)
# an answer that says yes to it, and nothing against it ("Yes, massively.", not "Yes, but ...")
_CONFIRMS = re.compile(
    r"^(?:oh\W+)?(?:yes|yeah|yep|definitely|absolutely|massively|please|that would"
    r"|i (?:suppose|guess|think) so)\b(?!.*\bbut\b)"
    # "Yeah, about that.", "Yes and no.", "Yeah, well ...": a turn to a problem, no yes
    r"(?!\W+(?:(?:so\W+)?about (?:that|this|it)\b|and no\b|well\b|hmm\b|funny\b))",
    re.IGNORECASE,
)

# a yes and what it adds, of three words or more ("Yes, something like two days before, ...")
_CONFIRMS_THEN = re.compile(
    r"^(?:oh\W+)?(?:yes|yeah|yep|definitely|absolutely)\W+"
    r"(?:(?:something|maybe|probably|say|about|roughly)(?:\s+like)?\s+)?"  # how sure, no detail
    r"(?P<rest>\w+(?:\W+\w+){2,}.*)$",
    re.IGNORECASE,
)


# why, said with the yes ("Yes please, so I don't have to come back to you every time ...")
_YES_SO = re.compile(
    r"^(?:oh\W+)?(?:yes|yeah|yep|definitely|absolutely)(?:\W+please)?\W+so\s+(?:that\s+)?"
    r"(?P<why>(?:i|we|they|you|people|it)\b[^?]+?)[\s.!]*$",
    re.IGNORECASE,
)


def _confirmed_proposal(sentences: list[Sentence], k: int) -> str | None:
    """The need a question proposed and sentence ``k`` confirms, said as a need ("the system
    should group the orders by area"), with the reason the yes gives ("..., so I don't have to
    come back to you ..."), or None."""
    if not _answers(sentences, k) or not _CONFIRMS.match(clean(sentences[k].text)):
        return None
    need = _proposed_need(sentences, k)
    why = _YES_SO.match(clean(sentences[k].text))
    return f"{need[:-1]}, so that {why.group('why')}." if need and why else need


def _proposed_need(sentences: list[Sentence], k: int) -> str | None:
    """The need the question before sentence ``k`` proposed, or None."""
    asked = _PROPOSES.match(clean(sentences[k - 1].text))
    they = None if asked else _THEY_WOULD.match(clean(sentences[k - 1].text))
    if they is not None and is_verb(they.group("verb")) and content_words(they.group("rest")):
        # "And they'd see, like, a calendar of free slots?" "I suppose so, ...": what they do
        verb = base_form(they.group("verb"))
        return f"{they.group('subj').lower()} should {verb} {they.group('rest')}."
    assumed = None if asked or they else _ASSUMED.search(clean(sentences[k - 1].text))
    if assumed is not None:  # "..., and I assume that threshold should be configurable?" "Yes
        subj = re.sub(r"^(?:that|this)\b", "the", assumed.group("subj").lower())  # please, so
        subj = {"it": "the product", "those": "they", "these": "they"}.get(subj, subj)  # ..."
        return f"{subj} {assumed.group('modal').lower()} {assumed.group('rest')}."
    if asked is None or not is_verb(asked.group("verb")):
        return None
    subject = asked.group("subj")
    subject = "the product" if subject.lower() == "it" else subject.lower()
    return f"{subject} should {base_form(asked.group('verb'))}{asked.group('rest')}."


def _confirmed_topic(sentences: list[Sentence], k: int) -> tuple[str, list[int]] | None:
    """(the need, the statements that asked it) when sentence ``k`` says yes to a thing raised
    as a question by another speaker, perhaps with an example after it ("What about
    subscriptions?" "Like a loaf every Saturday." - "Yes, people ask for that all the time."):
    the thing, wanted ("We need subscriptions."); None otherwise."""
    if k < 1 or not _CONFIRMS.match(clean(sentences[k].text)):
        return None
    asked = k - 1
    if (  # the example the asker gave after the question
        asked > 0
        and not _answers(sentences, k)
        and sentences[asked].speaker == sentences[asked - 1].speaker
        and meaningful_word_count(sentences[asked].text) <= SHORT_FOLLOW_UP_WORDS
    ):
        asked -= 1
    raised = _TOPIC_QUESTION.match(clean(sentences[asked].text)) or _THING_PROPOSED.match(
        clean(sentences[asked].text)
    )
    if raised is None or sentences[asked].speaker == sentences[k].speaker:
        return None
    thing = raised.group("topic").strip()
    words = thing.lower().split()
    if not content_words(thing) or words[0].endswith("ing"):
        return None  # "And then?", "What about sending it twice?": no thing to want
    if raised.re is _THING_PROPOSED and len(content_words(thing)) < 2:
        return None  # "A lot?": no thing named
    return f"We need {_lower_first(thing)}.", list(range(asked, k))


# a question on what happens in a case ("And if a delivery fails?", "What happens when a
# booking is cancelled?")
_ASKS_IF = re.compile(
    r"^(?:(?:and|so|but|okay|ok)\W+)*(?:what (?:happens |should happen )?)?(?:if|when)\s+"
    r"(?P<cond>(?:a|an|the|someone|somebody|something|anything|they|it|we)\b[^?]{3,80}?)\s*\?\s*$",
    re.IGNORECASE,
)
# what is then done, said as who does it ("The driver marks it as failed with a reason, ...")
_DOES = re.compile(
    r"^(?:(?:then|well|so|yes|yeah)\W+)*"
    # "after two no-shows in a month they get blocked ...": when, said before who
    r"(?P<when>(?:after|within|once)\W+[^,]{3,40}?,?\s+(?=(?:the|they|it|we)\s))?"
    r"(?P<who>(?:the|a|an)\s+[a-z]+|they|it|we)\s+"
    r"(?:then\s+|just\s+|automatically\s+)?(?P<verb>[a-z]+)\b(?P<rest>.*)$",
    re.IGNORECASE,
)


# a question whether people may do something ("Should they be able to reorder the jobs?", "Can
# customers cancel online?")
_ASKS_IF_ABLE = re.compile(
    r"^(?:(?:so|and|okay|ok|right|then|but)\W+)*(?:should|can|could|will)\s+"
    r"(?P<subj>they|people|users|customers|(?:the\s+)?"
    r"[a-z]+s)\s+(?:also\s+)?(?:be\s+able\s+to\s+)?(?P<verb>[a-z]+)\b(?P<rest>[^?]*?)\s*\?\s*$",
    re.IGNORECASE,
)
_YES_FIRST = re.compile(r"^(?:(?:oh|well|um|uh)\W+)*(?:yes|yeah|yep|definitely|absolutely)\b", re.I)


def _ability_said_yes_to(stories: list[_Story], sentences: list[Sentence], k: int) -> str | None:
    """What people may do, as a question asked another speaker answers yes to ("Should they be
    able to reorder the jobs?" "Yes, if there's traffic, but the office needs to see the new
    order.": "They should be able to reorder the jobs."), when the need just said names no such
    action (else the answer is a detail of it: "Can they cancel online?" after the booking
    need); None otherwise."""
    if not _answers(sentences, k) or not _YES_FIRST.match(clean(sentences[k].text)):
        return None
    if sentences[k].speaker is None or sentences[k - 1].speaker == sentences[k].speaker:
        return None
    asked = _ASKS_IF_ABLE.match(clean(sentences[k - 1].text))
    if asked is None or not is_verb(asked.group("verb").lower()) or not asked.group("rest").strip():
        return None
    first = asked.group("rest").split()[0].lower()
    if first in _HOW_OR_WHERE or first.endswith("ly"):
        return None  # "Can they cancel online?": how they do what the need before names
    verb = base_form(asked.group("verb").lower())
    if verb in _LIGHT_VERBS | {"be", "see"}:
        return None
    last = stories[-1] if stories else None
    said = {
        base_form(w) for m in (last.said if last else []) for w in content_words(sentences[m].text)
    }
    if verb in said:
        return None
    subject = asked.group("subj").lower()
    named = (_WHO_FIRST.match(clean(sentences[m].text)) for m in (last.own if last else []))
    who = next((found for found in named if found), None)
    if subject == "they" and who:  # "Engineers need to see today's jobs ..." "Should they ...?"
        subject = who.group("who").lower()
    return f"{capital(subject)} should be able to {verb}{asked.group('rest')}."


# what says how, where or when something is done, not what it is done to ("cancel online", "book
# for their children", "pay by card")
_HOW_OR_WHERE = frozenset(
    """online offline from on in at by with via for to too any anytime again later now themselves
    without before after during""".split()
)
# the people a statement is said of, named first ("So, um, engineers need to see ...")
_WHO_FIRST = re.compile(
    rf"^(?:(?:so|and|um|uh|well|okay|ok|yes|yeah)\W+)*(?:the\s+|our\s+|all\s+)?"
    rf"(?P<who>(?:{PERSONA_FORMS}))\s+(?:also\s+|really\s+)?(?:need|want|should|must|have|can)\b",
    re.IGNORECASE,
)


# a need put as a statement with a question mark ("And the customer gets a copy?", "So each
# member sees their own bookings?")
_STATEMENT_ASKED = re.compile(
    r"^(?:(?:and|so|then|okay|ok|right)\W+)*(?P<said>(?:the|each|every)\s+[a-z][\w-]*"
    r"(?:\s+[a-z][\w-]*)?)\s+(?P<verb>gets|receives|sees)\s+(?P<what>[^?]+?)\s*\?\s*$",
    re.IGNORECASE,
)
# an answer that turns it down or doubts it
_NOT_SO = re.compile(r"^(?:(?:oh|well|um|uh|hmm)\W+)*(?:no|nope|not|never|i don't|maybe)\b", re.I)


def _statement_asked(sentences: list[Sentence], k: int) -> str | None:
    """The need a question put as a statement, when another speaker's answer goes on with how
    ("And the customer gets a copy?" "By email, a PDF of the job report.": "The customer should
    get a copy."), not turning it down; None otherwise."""
    if not _answers(sentences, k) or _NOT_SO.match(clean(sentences[k].text)):
        return None
    if sentences[k].speaker is None or sentences[k - 1].speaker == sentences[k].speaker:
        return None
    asked = _STATEMENT_ASKED.match(clean(sentences[k - 1].text))
    if asked is None:
        return None
    verb = base_form(asked.group("verb").lower())
    return f"{capital(asked.group('said'))} should {verb} {asked.group('what')}."


def _answered_condition(sentences: list[Sentence], k: int) -> str | None:
    """What is done in the case a question asks about ("And if a delivery fails?" "The driver
    marks it as failed with a reason, ..."), said with its condition ("When a delivery fails,
    the driver marks the delivery as failed ..."); None when sentence ``k`` answers no such
    question or says no action (a figure, a judgement, "that's one Euro")."""
    if not _answers(sentences, k):
        return None
    asked = _ASKS_IF.match(clean(sentences[k - 1].text))
    said = body(sentences[k].text)
    does = _DOES.match(said)
    if asked is None or does is None or meaningful_word_count(said) < 5:
        return None
    verb = does.group("verb").lower()
    plural = does.group("who").lower() in ("they", "we")
    if not (is_verb(verb) and (plural or (verb.endswith("s") and base_form(verb) != verb))):
        return None  # "that's one Euro", "it depends": no one does anything
    cond = asked.group("cond")
    thing = re.match(r"(?:a|an|the)\s+([a-z][\w-]*)\b", cond, re.IGNORECASE)
    rest = does.group("rest")
    if thing:  # "marks it as failed": the delivery the question is about
        rest = re.sub(r"^(\s+)it\b", rf"\1the {thing.group(1)}", rest, count=1)
    when = re.sub(r"^(\w+)\W+", r"\1 ", does.group("when") or "").strip(" ,")
    when = f" {when}" if when else ""
    return f"When {cond}, {_lower_first(does.group('who'))} {verb}{rest.rstrip(' .!')}{when}."


# a question on when or how often something is done ("How long before the start date do we send
# the welcome pack?", "How often should it sync?")
_ASKS_WHEN = re.compile(
    r"^(?:(?:and|so|okay|ok|then)\W+)*how\s+(?:(?P<long>long|many\s+(?:days|weeks|hours|months))"
    r"\s+(?P<rel>before|after|ahead of)\s+(?P<ref>[^?]+?)|(?P<often>often))\s+(?:do|does|should"
    r"|will|would|can|must)\s+(?P<who>we|they|you|it|the\s+[a-z]+(?:\s+[a-z]+)?)\s+"
    r"(?P<vp>[a-z][^?]*?)\s*\?\s*$",
    re.IGNORECASE,
)


def _answered_figure(sentences: list[Sentence], k: int) -> str | None:
    """The need a question on when or how often asks about, with the figure sentence ``k``
    answers ("How long before the start date do we send the welcome pack?" "Two weeks
    before." -> "We send the welcome pack two weeks before the start date."), or None."""
    if not _answers(sentences, k) or not _figure_only(sentences[k].text):
        return None
    asked = _ASKS_WHEN.match(clean(sentences[k - 1].text))
    if asked is None or not is_verb(asked.group("vp").split()[0]):
        return None
    said = re.sub(r"^(?:(?:yes|yeah|um|uh|well|so|about|roughly)\W+)*", "", body(sentences[k].text))
    figure = said.rstrip(" .!")
    who = asked.group("who")
    who = "the product" if who.lower() == "it" else who.lower()
    if asked.group("often"):
        return f"{capital(who)} {asked.group('vp')} {_lower_first(figure)}."
    rel = asked.group("rel").lower()
    figure = re.sub(rf"\s+{rel}$", "", figure, flags=re.IGNORECASE)
    return f"{capital(who)} {asked.group('vp')} {_lower_first(figure)} {rel} {asked.group('ref')}."


# the words a question may open with before what it asks ("So, how ...", "And does ...")
_ASKED_FIRST = r"^(?:(?:so|and|okay|ok|right|then|but)\W+)*"
# a question whether something is charged for ("Do we, er, do we charge for those?")
_ASKS_A_CHARGE = re.compile(
    rf"{_ASKED_FIRST}(?:(?:do|will|would|should|shall|can)\s+(?:we|they|you)\W+"
    r"(?:(?:er|erm|um|uh)\W+)?)+(?P<verb>charge|bill)(?:\s+(?:them|people|extra))?"
    r"(?:\s+for\s+(?P<what>[^?]+?))?\s*\?\s*$",
    re.IGNORECASE,
)
_PRICE = re.compile(r"\b(?:pounds?|quid|euros?|dollars?|pence|cents?)\b|[£€$]\s*\d", re.I)
_PRONOUN_THING = frozenset("it that this those these them".split())


def _answered_price(sentences: list[Sentence], k: int) -> str | None:
    """The charge a question asks about, with the price sentence ``k`` answers ("So, the
    floodlights." "Do we charge for those?" "Two pounds extra after dark." -> "We charge two
    pounds extra after dark for the floodlights."), or None."""
    if not _answers(sentences, k) or not _figure_only(sentences[k].text):
        return None
    asked = _ASKS_A_CHARGE.match(clean(sentences[k - 1].text))
    said = re.sub(r"^(?:(?:yes|yeah|um|uh|well|so)\W+)*", "", body(sentences[k].text))
    price = said.strip().rstrip(" .!")
    if asked is None or not _PRICE.search(price) or not _FIGURE_FIRST.match(price):
        return None
    what = (asked.group("what") or "").strip()
    if what.lower() in _PRONOUN_THING and k >= 2 and _names_the_topic(sentences, k - 2):
        # "So, the floodlights." named what "those" are
        what = re.sub(
            r"^(?:(?:so|and|then|okay|ok|right|now)\W+)*",
            "",
            clean(sentences[k - 2].text),
            flags=re.I,
        )
        what = _lower_first(what.strip(" .!"))
    charged = f" for {what}" if what and what.lower() not in _PRONOUN_THING else ""
    return f"We {asked.group('verb').lower()} {_lower_first(price)}{charged}."


def _verb_as_asked(aux: str, verb: str, plural: bool, negated: bool = False) -> str:
    """The question's verb said as a statement: "do(es) they pay" -> "pay" / "pays" ("do not
    pay" when ``negated``), "can they cancel" -> "can cancel"."""
    if aux in ("do", "does"):
        if negated:
            return f"{'do' if plural else 'does'} not {verb}"
        return verb if plural else third_person(verb)
    if negated:  # "cannot cancel", "will not cancel"
        return f"cannot {verb}" if aux == "can" else f"{aux} not {verb}"
    return f"{aux} {verb}"


def _answered_how(sentences: list[Sentence], k: int) -> str | None:
    """The need a question on how people do something asks about, with the way sentence ``k``
    answers ("How do they pay?" "By card online." -> "They pay by card online."), or None."""
    if not _answers(sentences, k):
        return None
    asked = _ASKS_HOW.match(clean(sentences[k - 1].text))
    said = _BY_WHAT.match(clean(sentences[k].text))
    if asked is None or said is None or meaningful_word_count(said.group("way")) > 5:
        return None
    who, aux, vp = asked.group("who"), asked.group("aux").lower(), asked.group("vp").split()
    if not is_verb(vp[0]) or who.lower() in ("i", "we"):
        return None  # "How do we do that?": the team's work
    done = _verb_as_asked(aux, vp[0].lower(), plural=aux != "does")
    way = _lower_first(said.group("way").rstrip(" .!"))
    return f"{capital(who)} {' '.join([done, *vp[1:]])} {way}."


def _answered_what_to_see(sentences: list[Sentence], k: int) -> str | None:
    """What a question on what someone needs to see asks about, with the things sentence ``k``
    names ("Reporting, what do you need to see?" "Spend by category, by department, by month."
    -> "I need to see spend by category, by department, by month."), or None."""
    if not _answers(sentences, k):
        return None
    asked = _ASKS_WHAT_TO_SEE.match(clean(sentences[k - 1].text))
    needs = None if asked else _ASKS_WHAT_THEY_NEED.match(clean(sentences[k - 1].text))
    said = re.sub(r"^(?:(?:yes|yeah|um|uh|well|so|and)\W+)*", "", clean(sentences[k].text))
    named = said.strip().rstrip(" .!")
    first = named.split()[0].lower() if named.split() else ""
    if (
        (asked is None and needs is None)
        or not named
        or named.endswith("?")
        or states_a_need(named)
        or first in _NOT_A_THING_FIRST
        or meaningful_word_count(named) > MAX_NAMED_WORDS
    ):
        return None
    if needs is not None:  # "What does the office need?" "A map ..." (asked is None)
        who = needs.group("who")
        if who.lower() in ("you", "we"):
            return f"{capital(who.lower())} need {_lower_first(named)}."
        need = "need" if needs.group("aux").lower() == "do" else "needs"
        return f"{capital(who)} {need} {_lower_first(named)}."
    return f"I need to {asked.group('verb').lower()} {_lower_first(named)}." if asked else None


# a question on what someone needs to see or know ("Reporting, what do you need to see?", "And
# what would you want to know from it?")
_ASKS_WHAT_TO_SEE = re.compile(
    rf"{_ASKED_FIRST}(?:[a-z][a-z -]*,\s*)?what\s+(?:do|would|will)\s+(?:you|they)\s+"
    r"(?:need|want|like)\s+to\s+(?P<verb>see|know|track)\b[^?]*\?\s*$",
    re.IGNORECASE,
)
# a question on what someone needs, with no verb after it ("What does the office need?", "And
# what do the drivers need from it?")
_ASKS_WHAT_THEY_NEED = re.compile(
    rf"{_ASKED_FIRST}(?:[a-z][a-z -]*,\s*)?what\s+(?P<aux>do|does)\s+(?P<who>you|we|(?:the|our)\s+"
    r"[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+(?:really\s+)?need(?:\s+from\s+(?:it|this|the\s+\w+))?"
    r"\s*\?\s*$",
    re.IGNORECASE,
)
# an answer that starts as a clause or a reply, not with the things it names
_NOT_A_THING_FIRST = frozenset(
    "i we you they he she it that this there what which who how why when if because not no "
    "nothing everything anything whatever".split()
)
MAX_NAMED_WORDS = 12  # an answer that names things, not a speech


def _answered_scope(
    stories: list[_Story], sentences: list[Sentence], k: int, whole: str | None
) -> str | None:
    """A need a yes/no question asks about, new to the talk, with what sentence ``k`` says it
    holds for ("Can parents pay in instalments?" "For the residential trip, yes, ..." ->
    "Parents can pay in instalments for the residential trip."), or None; a question on the need
    just said ("Do we take payment in the app?" of the prescriptions said before it) is answered
    as a detail of that need. ``whole``: the answer said with the question's words
    (``_said_with_its_question``)."""
    if _MODAL_CLAUSE.search(clean(sentences[k].text)):
        return None  # "Yes, ..., so the company admin can add a PO number ...": said in full
    if whole is None or _NEGATED.search(whole):
        return None  # "No, guest checkout is fine.": a detail of the need it was asked of
    if re.match(r"(?:we|i|you)\b", whole, re.IGNORECASE):
        return None  # "Can we park that ...?" "Yes, let's.": the team's work, no need
    before = _just_before(stories, k - 1)
    if before is not None and re.match(r"they\b", whole, re.IGNORECASE):
        return None  # "Can they change the numbers later?": "they" are the need's just said
    said = {w for m in before.said for w in content_words(sentences[m].text)} if before else set()
    asked = set(content_words(sentences[k - 1].text))
    return whole if not asked & said else None


# a question on how people do something ("How do they pay?", "How will customers log in?")
_ASKS_HOW = re.compile(
    rf"{_ASKED_FIRST}how\s+(?P<aux>do|does|will|can|should|would)\s+"
    rf"(?P<who>they|you|people|(?:the\s+)?(?:{PERSONA_FORMS}))\s+(?P<vp>[a-z][^?]*)\?\s*$",
    re.IGNORECASE,
)
# an answer that names the way ("By card online.", "Through the app, mostly.")
_BY_WHAT = re.compile(
    r"^(?:(?:um|uh|well|so|mostly|usually)\W+)*(?P<way>(?:by|with|through|via|using|online"
    r"|over the phone|in person)\b[^,;?]*)(?:,\s*(?:mostly|usually|I think|I'd say))?\W*$",
    re.IGNORECASE,
)


# a case of what was just said, and what then has to happen ("And if one of them clashes, tell me
# which one, don't just fail the whole thing." after "Weekly recurring bookings for staff, ..."):
# a condition of that need, whoever says it
_A_CASE_OF_IT = re.compile(
    r"^(?:(?:and|but|so|also|then)\W+)*(?:if|when|whenever)\s+(?:(?:one|any|some|none|all|each)"
    r"\s+of\s+(?:them|those|these)|it|that|this)\s+[a-z']+\b[^?]*,\s*\S[^?]*$",
    re.IGNORECASE,
)
# what is done to the thing just named, said as a participle alone ("Exported to Excel, ideally."
# after "I need to see the hours per volunteer per month")
_DONE_TO_IT = re.compile(
    r"^(?:(?:and|so|then|also|um|uh|oh)\W+)*(?P<done>[a-z]+ed)\s+(?:to|by|as|in|into|on|every|each"
    r"|weekly|monthly|daily|nightly|automatically)\b[^.;:!?]*[.!]?$",
    re.IGNORECASE,
)


def _done_to_it(text: str) -> bool:
    """Whether a sentence is only what is done to the thing just named (``_DONE_TO_IT``)."""
    done = _DONE_TO_IT.match(clean(text))
    return done is not None and is_participle(done.group("done").lower())


# what follows when the limit just said is passed ("If they cancel later than that, they lose the
# credit."): a rule of that need, in its criteria
_SAID_OF_THE_FIGURE_BEFORE = re.compile(
    r"^(?:(?:and|but|so|then)\W+)?(?:if|when|once|whenever)\b[^,;]*?\b(?:(?:later|earlier|more"
    r"|less|longer|fewer|sooner)\s+than\s+that|after\s+that\s+(?:time|date|point|deadline|limit)"
    r"|past\s+that|beyond\s+that)\b",
    re.IGNORECASE,
)


def _asked_about(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The need the question just before sentence ``k`` asks about, when ``k`` answers it ("How
    far ahead can they book?" "Six weeks, I'd say." after "People want to book an appointment
    online ..."): the latest story said before the question whose main statement names a word
    the question names (the product's own name aside); None when none does."""
    if not _answers(sentences, k):
        return None
    asked = {base_form(w) for w in content_words(sentences[k - 1].text)}
    asked -= _THE_PRODUCT_WORDS | _LIGHT_VERBS  # "how long do we keep the records?": records
    for story in reversed(stories):
        if story.writing >= k - 1:
            continue
        # its own statements ("they pick a time slot, ..." under "customers should be able to
        # order online ...", for "How long are the slots?")
        said = {base_form(w) for m in story.own for w in content_words(sentences[m].text)}
        if asked & said:
            return story
    return None


# a question on a figure of a need ("How far ahead can they book?", "How quickly does
# maintenance have to respond?", "How many pets can an owner add?")
_HOW_MUCH = re.compile(
    rf"{_ASKED_FIRST}how\s+(?P<what>far ahead|far in advance|long"
    r"|often|quickly|fast|soon|early|late|many\s+[a-z-]+|much\s+[a-z-]+)\s+(?P<aux>can|could"
    r"|should|must|will|would|do|does|did)\s+(?P<rest>[^?]+)\?\s*$",
    re.IGNORECASE,
)
_PRESENT_AUX = frozenset("should must will would do does did".split())
# an answer that opens with its figure ("Six weeks", "within four hours for normal faults")
_FIGURE_FIRST = re.compile(
    r"^(?:(?:up to|within|every|after|about|around|roughly|at least|at most|no more than|under"
    r"|over|only|just|maybe|probably)\s+)*(?:\d|(?:a|an|one|two|three|four|five|six|seven|eight"
    r"|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|ninety|hundred|half)\b)",
    re.IGNORECASE,
)

# a figure asked of a thing, with no one doing anything ("How long are the slots?", "How many
# people per slot?")
_HOW_IS = re.compile(
    rf"{_ASKED_FIRST}how\s+(?P<what>long|big|large|far|old|often|heavy|wide|high|deep|early|late)"
    r"\s+(?P<be>is|are)\s+(?P<thing>(?:the|a|an|each|every|our|their)\s+[^?]+?)\s*\?\s*$",
    re.IGNORECASE,
)
_HOW_MANY_PER = re.compile(
    rf"{_ASKED_FIRST}how\s+many\s+(?P<noun>[a-z-]+)\s+(?P<per>(?:per|a|an|each|in|on|at)\s+[^?]+?)"
    r"\s*\?\s*$",
    re.IGNORECASE,
)
# a statement asked back for a yes ("courts are an hour, right?")
_TAG_QUESTION = re.compile(
    r"^(?:(?:and|so|okay|ok|um|uh)\W+)*(?P<said>[a-z][^?]*?\b(?:is|are)\b[^?]*?),?\s+(?:right"
    r"|yeah|correct|isn't it|aren't they|is that right|yes)\s*\?\s*$",
    re.IGNORECASE,
)
# what an answer goes on to say of its figure ("..., from ten to four thirty")
_MORE_OF_THE_FIGURE = re.compile(
    r"^\s*(?:from|to|between|until|up to|each|per|every)\b", re.IGNORECASE
)


def figure_said_of(question: str, answer: str) -> str | None:
    """The figure an answer gives to a question on a thing, said with the question's words
    ("How long are the slots?" "Half an hour each, from ten to four thirty." -> "The slots are
    half an hour each, from ten to four thirty."; "How many people per slot?" "Two hundred,
    that's what the fire officer allows ..." -> "Two hundred people per slot."), or None."""
    if _AS_IS.search(clean(answer)):
        return None  # "Half an hour at the moment.": how it is now
    said = re.split(r"[,;]|\bI'd say\b|\bI think\b", clean(answer))
    figure = re.sub(
        r"^(?:(?:well|so|yes|yeah|um|uh|maybe|probably)\W+)*", "", said[0], flags=re.I
    ).strip(" .!?")
    if not _FIGURE_FIRST.match(figure) or len(figure.split()) > 6:
        return None
    for more in said[1:]:
        if not _MORE_OF_THE_FIGURE.match(more):
            break
        figure = f"{figure}, {more.strip(' .!?')}"
    figure = _lower_first(figure)
    tagged = _TAG_QUESTION.match(clean(question))
    agreed = (
        set(content_words(figure)) <= set(content_words(tagged.group("said"))) if tagged else False
    )
    if tagged and agreed and content_words(figure):
        # "And, um, courts are an hour, right?" "An hour, yeah.": what the question said, agreed
        return capital(tagged.group("said")) + "."
    asked = _HOW_IS.match(clean(question))
    if asked:
        return capital(f"{asked.group('thing')} {asked.group('be').lower()} {figure}") + "."
    asked = _HOW_MANY_PER.match(clean(question))
    if asked and asked.group("noun").lower() not in figure.lower():
        return capital(f"{figure} {asked.group('noun')} {asked.group('per')}") + "."
    return None


def _figure_asked_of(
    stories: list[_Story], sentences: list[Sentence], k: int
) -> tuple[_Story, str] | None:
    """(the need, the figure said with the question's words) when sentence ``k`` answers
    another speaker's question on a figure of a thing that need names (``figure_said_of``) or
    of what someone does in it (``answer_said_whole``)."""
    if not _answers(sentences, k) or sentences[k - 1].speaker == sentences[k].speaker:
        return None
    question, answer = sentences[k - 1].text, sentences[k].text
    # "How fast does maintenance need to react?" "For urgent things, within an hour."
    whole = figure_said_of(question, answer) or answer_said_whole(question, answer)
    story = _asked_about(stories, sentences, k) if whole is not None else None
    if story is None and whole is not None and _HOW_IS.match(clean(question)):
        # "Customers should be able to order online ..." "How long are the slots?" "Thirty
        # minutes.": a figure of a thing the need just said brings with it
        story = _just_before(stories, k - 1, sentences)
    if story is None or whole is None or len(story.members) >= MAX_QUOTES:
        return None
    return story, whole


# people said to need or want to do something only people do ("And they need to see which vet
# it is.", "Owners want to see the vaccination history"): a need said plainly, however unlike
# the sentences the capture classifier learned from it reads
_PEOPLE_NEED_TO = re.compile(
    r"^(?:(?:and|so|also|but|then|plus|oh|yes|yeah)[\s,]+)*(?:they|people|users|customers"
    rf"|(?:the |our |all |each |every )?(?:{PERSONA_FORMS}))\s+(?:also\s+|really\s+|still\s+)?"
    r"(?:need|needs|want|wants|should be able|must be able|have to be able|has to be able)\s+to\s+"
    r"(?P<verb>[a-z]+)\b",
    re.IGNORECASE,
)


# ... or said by one of them of themselves ("And I want to find a room by what's in it.", "I'd
# like to see all my team's claims in one list"); not the meeting's own work ("I need to talk to
# the partners", "I want to go back to cancelling"), whose verbs are no people's verbs here
_I_NEED_TO = re.compile(
    r"^(?:(?:and|so|also|but|then|plus|oh|yes|yeah|well|okay|honestly|personally)[\s,]+)*"
    r"i(?:'d|\s+would|\s+really|\s+also|\s+just)*\s+(?:want|need|like)\s+to\s+"
    r"(?P<verb>[a-z]+)\b",
    re.IGNORECASE,
)
# what people do with a product, said of themselves, beyond ``PEOPLE_VERBS``
_OWN_USE_VERBS = frozenset("find export block filter sort compare track".split())
# ... and what they say of themselves as their own task ("I'd need to ask the data protection
# officer", "I need to call the supplier")
_OWN_TASK_VERBS = frozenset("ask call phone".split())


def people_need_to(text: str) -> bool:
    """Whether the sentence says people need or want to do what only people do
    (``_PEOPLE_NEED_TO``), or one of them says so of themselves (``_I_NEED_TO``)."""
    said = clean(text)
    found = _PEOPLE_NEED_TO.match(said)
    if found is not None and found.group("verb").lower() in PEOPLE_VERBS:
        return True
    own = _I_NEED_TO.match(said)
    verb = own.group("verb").lower() if own else ""
    return (verb in PEOPLE_VERBS | _OWN_USE_VERBS) and verb not in _OWN_TASK_VERBS


# a time proposed for what people may do, asked for a yes ("Can they cancel five minutes
# before?", "Should we send it a week ahead?")
_TIME_PROPOSED = re.compile(
    rf"{_ASKED_FIRST}(?P<aux>can|could|should|must|will)\s+(?P<who>they|we|you|people|[a-z]+s)\s+"
    r"(?P<done>[a-z]+(?:\s+[a-z']+){0,4}?)\s+(?P<figure>(?:\d+|a|an|one|two|three|four|five|six"
    r"|seven|eight|nine|ten|twelve|fifteen|twenty|thirty|forty|forty-eight|sixty)\s+(?:working\s+)?"
    r"(?:minutes?|hours?|days?|weeks?|months?)\s+(?:before|ahead|after|in advance|beforehand)"
    r"(?:\s+[a-z']+){0,3})\s*\?\s*$",
    re.IGNORECASE,
)
# the time an answer gives ("up to two hours before", "a day ahead")
_TIME_GIVEN = re.compile(
    r"^(?:(?:up to|at least|at most|no more than|no later than|about|around|only|just)\s+)?"
    r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|thirty"
    r"|forty|forty-eight|sixty|half an?)\s+(?:working\s+)?(?:minutes?|hours?|days?|weeks?"
    r"|months?)\s+(?:before|ahead|after|in advance|beforehand)(?:\s+[a-z']+){0,3}$",
    re.IGNORECASE,
)
# the hedge an answer opens with ("Um, I'd say ...", "Hmm, probably ...")
_HEDGE_FIRST = re.compile(
    r"^(?:(?:um|uh|erm|hmm|well|so|no|nah|oh)\W+)*(?:(?:i'd say|i would say|i think|i guess"
    r"|probably|maybe|let's say)\W+)*",
    re.IGNORECASE,
)


def time_said_whole(question: str, answer: str) -> str | None:
    """Another time than the one a question proposes, said with the question's words ("Can they
    cancel five minutes before?" "Um, I'd say up to two hours before." -> "They can cancel up to
    two hours before."), or None when the question proposes no time for what people may do or
    the answer is more than a time."""
    asked = _TIME_PROPOSED.match(clean(question))
    if asked is None or _AS_IS.search(clean(answer)):
        return None
    said = _HEDGE_FIRST.sub("", clean(answer)).split(",")[0].strip(" .!?")
    if not _TIME_GIVEN.match(said):
        return None
    who = asked.group("who")
    who = who if who.lower() in ("they", "we", "you") else who.lower()
    aux, done = asked.group("aux").lower(), asked.group("done")
    return capital(f"{who} {aux} {done} {_lower_first(said)}") + "."


def answer_said_whole(question: str, answer: str) -> str | None:
    """The figure an answer gives, said with the question's words ("How far ahead can they
    book?" "Six weeks, I'd say." -> "They can book six weeks ahead."; "How quickly does
    maintenance have to respond?" "Within four hours for normal faults." -> "Maintenance has to
    respond within four hours for normal faults."; "Can they cancel five minutes before?" "Up
    to two hours before." -> "They can cancel up to two hours before."), or None when the
    question asks no figure of someone doing something or the answer gives none."""
    proposed = time_said_whole(question, answer)
    if proposed is not None:
        return proposed
    asked = _HOW_MUCH.match(clean(question))
    if _AS_IS.search(clean(answer)):
        return None  # "Seven days at the moment.": how it is now, not what was decided
    said = re.split(r",|;|\bI'd say\b|\bI think\b", clean(answer))
    figure = re.sub(
        r"^(?:(?:well|so|yes|yeah|no|um|uh|maybe|probably)\W+)*", "", said[0], flags=re.I
    )
    figure = _lower_first(figure.strip(" .!?"))
    if (
        re.match(r"for\s+\w", figure, re.I)
        and len(said) > 1
        and _FIGURE_FIRST.match(said[1].strip())
    ):
        # "For urgent things, within an hour.": the figure, then what it is for
        figure = f"{_lower_first(said[1].strip(' .!?'))} {figure}"
    if asked is None or not _FIGURE_FIRST.match(figure) or len(figure.split()) > 6:
        return None  # "Routine appointments we open four weeks ahead.": more than a figure
    words = re.sub(r"\s+(?:now|today|currently|at the moment)$", "", asked.group("rest")).split()
    at = next((n for n in range(1, min(4, len(words))) if is_verb(words[n].lower())), 0)
    if not at:
        return None  # "How long is the trial?": no one doing anything
    if at >= 2 and words[at - 1].lower() == "to" and words[at - 2].lower() in ("need", "have"):
        at -= 2  # "does maintenance need to react": "need" is the verb, "to react" what follows
    who, verb, tail = " ".join(words[:at]), words[at].lower(), " ".join(words[at + 1 :])
    plural = bool(re.search(r"(?:s|they|we|you|people|staff)$", who.lower()))
    aux = asked.group("aux").lower()
    if aux in _PRESENT_AUX:  # "how long do we keep it" -> "we keep it"
        verb = verb if plural or aux in ("do", "did") else third_person(verb)
        done = f"{verb} {tail}".strip()
    else:  # "can", "could": what they may do
        done = f"{aux} {verb} {tail}".strip()
    what = asked.group("what").lower()
    if what.startswith("far"):
        # "How far ahead can they book?": how far they may, "book up to six weeks ahead"
        upto = "up to " if aux in ("can", "could") and not figure.startswith("up to") else ""
        done = f"{done} {upto}{figure} {what.split(' ', 1)[1]}"
    elif what.startswith(("many", "much")):
        noun = what.split()[1]
        done = f"{done} {figure}" if noun in figure.lower() else f"{done} {figure} {noun}"
    else:
        done = f"{done} {figure}"
    return capital(f"{who} {done}") + "."


def only_said_whole(question: str, answer: str) -> str | None:
    """A yes/no question's answer that narrows it, said with the question's words ("Does every
    room need an inspection?" "No, only checkouts." -> "Only checkouts need an inspection.";
    "Is the deposit refundable?" "Just the booking fee." -> "Only the booking fee is
    refundable."), or None when the answer names no narrower case or the question is not one."""
    asked = _ASKS_OF_EVERY.match(clean(question))
    said = _ONLY_THESE.match(clean(answer))
    if asked is None or said is None:
        return None
    who = said.group("who").strip()
    plural = who.lower().endswith("s") and not who.lower().endswith("ss")
    # the question's subject is "every"/"all" and one word ("every room", "all staff")
    said_of, aux = asked.group("rest").split()[2:], asked.group("aux").lower()
    if not said_of:
        return None
    if aux in ("is", "are"):
        return f"Only {who} {'are' if plural else 'is'} {' '.join(said_of)}."
    done, tail = _verb_as_asked(aux, said_of[0].lower(), plural), " ".join(said_of[1:])
    return f"Only {who} {done} {tail}".rstrip() + "."


def _asked_before(sentences: list[Sentence], k: int) -> str:
    """The question sentence ``k`` answers: the one just before it, or the one before the
    answerer's first sentence ("Do we take payment?" "Not for consultations. But for
    prescriptions, yes."); "" when none."""
    if k >= 1 and clean(sentences[k - 1].text).endswith("?"):
        return sentences[k - 1].text
    if (
        k >= 2
        and sentences[k - 1].speaker == sentences[k].speaker
        and clean(sentences[k - 2].text).endswith("?")
    ):
        return sentences[k - 2].text
    return ""


_YES_LAST = re.compile(r"^(?P<rest>(?!(?:yes|yeah|yep|no)\b)[^,]+?),\s*(?:yes|yeah|yep)\W*$", re.I)


def scope_said_whole(question: str, answer: str) -> str | None:
    """A yes/no question's answer that says for what it holds, said with the question's words
    ("Do we take payment in the app?" "But for prescriptions, yes." -> "We take payment in the
    app for prescriptions."; "Not for consultations, they pay at the desk." -> "We do not take
    payment in the app for consultations."; "Only for big companies." -> "..., only for big
    companies."), or None."""
    asked = _ASKS_OF_SOMEONE.match(clean(question))
    yes_last = _YES_LAST.match(clean(answer))
    if yes_last:  # "Up to a week before, yes.": the yes said last
        answer = f"Yes, {yes_last.group('rest')}."
    said = _FOR_WHAT.match(clean(answer))
    if asked is None:
        return None
    aux, who, vp = asked.group("aux").lower(), asked.group("who"), asked.group("vp").split()
    if len(vp) > 2 and " " in who and vp[1].lower() in _ASKED_VERBS:
        who, vp = f"{who} {vp[0]}", vp[1:]  # "Does the welcome email need approval?"
    if not vp or not (is_verb(vp[0].lower()) or vp[0].lower() in ("need", "want", "have")):
        return None
    if who.lower().split()[-1] in ("same", "thing", "that", "this", "it"):
        return None  # "Does the same go for students, ...?": of what was just said
    plural = who.lower() in ("we", "they", "you") or (
        who.lower().endswith("s") and not who.lower().endswith("ss")
    )
    bare = _YES_OR_NO.match(clean(answer)) if said is None else None
    if bare is None and said is None:
        return None
    if bare is not None:  # "Can they cancel online?" "Yes, any time, no phone call needed."
        negated = bare.group("no") is not None
        done, rest = _verb_as_asked(aux, vp[0].lower(), plural, negated), " ".join(vp[1:])
        more = bare.group("more").strip(" .!")
        words = more.split()
        if not 2 <= len(words) <= 8 or _STARTS_A_CLAUSE.match(more) or words[0].lower() == "but":
            more = ""  # "Yes, people ask for that all the time.": talk, not the rule
        # "Up to a week before, yes.": a figure goes with what it limits, not after a break
        tail = f"{', ' if _FIGURE_FIRST.match(more) else '; '}{_lower_first(more)}" if more else ""
        return capital(f"{_lower_first(who)} {done} {rest}{tail}".replace("  ", " ")) + "."
    if said is None:
        return None
    what, how = said.group("what").strip(), (said.group("how") or "").lower()
    if not how and re.match(r"\W*(?:no|nope)\b", clean(answer)[said.end("what") :], re.I):
        how = "not"  # "For day trips, no."
    done, rest = _verb_as_asked(aux, vp[0].lower(), plural, how == "not"), " ".join(vp[1:])
    scope = f"only for {what}" if how in ("only", "just") else f"for {what}"
    return capital(f"{_lower_first(who)} {done} {rest} {scope}".replace("  ", " ")) + "."


# a bare yes or no to a yes/no question, and what is said with it ("No, guest checkout is fine.",
# "Yes, any time, no phone call needed."), never "yes, but ..." ("no, but ..." is a no)
_YES_OR_NO = re.compile(
    r"^(?:(?:oh|well|um|uh)\W+)*(?:(?P<no>no|nope)\b|(?:yes|yeah|yep|of course|sure)\b"
    r"(?!.*\bbut\b))[\s,.!]*(?P<more>.*)$",
    re.IGNORECASE,
)
# what opens a clause of its own ("people ask for that", "I think ...", "that's ...")
_STARTS_A_CLAUSE = re.compile(
    r"^(?:i|we|you|they|he|she|it|people|that|this|there)(?:'[a-z]+)?\s+[a-z]+", re.IGNORECASE
)
# a yes/no question on what someone does ("Do we take payment in the app?", "Does the manager
# approve it?", "Can they cancel online?")
_ASKS_OF_SOMEONE = re.compile(
    rf"{_ASKED_FIRST}(?P<aux>do|does|can|will|should|must)\s+"
    r"(?P<who>we|they|you|(?:the|each|every|our)\s+[a-z][\w-]*|[a-z]+s)\s+(?P<vp>[a-z][^?]*)\?\s*$",
    re.IGNORECASE,
)
# verbs a yes/no question asks with after a thing named in two words ("Does the welcome email
# need approval?": not "the welcome" emailing)
_ASKED_VERBS = frozenset("need want have get include show go come".split())
# an answer that says for what it holds ("But for prescriptions, yes, ...", "Not for
# consultations, ...", "Only for big companies.")
_FOR_WHAT = re.compile(
    r"^(?:(?:but|and|so|well|no|yes|yeah)\W+)*(?:(?P<how>not|only|just)\s+)?for\s+"
    r"(?P<what>(?:the\s+|a\s+|an\s+)?[\w-]+(?:\s+[\w-]+){0,5}?)"
    r"(?:\W+(?:yes|yeah|yep|of course|sure)\b.*|,.*|\W*)$",
    re.IGNORECASE,
)


# a yes/no question on who or what something applies to ("Does every room need an
# inspection?", "Can all staff see it?", "Is every ticket billable?")
_ASKS_OF_EVERY = re.compile(
    rf"{_ASKED_FIRST}(?P<aux>does|do|is|are|can|should|must|will)\s+"
    r"(?P<rest>(?:every|each|all|any)\b[^?]+)\?\s*$",
    re.IGNORECASE,
)
# an answer that narrows it to some ("No, only checkouts.", "Just the managers.")
_ONLY_THESE = re.compile(
    r"^(?:(?:no|nope|not really|well)\W+)*(?:only|just)\s+(?P<who>(?:the\s+)?[a-z][\w-]*"
    r"(?:\s+[a-z][\w-]*){0,2})\W*$",
    re.IGNORECASE,
)


# verbs said of anything, which name no need a question asks about ("keep", "do", "have")
_LIGHT_VERBS = frozenset("keep do have get make need want go take put give let".split())
# what names the product itself, so names no need ("the app", "the system")
_THE_PRODUCT_WORDS = frozenset(
    "app application system product tool portal site website platform remote thing".split()
)


def _answers(sentences: list[Sentence], k: int) -> bool:
    """Whether sentence ``k`` follows a question: what it says answers that, not the need said
    before the question."""
    return k > 0 and clean(sentences[k - 1].text).rstrip().endswith("?")


# a thing made of items ("a checklist per starter", "the form asks for ...", "these fields")
_HOLDS_ITEMS = re.compile(
    r"\b(?:check-?lists?|lists?|forms?|fields?|steps?|columns?|sections?|categories|tabs?"
    r"|menus?)\b",
    re.IGNORECASE,
)


def _list_only(text: str) -> bool:
    """Three or more short items said as a list and nothing else ("Contract signed,
    right-to-work check, bank details, equipment ordered."): what the need just said holds."""
    said = clean(text).rstrip(" .!")
    items = [i.strip() for i in re.split(r",|\s+(?:and|or)\s+", said) if i.strip()]
    return (
        len(items) >= 3
        and ":" not in said  # "Open: same-day slots, video, ...": a list of its own
        and all(1 <= len(i.split()) <= 4 for i in items)
        and not states_a_need(text)
        and not _SAYS_A_CLAUSE.search(said)
    )


# a pronoun, a form of "be" / "have" or a "not": a clause of its own, not a figure in passing ("We
# have two vans.", "It's ten.", "Seven meaning, no it doesn't fulfil.")
_SAYS_A_CLAUSE = re.compile(
    r"\b(?:i|we|you|they|it|he|she|there|that|this)\b|\b(?:is|are|was|were|has|have|had)\b"
    r"|'(?:s|re|ve|t)\b|\bnot\b",
    re.IGNORECASE,
)


def _just_before(
    stories: list[_Story], k: int, sentences: list[Sentence] | None = None
) -> _Story | None:
    """The story of the statement said just before ``k`` (within ``ELABORATION_GAP`` + 1), if it
    has room for one more quote (and, given the ``sentences``, no new topic opens between)."""
    said = [(max(m for m in st.said if m < k), st) for st in stories if min(st.said) < k]
    if not said:
        return None
    at, story = max(said, key=lambda x: x[0])
    if sentences is not None and _heading_between(sentences, at, k):
        return None
    return story if k - at <= ELABORATION_GAP + 1 and len(story.members) < MAX_QUOTES else None


# a clause of the answer's own with a modal ("so the company admin can add a PO number")
_MODAL_CLAUSE = re.compile(
    r"\b(?:can|could|should|must|will|would|has to|have to|needs? to)\s+(?!not\b)[a-z]+", re.I
)


# a question that opens with an auxiliary or a question word asks something else than which of
# the options it names
_ASKS_OTHERWISE = re.compile(
    r"^(?:(?:and|so|but|okay|ok)\W+)*(?:do|does|did|can|could|should|would|will|is|are|was|were"
    r"|shall|have|has|what|how|when|where|who|why|which)\b",
    re.IGNORECASE,
)


def _option_chosen(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The need said just before a question that offers options for it ("With a signature? Or
    just a tick?", "On paper or on a phone?"), when sentence ``k``, another speaker's answer,
    takes one of them ("A tick is fine, but it has to record which parent gave it and when."):
    what it says is a detail of that need, not a need of its own; None otherwise."""
    if k < 2 or not _answers(sentences, k):
        return None
    asked = [k - 1]
    if re.match(r"or\b", clean(sentences[k - 1].text), re.IGNORECASE) and _answers(
        sentences, k - 1
    ):
        if sentences[k - 2].speaker == sentences[k - 1].speaker:
            asked.insert(0, k - 2)  # "With a signature? Or just a tick?"
    question = " ".join(clean(sentences[j].text) for j in asked)
    if (
        not re.search(r"\bor\b", question, re.IGNORECASE)
        or len(question.split()) > 12
        or _ASKS_OTHERWISE.match(question)
        or sentences[asked[0]].speaker == sentences[k].speaker
    ):
        return None
    first = re.split(r"[,;]|\bbut\b", clean(sentences[k].text))[0]
    if not set(content_words(first)) & set(content_words(question)):
        return None  # the answer takes none of the options named
    return _just_before(stories, asked[0], sentences)


def _answered_no(stories: list[_Story], k: int, whole: str | None) -> _Story | None:
    """The need just said when sentence ``k`` says no to a question on it ("So residents should
    be able to report a pothole online ..." "Do they need to log in?" "No, but they can leave an
    email ..."): a detail of that need, drafted with the question's words (``whole``, from
    ``_said_with_its_question``)."""
    if whole is None or not _NEGATED.search(whole):
        return None
    return _just_before(stories, k - 1)


def _said_with_its_question(sentences: list[Sentence], k: int) -> str | None:
    """What sentence ``k`` answers another speaker's yes/no question with, said with the
    question's words (``scope_said_whole``), or None."""
    if not _answers(sentences, k) or sentences[k].speaker == sentences[k - 1].speaker:
        return None
    return scope_said_whole(sentences[k - 1].text, sentences[k].text)


_NEGATED = re.compile(r"\b(?:not|cannot)\b")


def _figure_settled(
    stories: list[_Story], sentences: list[Sentence], k: int, lead: re.Match[str] | None
) -> _Story | None:
    """The need just said when sentence ``k`` settles a figure of it, naming its thing ("Let's
    say three instalments for the residential." after the instalments were asked about): a
    detail of that need, which a later correction may revise. ``lead``: the figure it leads
    with (``leads_with_a_figure``)."""
    near = _just_before(stories, k) if lead is not None else None
    if near is None or lead is None:
        return None
    said = {w for m in near.said for w in content_words(sentences[m].text)}
    said |= set(content_words(near.said_as or ""))
    named = {w for w in content_words(lead.group("figure")) if not number_tokens(w)}
    return near if named & said else None


def _went_on(stories: list[_Story], sentences: list[Sentence], k: int) -> _Story | None:
    """The story a speaker's short statement just before ``k`` is quoted in, when ``k`` goes on
    with it in the same turn ("Yes, printed." "I don't want to look at a tablet with flour on my
    hands."): what they say next is of the same need, not of the one said after it."""
    if k == 0 or sentences[k].speaker is None or sentences[k - 1].speaker != sentences[k].speaker:
        return None
    said = sentences[k - 1].text
    answer = [st for st in stories if st.writing == k - 1 and st.said_as is not None]
    if answer and len(answer[0].members) < MAX_QUOTES and not states_a_need(sentences[k].text):
        # "What does the depot need?" "A screen with every van on a map." "Well, the last drop
        # they made, not live tracking.": the answer, gone on with in the same turn
        return answer[0]
    if said.rstrip().endswith("?") or meaningful_word_count(clean(said)) > FRAGMENT_WORDS:
        return None  # a short answer ("Yes, printed.") goes on with its reason
    if _said_of_a_need(sentences[k].text):
        return None
    held = [st for st in stories if k - 1 in st.members and len(st.members) < MAX_QUOTES]
    return held[0] if held else None


def _attached(stories: list[_Story], vectors: np.ndarray, k: int) -> _Story | None:
    """Where a less confident requirement sentence goes: the story with a statement within
    ``ELABORATION_GAP`` sentences of it (the most similar of them), else the most similar story
    of the segment when it is similar enough (``ATTACH_SIMILARITY``)."""
    if not stories:
        return None
    near = [st for st in stories if _said_near(k, st.said)]
    scored = [(float(vectors[k] @ _centroid(vectors, st)), st) for st in near or stories]
    best_score, best = max(scored, key=lambda x: x[0])
    if near:
        return best if best_score >= NEAR_ATTACH_SIMILARITY else None
    return best if best_score >= ATTACH_SIMILARITY else None


def _said_near(k: int, said: list[int]) -> bool:
    """Whether statement ``k`` is said within ``ELABORATION_GAP`` + 1 statements of one of
    ``said``: near enough to join them at ``NEAR_ATTACH_SIMILARITY``."""
    return min(abs(k - m) for m in said) <= ELABORATION_GAP + 1


def _centroid(vectors: np.ndarray, story: _Story) -> np.ndarray:
    return _unit(sum(vectors[k] for k in story.said))


def _unit(v: np.ndarray) -> np.ndarray:
    return v / max(float(np.linalg.norm(v)), 1e-12)
