"""Offline drafting (issue 13): short literal titles, the named persona, a benefit only when
stated, criteria that add to the title, revised decisions."""

from __future__ import annotations

import pytest

from shared.agents import StoryDraft
from shared.analysis.revision import leads_with_a_figure, revise_text, revision
from shared.engine.offline.criteria import _vague, adds_to_title
from shared.engine.offline.generation import readable
from shared.engine.offline.grouping import only_said_whole, scope_said_whole
from shared.engine.offline.lexicon import is_quality_word, reads_as_capability
from shared.engine.offline.phrasing import make_title, split_vague, write_story
from shared.engine.offline.statement import (
    _reduced_passive,
    body,
    breaks_off,
    states_a_dependency,
)
from shared.engine.offline.wording import _lower_first, articles
from shared.eval.checks import _CONJUNCTION, _title_check, parts
from shared.text.textio import clean_restarts


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        ("People want to have a power button .", "Provide a power button"),
        ("I think we should aim at the young people .", "Aim at the young people"),
        (
            "- No teletext button and no teletext functions.",
            "Leave out teletext button and teletext functions",
        ),
        (
            "- Channel numbers are entered through the LCD menu (see Display).",
            "Enter channel numbers through the LCD menu",
        ),
        (
            "Every static text in the interface has to be translated.",
            "Translate every static text in the interface",
        ),
        (
            "Yeah, let's not do the waiting list after all, too complicated.",
            "Leave out the waiting list",
        ),
        ("And it has to work offline, I'm on trains all the time.", "Make it work offline"),
        (
            "The managers should be able to see survey results per business unit.",
            "See survey results per business unit",
        ),
        ("So be simple .", "Keep it simple"),
        (
            "Don't interfere with other devices 'cause all these people do that.",
            "Do not interfere with other devices",
        ),
        ("We should only make a remote control , nothing more .", "Make a remote control"),
        # "like" the verb is not a filler
        ("So I'd like to block out my own time, holidays, training.", "Block out my own time"),
        ("Users would like to export the report as a PDF.", "Export the report as a PDF"),
        # an example after the capability is a detail, not the title
        (
            "The user would like to switch the channel , for example changing to the next one .",
            "Switch the channel",
        ),
        ("and just have pushbuttons for the volume .", "Provide pushbuttons for the volume"),
        # "for" and "when" after a verb that takes them: whom it is for, the trigger
        (
            "So a parent should be able to book for their children from their own account.",
            "Book for their children from their own account",
        ),
        ("Locator: the remote beeps when someone claps twice.", "Beep when someone claps twice"),
        # "we'll have to", "we'll need to" are the modal, not "we'll have" a thing
        (
            "Yeah but then we'll have to make the remote control uh long lasting .",
            "Make the remote control long lasting",
        ),
        ("then we'll need to add a clock .", "Add a clock"),
        # a place or scope said first is where the need holds; a word of talk said first is not
        (
            "So in the day view, online bookings are marked as online.",
            "Mark online bookings as online in the day view",
        ),
        (
            "For overseas trips, we pay a daily allowance.",
            "Pay a daily allowance for overseas trips",
        ),
        ("In fact, we need a red mute button.", "Provide a red mute button"),
        # "the reports" is a thing, not the verb "report"; when they go is their criterion
        ("The reports are sent every Monday .", "Send the reports"),
        # "I'd like that" points back to what was said before it; a thing and when it comes
        (
            "And a notification when it changes, I'd like that for my own claims too.",
            "Send a notification when it changes",
        ),
        ("A reminder when the claim is approved.", "Send a reminder when the claim is approved"),
        # a clause after ", who" is no part of the title
        (
            "So every claim needs a full history, who created it, every change, who approved it.",
            "Provide a full history for every claim",
        ),
        # what is to be seen is a clause, and no talk
        (
            "So the practice manager sees how many bookings were made online versus by reception.",
            "See how many bookings were made online versus by reception",
        ),
    ],
)
def test_titles_are_short_verb_phrases_in_the_meetings_words(statement: str, title: str) -> None:
    draft = write_story([statement])
    assert draft.title == title
    assert _title_check(draft.title).passed


@pytest.mark.parametrize(
    "title",
    [
        "Provide that's one possibility",
        "Provide and should be red",
        "Provide with some fingerprint recognition",
        "Provide the rubber aspect might be important",
        "Provide everything my agents do is logged in CaseDesk",
        "Provide a general idea of how it's gonna look",
        "Leave out to stand up every time",
        "Leave out that data sitting somewhere",
        "Keep it's also not good to completely",
        'Make number one "when is my bin day',
        "Provide plus at least one key holder",
        "Form industrial Design is not sure titanium",
        "Provide don't interfere with other devices",
        # a degree, a manner or one word that is no thing is not what "Provide" acts on
        "Provide too expensive",
        "Provide completely rule out major functions",
        "Provide more of an idea when the prototype have",
        "Provide an agreed",
        "Provide a price-wise",
        # a comparison with nothing compared, a word of talk at the end
        "Provide a little bit bigger",
        "Provide the most expensive",
        "Provide a lot higher",
        "Provide banana's yellow, yeah",
        # a comparison's second half, cut from what it compares ("as long as it is flat, than
        # that will work")
        "Provide than that will work",
    ],
)
def test_a_clause_of_talk_in_a_title_is_not_a_title(title: str) -> None:
    """Seen in the test split's AMI meetings: the object of "Provide" / "Leave out" was a clause
    of talk; the judge fails such a title (and the generator never writes one)."""
    check = _title_check(title)
    assert not check.passed and "clause of talk" in check.detail


@pytest.mark.parametrize(
    "title",
    [
        "Provide no more than 8 buttons",
        "Provide a printable calendar for the resident's own address",
        "Provide a calendar that residents can print",
        "Provide the ability to be notified",
        "Leave out digit keys 0-9",
        "Show which addresses have a paid garden subscription",
        "Make it possible that residents can choose the time",
        "Light up softly when the room is dark",
        "Provide only a scroll-wheel",
        "Provide a double-curved case",
        "Provide a little icon or something",
        "Provide the most expensive option",
        "Provide one switch to switch on",  # a verb's particle is no dangling word
        "Let residents log in",
    ],
)
def test_a_verb_and_what_it_acts_on_is_a_title(title: str) -> None:
    assert _title_check(title).passed, _title_check(title).detail


@pytest.mark.parametrize(
    "title",
    [
        "Go for it when it's ready",
        "Look for something like that",
        "Provide for instance the clock",
        "Book for now and then",
        "Provide for the cost",  # "for the cost, use only plastic"
        "Claim for the approver",  # "a queue of pending claims for the approver"
        "Do when you can",
        "Provide when the prototype is ready",
        "Beep when",
    ],
)
def test_for_or_when_after_a_verb_of_talk_is_no_title(title: str) -> None:
    """ "for" and "when" read as part of a need only after a verb that takes them ("Book for
    their children", "Beep when someone claps twice"), not in a remark."""
    assert not reads_as_capability(title)


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # what "like" brings in after the quality said last is how it is meant
        (
            "So my own wish would be uh to keep the mm the whole handset light um just like the "
            "actual weight .",
            "Keep the whole handset light",
        ),
        ("It should be green like the old logo .", "Make it green"),
    ],
)
def test_what_like_brings_in_after_a_quality_is_no_part_of_the_title(
    statement: str, title: str
) -> None:
    assert write_story([statement]).title == title


def test_what_like_brings_in_after_a_thing_is_not_cut_by_the_quality_rule() -> None:
    """ "a dial like the one on a radio": "dial" is no quality, so the rule leaves it."""
    assert "radio" in write_story(["Maybe a dial like the one on a radio ."]).title


@pytest.mark.parametrize(
    ("title", "reads"),
    [
        # a hedge where the thing should be ("and possibly even uneven ," gave the first)
        ("Provide possibly even uneven", False),
        ("Provide probably the bigger one", False),
        ("Use perhaps a bit more", False),
        # a word in -ly that is part of the thing
        ("Provide weekly reports", True),
        ("Provide early access to the beta", True),
        # a word of talk or a pronoun where the thing should be (gen-offline-v116)
        ("Provide especially after the school holidays", False),
        ("Provide okay so the map will be our main", False),
        ("Provide them while the ticket is open", False),
        ("Provide only one charger", True),
        ("Make them bigger", True),
    ],
)
def test_a_hedge_after_the_verb_is_no_thing(title: str, reads: bool) -> None:
    assert reads_as_capability(title) is reads


@pytest.mark.parametrize(
    "statement",
    [
        "To the left is volume down .",  # where a button is, said of no thing
        "On the left a scroll button , and on the right a scroll button .",
    ],
)
def test_a_place_said_as_the_subject_gives_no_title(statement: str) -> None:
    assert not reads_as_capability(write_story([statement]).title)


def test_the_persona_is_not_repeated_in_what_it_wants() -> None:
    draft = write_story(["So the practice manager sees how many bookings were made online."])
    assert draft.description == (
        "As a practice manager, I want to see how many bookings were made online."
    )


def test_markers_and_fillers_never_reach_the_title() -> None:
    draft = write_story(["Um {disfmarker} so we need uh , you know , a a big power button ."])
    assert draft.title == "Provide a big power button"
    assert "{" not in draft.description and " uh " not in f" {draft.description} "


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # a word broken off as it was said goes; a letter that names something stays
        ("So we need uh a a b big power button .", "Provide a big power button"),
        ("We should offer option b to every patient .", "Provide option b to every patient"),
        # the modal of a relative clause is not the need ("functions that may be used ...")
        (
            "s uh functions that may be uh used by u the user every day .",
            "Provide functions that may be used by the user",
        ),
        # a restart says a phrase again or breaks a word off; talk closes the sentence
        (
            "And it should be consistent with consistent with older remotes .",
            "Make it consistent with older remotes",
        ),
        ("We need a doub double-curved case .", "Provide a double-curved case"),
        # a preposition the speaker broke off after ("time in {disfmarker} and effort")
        (
            "so I think we should spend lots of time in {disfmarker} and effort in the design .",
            "Spend lots of time and effort in the design",
        ),
        ("Oh we need a menu , alright .", "Provide a menu"),
        # a vague "or something (else)" closing the sentence names nothing more
        ("We need a little icon or something.", "Provide a little icon"),
        ("we don't want like B_B_C_ or C_N_N_ or something else", "Leave out BBC or CNN"),
        ("It should list the channels and stuff like that .", "List the channels"),
        # a material said alone is what to make it of (not "Provide a plastic")
        ("So probably plastic or something .", "Make it of plastic"),
        ("Yeah , titanium .", "Make it of titanium"),
        (
            "It seems to me that we should stick with the rubber case .",
            "Stick with the rubber case",
        ),
        # a letter broken off anywhere, even before an unrelated word or at the end; a unit after
        # a figure and a letter before "button" stay
        ("Yeah , I think we could do l the logo in grey .", "Do the logo in grey"),
        ("We want to change the colour of t", "Change the colour"),
        ("W LCDs are for feedback , right .", "Make LCDs for feedback"),
        ("It must still pass the 1 m drop test .", "Pass the 1 m drop test"),
        ("You press the x button to cancel .", "Press the x button to cancel"),
        # two letters that are no word, and the few three-letter starts that never are, go; an
        # article goes with a word broken off before a preposition; "vs", "UI" stay
        ("Uh we should te think about the colour .", "Think about the colour"),
        ("It must be wha baby proof .", "Make it baby proof"),
        ("The b Uh we will sell the t at twenty five Euros .", "Sell at twenty five Euros"),
        (
            "We need a cost breakdown for titanium vs rubber .",
            "Provide a cost breakdown for titanium vs rubber",
        ),
        ("We need a UI for QA and HR .", "Provide a UI for QA and HR"),
        # a phrase said twice right after the opening word ("Yeah , or the or the")
        (
            "Yeah , or the or the kinetic with normal battery .",
            "Provide the kinetic with normal battery",
        ),
    ],
)
def test_broken_off_words_and_relative_clauses(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "means"),
    [
        (
            "Volume is not often used but people uh want to have control on volume and that "
            "makes sense of course .",
            "As a user, I want control on volume.",
        ),
        ("We need a dark mode, which would be nice.", "As a user, I want a dark mode."),
        # what the product then does is not a remark on it: it stays
        (
            "It should show the total and it is good for the managers.",
            "As a manager, I want the product to show the total and it is good for the managers.",
        ),
    ],
)
def test_a_remark_on_the_need_at_the_end_is_not_part_of_it(statement: str, means: str) -> None:
    """ "... and that makes sense of course", "..., which would be nice": what the speaker thinks
    of the need closes the sentence; the description ends before it."""
    assert write_story([statement]).description == means


@pytest.mark.parametrize(
    ("statement", "title", "means"),
    [
        ("Baby-proof.", "Make it baby-proof", "the product to be baby-proof"),
        ("Small , round .", "Keep it small, round", "the product to be small, round"),
        ("Double-curved .", "Make it double-curved", "the product to be double-curved"),
        (
            "Waterproof and shockproof.",
            "Make it waterproof and shockproof",
            "the product to be waterproof and shockproof",
        ),
        # with how much (was "Provide large and pretty thin and long")
        (
            "Large and pretty thin and long .",
            "Make it large and pretty thin and long",
            "the product to be large and pretty thin and long",
        ),
        # a thing stays a thing, whatever its ending or its first word
        ("A timetable .", "Provide a timetable", "a timetable"),
        ("Short battery life.", "Provide short battery life", "short battery life"),
        ("Heavy duty hinges.", "Provide heavy duty hinges", "heavy duty hinges"),
    ],
)
def test_a_quality_said_alone_is_how_the_product_must_be(
    statement: str, title: str, means: str
) -> None:
    """ "Baby-proof." said alone is how the product must be, not a thing to provide ("Provide a
    baby-proof")."""
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, f"As a user, I want {means}.")


def test_a_contracted_would_keeps_its_subject_when_the_hedge_goes() -> None:
    # "I think that'd ..." once left "'d cut no-shows a lot, ." (the hedge took "that")
    assert body("I think that'd cut no-shows a lot, honestly.") == "it would cut no-shows a lot."
    assert body("I think that'd need a restart button.") == "it would need a restart button."
    assert body("I'd like to see my list") == "I'd like to see my list"


@pytest.mark.parametrize(
    ("statements", "persona"),
    [
        (["The managers should be able to see survey results per business unit."], "manager"),
        (["Receptionists need to see every doctor's day on one screen."], "receptionist"),
        (["So patients log in with their date of birth and a one-time code."], "patient"),
        (["Yes, and as the manager I want to know how many no-shows we get."], "manager"),
        # "staff" names staff members ("As a student" was taken from later in the sentence)
        (
            [
                "Staff can book teaching rooms up to the end of the next term, students can book"
                " desks seven days ahead."
            ],
            "staff member",
        ),
        (["Finance need to see every claim."], "finance team member"),  # not "a finance"
        (["So reception needs a way to mark a no-show."], "receptionist"),
        (["The crew should be able to mark a bin as missed."], "crew member"),
        (["We need a power button ."], "viewer"),  # none named: the default persona
        (["When a patient cancels, I want to see it on my list as cancelled."], "viewer"),
    ],
)
def test_the_role_is_the_persona_the_meeting_names(statements: list[str], persona: str) -> None:
    draft = write_story(statements, default_persona="viewer")
    assert draft.description.startswith(f"As a {persona}, I want ")


def test_a_benefit_only_when_the_meeting_states_one() -> None:
    stated = write_story(
        ["Receptionists need to see every doctor's day on one screen, so they can book quickly."]
    )
    assert stated.description.endswith(", so that they can book quickly.")
    silent = write_story(["We need a power button ."])
    assert "so that" not in silent.description
    assert silent.description == "As a user, I want a power button."


def test_criteria_gwt_for_limits_and_conditions_and_never_a_restatement() -> None:
    limit = write_story(["The remote must have no more than 8 buttons ."])
    # a limit without a condition is a checklist item in the statement's words, not a
    # "Given the remote, when it is checked" template
    assert limit.acceptance_criteria == ["The remote has no more than 8 buttons."]
    # the limit leaves the title when what is left still names the capability
    cancel = write_story(["Okay, online cancellation up to two hours before."])
    assert cancel.title == "Provide online cancellation"
    assert cancel.acceptance_criteria == ["Online cancellation up to two hours before."]
    results = write_story(["Users must get their results in under two seconds."])
    # a cut that leaves a dangling word ("Provide their results in") keeps the limit in the title
    assert results.title == "Provide their results in under two seconds"
    cost = write_story(["The production cost per remote must be at most 15 EUR."])
    assert cost.title == "Limit the production cost per remote"  # not "Keep the ... per remote"
    assert cost.acceptance_criteria == ["The production cost per remote is at most 15 EUR."]
    condition = write_story(["- Locator: the remote beeps when someone claps twice."])
    assert condition.acceptance_criteria == [
        "Given a user, when someone claps twice, then the remote beeps."
    ]
    detail = write_story(["People want to have a power button .", "It should be red ."])
    assert detail.acceptance_criteria == ["The power button is red."]
    bare = write_story(["We need a rechargeable battery with a charging dock ."])
    assert bare.acceptance_criteria == []  # nothing beyond the title was said: nothing invented
    for draft in (limit, cancel, condition, detail):
        assert all(adds_to_title(c, draft.title) for c in draft.acceptance_criteria)


def test_criteria_from_weak_quotes_are_not_drafted() -> None:
    quotes = ["People want to have a power button .", "It should be red ."]
    draft = write_story(quotes, criteria_from=[True, False])
    assert draft.acceptance_criteria == [] and draft.source_quotes == quotes


def test_a_modal_inside_a_relative_clause_is_not_rewritten_into_a_criterion() -> None:
    # "that I would like to implement is ..." once gave "The user implements is volume control."
    quotes = [
        "We need a volume control on the side .",
        "Another nice feature that I would like to implement is volume control .",
    ]
    draft = write_story(quotes)
    assert draft.source_quotes == quotes
    assert not any("implements" in c for c in draft.acceptance_criteria)


def test_a_list_after_a_colon_is_one_checklist_item() -> None:
    said = (
        "No more than 8 physical buttons: power, volume up, volume down, channel up, "
        "channel down, menu, OK and back."
    )
    draft = write_story([said])
    assert draft.title == "Provide no more than 8 physical buttons"
    assert draft.acceptance_criteria == [said]


@pytest.mark.parametrize(
    "said",
    [
        # the purpose clause held the only modal: it was drafted "i don't chases people myself"
        "If the system reminded them automatically, say seven days after the transaction if "
        "there's still no receipt, I'd be a happy man, so I don't have to chase people myself.",
        # and the result of a condition: "then so they don't send me the same thing again"
        "Oh, and if I reject I want to say why, so they don't just send me the same thing again.",
    ],
)
def test_a_purpose_is_never_drafted_as_a_criterion(said: str) -> None:
    draft = write_story(["Automatic reminder after seven days without a receipt.", said])
    assert not any(
        "chase" in c or "same thing" in c or c.lower().startswith("given")
        for c in draft.acceptance_criteria
    ), draft.acceptance_criteria


def test_restating_criteria_do_not_add() -> None:
    assert not adds_to_title("The keys are locked.", "Lock the keys")
    assert not adds_to_title("Channel numbers are entered.", "Enter channel numbers")
    assert adds_to_title("Holding OK for 3 seconds locks every key.", "Lock the keys")
    assert not adds_to_title("Managers see results.", "See results", persona="manager")


def test_a_number_changed_later_is_a_revision_written_in() -> None:
    first = "For the survey tool, each survey must allow at most ten users."
    found = revision(first, "Okay, make it twenty then.")
    assert found is not None and found.kind == "number" and not found.restated
    assert revise_text(first, found) == (
        "For the survey tool, each survey must allow at most twenty users."
    )
    restated = revision(
        "Reminders by text 24 hours before.", "Reminder texts go out 48 hours before."
    )
    assert restated is not None and restated.restated and restated.changes == (("24", "48"),)


def test_a_figure_of_one_thing_set_anew_is_a_revision_though_the_old_one_is_said_again() -> None:
    """ "two days for normal" ... "actually, make it one day for normal, two days is too slow":
    the figure of "normal" changed; the old value said again in the reason does not hide it."""
    earlier = "Four hours for high, two days for normal."
    found = revision(earlier, "Actually, make it one day for normal, two days is too slow.")
    assert found is not None and found.kind == "number" and not found.restated
    assert revise_text(earlier, found) == "Four hours for high, one day for normal."
    # a figure said with no word that sets it anew revises nothing
    assert revision(earlier, "One day for normal would be nice, two days is too slow.") is None


def test_the_one_figure_said_before_set_anew_first_thing_is_a_revision() -> None:
    """ "let's say ten working days, two weeks is too long": the one figure said before is set
    anew, though it is said again and counted in another unit."""
    earlier = "We send the welcome pack two weeks before the start date."
    found = revision(earlier, "Let's say ten working days, two weeks is too long on a Monday.")
    assert found is not None and not found.restated
    assert revise_text(earlier, found) == (
        "We send the welcome pack ten working days before the start date."
    )
    # two figures said before: which one it sets is not known, so no revision of this kind
    assert (
        revision(
            "Four hours for high and two days for urgent.", "Let's say ten working days, fine."
        )
        is None
    )


@pytest.mark.parametrize(
    ("said", "figure"),
    [
        ("Make it 48 hours, the reviewers can't do 24.", "48 hours"),
        ("Omar: make it 48 hours, the reviewers can't do 24.", "48 hours"),
        ("Actually, let's go with two days.", "two days"),
        ("OK, let's say ten working days, fine.", "ten working days"),
    ],
)
def test_a_figure_set_first_thing_is_found_after_who_said_it(said: str, figure: str) -> None:
    """One check serves revision and grouping: the figure set anew first thing, after a "Name:"
    label said mid-line in notes, and the words it is said with, label left out."""
    lead = leads_with_a_figure(said)
    assert lead is not None and lead.group("figure") == figure
    assert not lead.group("said").startswith("Omar")
    assert leads_with_a_figure("The reviewers make it in 48 hours.") is None
    assert leads_with_a_figure("Omar said make it 48 hours.") is None


def test_a_drop_names_what_it_drops() -> None:
    dropped = revision(
        "We should also have a waiting list for events.",
        "Yeah, let's not do the waiting list after all, too complicated.",
    )
    assert dropped is not None and dropped.kind == "negation"
    assert revision("We need a power button .", "The power button should be red .") is None
    assert revision("At least 3 colours for the backlight.", "We have 8 buttons.") is None


@pytest.mark.parametrize(
    ("statement", "title", "means"),
    [
        (
            "Nobody has to log in to see their bin day.",
            "Do not make anyone log in",
            "nobody to have to log in to see their bin day",
        ),
        (
            "No one should see the phone numbers of other volunteers.",
            "Do not let anyone see the phone numbers",
            "no one to see the phone numbers of other volunteers",
        ),
        (  # the title says what nobody may do, and is not cut inside "once it's approved"
            "Nobody should be able to edit a claim once it's approved without it being logged.",
            "Do not let anyone edit a claim once it's approved",
            "nobody to be able to edit a claim once it's approved without it being logged",
        ),
    ],
)
def test_a_need_said_of_nobody_keeps_its_negation(statement: str, title: str, means: str) -> None:
    draft = write_story([statement])
    assert draft.title == title
    assert draft.description == f"As a user, I want {means}."
    # the criterion keeps the statement's words: never "Nobody logs in ..." or a limit turned round
    assert draft.acceptance_criteria == [statement]


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        ("We can't have solar panels with rubber , so .", "Leave out solar panels with rubber"),
        ("It shouldn't be too heavy .", "Do not make it too heavy"),
        ("'Cause we can't lose the battery .", "Keep the battery"),
        ("Production cost per unit mustn't exceed 12.50 EUR.", "Do not exceed 12.50 EUR"),
        ("I don't need to approve them, I just need to know.", "Remove the need to approve them"),
        ("Yes, I don't want to lose a photo because the upload failed.", "Do not lose a photo"),
        # what must not be done to a thing, not the thing left out (was "Leave out my location
        # logged")
        ("I don't want my location logged either.", "Do not log my location"),
        ("We don't want the battery replaced.", "Do not replace the battery"),
        ("Then you'll have to change it in a in a week .", "Change it in a week"),
        (
            "You won't have to change the batteries anymore .",
            "Remove the need to change the batteries",
        ),
        ("They shouldn't have to log in twice .", "Remove the need to log in twice"),
        ("I have been told that we don't consider teletext .", "Leave out teletext"),
        ("We don't support teletext .", "Leave out teletext"),
    ],
)
def test_a_negated_modal_keeps_its_negation(statement: str, title: str) -> None:
    # "can't" was read as "can" and "'t": "Provide t have solar panels with rubber"
    draft = write_story([statement])
    assert draft.title == title
    assert not any(w in ("t", "Provide") for w in draft.title.split()[1:])


def test_a_complaint_or_forecast_with_cant_is_no_rule() -> None:
    # "our patients won't download an app" is why there is no app, not "Do not download an app"
    draft = write_story(["Our patients won't download an app."])
    assert not draft.title.startswith("Do not")
    assert write_story(["It won't be heavy ."]).title == "Do not make it heavy"


def test_a_chore_in_a_purpose_clause_is_not_the_need() -> None:
    said = "I have office hours, so I don't have to chase people myself."
    assert "chase" not in write_story([said]).title.lower()


def test_written_from_the_later_decision() -> None:
    draft = write_story(
        ["Okay, make it twenty then."],
        main_text="For the survey tool, each survey must allow at most twenty users.",
    )
    assert "twenty" in draft.title and "ten" not in draft.title
    assert draft.source_quotes == ["Okay, make it twenty then."]


@pytest.mark.parametrize(
    ("statement", "criteria"),
    [
        (
            "Everything has to be ready for the spring retail season, so no new chip development.",
            ["No new chip development."],
        ),
        (
            "Okay, so decision, no GPS tracking, we stick with start and end locations.",
            ["No GPS tracking."],
        ),
        (
            "Instead, people can see their own no-show record, they get a friendly message after "
            "a couple of no-shows.",
            ["They get a friendly message after a couple of no-shows."],
        ),
        # talk about the speaker, a reason, a piece of a list: no check
        ("And it has to work offline, I'm on trains all the time.", []),
        ("Yeah, let's not do the waiting list after all, too complicated.", []),
    ],
)
def test_the_clauses_a_title_leaves_out_give_checklist_items(
    statement: str, criteria: list[str]
) -> None:
    draft = write_story([statement])
    assert draft.acceptance_criteria == criteria
    assert all(adds_to_title(c, draft.title) for c in draft.acceptance_criteria)


def test_a_condition_said_first_gives_given_when_then() -> None:
    urgent = write_story(["Yes, so if the reason looks urgent they can ring the patient."])
    assert urgent.title == "Ring the patient"
    assert urgent.acceptance_criteria == [
        "Given a user, when the reason looks urgent, then they ring the patient."
    ]
    released = write_story(
        [
            "If nobody checks in within fifteen minutes of the start, the booking's released "
            "and someone else can have it."
        ]
    )
    assert released.title == "Release the booking"
    assert released.description == "As a user, I want the booking to be released."
    assert released.acceptance_criteria == [
        "Given a user, when nobody checks in within fifteen minutes of the start, then the "
        "booking is released and someone else can have it."
    ]


def test_a_purpose_clause_is_not_the_need() -> None:
    draft = write_story(
        [
            "The buttons used most are bigger than the rest, so the remote can be used in a dark "
            "room without looking."
        ]
    )
    assert draft.title == "Make the buttons used most bigger than the rest"
    assert draft.description.endswith(
        ", so that the remote can be used in a dark room without looking."
    )


def test_a_vague_criterion_becomes_a_question_for_the_review() -> None:
    draft = write_story(["We need a power button .", "It should be easy to find in the dark ."])
    assert draft.acceptance_criteria == []
    assert draft.open_questions == [
        "What measure does 'easy' mean in: The power button is easy to find in the dark?"
    ]
    measured = write_story(["We need a power button .", "It should be easy to find in 2 seconds ."])
    assert measured.acceptance_criteria and not measured.open_questions


@pytest.mark.parametrize(
    "said",
    [
        "It sends some kind of message to the TV .",  # an amount word, no quality
        "It should have a simple chip inside .",  # a quality word before a noun
        "It has to be a nice looking remote .",  # an opinion
    ],
)
def test_a_vague_word_that_asks_for_no_measure_is_no_question(said: str) -> None:
    draft = write_story(["We need a power button .", said])
    assert draft.open_questions == []
    assert draft.acceptance_criteria == []  # still no criterion: the judge reads it as vague


@pytest.mark.parametrize(
    ("said", "quality"),
    [
        ("It should react quickly .", "quickly"),
        ("The menu must stay simple to use .", "simple"),
        ("We want an easy-to-use remote .", "easy"),
    ],
)
def test_a_quality_said_of_the_need_is_asked_for_its_measure(said: str, quality: str) -> None:
    draft = write_story(["We need a power button .", said])
    assert [q.split("'")[1] for q in draft.open_questions] == [quality]


def _after_a_need(said: str) -> StoryDraft:
    """The draft of a plain need followed by ``said`` (what the criteria tests vary)."""
    return write_story(["We need a rubber case for the remote .", said])


@pytest.mark.parametrize(
    "follow_up",
    [
        # the speaker's own experience or taste
        "I can't imagine a wooden remote control .",
        "My method was to look at other remote controls on the web .",
        "Personally , I do not prefer a remote control that's fully in yellow .",
        # a remark on what was just said, a musing
        "That costs more than a car .",
        "This is an option .",
        "Clearly voice recognition is something to think about .",
        # the team's own doing ("The product remembers that our company")
        "We should remember that our company makes these .",
        # a piece of a sentence: a condition without its result, a phrase without a verb
        "If you're watching something .",
        "Which change colours .",
        "For the L_C_D_ .",
        # a description of people, a maybe
        "The early adopters of a new device are young people .",
        "Left-handed people are already used to it anyway .",
        "We might want to flag it for management .",
        # a report of what the team did
        "We've conducted a survey about whether people would like it .",
        # the situation today, an apology
        "At the moment everything is by phone , the lines open at eight and it's chaos .",
        "Sorry , back to reception for a sec .",
        # a finding: what people think or find
        "It seems that people find teletext relevant .",
    ],
)
def test_talk_after_a_need_is_quoted_but_never_a_criterion(follow_up: str) -> None:
    draft = _after_a_need(follow_up)
    assert draft.source_quotes[-1] == follow_up  # still evidence, in the meeting's words
    assert draft.acceptance_criteria == [], draft.acceptance_criteria


@pytest.mark.parametrize(
    "follow_up",
    [
        "I don't want to book that thirteen times .",  # a need said in the first person
        "I have been told that we don't consider teletext .",  # what the speaker was told
        "If it is thin it's likely to break .",  # a condition with its result, said without a comma
        "For this budget twelve Euros .",  # a phrase without a verb, but a figure
        "Nurse appointments are different again , fifteen or thirty .",  # appointments, not nurses
    ],
)
def test_a_detail_said_in_the_first_person_or_without_a_verb_can_still_be_a_criterion(
    follow_up: str,
) -> None:
    draft = _after_a_need(follow_up)
    assert len(draft.acceptance_criteria) == 1, draft.acceptance_criteria


@pytest.mark.parametrize(
    "said",
    [
        # a condition with nothing to check it by
        "Yeah , when we choose , we cannot use titanium .",
        "When someone wants , they can do that and it should be accessible .",
        # a result that is no behaviour: a remark, a piece of a list
        "If you get the number in wrong , it's a bit of a pain .",
        "If you have a hundred buttons on your remote control , all small buttons .",
        "When you're planning on making it out of rubber , but with a T_V_ remote .",
        "If we make it work , in the next step .",
        # a condition whose result is a remark
        "I think if we are targeting young people then it's probably something we have to consider .",
        # no event to check by, or a result that happened once
        "It has to cope with two thousand people at once without falling over .",
        "When we tried the old system , the receptionists went back to paper .",
        "If a claim is on the card and once as a personal claim , we had someone claim it twice .",
        "When it spins , our patients think it's broken .",
    ],
)
def test_a_given_when_then_needs_a_condition_and_a_behaviour(said: str) -> None:
    draft = _after_a_need(said)
    assert not any(c.startswith("Given") for c in draft.acceptance_criteria), (
        draft.acceptance_criteria
    )


def test_a_real_condition_and_result_still_give_given_when_then() -> None:
    said = "If you don't turn up , you lose it after fifteen minutes ."
    draft = _after_a_need(said)
    assert draft.acceptance_criteria == [
        "Given a user, when they don't turn up, then they lose it after fifteen minutes."
    ]
    told = _after_a_need("When a booking gets bumped , the person should be told straight away .")
    assert told.acceptance_criteria == [
        "Given a user, when a booking gets bumped, then the person is told straight away."
    ]


@pytest.mark.parametrize("title", ["Provide a button for the", "Send reminders to"])
def test_a_title_ending_on_a_function_word_fails_the_check(title: str) -> None:
    check = _title_check(title)
    assert not check.passed and "ends on" in check.detail


@pytest.mark.parametrize(
    "statement",
    [
        # a plain description of people ("Make my head of department Richard" was the title)
        "So my head of department is Richard , and he approves them .",
        "Half the no-shows are people who couldn't face sitting on hold .",
        "In general the early adopters of a new device are young people .",
        # a finding, how the team should be (were "Find teletext relevant", "Make it careful with
        # that word")
        "It seems that people find teletext relevant .",
        "We have to be careful with that word but anyway .",
    ],
)
def test_a_description_of_people_a_finding_or_the_teams_manner_is_no_capability(
    statement: str,
) -> None:
    assert not reads_as_capability(write_story([statement]).title)


@pytest.mark.parametrize(
    "statement",
    [
        # figures with nothing they are of (was "Make forty eight and sixty four")
        "In fact in one uh remote control that I've seen , instead of doing that you could just "
        "say these are the cha ch channel three , twenty eight , forty eight and uh sixty four are "
        "those that I want to by cycled with my next button .",
        # a speaker starting again inside the noun phrase (was "Provide only these three main
        # basic anyway volume")
        "so we'll have only these three uh main basic uh anyway volume",
        # a thing joined to a place or manner (was "Provide millions and in bulk")
        "because we want to have uh millions and in bulk ,",
        # an adjective with no thing (was "Provide a cheap", "Provide a heavy")
        "Cheap .",
        "Heavy .",
        # how often, and nothing it is of (was "Provide at least")
        "So at least nightly, ideally hourly.",
        "Twice a week.",
        # what something is like or what was done to it, and when (was "Provide available during
        # opening hours", "Provide locked after approval")
        "Available during opening hours.",
        "Locked after approval.",
        # a negation or a time where the thing should be
        "Never two patients in the same slot.",
        "Inside the two hours.",
    ],
)
def test_an_object_that_names_no_thing_gives_no_title(statement: str) -> None:
    assert not reads_as_capability(write_story([statement]).title)


@pytest.mark.parametrize(
    "title",
    [
        "Provide depends on the cost",  # a verb where the thing should be
        "Provide make the remote control long lasting",
        "Provide looking on the budget",
        "Make but the LCD display yeah",  # a clause of talk after the verb
        "Guess people book on Sunday evenings a lot",  # what a speaker thinks
        "Provide out of an appointment from the email link",  # a preposition, no thing
        "Provide at least",  # a degree, and nothing it is of
        "Provide what about the idea of automatic on off",  # a question, no thing
        "Provide how the menu works",
        "Provide according to your distance to and the angle",
    ],
)
def test_a_verb_or_a_clause_where_the_thing_should_be_does_not_read(title: str) -> None:
    assert not reads_as_capability(title)


@pytest.mark.parametrize(
    "title",
    [
        "Provide two buttons",
        "Show 20 results",
        "Provide a cheap remote",
        "Make it cheap",
        "Provide lights on the buttons",
        "Add and remove doctors",
        "Provide four buttons at least",  # a thing and its limit
        "Provide printed receipts",  # a participle before its thing
        "Provide a locked drawer",
        "Provide accessible desks for students",
        "Send reminders at least once a day",
        "Show what my team spent",  # what is asked to be shown, not talk
        "Know how many no-shows we get every month",
    ],
)
def test_a_thing_with_a_figure_or_a_quality_still_reads(title: str) -> None:
    assert reads_as_capability(title)


@pytest.mark.parametrize(
    ("title", "reads"),
    [
        ("Know how many no-shows we get every month", True),  # what is to be known
        ("See what my team spent", True),
        ("Show the manager which rooms they booked", True),
        ("Look at what functions we need", False),  # the team's own work
        ("Make what we do need to consider", False),
    ],
)
def test_what_a_verb_of_knowing_asks_for_may_be_a_clause(title: str, reads: bool) -> None:
    assert reads_as_capability(title) is reads


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # was "Make the joystick for the volume and the channels"
        (
            "And the joystick is for the volume and the channels .",
            "Use the joystick for the volume",
        ),
        ("The power button should be at the top .", "Put the power button at the top"),
        (
            "{vocalsound} and be in bright vegetable colours .",
            "Make it in bright vegetable colours",
        ),
    ],
)
def test_a_thing_said_to_be_somewhere_or_for_something_is_put_or_used(
    statement: str, title: str
) -> None:
    assert write_story([statement]).title.startswith(title)


def test_a_time_before_or_after_something_is_no_condition() -> None:
    draft = write_story(
        [
            "Patients need to book an appointment online without ringing the practice.",
            "They should be able to cancel up to two hours before the appointment.",
            "Reminder texts go out forty-eight hours before the appointment.",
        ]
    )
    # was "Given a patient, when the appointment, then they can cancel up to two hours."
    assert draft.acceptance_criteria == [
        "They can cancel up to two hours before the appointment.",
        "Reminder texts go out forty-eight hours before the appointment.",
    ]
    assert write_story(["The TV mutes when the phone rings."]).acceptance_criteria == [
        "Given a user, when the phone rings, then the TV mutes."
    ]


def test_the_people_a_need_lets_do_something_are_its_persona() -> None:
    draft = write_story(["The booking page must let patients choose a doctor."])
    assert draft.description == "As a patient, I want to choose a doctor."
    draft = write_story(["We should allow receptionists to move a booking by dragging it."])
    assert draft.description.startswith("As a receptionist, I want to move a booking")


def test_whoever_wants_something_is_a_person_who_does_it() -> None:
    """A named person's want is a user's ('Linda wants to see ...' was 'I want the product to
    see ...'); the product's own behaviour stays the product's."""
    draft = write_story(["Linda wants to see every doctor's day on one screen."])
    assert draft.description == "As a user, I want to see every doctor's day on one screen."
    draft = write_story(["Dr Patel would like to block his Friday afternoons."])
    assert draft.description.startswith("As a user, I want to block his Friday afternoons")
    draft = write_story(["The remote should show the channel."])
    assert draft.description == "As a user, I want the product to show the channel."


@pytest.mark.parametrize(
    ("phrase", "title"),
    [
        ("put literally put it on the coffee table next", "Put it on the coffee table next"),
        ("keep it option keep an option", "Keep an option"),
        ("phone your phone", "Phone"),  # no title left: the statement is evidence, no story
        ("see the same thing the resident sees", "See the same thing the resident sees"),
    ],
)
def test_a_title_the_speaker_restarted_is_the_restart(phrase: str, title: str) -> None:
    assert make_title(phrase) == title


@pytest.mark.parametrize(
    ("phrase", "title"),
    [
        # was "Leave out reminder if it was booked within the last": cut before the figure's words
        (
            "leave out reminder if it was booked within the last two days",
            "Leave out reminder if it was booked",
        ),
        (
            "send a reminder to the patient if it was booked 2 days ago",
            "Send a reminder to the patient",
        ),
    ],
)
def test_a_long_title_never_ends_on_the_words_that_lead_to_a_figure(
    phrase: str, title: str
) -> None:
    assert make_title(phrase) == title


@pytest.mark.parametrize(
    "statement",
    [
        "When you go to the sofa , take your control and point it to the T_V_ .",  # do, not happen
        "Everyone wants to get in before their summer holidays.",  # a time, not an event
    ],
)
def test_a_given_when_then_needs_an_event_and_an_outcome(statement: str) -> None:
    draft = write_story(["We need automatic power on and off .", statement])
    assert not any(c.startswith("Given") for c in draft.acceptance_criteria)


def test_an_event_said_with_its_subject_is_a_condition() -> None:
    draft = write_story(
        ["Nobody gets bumped without being told .", "If we bump someone they get a notification ."]
    )
    assert "Given a user, when we bump someone, then they get a notification." in (
        draft.acceptance_criteria
    )


def test_a_criterion_names_a_thing_or_is_not_written() -> None:
    draft = write_story(
        ["We need a speech recogniser .", "because we want to have uh millions and in bulk ,"],
    )
    assert not any("bulk" in c for c in draft.acceptance_criteria)


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # was "Make speech recogniser possible"
        ("But speech recogniser can be possible .", "Provide speech recogniser"),
        ("A dark mode should also be available .", "Provide a dark mode"),
        # an action said to be possible stays one
        ("Booking online should be possible .", "Make booking online possible"),
    ],
)
def test_a_thing_said_to_be_possible_is_a_thing_to_provide(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_the_first_of_the_announced_things_is_what_is_said() -> None:
    draft = write_story(
        [
            "And let us include two nice features into this device , first , power on and off "
            "can be made fully automatic ."
        ]
    )
    # was "Provide two nice features into this device", with the whole statement as criterion
    assert draft.title == "Make power on and off fully automatic"
    assert not any("two nice features" in c for c in draft.acceptance_criteria)


def test_and_inside_a_subject_does_not_split_the_need() -> None:
    # "power on and off" is one thing ("Power on" was the title); two clauses still split
    assert write_story(["Power on and off can be made fully automatic ."]).title == (
        "Make power on and off fully automatic"
    )
    assert write_story(["The booking is released and someone else can have it ."]).title == (
        "Release the booking"
    )


def test_a_clause_without_its_subject_is_no_criterion() -> None:
    draft = write_story(["We need big buttons on the next page .", "So , depends on the cost ."])
    assert not any("epends" in c for c in draft.acceptance_criteria)


def test_what_the_main_thing_is_is_the_criterion() -> None:
    draft = write_story(
        [
            "We need online booking .",
            "So the big thing , I'm guessing , is that patients need to be able to book an "
            "appointment online themselves , without ringing .",
        ]
    )
    # was "Is that patients can book an appointment online themselves, without ringing."
    assert draft.acceptance_criteria == [
        "Patients can book an appointment online themselves, without ringing."
    ]


@pytest.mark.parametrize(
    "said",
    [
        # were "The product meets again in thirty minutes ..." and "The product thinks about the
        # colour of our remote as such, keeps it black."
        "Um we're going to meet again in thirty minutes and uh I want you to work on these ideas .",
        "We should think about the colour of our remote as such , keep it black .",
    ],
)
def test_what_the_team_will_do_is_no_criterion_of_the_product(said: str) -> None:
    assert write_story(["We need a rubber case for the remote .", said]).acceptance_criteria == []


def test_what_we_say_the_product_does_still_is_one() -> None:
    draft = write_story(["We need a bank holiday calendar .", "We load those automatically ."])
    assert draft.acceptance_criteria == ["We load those automatically."]


def test_a_plain_description_of_the_product_still_is() -> None:
    assert (
        write_story(["The buttons are regular colour ."]).title == "Make the buttons regular colour"
    )


@pytest.mark.parametrize(
    ("statement", "means"),
    [
        ("The volume buttons should be bigger .", "the volume buttons to be bigger"),
        ("Booking windows should be seven days for desks.", "booking windows to be seven days"),
        ("LCDs should be for feedback .", "LCDs to be for feedback"),  # an acronym stays
    ],
)
def test_the_subject_of_a_description_is_not_capitalised_mid_sentence(
    statement: str, means: str
) -> None:
    """The sentence's first word starts the "I want" clause, so it loses its capital ("I want
    The volume buttons to be bigger" was written); an acronym keeps its capitals."""
    assert write_story([statement]).description.startswith(f"As a user, I want {means}")


def test_what_people_do_and_how_the_product_should_be_are_still_needs() -> None:
    assert write_story(["Users find the buttons easily in the dark ."]).title == (
        "Find the buttons easily in the dark"
    )
    assert write_story(["It has to be careful with water ."]).title == "Make it careful with water"


def test_a_title_cut_before_its_agent_drops_the_participle() -> None:
    draft = write_story(["a simple menu driven by up / down / left / right and OK ;"])
    assert draft.title == "Provide a simple menu"


def test_every_verb_of_a_criterion_agrees_with_its_subject() -> None:
    draft = write_story(
        [
            "We need a doctors page .",
            "So the practice manager can add and remove doctors , set their working hours , "
            "and set the appointment types .",
        ]
    )
    assert draft.acceptance_criteria == [
        "The practice manager adds and removes doctors, sets their working hours, and sets the "
        "appointment types."
    ]


@pytest.mark.parametrize(
    ("statement", "criterion"),
    [
        # the subject's head noun sets the verb, not the figure that qualifies it (was "is not")
        (
            "Patrons with overdue fines above $5 shall not be able to check out items.",
            "Patrons with overdue fines above $5 are not able to check out items.",
        ),
        # (was "People with exams on Monday books on Friday")
        (
            "So people with exams on Monday should book on Friday.",
            "People with exams on Monday book on Friday.",
        ),
        # one manager, of several clinics (was "The manager of the clinics approve ...")
        (
            "The manager of the clinics must approve each change.",
            "The manager of the clinics approves each change.",
        ),
    ],
)
def test_the_verb_of_a_criterion_agrees_with_the_head_of_its_subject(
    statement: str, criterion: str
) -> None:
    assert write_story([statement]).acceptance_criteria == [criterion]


def test_a_chore_the_product_would_take_away_is_never_the_need() -> None:
    # "so you wouldn't have to tap in your buttons" was read as "have to": "Tap in your buttons"
    said = (
        "The trend is the possibility of having speech recognition in your remote control , "
        "so you wouldn't have to tap in your buttons ."
    )
    title = write_story([said]).title
    assert "speech recognition" in title and "Tap" not in title


def test_as_we_can_see_is_no_need() -> None:
    assert "see" not in body("And as we can see it really depends on the age .")


def test_a_list_after_a_whole_verb_phrase_is_a_criterion_not_a_cut_off_title() -> None:
    # "Flag possible duplicates, same amount" ended on one item of the list
    draft = write_story(
        ["The system should flag possible duplicates, same amount, same date, same merchant."]
    )
    assert draft.title == "Flag possible duplicates"
    assert draft.acceptance_criteria == [
        "The system flags possible duplicates, same amount, same date, same merchant."
    ]
    assert adds_to_title(draft.acceptance_criteria[0], draft.title)


def test_a_short_verb_phrase_still_takes_the_list_it_opens() -> None:
    assert write_story(["We need to support Visa, Mastercard and Amex."]).title == (
        "Support Visa, Mastercard and Amex"
    )


def test_a_condition_with_its_own_subject_is_in_the_title_and_its_given_when_then() -> None:
    draft = write_story(
        [
            "Yes, and if they've already taken a photo, the app should suggest the match, same "
            "amount, same date."
        ]
    )
    # the clause has its own subject ("they've"): the title carries it, as any condition it can
    # (was "Suggest the match", when such a clause read as talk)
    assert draft.title == "Suggest the match when they've already taken a photo"
    assert draft.acceptance_criteria == [
        "Given a user, when they've already taken a photo, then the app suggests the match, "
        "same amount, same date."
    ]


def test_a_limit_said_before_its_verb_phrase_follows_it() -> None:
    # "I'd say" is a hedge; "under two seconds to show ..." was "Provide under two seconds ..."
    draft = write_story(["I'd say under two seconds to show the free slots, even on a slow phone."])
    assert draft.title == "Show the free slots"
    assert draft.acceptance_criteria == [
        "It takes under two seconds to show the free slots, even on a slow phone."
    ]
    # the time limit goes to the criterion, the title names the capability
    load = write_story(["Within five seconds to load the page."])
    assert load.title == "Load the page"
    assert load.acceptance_criteria == ["Within five seconds to load the page."]


def test_a_rule_said_of_nobody_without_a_modal_is_a_prohibition() -> None:
    draft = write_story(
        [
            "Nobody bumps anybody, except facilities admins in an emergency, like a flood or an "
            "exam clash, and if we bump someone they get a notification and an alternative room, "
            "same as with timetable changes."
        ]
    )
    assert draft.title == "Do not let anyone bump anybody"
    assert draft.description == "As a user, I want nobody to bump anybody."
    assert draft.acceptance_criteria == [
        "Given a user, when we bump someone, then they get a notification and an alternative room."
    ]
    # "no one" is nobody here, not a thing left out ("Leave out one sees ...")
    assert write_story(["No one sees the phone numbers of patients."]).title == (
        "Do not let anyone see the phone numbers of patients"
    )


def test_a_behaviour_answers_a_condition_only_when_its_verb_agrees() -> None:
    # "flip it open": "open" is no behaviour of "it"
    draft = write_story(["We should keep that side flat .", "If we flip it open only as much ."])
    assert not any(c.startswith("Given") for c in draft.acceptance_criteria)


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        (
            "and and I mean the user just wants to get um get a result um quickly , not to spend "
            "time in like um giving several orders um I dunno .",
            "Get a result quickly",
        ),
        ("People want to have a power button quickly .", "Provide a power button quickly"),
    ],
)
def test_getting_something_in_a_manner_keeps_its_verb(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_what_something_designed_must_do_is_the_need() -> None:
    draft = write_story(
        [
            "so I think we should design something where some of the buttons which are those "
            "that are used should be easier to see and use than others that only a couple of "
            "people are using ."
        ]
    )
    assert draft.title == "Make some of the buttons easier to see and use"
    assert "some of the buttons which are those that are used to be easier" in draft.description


def test_a_thing_it_must_be_with_is_a_thing_it_has() -> None:
    draft = write_story(
        ["So it gives instructions but uh it has to be with an back light somehow ."]
    )
    assert draft.title == "Provide a back light"
    assert write_story(["It should have an LCD screen ."]).title == "Provide an LCD screen"


def test_a_criterion_never_repeats_its_subject_as_its_object() -> None:
    draft = write_story(
        [
            "And let us include two nice features into this device , power on and off can be "
            "made fully automatic ."
        ]
    )
    assert draft.acceptance_criteria
    assert all(c.lower().count("two nice features") == 1 for c in draft.acceptance_criteria)


def test_how_often_is_something_a_criterion_adds() -> None:
    title = "Make the card transactions come into the app automatically"
    assert adds_to_title(
        "The card transactions come into the app automatically, daily ideally, not monthly.", title
    )
    assert not adds_to_title("The card transactions come into the app automatically.", title)


@pytest.mark.parametrize(
    ("statement", "persona"),
    [
        ("The approver must see every claim that is waiting in one list.", "approver"),
        ("The coordinator should sign volunteers up for a shift.", "coordinator"),
    ],
)
def test_a_role_that_must_act_is_the_persona_not_a_part_of_the_product(
    statement: str, persona: str
) -> None:
    draft = write_story([statement])
    assert draft.description.startswith(
        f"As an {persona}," if persona[0] in "aeiou" else f"As a {persona},"
    )
    assert not draft.title.startswith("Make the")


@pytest.mark.parametrize(
    ("quotes", "title", "criterion"),
    [
        # how often, said after a comma, is a detail of the statement's clause
        (
            ["Yeah, it'll be backed up automatically, daily."],
            "Back up automatically",
            "The product is backed up automatically, daily.",
        ),
        # a thing with a condition and no behaviour: the statement in full is the item (", say"
        # is a hedge)
        (
            ["Yes, a reminder to Bev and me before someone's DBS expires, a month before, say."],
            "Send a reminder to Bev and me",
            "A reminder to Bev and me before someone's DBS expires, a month before.",
        ),
        # when, said at the end of the title, goes to the criterion
        (
            ["A reminder to the approver after three days."],
            "Send a reminder to the approver",
            "A reminder to the approver after three days.",
        ),
        # how often something is provided is its criterion, after "is available"
        (["We need the report weekly."], "Provide the report", "The report is available weekly."),
        # what a thing must have is said of that thing, not "... is available"
        (
            ["So every room needs proper accessibility information, step-free access."],
            "Provide proper accessibility information, step-free access",
            "Every room has proper accessibility information, step-free access.",
        ),
        # people wanted to act act ("The managers to approve every claim ... is available")
        (
            ["We want the managers to approve every claim over fifty pounds."],
            "Approve every claim",
            "The managers approve every claim over fifty pounds.",
        ),
        # a relative clause keeps its object: not "who created, it, every change"
        (
            [
                "So every claim needs a full history, who created it, every change, who approved"
                " it and when, any comments."
            ],
            "Provide a full history for every claim",
            "Every claim has a full history, who created it, every change, who approved it and"
            " when, any comments.",
        ),
        (
            ["Staff bookings need the name of the booker."],
            "Provide the name of the booker",
            "Staff bookings have the name of the booker.",
        ),
        # said of no thing ("anything over ..."): the statement's own words, no "has"
        (
            ["Anything over five hundred pounds also needs the head of department."],
            "Provide the head of department",
            "Anything over five hundred pounds also needs the head of department.",
        ),
        # "how many" asks a figure; it is no vague amount
        (
            ["As the manager I want to know how many no-shows we get every month."],
            "Know how many no-shows we get",
            "The manager knows how many no-shows we get every month.",
        ),
    ],
)
def test_when_and_how_often_a_statement_says_is_its_criterion(
    quotes: list[str], title: str, criterion: str
) -> None:
    draft = write_story(quotes)
    assert draft.title == title
    assert criterion in draft.acceptance_criteria
    assert all(adds_to_title(c, draft.title) for c in draft.acceptance_criteria)


def test_a_short_noun_phrase_keeps_the_phrases_that_go_on_from_it() -> None:
    draft = write_story(["So automatic reminders, to each person, before their shift."])
    assert draft.title == "Send automatic reminders to each person"


@pytest.mark.parametrize(
    "title",
    [
        "Provide two days before",
        "Provide ten pounds a month maximum",
        "Provide forty-five pounds a year",
        "Provide between five and nine pm",
        "Provide £15 each",
    ],
)
def test_an_amount_alone_names_no_capability(title: str) -> None:
    assert not reads_as_capability(title)


@pytest.mark.parametrize(
    "title", ["Provide two curves", "Provide twenty buttons", "Sell at twenty five Euros"]
)
def test_a_counted_thing_or_a_price_verb_still_reads(title: str) -> None:
    assert reads_as_capability(title)


@pytest.mark.parametrize(
    "title",
    [
        "Colour and shape",
        "Press two and five and Yeah",
        "Make it does feel all cold and slimy",
        "Depend on the cost",
        "Tend to go to one side",
    ],
)
def test_talk_and_bare_nouns_name_no_capability(title: str) -> None:
    assert not reads_as_capability(title)


@pytest.mark.parametrize(
    "title", ["Book and cancel appointments", "Make it work offline", "Keep it simple"]
)
def test_coordinated_verbs_and_it_as_object_still_read(title: str) -> None:
    assert reads_as_capability(title)


@pytest.mark.parametrize(
    ("statement", "title", "criterion"),
    [
        (
            "So the receptionist can book, move and cancel appointments for any patient.",
            "Book appointments for any patient",
            "The receptionist can book, move and cancel appointments for any patient.",
        ),
        (
            "So call-centre agents can look up any address and see its collection days and its "
            "history.",
            "Look up any address",
            "Call-centre agents look up any address and see its collection days and its history.",
        ),
    ],
)
def test_one_action_in_the_title_and_the_others_in_its_criterion(
    statement: str, title: str, criterion: str
) -> None:
    draft = write_story([statement])
    assert draft.title == title
    assert draft.description.endswith(f"I want to {title[0].lower()}{title[1:]}.")
    assert draft.acceptance_criteria == [criterion]
    _, means, _ = parts(draft.description)
    assert means is not None and not _CONJUNCTION.search(means)


def test_what_then_happens_is_a_given_when_then() -> None:
    draft = write_story(
        [
            "The employee should be able to mark a transaction as personal, and then it comes off "
            "their next pay."
        ]
    )
    assert draft.title == "Mark a transaction as personal"
    assert draft.acceptance_criteria == [
        "Given an employee, when they mark a transaction as personal, then it comes off their "
        "next pay."
    ]


@pytest.mark.parametrize(
    ("scene", "criterion"),
    [
        (
            "Like, you want to to open the fridge or you want to take out the milk or something, "
            "and then the light comes on.",
            "Given a user, when they open the fridge or take out the milk, then the light comes "
            "on.",
        ),
        (
            "You lift the lid and then the screen will wake up.",
            "Given a user, when they lift the lid, then the screen will wake up.",
        ),
    ],
)
def test_a_scene_of_what_someone_does_and_then_what_the_product_does_is_a_given_when_then(
    scene: str, criterion: str
) -> None:
    """Said after the need, without a modal: what someone does, and then what the product does,
    is the condition and its result (written for this test)."""
    draft = write_story(["The fridge needs an automatic light.", scene])
    assert criterion in draft.acceptance_criteria, draft.acceptance_criteria


@pytest.mark.parametrize(
    "scene",
    [
        # a person acts again: no behaviour of the product to check
        "You set the timer and then you walk away to the other room.",
        # a chain of results: no one result to check
        "You press it twice and then it beeps and then it stops.",
        # no verb said of the thing that then acts
        "They keep their slash this thing and then the dash dash and then you put it.",
    ],
)
def test_a_scene_without_one_result_of_the_product_is_no_given_when_then(scene: str) -> None:
    draft = write_story(["The fridge needs an automatic light.", scene])
    assert not any(c.startswith("Given") for c in draft.acceptance_criteria), (
        draft.acceptance_criteria
    )


def test_praise_after_a_comma_is_no_part_of_the_thing() -> None:
    assert write_story(["Saved locations, nice."]).title == "Provide saved locations"


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # "a" as said before a vowel (was "Use a advanced chip")
        ("We could use a advanced chip.", "Use an advanced chip", "to use an advanced chip"),
        ("We need a infrared sensor.", "Provide an infrared sensor", "an infrared sensor"),
        ("We need an back light.", "Provide a back light", "a back light"),
        # words said with "a" although they open with a vowel
        ("We need a one-time code.", "Provide a one-time code", "a one-time code"),
        ("We need a user manual.", "Provide a user manual", "a user manual"),
    ],
)
def test_the_article_is_the_one_the_next_word_takes(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert draft.title == title
    assert draft.description == f"As a user, I want {description}."


def test_a_vague_word_before_its_noun_leaves_the_check_the_rest_says() -> None:
    # the planning notes' "a simple menu driven by up / down / left / right and OK" had no
    # criterion: "simple" made the whole line untestable
    draft = write_story(["a simple menu driven by up / down / left / right and OK;"])
    assert draft.title == "Provide a simple menu"
    assert draft.acceptance_criteria == ["A menu driven by up / down / left / right and OK."]
    # nothing left but the thing, or an opinion: no criterion; a quality said of it: a question
    assert split_vague(["A simple chip.", "A good idea to have a big screen."]) == ([], [])
    testable, questions = split_vague(["The remote is easy to use."])
    assert testable == [] and questions


def test_some_before_a_plural_is_an_article_not_a_vague_amount() -> None:
    # ES2006b: "so it must follow some conventions like whereabouts you find the buttons" gave
    # no criterion ("some" made it untestable)
    draft = write_story(
        [
            "And then it must be easy to use , so it must follow some conventions um like "
            "whereabouts you find the buttons ."
        ]
    )
    assert draft.title == "Make it easy to use"
    assert draft.acceptance_criteria == [
        "The product follows conventions whereabouts you find the buttons."
    ]
    # an amount or a kind stays vague: no check
    assert split_vague(["It shows some kind of message.", "It lists some of the buttons."]) == (
        [],
        [],
    )


def test_a_capital_a_inside_a_text_is_a_letter_not_an_article() -> None:
    assert articles("A apple, then plan A is a end") == "An apple, then plan A is an end"
    # a restart is no article to correct (was "Think of an all these young people")
    assert articles("Think of a all these young people") == "Think of a all these young people"


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # the need is what the reason is given for (was "Provide loads of calls")
        (
            "And book on behalf of someone who rings, obviously, because we'll still get loads "
            "of calls.",
            "Book on behalf of someone who rings",
        ),
        # (was "Remove the need to burst in one time")
        (
            "Hard plastic uh because uh it won't have to burst uh in one time .",
            "Provide hard plastic",
        ),
        ("We need a lock button because kids press everything.", "Provide a lock button"),
        # an instruction with a reason (was "Move it again", the reason's own modal)
        (
            "Yeah, and honestly just make that date a setting, because they'll move it again.",
            "Make that date a setting",
        ),
        # what is said before the reason only describes how things are: the reason may name it
        (
            "Two days is maybe too short, because people with exams on Monday want to book on "
            "Friday.",
            "Book on Friday",
        ),
    ],
)
def test_a_reason_given_for_a_need_does_not_name_it(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_a_reason_is_not_part_of_the_thing_a_criterion_names() -> None:
    # was "A lock button, because kids press everything is available."
    draft = write_story(["We need a lock button because kids press everything."])
    assert not any("is available" in c for c in draft.acceptance_criteria)


@pytest.mark.parametrize(
    ("statement", "title", "means"),
    [
        # a plural subject whose first word can be a verb (was "Staff bookings show the name" /
        # "I want to staff bookings show the name")
        (
            "Staff bookings show the name, student bookings don't.",
            "Make staff bookings show the name",
            "staff bookings to show the name",
        ),
        # imperatives stay imperatives, with or without a verb that makes something do it
        ("Let users choose the doctor.", "Let users choose the doctor", "to choose the doctor"),
        ("Keep bookings open for a week.", "Keep bookings open for a week", None),
        ("Print receipts at the desk.", "Print receipts at the desk", None),
    ],
)
def test_a_plural_subject_and_its_verb_is_not_an_imperative(
    statement: str, title: str, means: str | None
) -> None:
    draft = write_story([statement])
    assert draft.title == title
    wanted = means or f"to {title[0].lower()}{title[1:]}"
    assert draft.description == f"As a user, I want {wanted}."


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # how the wanted thing is: "Make <thing> <how>" (not "Provide it to be ...")
        (
            "Um we want it to be something original , something trendy and also something user "
            "friendly , so it has to be quite intuitive .",
            "Make it original, trendy and user friendly",
            "As a user, I want the product to be original, trendy and user friendly.",
        ),
        (
            "I'd like the buttons to be bigger .",
            "Make the buttons bigger",
            "As a user, I want the buttons to be bigger.",
        ),
        # what the product or a named person is wanted to do, the person its persona
        (
            "We need the system to send a reminder.",
            "Send a reminder",
            "As a user, I want the product to send a reminder.",
        ),
        (
            "We want the managers to approve every claim over fifty pounds.",
            "Approve every claim",  # the figure is a criterion's
            "As a manager, I want to approve every claim over fifty pounds.",
        ),
        # what the team plans or aims for is the need ("Provide the remote controls" was
        # "Control for twenty five Euros")
        (
            "Um we're planning to sell the remote controls for twenty five Euros each .",
            "Sell the remote controls for twenty five Euros",
            "As a user, I want to sell the remote controls for twenty five Euros.",
        ),
        (
            "We are aiming at the young people .",
            "Aim at the young people",
            "As a user, I want to aim at the young people.",
        ),
        # what is wanted done to a thing ("Provide it hosted in the UK")
        (
            "For health data we'd want it hosted in the UK.",
            "Host health data in the UK",
            "As a user, I want health data hosted in the UK.",
        ),
        (
            "We want the reports sent every Monday.",
            "Send the reports",
            "As a user, I want the reports sent every Monday.",
        ),
        # a design decision said as it stands ("Provide we're going for an advanced chip")
        (
            "The chip , we're going for an advanced chip on print .",
            "Provide an advanced chip on print",
            "As a user, I want an advanced chip on print.",
        ),
        (
            "We're having push-buttons on the outside .",
            "Provide push-buttons on the outside",
            "As a user, I want push-buttons on the outside.",
        ),
        # a verb and the question it settles: the modal is the question's ("Book each doctor
        # decides what share of their slots online")
        (
            "So each doctor decides what share of their slots can be booked online.",
            "Decide what share of their slots can be booked online",
            "As a doctor, I want to decide what share of my slots can be booked online.",
        ),
        (
            "The manager chooses which claims need a receipt.",
            "Choose which claims need a receipt",
            "As a manager, I want to choose which claims need a receipt.",
        ),
        # ... but talk about a question settles nothing: the need is seeing it
        (
            "We need to see what can be booked.",
            "See what can be booked",
            "As a user, I want to see what can be booked.",
        ),
        # "I'd like" with "each ..." after it is the verb, not a filler ("Provide i'd each ...")
        (
            "I'd like each doctor to set their own hours.",
            "Set their own hours",
            "As a doctor, I want to set my own hours.",
        ),
        # a note of what is done to a thing ("Keep for one year", "Provide receipts stored ...")
        (
            "Okay, personal booking history kept for one year, anonymised after that.",
            "Keep personal booking history for one year",
            "As a user, I want personal booking history to be kept for one year.",
        ),
        (
            "Receipts stored for six years.",
            "Store receipts for six years",
            "As a user, I want receipts to be stored for six years.",
        ),
        # a verb, its pronoun and its particle ("Pull, every night")
        (
            "The booking system should pull that in, probably every night.",
            "Pull that in every night",
            "As a user, I want the booking system to pull that in, every night.",
        ),
        # ... but a thing and what it is like is no such note
        (
            "A simple menu driven by the arrow keys.",
            "Provide a simple menu driven by the arrow keys",
            "As a user, I want a simple menu driven by the arrow keys.",
        ),
        # a thing and how it must be ("Provide it quick", "Provide the buttons bigger")
        (
            "Yeah, fine, I just want it quick, I'm not attached to the GPS thing.",
            "Make it quick",
            "As a user, I want the product to be quick.",
        ),
        (
            "We want the buttons bigger.",
            "Make the buttons bigger",
            "As a user, I want the buttons to be bigger.",
        ),
        # what it is for said first, without a comma, before who does it ("Provide for overseas
        # trips we pay a daily allowance instead")
        (
            "So for overseas trips we pay a daily allowance instead of people claiming every"
            " single meal.",
            "Pay a daily allowance for overseas trips",
            "As a user, I want to pay a daily allowance for overseas trips instead of people"
            " claiming every single meal.",
        ),
        (
            "In exam season we block the rooms.",
            "Block the rooms in exam season",
            "As a user, I want to block the rooms in exam season.",
        ),
        # a name that opens with a word that is a verb too ("I want to direct channel entry")
        (
            "direct channel entry: scroll the digits with up / down, OK jumps to the channel;",
            "Provide direct channel entry",
            "As a user, I want direct channel entry.",
        ),
        (
            "Separate accounts for each parent.",
            "Provide separate accounts for each parent",
            "As a parent, I want separate accounts for each parent.",
        ),
        # ... but with its object after it, it is the verb
        (
            "Separate the accounts for each parent.",
            "Separate the accounts for each parent",
            "As a parent, I want to separate the accounts for each parent.",
        ),
        # a need of one word names what it is said of ("Provide receipts"), unless that is the
        # product, a person or a pronoun
        (
            "No receipts for meals, hotels still need receipts.",
            "Provide receipts for hotels",
            "As a user, I want receipts for hotels.",
        ),
        (
            "Every claim needs a receipt.",
            "Provide a receipt for every claim",
            "As a user, I want a receipt for every claim.",
        ),
        ("The remote needs buttons.", "Provide buttons", "As a user, I want buttons."),
        ("Patients need reminders.", "Send reminders", "As a patient, I want reminders."),
        (
            "Every patient needs a reminder.",
            "Send a reminder",
            "As a patient, I want a reminder.",
        ),
        # a second action after "and" goes, with what follows it ("..., and see if it works")
        (
            "Yeah but then we'll have to just put five covers on it, and see if it works.",
            "Put five covers",
            "As a user, I want to put five covers.",
        ),
        (
            "You use this jog wheel and select which ever option on the LCD.",
            "Use this jog wheel",
            "As a user, I want to use this jog wheel.",
        ),
        # people named with who they are keep their need ("Provide students with a support
        # plan ... should be able to book those first"), and "before" stays "before"
        (
            "Students with a support plan from the disability service should be able to book"
            " those first, before they open to everyone.",
            "Book those first before they open to everyone",
            "As a student, I want to book those first.",
        ),
        (
            "Patients with a carer should be able to book double slots.",
            "Book double slots",
            "As a patient, I want to book double slots.",
        ),
        # what a thing must include, and the thing ("Provide the cost centre")
        (
            "So the export has to include everything approved by the eighteenth.",
            "Include everything approved by the eighteenth in the export",
            "As a user, I want the export to include everything approved by the eighteenth.",
        ),
        (
            "Each reminder should include the doctor's name.",
            "Include the doctor's name in each reminder",
            "As a user, I want each reminder to include the doctor's name.",
        ),
        # ... and what a thing must show or say (was "Provide ever say date and time")
        (
            "The messages should only ever say date and time, never the reason.",
            "Say date and time in the messages, never the reason",
            "As a user, I want the messages to say date and time, never the reason.",
        ),
        (
            "The screen should display the channel number.",
            "Display the channel number on the screen",
            "As a user, I want the screen to display the channel number.",
        ),
        # ... but the product including or showing something is a thing it has or does
        ("The remote should include a torch.", "Provide a torch", "As a user, I want a torch."),
        (
            "It should show the battery level.",
            "Show the battery level",
            "As a user, I want the product to show the battery level.",
        ),
        # a thing wanted whose words are also verbs is no list of actions ("I want start
        # locations and the calculated route")
        (
            "So we stick with start and end locations and the calculated route.",
            "Provide start and end locations and the calculated route",
            "As a user, I want start and end locations and the calculated route.",
        ),
        # a thing to have, and what it is for, stays a thing to provide
        (
            "We need a button to switch it off.",
            "Provide a button to switch it off",
            "As a user, I want a button to switch it off.",
        ),
    ],
)
def test_what_a_thing_or_a_person_is_wanted_to_be_or_do_is_the_need(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize(
    "said",
    [
        "At the moment we use spreadsheets.",
        "For now we keep the old system.",
        "For some reason they click the off button when they want to use the menu.",
    ],
)
def test_the_situation_today_said_as_a_place_first_names_no_capability(said: str) -> None:
    """ "at the moment", "for now" are no place a need holds in: the statement is not read as
    "Use spreadsheets" (a draft that names no capability starts no story)."""
    assert not readable(write_story([said]))


@pytest.mark.parametrize(
    ("said", "note"),
    [
        ("Receipts kept for six years", True),
        ("Personal booking history kept, anonymised after that", True),
        ("Photos deleted", True),
        ("Staff booked rooms all afternoon", False),  # an object follows: it happened
        ("We kept the old system", False),  # said by people
        ("A menu driven by the arrow keys", False),  # a thing and what it is like
        ("Everything approved by the manager", False),  # an agent: a description
        ("The booked rooms", False),  # a participle after a determiner modifies a noun
    ],
)
def test_a_reduced_passive_is_a_note_of_what_is_done_to_a_thing(said: str, note: bool) -> None:
    words = said.split()
    found = [k for k in range(1, len(words)) if _reduced_passive(words, k)]
    assert bool(found) is note


@pytest.mark.parametrize(
    "statements, criterion",
    [
        (
            ["The volume must never go above level forty."],
            "The volume never goes above level forty.",
        ),
        (
            [
                "We should only make a remote control , nothing more .",
                "We should never complicate things too much .",
            ],
            "The product never complicates things too much.",
        ),
        (["The remote should not beep at night."], "The remote does not beep at night."),
    ],
)
def test_never_takes_no_do_in_a_criterion(statements: list[str], criterion: str) -> None:
    assert criterion in write_story(statements).acceptance_criteria


@pytest.mark.parametrize(
    ("phrase", "title"),
    [
        # a condition after a comma is no part of the title (the criteria carry conditions)
        ("make it quick, if it takes a minute to open I won't bother", "Make it quick"),
        ("keep the old booking, unless the patient cancels it", "Keep the old booking"),
        ("make it a setting, in case it changes again", "Make it a setting"),
        # when it happens needs no comma
        ("pull that in, every night", "Pull that in every night"),
        # ... and a condition said without a comma stays ("no reminder if it was booked")
        ("leave out reminder if it was booked", "Leave out reminder if it was booked"),
    ],
)
def test_a_title_stops_at_a_condition_after_a_comma(phrase: str, title: str) -> None:
    assert make_title(phrase) == title


def test_what_the_speaker_will_do_otherwise_is_no_criterion() -> None:
    draft = write_story(
        [
            "And it has to be quick, if it takes a minute to open I just won't bother, I'll go"
            " back to stuffing receipts in my pocket."
        ]
    )
    assert draft.title == "Make it quick"
    assert not any("stuffing" in c for c in draft.acceptance_criteria)


def test_a_benefit_keeps_the_pronoun_i() -> None:
    draft = write_story(["We need occupancy by room, so I can show the committee real numbers."])
    assert draft.description.endswith(", so that I can show the committee real numbers.")


def test_a_purpose_said_of_a_thing_is_the_benefit_not_part_of_the_need() -> None:
    # was "Provide a soft backlight so the remote", the purpose twice in the description and
    # in the criterion: a short need took the purpose clause after it as more of itself
    draft = write_story(
        ["The keys need a soft backlight so the remote can be used in a dark room."]
    )
    assert draft.title == "Provide a soft backlight"
    assert draft.description == (
        "As a user, I want a soft backlight, so that the remote can be used in a dark room."
    )
    assert draft.acceptance_criteria == ["The keys have a soft backlight."]
    # "so their kids cannot ...": a purpose too (was no benefit at all)
    lock = write_story(["Parents should be able to lock the remote, so their kids cannot switch."])
    assert lock.description.endswith(", so that their kids cannot switch.")


@pytest.mark.parametrize(
    "remark",
    [
        "It's very expensive .",
        "Yeah , it does feel all cold and slimy .",
        "It's the same solution .",
        "Something a bit squishy .",
    ],
)
def test_a_remark_on_it_is_no_criterion(remark: str) -> None:
    # was kept as "It's very expensive." and the like: nothing a tester could check
    draft = write_story(["We need a scroll wheel on the side .", remark])
    assert draft.acceptance_criteria == []


@pytest.mark.parametrize(
    ("detail", "criterion"),
    [
        ("It takes under two seconds , even on a slow phone .", "two seconds"),
        ("There's no menu .", "There's no menu."),
        ("It opens on the side .", "It opens on the side."),
    ],
)
def test_what_it_does_a_figure_or_a_decision_stays_a_criterion(detail: str, criterion: str) -> None:
    draft = write_story(["We need a scroll wheel on the side .", detail])
    assert any(criterion in c for c in draft.acceptance_criteria)


def test_a_benefit_is_the_one_the_written_statement_states() -> None:
    # the reminders' purpose is no benefit of marking a transaction as personal
    draft = write_story(
        [
            "The employee should be able to mark a transaction as personal.",
            "If the system reminded them automatically after seven days, I'd be a happy man, so "
            "I don't have to chase people myself.",
        ]
    )
    assert "so that" not in draft.description
    assert write_story(
        ["We need occupancy by room, so I can show the committee real numbers.", "Yes."]
    ).description.endswith(", so that I can show the committee real numbers.")


def test_a_noun_phrase_said_again_from_its_determiner_is_the_repair() -> None:
    draft = write_story(
        [
            "And then these messages {disfmarker} these key buttons can be transferred into some"
            " kind of message ."
        ]
    )
    assert draft.title == "Transfer these key buttons into some message"


def test_a_remark_after_and_well_is_no_part_of_the_description() -> None:
    draft = write_story(
        [
            "functions that may be used by the user in the current available remote controls and"
            " uh well the tables look very nice to read ."
        ]
    )
    assert draft.description == (
        "As a user, I want functions that may be used by the user in the current available"
        " remote controls."
    )
    # "well" as a word of the thing stays
    assert write_story(["We need a manual that is clear and well written."]).description == (
        "As a user, I want a manual that is clear and well written."
    )


def test_what_we_will_have_keeps_its_article() -> None:
    draft = write_story(["W we'll have a screen with a back light which can change colours ,"])
    assert (draft.title, draft.description) == (
        "Provide a screen with a back light",
        "As a user, I want a screen with a back light which can change colours.",
    )


@pytest.mark.parametrize(
    ("criterion", "vague"),
    [
        ("On the LCD.", True),  # a piece of a sentence: a preposition and no verb
        ("Instead of speaker.", True),
        ("Something to phones.", True),
        ("Since we are focusing only on TV remote controls.", True),  # a reason alone
        ("Imagine that popping up on someone's phone.", True),  # talk
        ("Think of all these young people who would love it.", True),
        ("Does it beep.", True),  # a question without its mark
        ("Can we have it on the side.", True),
        ("Because it is cheaper, we use plastic.", False),  # a reason and what it is for
        ("Something where you clap and then it beeps.", False),
        ("For this budget twelve Euros.", False),  # a figure to check
        ("Only for the television.", False),
        ("On the cover we have the bare essentials.", False),  # a verb
    ],
)
def test_a_piece_of_a_sentence_is_no_criterion(criterion: str, vague: bool) -> None:
    assert _vague(criterion) is vague


@pytest.mark.parametrize(
    ("statement", "criterion"),
    [
        (
            "So we will have a p portable device which will send message to the the main device"
            " like T_V_ .",
            "The portable device sends message to the main device TV.",
        ),
        (
            "W we'll have a screen with a back light which can change colours ,",
            "The screen with a back light can change colours.",
        ),
    ],
)
def test_what_a_thing_does_said_as_a_relative_clause_is_its_criterion(
    statement: str, criterion: str
) -> None:
    # was "A portable device which will send message to the main device TV is available."
    assert write_story([statement]).acceptance_criteria == [criterion]


def test_a_second_verb_in_the_present_takes_the_form_of_the_first() -> None:
    draft = write_story(
        ["So the system warns the doctor and flags the affected appointments for reception."]
    )
    # was "Warn the doctor and flags the affected appointments for reception"
    assert draft.title == "Warn the doctor"
    assert "warn the doctor and flag the affected" in draft.description
    draft = write_story(["The system should warn the doctor and flag the affected appointments."])
    # was "The system warns the doctor and flag the affected appointments."
    assert draft.acceptance_criteria == [
        "The system warns the doctor and flags the affected appointments."
    ]


def test_after_can_every_verb_of_a_list_stays_as_it_is() -> None:
    draft = write_story(
        [
            "The practice manager should be able to add and remove doctors, set their working"
            " hours, and set the appointment types."
        ]
    )
    # was "The practice manager can add and remove doctors, sets their working hours, ..."
    assert draft.acceptance_criteria == [
        "The practice manager can add and remove doctors, set their working hours, and set the"
        " appointment types."
    ]


def test_a_thing_and_who_acts_on_it_is_a_thing_to_provide() -> None:
    draft = write_story(["Yeah, a setting Linda can change."])
    # was "Make a setting Linda change", "As a user, I want the product to change."
    assert (draft.title, draft.description) == (
        "Provide a setting Linda can change",
        "As a user, I want a setting Linda can change.",
    )
    # ... but a person who may act is the persona
    assert write_story(["The manager can approve."]).description == (
        "As a manager, I want to approve."
    )


def test_a_thing_and_who_acts_on_it_is_a_criterion_as_said() -> None:
    draft = write_story(
        ["Patients can book up to six weeks ahead.", "Yeah, a setting Linda can change."]
    )
    # was "A setting Linda changes."
    assert draft.acceptance_criteria == ["A setting Linda can change."]


def test_a_thing_and_the_details_listed_after_it_leave_the_details_to_the_criteria() -> None:
    draft = write_story(
        [
            "So every claim needs a full history, who created it, every change, who approved it"
            " and when, any comments."
        ]
    )
    # was "As a user, I want a full history, who created."
    assert (draft.title, draft.description) == (
        "Provide a full history for every claim",
        "As a user, I want a full history for every claim.",
    )
    assert "who created it, every change" in draft.acceptance_criteria[0]


@pytest.mark.parametrize(
    "statement",
    [
        "The comment has to stay on the claim, by the way, for audit.",
        "The comment stays on the claim.",
    ],
)
def test_a_thing_that_must_stay_somewhere_is_kept_there(statement: str) -> None:
    draft = write_story([statement])
    # was "Stay on the claim" / "I want the product to stay on the claim", "Keep the comment"
    assert (draft.title, draft.description) == (
        "Keep the comment on the claim",
        "As a user, I want the comment to stay on the claim.",
    )


def test_a_purpose_that_opens_with_a_conjunction_is_no_benefit() -> None:
    draft = write_story(
        ["We can have some speech recognition so that and we will put the simple recogniser ."]
    )
    # was "..., so that and we will put the simple recogniser."
    assert "so that" not in draft.description


def test_for_a_role_in_a_list_of_rules_names_no_persona() -> None:
    draft = write_story(
        [
            "Booking windows are seven days for desks, three in the exam period, fourteen for"
            " group rooms, and end of next term for staff."
        ]
    )
    # was "As a staff member, ...": staff are one of the list's cases
    assert draft.description.startswith("As a user, ")
    # ... but the need's own "for staff" names them
    assert write_story(
        ["Weekly recurring bookings for staff, for the whole term."]
    ).description == ("As a staff member, I want weekly recurring bookings for staff.")


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # was "Make what I want that the booking system"
        (
            "So what I want is that the booking system is the single source of truth for rooms.",
            "Make the booking system the single source of truth",
        ),
        # was "Make what we need a way to see who"
        (
            "What we really need is a way to see who is on call.",
            "Provide a way to see who is on call",
        ),
        # was "Make the only thing we need a power button"
        ("The only thing we need is a power button .", "Provide only a power button"),
        # was "Make all we need a list of the volunteers"
        (
            "All we need is a list of the volunteers for each shift.",
            "Provide a list of the volunteers for each shift",
        ),
        ("What we want is to see who is on call .", "See who is on call"),
        # was "Make only buttons we need on off, volume": the list, without its hedge
        (
            "Only buttons we need is on off , volume , channels and maybe some options or"
            " something else , and please make a click",
            "Limit the buttons to on off, volume, channels",
        ),
    ],
)
def test_a_pseudo_cleft_names_what_is_said_after_is(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_what_a_cleft_says_a_person_wants_names_the_person() -> None:
    draft = write_story(["What I want is for the coordinator to see every shift."])
    assert (draft.title, draft.description) == (
        "See every shift",
        "As a coordinator, I want to see every shift.",
    )


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # was "Make our target only twelve point five Euros"
        (
            "because our target is only like twelve point five Euros",
            "Keep within our target of twelve point five Euros",
        ),
        ("Our budget is twenty five Euros .", "Keep within our budget of twenty five Euros"),
    ],
)
def test_a_budget_or_target_amount_is_a_limit_to_keep_within(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_a_budget_that_is_no_amount_is_no_limit() -> None:
    # "the budget per unit" names no amount after "is" here: read as before
    assert not write_story(["The budget is too low to use an LCD ."]).title.startswith(
        "Keep within"
    )


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # was "Provide say the date, time and doctor"
        (
            "Messages should only say the date, time and doctor.",
            "Say the date, time and doctor in messages",
        ),
        ("Reports should show the total per team.", "Show the total per team in reports"),
        # a list stays whole; what comes after it does not go in the title's middle
        (
            "The messages should only say date and time, never the reason.",
            "Say date and time in the messages, never the reason",
        ),
    ],
)
def test_what_plural_things_must_say_or_show_names_them(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # was "Provide it would be nice"
        (
            "It would be nice if users could export the results to Excel.",
            "Export the results to Excel",
        ),
        # was "Provide it would be great to have a dark mode"
        ("It would be great to have a dark mode.", "Provide a dark mode"),
        # was "Provide it's important that the results are kept anonymous"
        ("It's important that the results are kept anonymous.", "Keep the results anonymous"),
        # was "Provide it's important for us to keep the data"
        ("It's really important for us to keep the data in the EU.", "Keep the data in the EU"),
        # was "Make the key thing for us"
        (
            "The key thing for us is that nobody outside HR sees individual answers.",
            "Do not let anyone outside HR see individual answers",
        ),
        # "nobody else" keeps its negation (was "Use the slot at that notice")
        (
            "Nobody else can use the slot at that notice.",
            "Do not let anyone else use the slot",
        ),
        ("Nobody else sees my notes.", "Do not let anyone else see my notes"),
        # was "Provide we make sure"
        (
            "We have to make sure that nobody can delete a closed survey.",
            "Do not let anyone delete a closed survey",
        ),
        # was "Comment to a question"
        ("Would it be possible to add comments to a question?", "Add comments to a question"),
        # was "My biggest problem"
        (
            "My biggest problem is that I can't see who hasn't answered yet.",
            "See who hasn't answered yet",
        ),
        # was "Be cheap when it was cheap"
        ("It would be good if it was cheap.", "Keep it cheap"),
        # was "Leave out people to have to log in twice"
        ("We don't want people to have to log in twice.", "Remove the need to log in twice"),
        # was "Love to be able to filter by region"
        ("I'd love to be able to filter by region.", "Filter by region"),
        # was "Make the idea to let residents report missed bins online"
        (
            "The idea is to let residents report missed bins online.",
            "Let residents report missed bins online",
        ),
        # was "Be thinking a weekly digest email"
        ("We were thinking maybe a weekly digest email.", "Send a weekly digest email"),
        # was "Provide something a calendar view would be useful"
        ("Something like a calendar view would be really useful.", "Provide a calendar view"),
        # was "Provide so that admins can override a booking"
        ("Make it so that admins can override a booking.", "Override a booking"),
    ],
)
def test_a_frame_around_a_need_is_no_part_of_its_title(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_a_frame_is_no_part_of_the_criterion_or_the_persona() -> None:
    draft = write_story(["Can we make sure that managers get an email when a survey closes?"])
    assert draft.description == "As a manager, I want to get an email when a survey closes."
    draft = write_story(["The key thing for us is that nobody outside HR sees individual answers."])
    assert draft.acceptance_criteria == ["Nobody outside HR sees individual answers."]


def test_what_the_main_thing_is_without_that_stays_talk() -> None:
    # no "that": a remark ("The main thing is we look at the costs"), read as before
    assert write_story(["The main thing is we look at the costs ."]).title != "Look at the costs"


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # was "Result are anonymous" / "I want the to result are anonymous": how things are,
        # said as it was (no title a story is written from: on dev, "the colours are basic" and
        # "staff calendars are all in Outlook" became stories), in a description that reads
        (
            "The results are anonymous.",
            "The results are anonymous",
            "As a user, I want the results to be anonymous.",
        ),
        (
            "Staff calendars are all in Outlook.",
            "Staff calendars are all in Outlook",
            "As a user, I want staff calendars to be all in Outlook.",
        ),
        # was "Report are emailed"
        (
            "The system reports are emailed.",
            "Email the system reports",
            "As a user, I want the system reports to be emailed.",
        ),
        # was "Survey results are shown per business unit"
        (
            "Survey results are shown per business unit.",
            "Show survey results per business unit",
            "As a user, I want survey results to be shown per business unit.",
        ),
        # the verb in the present stays a verb
        (
            "The system reports errors to the admin.",
            "Report errors to the admin",
            "As a user, I want the system to report errors to the admin.",
        ),
    ],
)
def test_a_plural_subject_before_are_is_no_verb(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # was "Make there a way to reset your password"
        ("There should be a way to reset your password.", "Provide a way to reset the password"),
        ("There needs to be an audit log.", "Provide an audit log"),
        # was "Make there no ads"
        ("There should be no ads.", "Leave out ads"),
    ],
)
def test_what_there_should_be_is_a_thing_to_provide(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    "statement",
    [
        # was "see individual answers": the need turned around
        "Nobody outside HR can see individual answers.",
        "Nobody outside HR sees individual answers.",
    ],
)
def test_nobody_but_some_people_keeps_who_may(statement: str) -> None:
    draft = write_story([statement])
    assert draft.title == "Do not let anyone outside HR see individual answers"
    assert draft.description == "As a user, I want nobody outside HR to see individual answers."


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # was "Do not see individual answers" / "As a manager, I want never to see ..."
        (
            "The managers should not see individual answers.",
            "Do not let the managers see individual answers",
            "As a user, I want the managers never to see individual answers.",
        ),
        (
            "We don't want the managers to see individual answers.",
            "Do not let the managers see individual answers",
            "As a user, I want the managers never to see individual answers.",
        ),
        # what they should not have to do is theirs
        (
            "Patients shouldn't have to call the practice.",
            "Remove the need to call the practice",
            "As a patient, I want not to have to call the practice.",
        ),
    ],
)
def test_a_rule_on_people_is_not_their_want(statement: str, title: str, description: str) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


def test_ideally_is_no_part_of_the_thing() -> None:
    draft = write_story(["Ideally the dashboard loads in under three seconds."])
    # was "I want ideally the dashboard to load ..."
    assert draft.description == "As a user, I want the dashboard to load in under three seconds."


def test_make_it_so_that_is_no_benefit() -> None:
    draft = write_story(["Make it so that admins can override a booking."])
    # was "..., so that admins can override a booking"
    assert draft.description == "As an admin, I want to override a booking."


def test_that_would_be_nice_names_nothing() -> None:
    assert not reads_as_capability(write_story(["That would be nice ."]).title)


def test_a_limit_cut_from_a_condition_leaves_the_condition_whole() -> None:
    draft = write_story(["Admins should be notified when a claim is over 500 pounds."])
    # was "Notify admins when a claim"
    assert draft.title == "Notify admins when a claim is over 500 pounds"
    # a limit said of the thing itself still goes to the criteria
    assert write_story(["online cancellation up to two hours before"]).title == (
        "Provide online cancellation"
    )


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # was "Let you book a slot up to two weeks ahead" / "the product to let you book"
        (
            "So the app should let you book a slot up to two weeks ahead.",
            "Book a slot",
            "As a user, I want to book a slot up to two weeks ahead.",
        ),
        # was "Provide automatically archive surveys"
        (
            "The system should automatically archive surveys after 90 days.",
            "Archive surveys after 90 days automatically",
            "As a user, I want the product to archive surveys after 90 days automatically.",
        ),
        # was "Provide it remember my last search"
        (
            "Can it remember my last search?",
            "Remember my last search",
            "As a user, I want the product to remember my last search.",
        ),
        # was "Provide we have a search by postcode"
        (
            "Could we have a search by postcode?",
            "Provide a search by postcode",
            "As a user, I want a search by postcode.",
        ),
        # was "the product to be possible to reopen a closed claim"
        (
            "It should be possible for managers to reopen a closed claim.",
            "Reopen a closed claim",
            "As a manager, I want to reopen a closed claim.",
        ),
    ],
)
def test_a_request_said_round_about_is_the_need(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize("statement", ["Can we go to the next slide?", "Can we move on?"])
def test_a_question_about_the_meeting_is_no_request(statement: str) -> None:
    assert not reads_as_capability(write_story([statement]).title)


def test_a_hedge_before_the_verb_is_dropped_a_manner_goes_after() -> None:
    # was "Provide possibly do away" (no story), and "Provide automatically archive surveys"
    assert write_story(["we could possibly do away with all buttons ."]).title == (
        "Do away with all buttons"
    )
    assert write_story(["Users should quickly find the power button."]).title == (
        "Find the power button quickly"
    )


def test_only_some_people_may_do_it() -> None:
    draft = write_story(["Only admins can delete a survey."])
    # was "Delete a survey" / "As an admin, I want the product to delete a survey.", then "As an
    # admin, I want to delete a survey." (the rule on who may was lost from the description)
    assert (draft.title, draft.description) == (
        "Let only admins delete a survey",
        "As an admin, I want only admins to delete a survey.",
    )


def test_a_title_cut_after_make_is_not_cut() -> None:
    # was "Do not make": the limit cut off left a verb without what it makes
    assert write_story(["It should not be more than three clicks to book."]).title == (
        "Do not make it more than three clicks to book"
    )


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # was "Make what I'd a dashboard that shows me all open" ("really like" read as fillers)
        (
            "What I'd really like is a dashboard that shows me all open claims by team.",
            "Provide a dashboard that shows me all open claims",
        ),
        # was "Make the main pain": the want after "so"
        (
            "Um, so, from our side, the main pain is that volunteers sign up on a spreadsheet and"
            " then forget, so we'd really like automatic reminders.",
            "Send automatic reminders",
        ),
        # was "Provide the other thing would be letting coordinators see gaps"
        (
            "Yeah, and I guess the other thing would be letting coordinators see gaps in the rota.",
            "Let coordinators see gaps in the rota",
        ),
        # was "Provide that would be a huge win"
        (
            "Honestly, if we could just get rid of the paper forms, that would be a huge win.",
            "Get rid of the paper forms",
        ),
        # was "Provide there be a way to bulk approve"
        ("Could there be a way to bulk approve?", "Provide a way to bulk approve"),
        # was "Provide the thing"
        (
            "I mean, the thing is, people lose receipts, so photo upload is a must.",
            "Provide photo upload",
        ),
    ],
)
def test_a_need_said_at_length_is_found_in_it(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_who_the_need_lets_act_is_the_persona() -> None:
    draft = write_story(["And the other thing would be letting coordinators see gaps in the rota."])
    assert draft.description == "As a coordinator, I want to see gaps in the rota."


def test_a_quality_that_is_essential_stays_a_quality() -> None:
    # one word is no thing to provide ("Provide a security")
    assert write_story(["Security is essential."]).title == "Make security essential"


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # was "Keep it's simple for older residents"
        (
            "So it's got to be really simple for older residents.",
            "Keep it simple for older residents",
        ),
        ("We've got to have a search box.", "Provide a search box"),
    ],
)
def test_got_to_is_has_to(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("follow_up", "criterion"),
    [
        # said without a comma (transcripts often have none): was no criterion
        (
            "If it's rejected the employee gets an email with the reason.",
            "Given a manager, when it's rejected, then the employee gets an email with the reason.",
        ),
        (
            "if the manager rejects the claim the employee gets an email",
            "Given a manager, when the manager rejects the claim, then the employee gets an email.",
        ),
    ],
)
def test_a_condition_said_without_a_comma_ends_where_its_result_begins(
    follow_up: str, criterion: str
) -> None:
    draft = write_story(["Managers approve claims.", follow_up])
    assert draft.acceptance_criteria == [criterion]


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # was "Phone numbers stay private" / "I want to phone numbers stay private": whose the
        # numbers are is no persona, and "phone" is no verb here
        (
            "volunteers' phone numbers stay private",
            "Keep volunteers' phone numbers private",
            "As a user, I want volunteers' phone numbers to stay private.",
        ),
        # was "Make volunteers' phone numbers stay private" / "the product to stay private"
        (
            "Volunteers' phone numbers should stay private.",
            "Keep volunteers' phone numbers private",
            "As a user, I want volunteers' phone numbers to stay private.",
        ),
        # was "Make the phone numbers stay private"
        (
            "The phone numbers stay private.",
            "Keep the phone numbers private",
            "As a user, I want the phone numbers to stay private.",
        ),
        # people who stay are people, and what they do is theirs
        ("Users stay logged in.", "Stay logged in", "As a user, I want to stay logged in."),
    ],
)
def test_a_thing_of_someones_that_must_stay_so_is_kept_so(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


def test_someone_wanted_to_act_is_the_criterion_with_when() -> None:
    draft = write_story(
        ["Managers keep forgetting, so I'd like them to get a reminder after three days."]
    )
    # was "Provide a reminder" (too little to stand as a story) and the criterion "Them to get a
    # reminder is available after three days."
    assert draft.title == "Send a reminder after three days"
    assert draft.description == "As a manager, I want a reminder after three days."


def test_a_reason_said_after_a_comma_is_no_part_of_the_need() -> None:
    draft = write_story(
        ["And honestly it needs to be really easy, most of our staff are not very technical."]
    )
    # was "I want the product to be easy, most of our staff are not very technical."
    assert draft.description == "As a user, I want the product to be easy."


def test_what_would_help_said_after_a_comma_is_the_need() -> None:
    draft = write_story(
        [
            "For the residents it's really about knowing when the bin is coming, like, a text the"
            " night before would be ideal."
        ]
    )
    # was "Provide for the residents it's about knowing"
    assert (draft.title, draft.description) == (
        "Send a text the night before",
        "As a resident, I want a text the night before.",
    )


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # was "Make the limit five attachments per ticket"
        (
            "The limit is five attachments per ticket, anything more and the mailbox chokes.",
            "Set the limit to five attachments per ticket",
            "As a user, I want the limit to be five attachments per ticket.",
        ),
        # was "Make the default priority medium"
        (
            "The default priority is medium, people always pick urgent otherwise.",
            "Set the default priority to medium",
            "As a user, I want the default priority to be medium.",
        ),
        (
            "The maximum file size should be 10 MB.",
            "Set the maximum file size to 10 MB",
            "As a user, I want the maximum file size to be 10 MB.",
        ),
        # no value: how a setting is judged, not what it is set to
        (
            "The limit is too low.",
            "Make the limit too low",
            "As a user, I want the limit to be too low.",
        ),
    ],
)
def test_a_setting_said_with_its_value_is_set_to_it(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize(
    ("statement", "title", "criterion"),
    [
        # was "Provide the finance director" (as a line manager, "I want the finance director")
        (
            "Line managers approve them, and anything above five hundred pounds also needs the"
            " finance director.",
            "Require the finance director",
            "Anything above five hundred pounds also needs the finance director.",
        ),
        # was "Provide the duty engineer, straight away" and "The duty engineer, straight away
        # is available."
        (
            "Right, and anything marked urgent also needs the duty engineer, straight away.",
            "Require the duty engineer for anything marked urgent",
            "Anything marked urgent also needs the duty engineer, straight away.",
        ),
        # a thing that is needed is still provided
        (
            "Anything over fifty pounds needs a receipt.",
            "Provide a receipt",
            "Anything over fifty pounds needs a receipt.",
        ),
    ],
)
def test_a_person_a_rule_needs_is_required_for_what_it_is_said_of(
    statement: str, title: str, criterion: str
) -> None:
    draft = write_story([statement])
    assert draft.title == title
    assert draft.acceptance_criteria == [criterion]


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # was "Make closed tickets get archived after ninety days"
        (
            "Closed tickets get archived after ninety days, that's the retention policy.",
            "Archive closed tickets after ninety days",
            "As a user, I want closed tickets to be archived after ninety days.",
        ),
        # was "Make tickets that nobody has touched for two days go" (cut at ten words) and "I
        # want the product to go red"
        (
            "Tickets that nobody has touched for two days should go red.",
            "Make tickets nobody has touched for two days go red",
            "As a user, I want tickets that nobody has touched for two days to go red.",
        ),
        # was "I want the product to work on a phone": the statement names what must
        (
            "Most engineers are on the road, so the queue has to work on a phone.",
            "Work on a phone",
            "As a user, I want the queue to work on a phone.",
        ),
        # was "Search before they raise a ticket" / "the product to search ..."
        (
            "Oh, and a knowledge base they can search before they raise a ticket, that would cut"
            " the calls.",
            "Provide a knowledge base they can search",
            "As a user, I want a knowledge base they can search before they raise a ticket.",
        ),
        # was "Give everyone a calendar feed link they subscribe" (the "to" cut as dangling)
        (
            "Give everyone a calendar feed link they subscribe to.",
            "Give everyone a calendar feed link they subscribe to",
            "As a user, I want to give everyone a calendar feed link they subscribe to.",
        ),
        # was "Provide that written down, reports shouldn't identify students"
        (
            "Good, I'd want that written down, reports shouldn't identify students.",
            "Do not identify students",
            "As a user, I want the product never to identify students.",
        ),
        # the product, and what it lets people do, stay as they were
        (
            "It has to work offline.",
            "Make it work offline",
            "As a user, I want the product to work offline.",
        ),
        (
            "The booking page must let patients choose a doctor.",
            "Let patients choose a doctor",
            "As a patient, I want to choose a doctor.",
        ),
    ],
)
def test_what_a_named_thing_must_do_is_said_of_it(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize(
    ("title", "reads"),
    [
        ("Provide a queue we can filter by category and priority", True),
        ("Provide a report they can print", True),
        ("Give everyone a calendar feed link they subscribe to", True),
        ("Provide a list of the rooms we talked about", True),
        # a clause of talk, or a verb with an object of its own, is no thing's clause
        ("Provide some LCD display you can button the number", False),
        ("Provide for instance we see", False),
        ("Provide a thing we could be", False),
    ],
)
def test_a_thing_and_what_people_do_with_it_reads_as_a_title(title: str, reads: bool) -> None:
    assert reads_as_capability(title) is reads
    assert _title_check(title).passed is reads


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # was "Cancel their slots and every parent affected gets an email"
        (
            "The office cancels their slots and every parent affected gets an email straight away.",
            "Cancel their slots",
        ),
        # was "Provide bookings from the app go into MedOffice"
        (
            "Bookings from the app go into MedOffice, and bookings reception makes show as taken.",
            "Make bookings from the app go into MedOffice",
        ),
        # a verb or a thing with a place after it is no subject ("depends on the cost")
        ("GPS on the phone.", "Provide GPS on the phone"),
    ],
)
def test_a_title_is_one_clause_of_a_statement(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("title", "reads"),
    [
        ("Set which evenings they're available", True),  # what is set, as said
        ("Choose which doctor they see", True),
        ("Set it's fine", False),  # talk
    ],
)
def test_what_is_set_or_chosen_may_be_a_clause(title: str, reads: bool) -> None:
    assert reads_as_capability(title) is reads


@pytest.mark.parametrize(
    ("phrase", "trimmed"),
    [
        ("a link they subscribe to", "a link they subscribe to"),
        ("the person it is assigned to", "the person it is assigned to"),
        ("the rooms we talked about", "the rooms we talked about"),
        # "to" before a verb left out is no preposition: it goes, as before
        ("you can get them printed as you want to", "you can get them printed as you want"),
        ("we have to", "we have"),
    ],
)
def test_a_clauses_last_preposition_is_no_dangling_word(phrase: str, trimmed: str) -> None:
    from shared.engine.offline.wording import _trim

    assert _trim(phrase) == trimmed


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # was "Update when a part is used on a job": what changes is named
        (
            "The van stock updates when a part is used on a job.",
            "Update the van stock",
            "As a user, I want the van stock to update when a part is used on a job.",
        ),
        (
            "The list refreshes every five minutes.",
            "Refresh the list",
            "As a user, I want the list to refresh every five minutes.",
        ),
        # a verb with an object of its own keeps it
        (
            "The system updates the record.",
            "Update the record",
            "As a user, I want the system to update the record.",
        ),
    ],
)
def test_a_thing_that_changes_by_itself_is_named_in_the_title(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # was "Provide patients can't book two appointments at the same time" ("can't" of
        # people read as a complaint) and "As a patient"
        (
            "Patients can't book two appointments at the same time.",
            "Do not let patients book two appointments",
            "As a user, I want patients never to book two appointments at the same time.",
        ),
        (
            "Receptionists cannot cancel a paid booking.",
            "Do not let receptionists cancel a paid booking",
            "As a user, I want receptionists never to cancel a paid booking.",
        ),
        # the speaker's "can't" is a complaint and anyone's "won't" a forecast, as before
        (
            "I can't see what my team spent.",
            "Provide I can't see what my team spent",
            "As a user, I want I can't see what my team spent.",
        ),
        (
            "Our patients won't download an app.",
            "Provide our patients won't download an app",
            "As a user, I want our patients won't download an app.",
        ),
    ],
)
def test_what_a_role_cannot_do_is_a_rule_on_it(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize(
    ("title", "reads"),
    [
        # after a thing, "that's" opens a relative clause (were no titles)
        ("Reserve a book that's out", True),
        ("Provide a room that's free at nine", True),
        # still a clause of talk
        ("Make sure that's done", False),
        ("Keep it that's fine", False),
        # a preference, also negated (read as a title when "that's" was allowed)
        ("Do not prefer a remote control that's fully in yellow", False),
        ("Do not show a fine on a child's account", True),
    ],
)
def test_a_relative_thats_after_a_thing_reads(title: str, reads: bool) -> None:
    assert reads_as_capability(title) is reads


@pytest.mark.parametrize(
    ("statement", "description"),
    [
        # a bound with its figure said after the need is part of it (was cut at the comma)
        (
            "They should be able to renew a book from their phone, up to three times.",
            "As a user, I want to renew a book from my phone, up to three times.",
        ),
        (
            "Staff can attach screenshots to a ticket, at most five.",
            "As a staff member, I want to attach screenshots to a ticket, at most five.",
        ),
        # no figure: the comma still ends the need
        (
            "They should be able to renew a book from their phone, up to the due date.",
            "As a user, I want to renew a book from my phone.",
        ),
        # what the doer has is "my" once the doer is "I" (was "their"); another's stays theirs
        (
            "Doctors need to block out their own unavailable days.",
            "As a doctor, I want to block out my own unavailable days.",
        ),
        (
            "Teachers should see the parents and their slots.",
            "As a teacher, I want to see the parents and their slots.",
        ),
    ],
)
def test_a_bound_said_after_the_need_and_the_doers_own_things(
    statement: str, description: str
) -> None:
    assert write_story([statement]).description == description


@pytest.mark.parametrize(
    ("later", "written"),
    [
        ("Actually, let's say twice, three is too generous.", "up to twice."),
        ("Make it five times.", "up to five times."),
    ],
)
def test_a_count_of_times_corrected_later_is_a_revision(later: str, written: str) -> None:
    earlier = "Members can renew a book, up to three times."
    found = revision(earlier, later)
    assert found is not None and found.kind == "number" and not found.restated
    assert revise_text(earlier, found) == f"Members can renew a book, {written}"


def test_a_count_said_again_or_no_count_is_no_revision() -> None:
    earlier = "Members can renew a book, up to three times."
    assert revision(earlier, "Yes, three times, then it comes back.") is None
    assert revision(earlier, "Actually, let's say sometimes.") is None


@pytest.mark.parametrize(
    ("title", "reads"),
    [
        # a clause of time or condition after the need may be contracted (were no titles)
        ("Scan every item when it's picked", True),
        ("Send a text when it's ready to collect", True),
        # talk, still: a contraction before any such clause, or the clause right after the verb
        ("Make it when it's what we want", False),
        ("Make if it thin it's likely to break", False),
    ],
)
def test_a_contracted_clause_of_time_or_condition_reads(title: str, reads: bool) -> None:
    assert reads_as_capability(title) is reads


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # a signal takes no object: the title keeps the action that has one (was "Beep the next
        # step")
        (
            "If the barcode doesn't match the order line, the scanner should beep and block the"
            " next step.",
            "Block the next step",
        ),
        # verbs that share their object keep the first, as before
        (
            "Receptionists can book, move and cancel appointments for any patient.",
            "Book appointments for any patient",
        ),
        # "we're not doing X" is a decision to leave X out (was "Return in this app")
        (
            "We're not doing returns in this app, that stays in the old system.",
            "Leave out returns in this app",
        ),
        (
            "We are not going to build a customer portal this year.",
            "Leave out a customer portal this year",
        ),
        ("We're not using paper lists anymore.", "Leave out paper lists"),
        # "batch" is a verb (was "Provide batch up to ...")
        (
            "Pickers should batch up to six orders in one trolley run.",
            "Batch up to six orders in one trolley run",
        ),
    ],
)
def test_signals_decisions_left_out_and_batching(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # whose side a need is said from is its persona, and no part of it (was "As a user, I
        # want to see from the staff side which books ..."); what it is counted by stays
        (
            "From the staff side, I need to see which books are overdue by more than a week,"
            " per branch.",
            "See which books are overdue by more than a week",
            "As a staff member, I want to see which books are overdue by more than a week, per"
            " branch.",
        ),
        # "they" who see or book are people (was "I want the product to see their bookings")
        (
            "They should see their bookings.",
            "See their bookings",
            "As a user, I want to see my bookings.",
        ),
        (
            "They should go red after two days.",
            "Go red after two days",
            "As a user, I want the product to go red after two days.",
        ),
        # a message is sent (was "Provide ...")
        (
            "I'd like an email the day before.",
            "Send an email the day before",
            "As a user, I want an email the day before.",
        ),
        (
            "We need an email address for each parent.",
            "Provide an email address for each parent",
            "As a parent, I want an email address for each parent.",
        ),
        # a label that names a thing is the title, what follows it a detail; a status or a
        # category label is not
        (
            "- Proof of address: council tax bill or tenancy agreement, no older than 3 months.",
            "Provide proof of address",
            "As a user, I want proof of address.",
        ),
        (  # who the product is for, said as a label: aimed at (was "Provide 15 to 35 ...")
            "- Target group confirmed: 15 to 35 year olds.",
            "Aim at 15 to 35 year olds",
            "As a user, I want to aim at 15 to 35 year olds.",
        ),
        (
            "Locator: the remote beeps when you clap.",
            "Beep when you clap",
            "As a user, I want the remote to beep when you clap.",
        ),
    ],
)
def test_a_side_a_doer_a_message_and_a_label(statement: str, title: str, description: str) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # a thing said first and then that it would be nice (was "Provide a team calendar would
        # be nice"); its purpose is the benefit
        (
            "A team calendar would be nice, so people can see who's off before they book.",
            "Provide a team calendar",
            "As a user, I want a team calendar, so that people can see who's off before they book.",
        ),
        # the role said again as "they" (was "As a user")
        (
            "And managers, uh, they need to approve requests from their phone, they're never at"
            " a desk.",
            "Approve requests from their phone",
            "As a manager, I want to approve requests from my phone.",
        ),
        # "at the end of every month" is one phrase (was "Provide an export at the end" and the
        # criterion "An export at the end of is available every month.")
        (
            "Payroll needs an export at the end of every month, CSV is fine.",
            "Provide an export at the end of every month",
            "As a payroll team member, I want an export at the end of every month.",
        ),
        # a count said first: what it bounds is the title (was "Provide max 200 photos ...")
        (
            "Max 200 photos on the phone before sync.",
            "Limit photos on the phone before sync",
            "As a user, I want max 200 photos on the phone before sync.",
        ),
    ],
)
def test_a_thing_that_would_be_nice_a_role_said_again_and_a_count_first(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


def test_a_bound_said_first_keeps_its_figure_in_a_criterion() -> None:
    draft = write_story(["Max 200 photos on the phone before sync."])
    assert draft.acceptance_criteria == ["Max 200 photos on the phone before sync."]


def test_i_think_thats_keeps_its_that() -> None:
    """ "I think that's the policy." lost "I think that" and read "Provide s the policy"."""
    draft = write_story(["I think that's the policy."])
    assert draft.title != "Provide s the policy"
    assert not readable(draft)


@pytest.mark.parametrize(
    ("context", "persona"),
    [
        # a role said as the subject of another need is that need's (was "As a teacher")
        ("Teachers need a printable list.", "user"),
        # the question a need answers, and the persona a story just before names
        ("What do teachers need?", "teacher"),
        ("As a viewer, I want a familiar keypad.", "viewer"),
    ],
)
def test_what_was_said_just_before_a_need_that_names_its_persona(
    context: str, persona: str
) -> None:
    said = ["It needs to work on the old Windows laptops in the depot."]
    description = write_story(said, context=[context]).description
    assert description.startswith(f"As a {persona}, ")


@pytest.mark.parametrize(
    "doubt",
    [
        "I'm not sure about showing the reason though, like sick leave.",
        "Hmm, I don't know if we need the export.",
        # a denial: the criterion was "You know the condition, a flag." (its hedge dropped)
        "I don't think you'd need to know the condition, just a flag, yes or no.",
    ],
)
def test_a_doubt_said_after_a_need_is_no_criterion(doubt: str) -> None:
    """Was the criterion "About showing the reason though sick leave." (the hedge dropped)."""
    draft = write_story(
        ["A team calendar would be nice, so people can see who's off before they book.", doubt]
    )
    assert draft.acceptance_criteria == []
    assert doubt in draft.source_quotes


def test_a_bare_figure_with_a_reason_corrects_the_figure() -> None:
    earlier = "New patients pay a twenty pound deposit when they book online."
    found = revision(earlier, "Actually make that twenty-five, twenty doesn't cover our costs.")
    assert found is not None and not found.restated
    assert revise_text(earlier, found) == (
        "New patients pay a twenty-five pound deposit when they book online."
    )
    # a figure of a quantity of its own is no bare correction, as before
    assert revision(earlier, "Actually, make it 48 hours.") is None


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # "goes" is a verb, never a plural subject (was "Make the slot goes back on ...")
        ("The slot goes back on the waiting list.", "Put the slot back on the waiting list"),
        ("The report goes to the manager every Monday.", "Go to the manager every Monday"),
    ],
)
def test_a_thing_that_goes_somewhere(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_an_emphatic_do_is_talk() -> None:
    assert not reads_as_capability("Do feel all cold and slimy")
    assert reads_as_capability("Do away with all buttons")


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # a language or format a thing comes in (was "Make the booking page in Polish ...")
        (
            "The booking page should be in Polish and Arabic as well.",
            "Provide the booking page in Polish and Arabic",
        ),
        ("The reports should be in PDF.", "Provide the reports in PDF"),
        # a place stays a place
        ("The button should be in the middle.", "Put the button in the middle"),
    ],
)
def test_a_thing_in_a_language_or_format_is_provided_so(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_unless_is_never_written_as_when() -> None:
    """ "..., unless nobody else has reserved it" gave "Given ..., when nobody else has reserved,
    then ...", the opposite of what was said; a condition with "if" still gives one."""
    unless = write_story(["Books have to come back, unless nobody else has reserved them."])
    assert not any("when nobody" in ac for ac in unless.acceptance_criteria)
    said_if = write_story(["If the barcode doesn't match, the scanner should beep."])
    assert said_if.acceptance_criteria == [
        "Given a user, when the barcode doesn't match, then the scanner beeps."
    ]


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # a need said as "being able to ..." (was "Provide being able to see ...")
        (
            "Being able to see a customer's whole order history in one screen.",
            "See a customer's whole order history in one screen",
            "As a user, I want to see a customer's whole order history in one screen.",
        ),
        # "it would be great if X didn't need Y": X should not need Y, for what it is said of
        # (was "Provide refunds under fifty euros didn't need a supervisor")
        (
            "It would be great if refunds under fifty euros didn't need a supervisor.",
            "Do not require a supervisor for refunds",
            "As a user, I want no supervisor for refunds under fifty euros.",
        ),
        # what a role shouldn't be able to do is a rule on it (was "Do not make agents able to
        # change the legal wording")
        (
            "But agents shouldn't be able to change the legal wording at the bottom.",
            "Do not let agents change the legal wording",
            "As a user, I want agents never to change the legal wording at the bottom.",
        ),
        # not of the product
        (
            "It shouldn't be able to overheat.",
            "Do not make it able to overheat",
            "As a user, I want the product not to be able to overheat.",
        ),
    ],
)
def test_being_able_a_wish_for_less_and_a_role_not_able(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize(
    "denied",
    [
        "I don't think you'd need to know the condition, just a flag, yes or no.",
        "I don't think we need a waiting list.",
    ],
)
def test_a_need_the_speaker_denies_is_no_title(denied: str) -> None:
    """Was "Know the condition, a flag" and "Provide a waiting list": the denial dropped."""
    assert not readable(write_story([denied]))


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # a thing that "would help", named without an article (was "Provide single sign-on with
        # Google would help too")
        (
            "Single sign-on with Google would help too, a lot of them asked.",
            "Provide single sign-on with Google",
        ),
        ("Dark mode would be nice.", "Provide dark mode"),
        ("Bigger buttons would help a lot.", "Provide bigger buttons"),
        # a verb with a prefix and a hyphen (was "Provide pre-fill the company name and address")
        (
            "We should pre-fill the company name and address from the VAT number if they give us"
            " one.",
            "Pre-fill the company name and address from the VAT number",
        ),
        ("It should re-send the link after an hour.", "Re-send the link"),
        # "about five steps" stays an aside (was "Step": "dashboard five steps" read as a verb)
        (
            "And a checklist on the dashboard, like five steps, that ticks itself off as they go.",
            "Provide a checklist on the dashboard",
        ),
    ],
)
def test_a_thing_that_would_help_a_prefixed_verb_and_an_approximate_figure(
    statement: str, title: str
) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    "statement",
    [
        "That would help.",
        "The new system will help us.",
        "Going there would be good.",
        "Per doctor would be great.",  # a detail of the need before
    ],
)
def test_what_would_help_names_a_thing(statement: str) -> None:
    """A pronoun, a thing there is already, or an activity is no thing that is needed."""
    from shared.engine.offline.statement import unframed

    assert unframed(statement) == statement


def test_parking_a_topic_is_no_criterion() -> None:
    """ "Let's park SSO for the next quarter" is the meeting's plan. Was the criterion "The chat
    button on every onboarding screen that goes to support during office hours park SSO for the
    next quarter."."""
    draft = write_story(
        [
            "A chat button on every onboarding screen that goes to support during office hours.",
            "Let's park SSO for the next quarter, it's not onboarding really.",
        ]
    )
    assert not any("park" in c.lower() for c in draft.acceptance_criteria)


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # when or where it holds, said first without a comma, goes after the need (was "Show the
        # help centre instead", "Close at six", "Provide a mute button": the phrase lost)
        (
            "Outside office hours it should show the help centre instead.",
            "Show the help centre outside office hours",
        ),
        ("On weekends it should close at six.", "Close at six on weekends"),
        ("On the remote it should have a mute button.", "Provide a mute button on the remote"),
        # a word of talk said first is no place (as before)
        ("In fact it should be cheap.", "Keep it cheap"),
    ],
)
def test_when_or_where_said_first_goes_after_the_need(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # a message or a document that goes out is sent (was "Make reminders go out
        # automatically a week", "Go out on the first of the month")
        (
            "Reminders go out automatically a week before the deadline as well.",
            "Send reminders automatically",  # when: its criterion
        ),
        (
            "The invoice should go out on the first of the month.",
            "Send the invoice on the first of the month",
        ),
        ("The lights go out at ten.", "Make the lights go out"),  # no message: as before
        # that it is one more need is no part of its title (was "Provide a red button as well")
        ("We need a red button as well.", "Provide a red button"),
    ],
)
def test_what_goes_out_is_sent_and_one_more_need(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_what_a_need_is_limited_to_is_no_thing() -> None:
    """ "Only for trips over a hundred pounds" limits the instalments said before it. Was the
    story "Provide only for trips over a hundred pounds"."""
    assert not readable(write_story(["Only for trips over a hundred pounds, I'd say."]))


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # a requirements list: patrons are a role (was "As a user, I want the product to allow
        # patrons to check out ...")
        (
            "The system shall allow patrons to check out up to 10 items per visit.",
            "Allow patrons to check out",
            "As a patron, I want to check out up to 10 items per visit.",
        ),
        # a rule on whom a figure picks out: the title names them, the figure stays in the need
        # (was "Do not make patrons with overdue fines")
        (
            "Patrons with overdue fines above $5 shall not be able to check out items.",
            "Do not let patrons with overdue fines check out items",
            "As a user, I want patrons with overdue fines above $5 never to check out items.",
        ),
        # two passives joined: one action in the title (was "Print the receipt or emailed")
        (
            "The receipt shall be printed or emailed, as the patron chooses.",
            "Print the receipt",
            "As a patron, I want the receipt to be printed or emailed.",
        ),
    ],
)
def test_a_requirements_list_said_with_shall(statement: str, title: str, description: str) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize(
    ("statement", "title", "criterion"),
    [
        # examples listed last are a detail, not the title's words (was "See the status
        # received", the criterion "They see the status received, scheduled, done.")
        (
            "And they need to see the status, like received, scheduled, done.",
            "See the status",
            "They see the status, such as received, scheduled, done.",
        ),
        # a noun in -s after a preposition is no verb (was "Repair per building", "I want a
        # monthly report of to repair per building")
        (
            "A monthly report of repairs per building, and the average time to fix.",
            "Provide a monthly report of repairs per building",
            "A monthly report of repairs per building, and the average time to fix.",
        ),
        # what the action is done with is a detail of it (was no criterion)
        (
            "Tenants should be able to report a repair from their phone, with a photo.",
            "Report a repair from their phone",
            "Tenants can report a repair from their phone, with a photo.",
        ),
        # guard: "like five steps, that ..." is an aside inside the sentence, no examples
        (
            "And a checklist on the dashboard, like five steps, that ticks itself off as they go.",
            "Provide a checklist on the dashboard",
            "A checklist on the dashboard, five steps, that ticks itself off as they go.",
        ),
    ],
)
def test_examples_a_noun_after_a_preposition_and_what_an_action_is_done_with(
    statement: str, title: str, criterion: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.acceptance_criteria) == (title, [criterion])


@pytest.mark.parametrize(
    ("title", "reads"),
    [
        # a clause of its own after the need has its own subject (was unreadable: "they close")
        ("Upload a photo when they close the job", True),
        ("Hand your approvals to someone else while you're away", True),
        # the need before the clause must still name something
        ("Do the scrolling when you flip it open", False),
        ("Provide it'd help if you drop", False),
        ("Beep when someone claps twice", True),  # guard: as before
    ],
)
def test_a_clause_after_the_need_with_its_own_subject(title: str, reads: bool) -> None:
    draft = StoryDraft(title=title, description="", acceptance_criteria=[], source_quotes=[title])
    assert readable(draft) is reads


@pytest.mark.parametrize(
    ("speaker", "statement", "persona"),
    [
        # a speaker labelled by a role says a need of their own (was "As a user")
        ("Manager", "I'd like to assign a job to a contractor from a list.", "manager"),
        ("Receptionist", "And I need to see who has checked in.", "receptionist"),
        # the team's own roles and people's names name no persona
        ("Project Manager", "I'd like to have a big power button.", "user"),
        ("Linda", "I'd like to see my list for the day on my phone.", "user"),
        # a need not said of oneself is not the speaker's
        ("Manager", "Tenants should be able to report a repair.", "tenant"),
        ("Manager", "The export has to include every approved claim.", "user"),
        # "Name (role):" names the role in brackets
        ("Tom (librarian)", "I need to see which books are overdue.", "librarian"),
        ("Priya (product owner)", "I need to see which books are overdue.", "user"),
    ],
)
def test_a_speaker_labelled_by_a_role_is_the_persona_of_their_own_need(
    speaker: str, statement: str, persona: str
) -> None:
    role, _, _ = parts(write_story([statement], speaker=speaker).description)
    assert role == persona


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # "back" is no verb of "money moves" (was "Make money moves back to ...")
        (
            "Money moves back to the current account instantly, no fees, no limit.",
            "Move money back to the current account instantly",
        ),
        ("The booking moves to the next free slot.", "Move the booking to the next free slot"),
        # verbs the lexicon lacked (was "Provide cap it at ...", "Provide we round up ...")
        (
            "Actually, let's cap it at five withdrawals a month, otherwise it's a second account.",
            "Cap it at five withdrawals a month",
        ),
        (
            "When they pay by card, we round up to the nearest pound and move the difference.",
            "Round up to the nearest pound",
        ),
        ("Round buttons.", "Provide round buttons"),  # guard: "round" opens a name
        ("Round , curved .", "Make it round, curved"),  # guard: how it must be
    ],
)
def test_what_moves_and_verbs_the_lexicon_lacked(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "title", "criteria"),
    [
        # the ask, said as such, frames the need (was "Make the ask from the business")
        (
            "The ask from the business is that customers can set up savings goals in the app.",
            "Set up savings goals in the app",
            [],
        ),
        # an example said in passing is no part of the title (was "Show progress a bar")
        (
            "We need to show progress, like a bar, and a little celebration at the target.",
            "Show progress, and a little celebration at the target",
            ["The product shows progress, such as a bar, and a little celebration at the target."],
        ),
    ],
)
def test_an_ask_framed_as_such_and_an_example_in_passing(
    statement: str, title: str, criteria: list[str]
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.acceptance_criteria) == (title, criteria)


@pytest.mark.parametrize(
    ("statement", "title", "means"),
    [
        # what happens if the need is not met is no part of it (was "I want the pots, or people
        # will think money disappeared"), and a container named with where it is holds the
        # thing (was "Provide the pots")
        (
            "And the balance on the home screen should include the pots, or people will think "
            "money disappeared.",
            "Include the pots in the balance on the home screen",
            "I want the balance on the home screen to include the pots.",
        ),
        (
            "Each page of the report should show the date.",
            "Show the date on each page of the report",
            "I want each page of the report to show the date.",
        ),
        # guards: as before
        (
            "The export has to include everything approved by the eighteenth.",
            "Include everything approved by the eighteenth in the export",
            "I want the export to include everything approved by the eighteenth.",
        ),
        (
            "The app should remind them the day before, or they will forget.",
            "Remind them the day before",
            "I want the product to remind them the day before.",
        ),
    ],
)
def test_a_consequence_said_after_a_need_and_a_container_with_where_it_is(
    statement: str, title: str, means: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description.split(", ", 1)[1]) == (title, means)


@pytest.mark.parametrize(
    ("said", "criterion"),
    [
        # what some want is why, as said (was "People send one invoice.", a rule on everyone)
        ("Some people just want to send one invoice.", "Some people want to send one invoice."),
        ("Most users want to pay by card.", "Most users want to pay by card."),
        ("Users want to export claims every month.", "Users export claims every month."),  # guard
    ],
)
def test_what_some_people_want_is_a_criterion_as_said(said: str, criterion: str) -> None:
    draft = write_story(["We need a way to get started quickly.", said])
    assert draft.acceptance_criteria == [criterion]


@pytest.mark.parametrize(
    ("statement", "title", "criteria"),
    [
        # a message named by what it is about is sent (was "Reorder alert when ...", an order,
        # and "I want to reorder alert when ...")
        (
            "- Reorder alert when a part drops below its minimum (set per part by Rosa).",
            "Send a reorder alert",
            ["Reorder alert when a part drops below its minimum, set per part by Rosa."],
        ),
        ("Price alert when the fare drops.", "Send a price alert when the fare drops", []),
        ("Mute notifications at night.", "Mute notifications at night", []),  # guard
        ("A notification when it changes.", "Send a notification when it changes", []),  # guard
        # "even with no signal" is a detail a criterion keeps (was none)
        (
            "We need to be able to add notes and photos to a job, even with no signal.",
            "Add notes and photos to a job",
            ["The product can add notes and photos to a job, even with no signal."],
        ),
    ],
)
def test_a_message_named_by_what_it_is_about_and_even_with_no_signal(
    statement: str, title: str, criteria: list[str]
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.acceptance_criteria) == (title, criteria)


@pytest.mark.parametrize(
    ("elaboration", "criterion"),
    [
        # the reason for an imperative is no need of its own, and no part of the check
        (
            "Yeah, and honestly just make that date a setting, because they'll move it again.",
            "Make that date a setting.",
        ),
        ("Make that date a setting, because they'll move it again.", "Make that date a setting."),
    ],
)
def test_the_reason_given_for_an_imperative_is_no_criterion(
    elaboration: str, criterion: str
) -> None:
    draft = write_story(
        ["So the export has to include everything approved by the eighteenth.", elaboration]
    )
    assert draft.acceptance_criteria == [criterion]


def test_the_cause_of_what_is_not_wanted_stays_in_the_criterion() -> None:
    draft = write_story(
        [
            "The photo has to be kept on the phone until it uploads.",
            "I don't want to lose a photo because the upload failed in a tunnel.",
        ]
    )
    assert draft.acceptance_criteria == [
        "I don't want to lose a photo because the upload failed in a tunnel."
    ]


def test_a_condition_of_a_later_clause_stays_out_of_the_title() -> None:
    draft = write_story(
        [
            "For a wheelchair user it's no good finding out at the door, it has to be right,"
            " and it has to change when the lift breaks."
        ]
    )
    assert "lift" not in draft.title, draft.title
    assert any("when the lift breaks" in c for c in draft.acceptance_criteria), draft
    # the condition said with the need itself still goes into its title
    assert write_story(["You should be able to mute it if you hold the wheel down."]).title == (
        "Mute it if you hold the wheel down"
    )


@pytest.mark.parametrize(
    ("statement", "description"),
    [
        (
            "Contractors should upload a photo when they close the job.",
            "As a contractor, I want to upload a photo when I close the job.",
        ),
        (
            "Drivers should see the route once they're logged in.",
            "As a driver, I want to see the route once I'm logged in.",
        ),
        # "they" may be the claims: said as it was
        (
            "Managers need to approve claims before they go to payroll.",
            "As a manager, I want to approve claims before they go to payroll.",
        ),
    ],
)
def test_the_persona_acting_later_is_i_in_the_description(statement: str, description: str) -> None:
    assert write_story([statement]).description == description


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        (
            "Closing the job should send the tenant a text.",
            "Send the tenant a text when closing the job",
            "As a user, I want closing the job to send the tenant a text.",
        ),
        (
            "Booking a room should block the slot for everyone.",
            "Block the slot for everyone when booking a room",
            "As a user, I want booking a room to block the slot for everyone.",
        ),
        # too long with what starts it: the action alone, the statement in the criterion
        (
            "Logging a part against the job should take it off the van stock.",
            "Take it off the van stock",
            "As a user, I want logging a part against the job to take it off the van stock.",
        ),
    ],
)
def test_an_action_that_sets_off_another_is_when_it_happens(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


@pytest.mark.parametrize(
    "said",
    [
        "The app should send a reorder alert when they reach it.",
        "When they reach it, the app should send a reorder alert.",
    ],
)
def test_a_condition_keeps_the_object_of_its_verb(said: str) -> None:
    draft = write_story(["The stock level should be shown on the van screen.", said])
    assert draft.acceptance_criteria == [
        "Given a user, when they reach it, then the app sends a reorder alert."
    ]


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        ("Photos shouldn't be moderated.", "Do not moderate photos"),
        ("Names must be redacted in the export.", "Redact names in the export"),
        ("We don't moderate photos.", "Do not moderate photos"),
        ("We won't send reminders by post.", "Do not send reminders by post"),
        (
            "Claims over five hundred should go to the finance director.",
            "Send claims over five hundred to the finance director",
        ),
        (
            "Anything marked urgent should reach the on-call contractor.",
            "Send anything marked urgent to the on-call contractor",
        ),
        # the product itself goes where it is told: no sending
        ("The app should go to the home screen.", "Go to the home screen"),
        (
            "And the permit price has to come from the tariff table, not be typed in by staff.",
            "Take the permit price from the tariff table",
        ),
    ],
)
def test_passive_prohibitions_decisions_not_to_and_where_a_thing_goes(
    statement: str, title: str
) -> None:
    assert write_story([statement]).title == title


def test_one_of_a_unit_is_a_figure_a_short_revision_can_set() -> None:
    earlier = (
        "If someone misses three classes in a month, they shouldn't be able to book for two weeks."
    )
    found = revision(earlier, "Let's say one week.")
    assert found is not None and not found.restated  # the figure alone, not the need again
    assert revise_text(earlier, found).endswith("book for one week.")
    assert revision(earlier, "One day we might add a waiting list.") is None  # no duration


@pytest.mark.parametrize(
    ("said", "judges"),
    [
        ("Hmm, two weeks is harsh.", True),
        ("Ten is plenty.", True),
        ("Two buttons is too many though.", True),
        ("The price is fine.", False),  # no figure
        ("Seven is fine, but premium members should get more.", False),  # and a need
        ("Twenty users per survey is the limit.", False),  # the figure stated as the rule
        ("A minute is too slow at peak.", True),  # "a minute", and when it is judged so
        ("Five days is fine for us.", True),
        ("The app is too slow.", False),
    ],
)
def test_a_judgement_of_a_figure_is_no_need(said: str, judges: bool) -> None:
    from shared.engine.offline.statement import judges_a_figure

    assert judges_a_figure(said) is judges


@pytest.mark.parametrize(
    "said",
    [
        "Yes, and as the manager I want to know how many no-shows we get every month.",
        "From the manager side, I need to know how many no-shows we get every month.",
    ],
)
def test_a_criterion_said_from_another_role_is_that_role_s(said: str) -> None:
    draft = write_story(["So reception needs a way to mark a no-show.", said])
    assert draft.description.startswith("As a receptionist,"), draft
    assert draft.acceptance_criteria == ["The manager knows how many no-shows we get every month."]


def test_what_the_current_system_does_is_no_criterion() -> None:
    draft = write_story(
        [
            "When someone cancels, the first person on the waiting list should get the place"
            " automatically.",
            "The current system emails a PDF timetable every Friday.",
        ]
    )
    assert not any("PDF" in c for c in draft.acceptance_criteria), draft


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        (
            "If someone misses three classes in a month, they shouldn't be able to book for"
            " one week.",
            "Do not let them book for one week",
            None,
        ),
        # a role with a hyphenated qualifier, said in the present: what they do
        (
            "Pay-as-you-go members pay five pounds per class when they book.",
            "Pay five pounds per class when they book",
            "As a pay-as-you-go member, I want to pay five pounds per class when I book.",
        ),
    ],
)
def test_a_rule_on_them_and_a_qualified_role(
    statement: str, title: str, description: str | None
) -> None:
    draft = write_story([statement])
    assert draft.title == title
    if description:
        assert draft.description == description


def test_them_is_what_the_people_use_said_before_the_need() -> None:
    draft = write_story(
        ["Some of our members use screen readers, so the booking pages have to work with them."]
    )
    assert draft.title == "Work with screen readers"
    assert draft.description == ("As a user, I want the booking pages to work with screen readers.")


@pytest.mark.parametrize(
    ("said", "title"),
    [
        # what people don't have is how they are, no decision to leave it out
        ("The portal must work on phones, half the warehouse staff don't have a desk.", None),
        # what people don't need to do, or want, is still theirs
        (
            "We could detect people on the Wi-Fi, and then they don't need to scan anything.",
            "Remove the need to scan anything",
        ),
        ("Otherwise people don't want to flip through all the channels.", None),
    ],
)
def test_who_does_not_have_something_drops_nothing(said: str, title: str | None) -> None:
    from shared.engine.offline.statement import capability

    found = capability(said).title
    if title is None:
        assert not found.startswith("Leave out"), found
    else:
        assert found == title


def test_the_rest_of_an_aside_cut_from_the_sentence_before_is_clean() -> None:
    draft = write_story(
        ["Carry-over: max 5 days into the next year.", "(Aisha: payroll can't handle more."]
    )
    assert "Payroll can't handle more." in draft.acceptance_criteria, draft
    assert not any(c.startswith("(") for c in draft.acceptance_criteria), draft


@pytest.mark.parametrize(
    ("context", "title"),
    [
        ("Visitor permits are scratch cards today.", "Leave out visitor permits"),
        ("Claire: The QR codes are a nice idea.", "Leave out the QR codes"),
        ("It is a lot of work.", "Keep them out of this release"),  # nothing named: as said
    ],
)
def test_what_is_kept_out_of_the_release_is_left_out(context: str, title: str) -> None:
    draft = write_story(["Let's keep them out of this release."], context=[context])
    assert draft.title == title
    assert draft.source_quotes == ["Let's keep them out of this release."]  # quoted as said


def test_a_long_title_drops_the_relative_that_is_before_a_place() -> None:
    # was "See the expected return date of a book that's" (cut after ten words)
    assert make_title("see the expected return date of a book that's on loan") == (
        "See the expected return date of a book on loan"
    )
    assert make_title("list the tickets that are assigned to me") == (
        "List the tickets that are assigned to me"  # short enough: as said
    )


def test_what_is_seen_when_is_no_condition() -> None:
    # was "Given a user, when a book will be back, then members can't see."
    draft = write_story(
        [
            "Members should be able to see the expected return date of a book.",
            "Members can't see when a book will be back.",
        ]
    )
    assert not any(c.startswith("Given") for c in draft.acceptance_criteria)
    shown = write_story(
        ["We need a low battery alert.", "It should show a warning when it is low."]
    )
    assert shown.acceptance_criteria == [
        "Given a user, when it is low, then the low battery alert shows a warning."
    ]


def test_a_long_let_title_is_named_by_what_the_persona_does() -> None:
    # was "Let members log in with their library card number" (cut before "and PIN")
    draft = write_story(["The app must let members log in with their library card number and PIN."])
    assert draft.title == "Log in with their library card number and PIN"
    assert draft.description == "As a member, I want to log in with my library card number and PIN."
    short = write_story(["The app must let members renew a loan."])
    assert short.title == "Let members renew a loan"


def test_an_example_a_time_it_is_not_and_a_deadline_stay_out_of_the_condition() -> None:
    # was "Leave out if something fails a brake light" (the example read into the condition, the
    # "not on Friday" into a "Leave out"), and "Given a driver, when they can start the shift"
    # for a check done before it
    draft = write_story(
        [
            "And if something fails, like a brake light is out, I need to know straight away, not"
            " on Friday."
        ]
    )
    assert draft.title == "Know straight away when something fails"
    assert draft.acceptance_criteria == [
        "Given a user, when something fails, then the user knows straight away, not on Friday."
    ]
    before = write_story(
        ["I want the drivers to do the check on their phone before they can start the shift."]
    )
    assert before.acceptance_criteria == [
        "The drivers do the check on their phone before they can start the shift."
    ]


@pytest.mark.parametrize(
    ("speaker", "persona"),
    [
        ("Marco (fleet manager)", "fleet manager"),
        ("Fleet Manager", "fleet manager"),
        ("Project Manager", "user"),
        ("Ana (industrial designer)", "user"),
    ],
)
def test_a_qualified_role_of_a_speaker_is_the_persona(speaker: str, persona: str) -> None:
    draft = write_story(["I'd like a reminder when a van is due for its service."], speaker=speaker)
    assert draft.description.startswith(f"As a {persona}, I want ")


@pytest.mark.parametrize(
    ("statement", "persona"),
    [
        ("The company admin can add a PO number before the invoice goes out.", "company admin"),
        ("Site managers need to see which vans are out today.", "site manager"),
        ("As a school admin, I want to export the class list.", "school admin"),
        # the finance manager, not the finance team's member the word alone names
        ("The finance manager has to see every refund over fifty pounds.", "finance manager"),
        # words that do not say whose team the role is in
        ("Other managers should see which vans are out today.", "manager"),
        ("Busy receptionists need to see the next free slot.", "receptionist"),
    ],
)
def test_the_word_that_narrows_a_role_is_part_of_the_persona(statement: str, persona: str) -> None:
    draft = write_story([statement])
    assert draft.description.startswith(f"As a {persona}, I want to "), draft.description


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # where things are, not what is left out (were "Leave out managers need to see", "Leave
        # out the drivers")
        ("Managers need to see which vans are out today.", "See which vans are out today"),
        ("The drivers are out on the road all day.", None),
        ("The live map is out.", "Leave out the live map"),
        ("Visitor permits are out for now.", "Leave out visitor permits"),
        ("Sick leave is out of scope.", "Leave out sick leave"),
    ],
)
def test_out_is_left_out_only_of_a_thing_named(statement: str, title: str | None) -> None:
    draft = write_story([statement])
    if title is None:
        assert not draft.title.startswith("Leave out"), draft.title
    else:
        assert draft.title == title


def test_a_tail_that_says_why_or_what_a_word_refers_to_is_no_part_of_the_need() -> None:
    # was "The portal uses single sign-on ..., nobody wants another password." and "Provide
    # those fields" (the fields the sentence had just named)
    sso = write_story(
        [
            "The portal has to use single sign-on with our Microsoft accounts, nobody wants"
            " another password."
        ]
    )
    assert sso.acceptance_criteria == [
        "The portal uses single sign-on with our Microsoft accounts."
    ]
    form = write_story(
        ["So the form should ask for the device and the location, and those fields are mandatory."]
    )
    assert form.title == "Ask for the device and the location"
    must = write_story(["Drivers send the form from the van, so photo upload is a must."])
    assert must.title == "Provide photo upload"  # a thing named is still the need


def test_a_title_is_not_cut_between_a_noun_and_its_of() -> None:
    """Cut at ten words, "... collections in order | of pick-up time" named half a thing: the
    cut goes before the phrase the noun is in."""
    assert make_title(
        "Provide a simple screen listing today's collections in order of pick-up time"
    ) == ("Provide a simple screen listing today's collections")


@pytest.mark.parametrize(
    ("phrase", "title"),
    [
        # the only cut is at "of": it would leave "out" or "instead" dangling
        (
            "Keep the twelve biggest TV brands working straight out of the box every time",
            "Keep the twelve biggest TV brands working straight",
        ),
        (
            "Send every single weekly team rota update instead of the daily one by text",
            "Send every single weekly team rota update",
        ),
        # "of" that names a part of a thing is cut as before
        (
            "Provide a simple screen listing today's collections in order of pick-up time",
            "Provide a simple screen listing today's collections",
        ),
    ],
)
def test_a_title_is_not_cut_inside_a_preposition_with_of(phrase: str, title: str) -> None:
    assert make_title(phrase) == title


def test_what_a_notes_email_says_in_prose_is_drafted_literally() -> None:
    """Sentences of a call summary written as prose (written for this test): "they want
    customers to ..." is what customers do, a condition said without its comma is still one, who
    was clear about it is no criterion, and a title never ends on a bound cut from its figure."""
    order = write_story(
        [
            "They want customers to order plants online and pick them up at their nearest"
            " store within two hours."
        ]
    )
    assert order.acceptance_criteria == [
        "Customers order plants online and pick them up at their nearest store within two hours."
    ]
    refund = write_story(
        [
            "If an order isn't collected within three days it goes back into stock and the"
            " customer gets a refund automatically."
        ]
    )
    assert refund.title == "Go back into stock"
    assert refund.acceptance_criteria[0].startswith(
        "Given a user, when an order isn't collected within three days, then it goes back"
    )
    stock = write_story(
        [
            "Stock levels on the site need to come from the tills, Marta was clear that showing"
            " something as available when it isn't is the worst thing we could do."
        ]
    )
    assert not any("Marta" in c for c in stock.acceptance_criteria), stock.acceptance_criteria
    often = write_story(
        ["We agreed that isn't good enough and it has to be at least every fifteen minutes."]
    )
    assert not often.title.endswith("at least"), often.title


@pytest.mark.parametrize(
    ("statement", "title", "criterion"),
    [
        # when, said by a clock time or a figure before the event, is the criterion (was the
        # title "Send reminder emails at 7 pm the evening before collection" with none)
        (
            "Okay, reminder emails go out at 7 pm the evening before collection.",
            "Send reminder emails",
            "Reminder emails go out at 7 pm the evening before collection.",
        ),
        (
            "Reminders go out by text forty-eight hours before the appointment.",
            "Send reminders by text",
            "Reminders go out by text forty-eight hours before the appointment.",
        ),
        # the first cut that leaves a title: "at 9 am" (not "every Monday", "Get a summary")
        (
            "Managers get a summary every Monday at 9 am.",
            "Get a summary every Monday",
            "Managers get a summary every Monday at 9 am.",
        ),
        # a job said to run is run by the product (was "Run nightly at two a.m")
        (
            "The export runs nightly at two a.m.",
            "Run the export",
            "The export runs nightly at two a.m.",
        ),
        ("The sync should run every hour.", "Run the sync", "The sync runs every hour."),
        # was the criterion "The reports sent is available every Monday."
        (
            "We want the reports sent every Monday.",
            "Send the reports",
            "The reports are sent every Monday.",
        ),
    ],
)
def test_when_it_happens_is_the_criterion(statement: str, title: str, criterion: str) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.acceptance_criteria) == (title, [criterion])


@pytest.mark.parametrize(
    "statement",
    [
        # a bound cut from its figure leaves no title ("Book online up")
        "Patients book online up to six weeks ahead.",
        # no figure: when is part of what is asked for
        "For the residents it's really about knowing when the bin is coming, like, a text the"
        " night before would be ideal.",
    ],
)
def test_when_without_a_figure_or_with_its_bound_stays_in_the_title(statement: str) -> None:
    title = write_story([statement]).title
    assert title.endswith(("six weeks ahead", "the night before")), title


def test_a_criterion_never_loses_the_thing_its_verb_acts_on() -> None:
    # "somebody else can grab it" was the criterion "Somebody else grabs."
    draft = write_story(
        [
            "The slots are released forty-eight hours before.",
            "Two days before, somebody else can grab it.",
        ]
    )
    assert draft.acceptance_criteria == ["The slots are released forty-eight hours before."]


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # a price said of a thing is what is charged for it (was "Cost", "I want a second
        # permit to cost.")
        (
            "A second permit costs more, it's ninety pounds instead of sixty.",
            "Charge more for a second permit",
            "As a user, I want to charge more for a second permit.",
        ),
        # what nobody may have more of is a limit (was "Do not let anyone get")
        (
            "And nobody gets more than two permits per address.",
            "Limit permits to two per address",
            "As a user, I want nobody to get more than two permits per address.",
        ),
        # when it comes leaves the title, what it is of stays (was "Provide a report")
        (
            "I'd also like a report every Monday at eight of permits that expired without renewal.",
            "Provide a report of permits that expired without renewal",
            "As a user, I want a report every Monday at eight of permits that expired without"
            " renewal.",
        ),
        # a role, then what it does (was "Staff request leave ...", "I want to staff request")
        (
            "Staff request leave from their phone.",
            "Request leave from their phone",
            "As a staff member, I want to request leave from my phone.",
        ),
        # the thing left out in lower case (was "Leave out Sick leave")
        (
            "Sick leave is out of scope for now.",
            "Leave out sick leave",
            "As a user, I want no sick leave.",
        ),
        # a one-word label names the thing, the limit after it is its criterion
        (
            "Carry-over: up to five days into the next year.",
            "Provide a carry-over",
            "As a user, I want carry-over.",
        ),
    ],
)
def test_prices_limits_labels_and_roles_said_in_notes(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


def test_one_new_figure_replaces_one_old_one_the_nearest() -> None:
    from shared.analysis.revision import revise_text, revision

    earlier = (
        "Late payers get a reminder after seven days, and after fourteen days their door access"
        " is paused."
    )
    # was both "seven" and "fourteen" changed to "twenty-one"
    found = revision(earlier, "Let's say twenty-one days.")
    assert found is not None and found.changes == (("fourteen", "twenty-one"),)
    assert revise_text(earlier, found) == (
        "Late payers get a reminder after seven days, and after twenty-one days their door"
        " access is paused."
    )
    # as many new figures as old ones: each replaces the one said in its place
    again = revision(earlier, "A reminder after ten days, and access paused after thirty days.")
    assert again is not None and again.changes == (("seven", "ten"), ("fourteen", "thirty"))


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # people told something are sent it (was "Make late payers get a reminder")
        (
            "Late payers get a reminder after seven days.",
            "Send late payers a reminder",
            "As a user, I want late payers to get a reminder after seven days.",
        ),
        # who does what is done is the persona (was "Approve credit notes by the finance
        # manager", "As a user, I want credit notes to be approved by ...")
        (
            "Also, credit notes have to be approved by the finance manager, nobody else.",
            "Approve credit notes",
            "As a finance manager, I want to approve credit notes.",
        ),
        # was "Make the password reset by the admin"
        (
            "The password is reset by the admin.",
            "Reset the password",
            "As an admin, I want to reset the password.",
        ),
        # "by the user" names no role of its own
        (
            "Functions that may be used by the user every day.",
            "Provide functions that may be used by the user",
            "As a user, I want functions that may be used by the user every day.",
        ),
    ],
)
def test_who_is_told_or_acts_in_a_passive(statement: str, title: str, description: str) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


def test_a_role_said_bare_before_a_noun_is_no_persona() -> None:
    # "Visitor permits too." names permits for visitors, not visitors who permit (was "As a
    # visitor, I want the wardens' handhelds to see ...")
    draft = write_story(
        [
            "And the wardens' handhelds need to see the new permit within five minutes.",
            "Visitor permits too.",
        ]
    )
    assert draft.description.startswith("As a user, ")
    # notes without articles still name the role that acts
    assert write_story(["Manager approves every claim over fifty pounds."]).description == (
        "As a manager, I want to approve every claim over fifty pounds."
    )


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # the need said first stays the need; what is not wanted after it is its criterion
        # (was "Leave out cheques", "As a member, I want no cheques.")
        (
            "And members pay by card or direct debit, we don't want cheques anymore.",
            "Pay by card or direct debit",
            "As a member, I want to pay by card or direct debit.",
        ),
        # the role named as a team acts itself (was "I want payroll to get a CSV ...")
        (
            "Payroll gets a CSV of approved leave on the 20th of each month.",
            "Get a CSV of approved leave",
            "As a payroll team member, I want to get a CSV of approved leave on the 20th of"
            " each month.",
        ),
    ],
)
def test_the_need_said_first_and_the_team_that_acts(
    statement: str, title: str, description: str
) -> None:
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


def test_a_condition_said_in_a_clause_after_the_need_is_its_given_when_then() -> None:
    """ "..., and when someone cancels you get a message": the need's behaviour, with the generic
    "you" said as "they" (the draft had no criterion)."""
    draft = write_story(
        [
            "You want an earlier slot , you go on a list , and when someone cancels you get a message ."
        ]
    )
    assert draft.acceptance_criteria == [
        "Given a user, when someone cancels, then they get a message."
    ]


@pytest.mark.parametrize(
    ("said", "title"),
    [
        (
            "Each household gets sixty visitor hours a month .",
            "Give each household sixty visitor hours a month",
        ),
        (
            "Every member gets two guest passes a month .",
            "Give every member two guest passes a month",
        ),
    ],
)
def test_what_each_one_gets_is_given_to_each(said: str, title: str) -> None:
    assert write_story([said]).title == title


@pytest.mark.parametrize(
    ("said", "criterion"),
    [
        (
            "If you start from home on a day you'd normally come into the office , you take off"
            " your usual commute .",
            "Given a user, when they start from home on a day they'd normally come into the"
            " office, then they take off their usual commute.",
        ),
        (
            "If a slot frees up , it tells you straight away .",
            "Given a user, when a slot frees up, then it tells them straight away.",
        ),
    ],
)
def test_the_generic_you_of_a_given_when_then_is_they_or_them(said: str, criterion: str) -> None:
    """A subject "you" anywhere in the clause is "they" (was "them'd normally come"), an object
    "you" is "them", "your" is "their"."""
    assert criterion in _after_a_need(said).acceptance_criteria


def test_a_condition_with_then_after_the_need_gives_its_result_without_then() -> None:
    """ "..., when the battery's empty, then there is a bleep": the result is "there is a bleep"
    (the "then" had made it no result, and the condition was lost)."""
    draft = _after_a_need(
        "Uh but we can also use it uh a bleep like something , when the battery's empty , then"
        " there is a bleep ."
    )
    assert "Given a user, when the battery's empty, then there is a bleep." in (
        draft.acceptance_criteria
    )


@pytest.mark.parametrize(
    ("said", "title"),
    [
        (
            "VAT at twenty percent on everything except the catering .",
            "Charge VAT at twenty percent on everything except the catering",
        ),
        ("A late fee of ten pounds .", "Charge a late fee of ten pounds"),
        ("A reminder after seven days .", "Send a reminder after seven days"),
    ],
)
def test_a_charge_at_its_rate_is_charged(said: str, title: str) -> None:
    assert write_story([said]).title == title


@pytest.mark.parametrize(
    ("said", "criterion"),
    [
        (
            "Carry-over: up to five days into the next year, decided by HR, not by the team lead.",
            "HR decides the carry-over, not the team lead.",
        ),
        (
            "Refunds over fifty pounds, approved by the finance manager.",
            "The finance manager approves refunds over fifty pounds.",
        ),
    ],
)
def test_who_decides_said_after_the_need_is_its_criterion(said: str, criterion: str) -> None:
    """ "..., decided by HR, not by the team lead": who decides is a criterion (it was lost)."""
    assert criterion in write_story([said]).acceptance_criteria


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # what the span counts from goes with it (was "Start returns of delivery")
        (
            "Returns have to be started within thirty days of delivery.",
            "Start returns within thirty days of delivery",
        ),
        (
            "Invoices have to be paid within thirty days of the invoice date.",
            "Pay invoices within thirty days of the invoice date",
        ),
        # what a report is of stays when when it comes is cut
        (
            "We need a report every Monday at eight of permits that expired without renewal.",
            "Provide a report of permits that expired without renewal",
        ),
        ("We're not doing exchanges yet, they just return and reorder.", "Leave out exchanges"),
        ("The app should lock itself after five minutes.", "Lock itself after five minutes"),
    ],
)
def test_a_span_counted_from_something_and_what_is_not_done_yet(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "description"),
    [
        # what follows for the persona is theirs (was "..., and then they get five percent extra")
        (
            "Customers can choose store credit, and then they get five percent extra.",
            "As a customer, I want to choose store credit, and then I get five percent extra.",
        ),
        (
            "Contractors upload a photo when they close the job.",
            "As a contractor, I want to upload a photo when I close the job.",
        ),
    ],
)
def test_they_who_follow_on_for_the_persona_are_i(statement: str, description: str) -> None:
    assert write_story([statement]).description == description


def test_the_persona_who_does_it_themselves() -> None:
    # was "See which rooms are free and book one myself" and "The user sees which rooms are
    # free and book one myself."
    draft = write_story(["I want to see which rooms are free and book one myself."])
    assert "myself" not in draft.title
    assert draft.acceptance_criteria == [
        "The user sees which rooms are free and books one themselves."
    ]


@pytest.mark.parametrize(
    ("question", "answer", "whole"),
    [
        (
            "Does every room need an inspection?",
            "No, only checkouts.",
            "Only checkouts need an inspection.",
        ),
        (
            "Does every booking need approval?",
            "Only the large one.",
            "Only the large one needs approval.",
        ),
        (
            "Is every ticket billable?",
            "No, just the urgent ones.",
            "Only the urgent ones are billable.",
        ),
        ("Can all staff see it?", "Only managers.", "Only managers can see it."),
        ("Does every room need an inspection?", "Yes.", None),
        ("Does every room need an inspection?", "No, only checkouts, stayovers go to ready.", None),
        ("How many rooms need an inspection?", "Only checkouts.", None),
    ],
)
def test_an_answer_that_narrows_a_yes_no_question_is_said_with_its_words(
    question: str, answer: str, whole: str | None
) -> None:
    assert only_said_whole(question, answer) == whole


def test_a_criterion_with_a_figure_in_words_adds_to_the_title() -> None:
    """ "under two seconds" is a figure as much as "under 2 seconds"; the same figure as the
    title's adds nothing."""
    title = "Check a number plate on the street"
    assert adds_to_title("The product is quick, under two seconds.", title)
    assert not adds_to_title("The product is quick.", title)
    assert not adds_to_title("Keep it within two seconds.", "Keep it within two seconds")


def test_a_title_on_when_or_whether_something_is_so_names_a_capability() -> None:
    assert reads_as_capability("See when their permit expires")
    assert reads_as_capability("Check if the van is free")
    assert not reads_as_capability("See when we get there")
    draft = write_story(["Residents also want to see when their permit expires."])
    assert draft.title == "See when their permit expires" and readable(draft)


def test_an_auxiliary_said_again_as_another_keeps_the_second() -> None:
    assert (
        clean_restarts("So you don't won't have to change it") == "So you won't have to change it"
    )
    assert clean_restarts("it should will work") == "it will work"
    assert clean_restarts("what we can do will help") == "what we can do will help"
    assert clean_restarts("you do not need it") == "you do not need it"


def test_a_frequency_in_minutes_or_seconds_corrected_bare_revises_the_figure() -> None:
    earlier = "Team leads want a dashboard per zone, refreshed every minute, so they can plan."
    found = revision(earlier, "Sorry, every thirty seconds.")
    assert found is not None and not found.restated
    assert revise_text(earlier, found) == (
        "Team leads want a dashboard per zone, refreshed every thirty seconds, so they can plan."
    )
    week = revision("Reminders go out every week.", "Actually, every two weeks.")
    assert week is not None and revise_text("Reminders go out every week.", week) == (
        "Reminders go out every two weeks."
    )


def test_what_the_team_takes_to_someone_else_is_no_criterion() -> None:
    draft = write_story(["A third one costs more, we'd need to check the price with finance."])
    assert not any("finance" in c for c in draft.acceptance_criteria)
    kept = write_story(["We need to check the address with the postcode lookup service."])
    assert kept.title == "Check the address with the postcode lookup service"


def test_examples_said_last_are_a_detail_of_the_criterion() -> None:
    draft = write_story(
        [
            "Residents should apply online and upload a proof of address, like a council tax"
            " bill or a tenancy agreement."
        ]
    )
    assert draft.title == "Apply online and upload a proof of address"
    assert draft.description == (
        "As a resident, I want to apply online and upload a proof of address."
    )
    assert draft.acceptance_criteria == [
        "Residents apply online and upload a proof of address, such as a council tax bill or a"
        " tenancy agreement."
    ]


@pytest.mark.parametrize(
    ("said", "title"),
    [
        (
            "Yeah , the sample sensor will have to go , 'cause that's the most expensive thing .",
            "Leave out the sample sensor",
        ),
        ("The teletext button can go.", "Leave out the teletext button"),
        ("The data has to go to the server.", "Send the data to the server"),
        (
            "When they finish a room they mark it clean, and reception sees it straight away.",
            "Mark it clean when they finish a room",
        ),
        (
            "If an item is out of stock, the picker marks it short and moves on.",
            "Mark it short and move on",
        ),
    ],
)
def test_titles_of_a_thing_let_go_and_of_a_step_of_the_work(said: str, title: str) -> None:
    """Was: "Make the sample sensor go"; "See it straight away" (the clause after "when they
    finish a room they mark it clean" read as the need); "Mark it short and moves on"."""
    assert write_story([said]).title == title


def test_a_step_after_a_condition_names_its_role_and_where_they_are() -> None:
    draft = write_story(["If an item is out of stock, the picker marks it short and moves on."])
    assert draft.description == "As a picker, I want to mark it short and move on."
    arrive = write_story(
        ["When you arrive, you scan a QR code on the door, and that confirms you're there."]
    )
    assert arrive.acceptance_criteria[0].endswith("and that confirms they're there.")


def test_talk_of_minding_something_and_a_quality_before_its_noun_name_no_capability() -> None:
    """The demo meeting with no cap to cut them: "Remember that our company" (the team minding
    its company's style) and "Desire into simple actions" ("simple desires into simple
    actions", a quality and its noun read as a subject and a verb)."""
    assert not reads_as_capability("Remember that our company")
    assert reads_as_capability("Remember my card details")
    assert not reads_as_capability("Provide simple desires into simple actions")
    assert write_story(["simple desires into simple actions ."]).title != (
        "Desire into simple actions"
    )


def test_the_role_s_own_thing_is_mine_in_the_description() -> None:
    draft = write_story(["Pickers need to get their next order on the scanner."])
    assert draft.description == "As a picker, I want my next order on the scanner."


@pytest.mark.parametrize(
    ("question", "answer", "whole"),
    [
        (
            "Do we take payment in the app?",
            "But for prescriptions, yes, they pay when they order.",
            "We take payment in the app for prescriptions.",
        ),
        (
            "Do we take payment in the app?",
            "Not for consultations, they pay at the desk.",
            "We do not take payment in the app for consultations.",
        ),
        (
            "Does the manager approve it?",
            "Only for claims over a thousand.",
            "The manager approves it only for claims over a thousand.",
        ),
        (
            "Can they cancel online?",
            "For routine appointments, yes.",
            "They can cancel online for routine appointments.",
        ),
        ("Do we take payment in the app?", "Yes.", "We take payment in the app."),
        ("How do they pay?", "For prescriptions, yes.", None),
    ],
)
def test_an_answer_that_says_what_a_yes_no_question_holds_for(
    question: str, answer: str, whole: str | None
) -> None:
    assert scope_said_whole(question, answer) == whole


def test_turning_something_off_is_a_criterion_of_its_own() -> None:
    draft = write_story(
        [
            "So a reminder by text or email, two weeks before the booster is due.",
            "Yeah, their choice, and they can turn it off.",
        ]
    )
    assert "They can turn it off." in draft.acceptance_criteria
    assert adds_to_title("They can turn it off.", "Send a reminder by text or email")
    assert not adds_to_title("Users can turn it off.", "Turn off the alarm")


@pytest.mark.parametrize(
    ("said", "title"),
    [
        (
            "A tick is fine, but it has to record which parent gave it and when.",
            "Record which parent gave it and when",
        ),
        ("We need to log who changed it and when.", "Log who changed it and when"),
        ("Only managers should see it.", "Let only managers see it"),
        (
            "The trip details should go out as a message with the consent request, the date.",
            "Send out the trip details as a message",
        ),
        (
            "Members with a gold card get free delivery.",
            "Give members with a gold card free delivery",
        ),
    ],
)
def test_titles_keep_what_a_question_or_a_verb_of_access_is_about(said: str, title: str) -> None:
    """Was: "Record which parent gave", "Log who changed", "Let only managers see" (the object
    and "and when" cut as dangling words); "Go out as a message with the consent request" (what
    goes out left the title); "Provide members with a gold card get free delivery"."""
    assert write_story([said]).title == title


def test_a_rule_on_whom_it_holds_for_is_the_need_and_what_follows_a_criterion() -> None:
    """Was: "Do not let the parent see a payment screen" / "I want the parent never to see a
    payment screen" (the rule that says whom it is for left out: the opposite of what was said)."""
    draft = write_story(
        [
            "Right, anyone on free school meals gets the trip free, and the parent shouldn't see"
            " a payment screen at all."
        ]
    )
    assert draft.title == "Give anyone on free school meals the trip free"
    assert draft.description == (
        "As a user, I want anyone on free school meals to get the trip free."
    )
    assert draft.acceptance_criteria == ["The parent does not see a payment screen."]


@pytest.mark.parametrize(
    "said",
    [
        "Parents want trip photos, but that's a safeguarding nightmare, let's keep that out.",
        "Sales keep asking for trip photos, but that's out of scope.",
    ],
)
def test_what_someone_wants_left_out_in_the_same_breath_is_left_out(said: str) -> None:
    """Was: "Provide trip photos" / "As a parent, I want trip photos": what the meeting decided
    not to build, drafted as a need of the people who asked for it."""
    draft = write_story([said])
    assert draft.title == "Leave out trip photos"
    assert draft.description == "As a user, I want no trip photos."


@pytest.mark.parametrize(
    ("said", "criterion"),
    [
        (
            "I want to tick kids off when we get on the coach, and again when we leave.",
            "Tick kids off again when we leave.",
        ),
        (
            "A reminder three days before the deadline, and another one the day before.",
            "Send another one the day before.",
        ),
    ],
)
def test_a_second_time_said_after_the_need_is_a_criterion(said: str, criterion: str) -> None:
    """Was: no criterion, "and again when we leave" lost with the title's second clause."""
    assert write_story([said]).acceptance_criteria == [criterion]


def test_a_lone_verb_keeps_what_it_is_done_to_in_the_description() -> None:
    """Was: "As a crew member, I want to log." (the object cut as a dangling word)."""
    draft = write_story(["If a bin is missed, the crew should log it."])
    assert draft.description == "As a crew member, I want to log it."


@pytest.mark.parametrize(
    ("question", "answer", "whole"),
    [
        (
            "Do they need an account?",
            "No, guest checkout is fine.",
            "They do not need an account; guest checkout is fine.",
        ),
        (
            "Can they cancel online?",
            "Yes, any time, no phone call needed.",
            "They can cancel online; any time, no phone call needed.",
        ),
        ("Can they cancel online?", "Yes.", "They can cancel online."),
        (
            "Can parents pay in instalments?",
            "For day trips, no.",
            "Parents cannot pay in instalments for day trips.",
        ),
        ("Can they cancel online?", "Yes, but only by email.", None),
        (
            "Can they cancel online?",
            "Yes, people ask for that all the time.",
            "They can cancel online.",
        ),
    ],
)
def test_a_yes_or_no_to_a_question_on_what_someone_does_is_said_with_its_words(
    question: str, answer: str, whole: str | None
) -> None:
    """Was: None for a bare yes or no ("No, guest checkout is fine." a criterion as said,
    "Yes, any time, no phone call needed." the story "Leave out phone call needed"), and "For
    day trips, no." said as "Parents can pay in instalments for day trips." (the opposite)."""
    assert scope_said_whole(question, answer) == whole


def test_a_bare_figure_set_anew_after_the_word_it_was_said_after_is_a_revision() -> None:
    """Was: no revision (the figure has no unit), and "Make that free over thirty" a story."""
    found = revision(
        "Delivery costs three pounds, free over twenty-five.",
        "Make that free over thirty, twenty-five is too generous with the new prices.",
    )
    assert found is not None and found.changes == (("twenty-five", "thirty"),)
    assert revise_text("Delivery costs three pounds, free over twenty-five.", found) == (
        "Delivery costs three pounds, free over thirty."
    )


def test_a_charge_named_by_its_one_word_and_a_case_nobody_is_in() -> None:
    """Was: "Cost three pounds"; "As a driver, I want to mark it failed and the customer gets a
    text." with no criterion ("nobody's in" read as an empty condition)."""
    assert write_story(["Delivery costs three pounds, free over thirty."]).title == (
        "Charge three pounds for delivery"
    )
    failed = write_story(
        ["If nobody's in, the driver marks it failed and the customer gets a text."]
    )
    assert failed.description == "As a driver, I want to mark it failed."
    assert failed.acceptance_criteria == [
        "Given a driver, when nobody's in, then the driver marks it failed and the customer gets"
        " a text."
    ]


def test_what_is_left_for_later_in_the_same_breath_is_left_out_with_no_criterion() -> None:
    """Was: "Provide a loyalty card" / "As a customer, I want a loyalty card too." and then
    "Customers have a loyalty card too." (the opposite of the decision) as its criterion."""
    draft = write_story(["Customers want a loyalty card too, but let's leave that for later."])
    assert draft.title == "Leave out a loyalty card"
    assert draft.description == "As a user, I want no loyalty card."
    assert draft.acceptance_criteria == []


@pytest.mark.parametrize(
    ("said", "title"),
    [
        ("Cakes need forty-eight hours notice.", "Require forty-eight hours notice for cakes"),
        (
            "Large orders need at least two days notice.",
            "Require at least two days notice for large orders",
        ),
        (
            "Delivery is only within three miles of the shop.",
            "Deliver only within three miles of the shop",
        ),
    ],
)
def test_the_notice_a_thing_needs_and_where_a_service_is_offered(said: str, title: str) -> None:
    """Was: "Provide forty-eight hours notice" (what needs it left out) and "Make delivery only
    within three miles of the shop"."""
    assert write_story([said]).title == title


def test_examples_said_on_their_own_are_a_criterion_of_the_need_before() -> None:
    """Was: "Allergies, inhalers, that kind of thing." quoted with no criterion ("kind of" cut as
    a hedge left "that thing")."""
    draft = write_story(
        ["Teachers need the medical info on the day.", "Allergies, inhalers, that kind of thing."]
    )
    assert draft.acceptance_criteria == ["Such as allergies, inhalers."]


def test_a_subject_picked_out_between_commas_stays_in_the_title() -> None:
    """Was: "Fix within twenty-four hours" / "I want the product to be fixed ..." (the subject
    lost to the aside that picks it out)."""
    draft = write_story(
        [
            "Dangerous ones, deeper than forty millimetres, have to be fixed within twenty-four hours."
        ]
    )
    assert draft.title == "Fix dangerous ones within twenty-four hours"
    assert draft.description == (
        "As a user, I want dangerous ones to be fixed within twenty-four hours."
    )


def test_no_but_is_a_no() -> None:
    assert scope_said_whole(
        "Do they need to log in?", "No, but they can leave an email if they want updates."
    ) == ("They do not need to log in.")
    assert scope_said_whole("Can they cancel online?", "Yes, but only by email.") is None


@pytest.mark.parametrize(
    ("said", "criterion"),
    [
        (
            "The key safe code must only be visible on the day of the walk.",
            "The key safe code is only visible on the day of the walk.",
        ),
        (
            "The report should only be available to managers.",
            "The report is only available to managers.",
        ),
        (
            "After each walk the walker sends a short update with a photo.",
            "After each walk the walker sends a short update with a photo.",
        ),
    ],
)
def test_only_and_a_time_said_first_make_criteria(said: str, criterion: str) -> None:
    """Was: no criterion ("only be visible" gave no statement, and "only" was no word of its
    own); "Given a user, when each walk, then the walker sends ..." (a time read as an event)."""
    assert write_story([said]).acceptance_criteria == [criterion]


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # "only if" says when the thing is given; the verb after it is the condition's
        ("Refunds only if the school cancels.", "Provide refunds only if the school cancels"),
        # a time said first without its comma stays a time, not part of who acts
        (
            "After each walk the walker sends a short update with a photo.",
            "Send a short update with a photo after each walk",
        ),
        # a label of one word and how the thing it names is
        (
            "Cancellations: free up to 24h before, after that the walk is charged in full.",
            "Make cancellations free up to 24h before",
        ),
        # people named as who gets a message are who it is sent to
        (
            "Residents get an email when it's fixed, if they left one.",
            "Send residents an email when it's fixed",
        ),
        (
            "Parents get a text when the coach is back.",
            "Send parents a text when the coach is back",
        ),
        ("They get an email when it's done.", "Get an email when it's done"),
        # what "that" is, the condition said first names
        (
            "If the same pothole has already been reported, we should show that and let them add"
            " a plus one.",
            "Show that the same pothole has already been reported",
        ),
    ],
)
def test_probe_meetings_titles_say_what_was_asked(statement: str, title: str) -> None:
    """Was: "Cancel", "Send a short update with a photo" ("As an owner, I want after each walk
    the walker to send ..."), "Provide free up to 24h before", "Get an email when it's fixed"
    (unreadable: the story became a quote of another), "Parents get a text ...", "Show that and
    let them add a plus one"."""
    draft = write_story([statement])
    assert draft.title == title
    assert _title_check(draft.title).passed, _title_check(draft.title).detail


def test_a_no_with_its_condition_is_a_rule_not_a_thing_to_provide_or_leave_out() -> None:
    """Was: "Provide unless it's medical" (the condition taken for the need) and "Leave out
    reminder if it was booked"."""
    title = write_story(["If the child drops out, no refund, unless it's medical."]).title
    assert "no refund" in title and not reads_as_capability(title)  # no story is written from it
    assert not reads_as_capability("Provide no refund unless it's medical")
    assert reads_as_capability("Provide no more than 8 physical buttons")
    assert write_story(["No photos."]).title == "Leave out photos"


@pytest.mark.parametrize(
    ("statement", "persona"),
    [
        ("Walkers see their walks for the day in order, with the address.", "walker"),
        ("Florists can upload a photo of each bouquet.", "florist"),
        ("Scanners see the barcode from a metre away.", "user"),
        ("Reminders go out the day before.", "user"),
    ],
)
def test_people_the_lexicon_does_not_name_are_the_persona(statement: str, persona: str) -> None:
    """Was: "As a user, I want walkers to see their walks ..."; a thing in -ers is no role."""
    assert write_story([statement]).description.startswith(f"As a {persona}, I want")


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        (
            "General entry stays free, but the special exhibitions are paid.",
            "Keep general entry free",
            "As a user, I want general entry to stay free.",
        ),
        (
            "Under sixteens free, with an adult.",
            "Make under sixteens free",
            "As a user, I want under sixteens to be free.",
        ),
        (
            "Volunteers free up the desk after ten.",
            "Free up the desk",
            "As a volunteer, I want to free up the desk after ten.",
        ),
    ],
)
def test_free_after_its_subject_is_a_state_unless_it_acts_on_something(
    statement: str, title: str, description: str
) -> None:
    """Was: "Make general entry stays free" / "general entry stays to free", and "under
    sixteens to free"."""
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


def test_a_yes_said_last_is_a_yes_and_a_later_time_leaves_a_want_out() -> None:
    from shared.engine.offline.statement import wanted_but_left_out

    assert scope_said_whole("Can they change the numbers later?", "Up to a week before, yes.") == (
        "They can change the numbers later, up to a week before."
    )
    assert wanted_but_left_out(
        "People want to rent them online, but the supplier can't integrate yet, so not this year."
    )
    assert wanted_but_left_out("Users want dark mode, but not now.")
    assert not wanted_but_left_out("Users want dark mode, but it must not now crash.")


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # what is seen is a question, the title's object: not cut at "which"
        (
            "I'd like the housekeepers to see on a tablet which rooms are free to clean.",
            "See on a tablet which rooms are free to clean",
        ),
        # "those languages" are the ones named before "so"
        (
            "A lot of our staff speak Spanish or Portuguese, so the tablet app has to be in those"
            " languages too.",
            "Provide the tablet app in Spanish or Portuguese",
        ),
        ("We need a report which shows the totals per week.", "Provide a report"),
    ],
)
def test_an_interview_titles_keep_what_is_seen_and_name_those_things(
    statement: str, title: str
) -> None:
    """Was: "See on a tablet" and "Make the tablet app in those languages"."""
    assert write_story([statement]).title == title


def test_a_figure_answered_for_a_case_and_with_need_to_is_said_whole() -> None:
    """Was: None ("For urgent things" first; "need" not read as the question's verb)."""
    from shared.engine.offline.grouping import answer_said_whole

    assert answer_said_whole(
        "How fast does maintenance need to react?", "For urgent things, within an hour."
    ) == ("Maintenance needs to react within an hour for urgent things.")


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # what people want to do, left out: what they would do is what is left out
        (
            "Members want to put their match results in and see a league table, but let's leave"
            " that for later.",
            "Leave out putting their match results in",
            "As a user, I want putting their match results in and seeing a league table to be"
            " left out.",
        ),
        # people said to get something done to them: it is done to them, no want of theirs
        (
            "They get blocked from booking for a week.",
            "Block them from booking for a week",
            "As a user, I want them to be blocked from booking for a week.",
        ),
        # "they" who mark something are people, not the product
        (
            "Yes, they should mark the room as clean when they're done.",
            "Mark the room as clean when done",
            "As a user, I want to mark the room as clean when I'm done.",
        ),
    ],
)
def test_a_club_call_what_is_left_out_done_to_people_or_done_by_them(
    statement: str, title: str, description: str
) -> None:
    """Was: "Remove the need to put their match results in" (the opposite meaning), "Get
    blocked from booking" and "I want the product to mark the room as clean"."""
    draft = write_story([statement])
    assert (draft.title, draft.description) == (title, description)


def test_a_club_call_examples_end_the_first_need_leads_and_a_topic_named_is_no_criterion() -> None:
    """Was: "..., such as recurring, every Tuesday, that thing." ("kind of" read as a hedge),
    "Approve it" (the later clause on "it" taken for the need, so no story) and "The club
    app." a criterion."""
    coached = write_story(
        [
            "Coaches need to, uh, block courts for their sessions, like recurring, every Tuesday,"
            " that kind of thing."
        ]
    )
    assert coached.acceptance_criteria == [
        "Coaches block courts for their sessions, such as recurring, every Tuesday."
    ]
    juniors = write_story(
        ["Juniors can only book before six on weekdays, and a parent has to approve it, I think."]
    )
    assert juniors.title == "Book only before six on weekdays"
    booked = write_story(
        [
            "Members should be able to book a court without ringing the office.",
            "Okay so, um, the club app.",
        ]
    )
    assert booked.acceptance_criteria == []


@pytest.mark.parametrize(
    ("quotes", "criteria"),
    [
        (  # said after the limit, in the same statement
            ["Cancellations: free up to 24h before, after that the walk is charged in full."],
            ["After that the walk is charged in full."],
        ),
        (  # said in a statement of its own after the one that holds the limit
            [
                "Refunds for paid exhibitions up to forty-eight hours before.",
                "No refunds after that.",
            ],
            [
                "Refunds for paid exhibitions up to forty-eight hours before.",
                "No refunds after that.",
            ],
        ),
        (  # its own criterion first, then what holds past the limit
            [
                "Okay, personal booking history kept for one year, anonymised after that, aggregate"
                " stats kept."
            ],
            [
                "Personal booking history kept for one year, aggregate stats kept.",
                "Anonymised after that.",
            ],
        ),
    ],
)
def test_what_holds_past_a_limit_is_a_criterion_of_its_own(
    quotes: list[str], criteria: list[str]
) -> None:
    """Was: no criterion for the cancellations (a Given/When/Then read from "after that the walk
    is charged", then dropped), and "No refunds after that." none (its words all in the title)."""
    assert write_story(quotes).acceptance_criteria == criteria


def test_who_does_it_and_what_they_do_said_with_a_limit_are_criteria() -> None:
    """Was: only "Up to thirty pupils." of the three things said of group bookings."""
    draft = write_story(
        [
            "We need group bookings.",
            "Up to thirty pupils, booked by the teacher, and they pay by invoice.",
        ]
    )
    assert draft.acceptance_criteria == [
        "Up to thirty pupils.",
        "Booked by the teacher.",
        "They pay by invoice.",
    ]


@pytest.mark.parametrize(
    ("statement", "criterion"),
    [
        (
            "Residents get an email when it's fixed, if they left one.",
            "Given a resident, when it's fixed and they left an email, then residents get an"
            " email.",
        ),
        (
            "The driver marks it failed when nobody's in, if the customer doesn't answer the"
            " phone.",
            "Given a driver, when nobody's in and the customer doesn't answer the phone, then the"
            " driver marks it failed.",
        ),
    ],
)
def test_a_condition_said_last_joins_the_condition_of_the_need(
    statement: str, criterion: str
) -> None:
    """Was: no criterion (the condition said after the need's own one was cut with its clause,
    and "when it's fixed" alone adds nothing to the title)."""
    assert write_story([statement]).acceptance_criteria == [criterion]


def test_a_hedge_said_last_is_no_condition() -> None:
    draft = write_story(["Members can pause the subscription when they're away, if possible."])
    assert not any("possible" in c for c in draft.acceptance_criteria), draft.acceptance_criteria


def test_a_thing_that_shows_up_is_not_the_product() -> None:
    """Was: "Given a housekeeper, when the guest checks out, then the product shows up."."""
    draft = write_story(
        [
            "Well, I'd like the housekeepers to see on a tablet which rooms are free to clean.",
            "Like, as soon as the guest checks out, it should show up.",
        ]
    )
    assert draft.acceptance_criteria == [
        "Given a housekeeper, when the guest checks out, then it shows up."
    ]


def test_which_ones_a_figure_said_between_commas_picks_out_is_a_criterion() -> None:
    """Was: no criterion said "deeper than forty millimetres" (the subject and its figure were
    cut from the need's clause, which then only restated the title)."""
    draft = write_story(
        [
            "Dangerous ones, deeper than forty millimetres, have to be fixed within twenty-four hours."
        ]
    )
    assert draft.acceptance_criteria == ["Dangerous ones are deeper than forty millimetres."]


def test_a_material_said_with_an_article_is_what_it_is_made_of() -> None:
    """Was: "The product is a titanium." (the demo's "Keep it simple")."""
    draft = write_story(
        [
            "So be simple .",
            "For personal preferences I think that to make a baby-proof remote control it got to be"
            " a titanium .",
        ]
    )
    assert draft.acceptance_criteria == ["The product is made of titanium."]


@pytest.mark.parametrize(
    ("statement", "title", "description"),
    [
        # a word of talk said of the need, last or between commas (clinic, room booking)
        (
            "Recurring bookings, by the way.",
            "Provide recurring bookings",
            "I want recurring bookings.",
        ),
        ("By text, ideally, because it's important.", "Send by text", None),
        (
            "It'll have to meet WCAG two point two double A anyway, it's a legal requirement.",
            "Meet WCAG two point two double A",
            "I want the product to meet WCAG two point two double A.",
        ),
        # "it flips": a verb, no plural thing that "open" is said of (AMI ES2006d)
        (
            "And it flips open on the side , so it opens like that .",
            "Flip open on the side",
            "I want it to flip open on the side.",
        ),
        # a name given as the example is no part of the need (AMI IS1006d)
        (
            "Or uh , you can just give some nickname to your remote control , like Bobby {gap} .",
            "Give some nickname to the remote control",
            "I want to give some nickname to my remote control.",
        ),
        # the "you" anyone is, said in a story's first person (expense claims)
        (
            "So you'd want to hand your approvals to someone else while you're away.",
            "Hand the approvals to someone else while away",
            "I want to hand my approvals to someone else while I'm away.",
        ),
        # ... said after a condition, and in the title as the thing it is (expense claims)
        (
            "Yes, if you start from home on a day you'd normally come into the office, you take"
            " off your usual commute.",
            "Take off the usual commute",
            "I want to take off my usual commute.",
        ),
        # ... and in a means that is a thing's behaviour (room booking)
        (
            "If you book in the booking system, it appears in your Outlook calendar.",
            "Appear in the Outlook calendar",
            "I want it to appear in my Outlook calendar.",
        ),
    ],
)
def test_talk_said_of_a_need_leaves_its_draft(
    statement: str, title: str | None, description: str | None
) -> None:
    """Were: "Provide recurring bookings by the way", "Send by text, ideally", "Meet WCAG two point
    two double A anyway", "Make it flips open on the side" ("I want it flips to be open"), "Give
    some nickname to your remote control Bobby", "I want to hand your approvals ... while you're
    away"."""
    draft = write_story([statement])
    if title is not None:
        assert draft.title == title
    if description is not None:
        assert draft.description.endswith(description), draft.description


def test_a_title_may_end_on_a_letter_named_after_its_word() -> None:
    assert _title_check("Meet WCAG two point two double A").passed
    assert not _title_check("Provide the remote with a").passed


def test_a_result_said_before_the_conditions_comma_starts_at_its_subject() -> None:
    """Was: no criterion (the condition read as "it's blocked nobody can book into it")."""
    draft = write_story(
        [
            "So doctors can block out their own unavailable days and times.",
            "Yes, and once it's blocked nobody can book into it, online or at the desk.",
        ]
    )
    assert draft.acceptance_criteria == [
        "Given a doctor, when it's blocked, then nobody can book, online or at the desk."
    ]


def test_a_worry_is_no_result_of_a_condition() -> None:
    """Was: "Given a user, when it opens up, then it might be a little clumsy." (AMI ES2006d)."""
    draft = write_story(
        [
            "And it flips open on the side , so it opens like that .",
            "It might be a little clumsy when when it opens up , right ,",
        ]
    )
    assert not any("clumsy" in c for c in draft.acceptance_criteria), draft.acceptance_criteria


@pytest.mark.parametrize(
    ("sentence", "broken"),
    [
        ("But it does not hold any advantages as such for a {disfmarker}", True),
        ("Change colour of t", True),
        ("Yeah , that's the price we want to {disfmarker} {vocalsound}", True),
        # a need said whole, then another started, or a letter that names something
        ("So perhaps some sort of menu-based thing , or {disfmarker}", False),
        ("We'd normally aim for WCAG 2.1, level AA.", False),
        ("Let's go with option b .", False),
        ("We need a screen {disfmarker}", False),
    ],
)
def test_a_sentence_broken_off_before_it_says_what_it_is_about(sentence: str, broken: bool) -> None:
    assert breaks_off(sentence) is broken


@pytest.mark.parametrize(
    ("sentence", "dependency"),
    [
        ("The display requires a advanced chip , which is more expensive .", True),
        ("- Clap detection means a microphone that is always listening; that costs battery.", True),
        ("So that means we need an advanced thing .", False),
        ("The remote should require a PIN .", False),
        ("Managers require a report every Monday .", False),
    ],
)
def test_what_a_thing_takes_is_said_of_it(sentence: str, dependency: bool) -> None:
    assert states_a_dependency(sentence) is dependency


def test_what_might_happen_is_no_criterion() -> None:
    """Was: "In a given room there might be more than one remote control." (the demo's AMI
    meeting), a guess said after the need."""
    draft = write_story(
        [
            "Yeah actually we we can have one switch to switch on , on and off .",
            "So in in a given room there might be more than one remote control .",
            "And it must switch off after ten minutes .",
        ]
    )
    assert not any("might" in c for c in draft.acceptance_criteria), draft.acceptance_criteria
    assert any("ten minutes" in c for c in draft.acceptance_criteria), draft.acceptance_criteria


def test_those_things_named_before_the_need_are_named_in_its_criteria_too() -> None:
    """Was: the criterion "The tablet app is in those languages too." (the title named them)."""
    draft = write_story(
        [
            "A lot of our staff speak Spanish or Portuguese, so the tablet app has to be in those"
            " languages too.",
        ]
    )
    assert not any("those" in c for c in draft.acceptance_criteria), draft.acceptance_criteria
    assert "Spanish or Portuguese" in draft.description


def test_a_thing_needed_but_with_no_other_is_needed_without_it() -> None:
    """Was: "Provide a slot" and the criterion "A slot, but no payment is available." (museum)."""
    draft = write_story(["Yes, they still need a slot, but no payment."])
    assert draft.title == "Provide a slot without payment"
    assert not any("but no" in c for c in draft.acceptance_criteria), draft.acceptance_criteria


def test_a_second_action_on_one_is_left_to_the_criterion() -> None:
    """Was: "I want to see which rooms are free and book one myself" (two actions, the
    conjunction check of eval judge)."""
    draft = write_story(
        ["So really I want to see which rooms are free and book one myself, instantly."]
    )
    assert draft.description == "As a user, I want to see which rooms are free."
    assert any("books one" in c for c in draft.acceptance_criteria), draft.acceptance_criteria


def test_leaving_out_ones_own_thing_reads_as_not_having_it() -> None:
    """Was: "As a user, I want no my whole diary online." (the clinic meeting)."""
    draft = write_story(["I don't want my whole diary online, I keep some for the patients."])
    assert draft.description == "As a user, I want not to have my whole diary online."


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # the thing a need is for, said first and then as "it" (the clinic meeting)
        ("For health data we'd want it hosted in the UK.", "Host health data in the UK"),
        ("For the reports, we need them sorted by date.", "Sort the reports by date"),
        # ... but not when or whose
        ("For now we want it simple.", "Keep it simple"),
        ("For the invoices, we need a PDF export.", "Provide a PDF export for the invoices"),
    ],
)
def test_the_thing_said_first_is_what_it_is(statement: str, title: str) -> None:
    """Was: "Host it in the UK" (too few words to stand as a story: the requirement was lost into
    another story's quotes) and "Sort them by date for the reports"."""
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "description"),
    [
        # "their" of what the team acts on (AMI IS1006b, the demo: the TVs' specifications)
        (
            "So we need to check their specifications and do their uh encryption .",
            "As a user, I want to check their specifications.",
        ),
        ("I want to see their progress.", "As a user, I want to see their progress."),
        # ... and the doer's own, said of the doers
        (
            "They can renew a book from their phone.",
            "As a user, I want to renew a book from my phone.",
        ),
    ],
)
def test_their_is_mine_only_when_said_of_the_doers(statement: str, description: str) -> None:
    """Was: "As a user, I want to check my specifications." (the demo)."""
    assert write_story([statement]).description == description


def test_the_action_that_is_the_condition_says_no_second_when() -> None:
    """Was: "Given a user, when they mark the room as clean when they're done, then the supervisor
    checks." (the interview probe)."""
    draft = write_story(
        [
            "Yes, they should mark the room as clean when they're done, and then the supervisor"
            " checks it."
        ]
    )
    assert draft.acceptance_criteria == [
        "Given a user, when they mark the room as clean, then the supervisor checks."
    ]


def test_the_speakers_own_words_are_the_personas_in_a_criterion() -> None:
    """Was: "The approver sees all my team's claims that are waiting for me in one list."."""
    draft = write_story(
        [
            "As an approver, I want to see all my team's claims that are waiting for me in one"
            " list, and book one myself."
        ]
    )
    assert draft.acceptance_criteria == [
        "The approver sees all their team's claims that are waiting for them in one list."
    ]


def test_a_proviso_said_as_the_answer_is_the_need() -> None:
    """Was: "As a user, I want not as long as the system to record that it was a delegate, ..."
    (expense claims: "Is that a problem?" "Not as long as the system records ...")."""
    draft = write_story(
        ["Not as long as the system records that it was a delegate, so I see who approved it."]
    )
    assert draft.description.startswith("As a user, I want the system to record that it was")
    # ... but a proviso with a main clause after it stays a condition
    assert body("As long as it's cheap, we'll take it.").startswith("As long as")


@pytest.mark.parametrize(
    ("statement", "description"),
    [
        # a limit said first: who does it is not said; the product shows, people book
        (
            "I'd say under two seconds to show the free slots, even on a slow phone.",
            "As a user, I want the product to show the free slots in under two seconds.",
        ),
        (
            "Under five minutes to book a room.",
            "As a user, I want to book a room in under five minutes.",
        ),
        # a channel said alone (the clinic meeting)
        ("By text, ideally, because it's important.", "As a user, I want it by text."),
    ],
)
def test_a_means_said_without_its_verb_reads_as_a_want(statement: str, description: str) -> None:
    """Were: "I want under two seconds to show the free slots." and "I want by text."."""
    assert write_story([statement]).description == description


def test_leaving_out_any_reads_as_none() -> None:
    """Was: "As a user, I want no any extremes not of this size." (AMI IS1006a)."""
    draft = write_story(
        ["Yeah , but without any extremes like n not of this size , not too large ."]
    )
    assert draft.description == "As a user, I want no extremes not of this size."


def test_a_condition_on_this_names_nothing_in_a_title() -> None:
    """Was: "Leave out titanium when we choose" (AMI ES2006c: "If we choose this, we cannot use
    titanium."); a condition that names its event stays ("Mark it failed when nobody's in")."""
    assert (
        write_story(["If we choose this , we cannot use titanium ."]).title == "Leave out titanium"
    )
    failed = write_story(
        ["If nobody's in, the driver marks it failed and the customer gets a text."]
    )
    assert failed.title == "Mark it failed when nobody's in"


def test_the_doers_said_as_they_are_the_storys_i() -> None:
    """Was: "Mark the room as clean when they're done" / "I want to mark the room as clean when
    they're done" (the interview probe: "they" are the housekeepers, whose story it is)."""
    draft = write_story(
        [
            "Yes, they should mark the room as clean when they're done, and then the supervisor"
            " checks it."
        ]
    )
    assert draft.title == "Mark the room as clean when done"
    assert draft.description == "As a user, I want to mark the room as clean when I'm done."


def test_what_the_product_sends_the_persona_is_what_they_get() -> None:
    """Was: "As a receptionist, I want the product to send reception a notification when a room
    is ready." (the interview probe)."""
    draft = write_story(
        ["The system should send reception a notification when a room is ready."],
        default_persona="receptionist",
    )
    assert draft.description == (
        "As a receptionist, I want to get a notification when a room is ready."
    )


def test_a_condition_inside_what_is_left_out_is_no_criterion() -> None:
    """Was: "Given a user, when they pick up the remote, then automatic power on / off, TV
    switches on." (the planning notes: the behaviour dropped, written as one to check). A
    condition of a need not to do something stays one ("Do not charge the customer")."""
    dropped = write_story(
        [
            "Automatic power on / off (TV switches on when you pick up the remote) is dropped:"
            " not possible at this price."
        ]
    )
    assert dropped.title == "Leave out automatic power on / off"
    assert not any(c.startswith("Given") for c in dropped.acceptance_criteria)
    assert dropped.acceptance_criteria == [
        "Automatic power on / off, TV switches on when you pick up the remote, is dropped: not"
        " possible at this price."
    ]
    waiting = write_story(["Let's not do the waiting list when a class is full after all."])
    assert waiting.title.startswith("Leave out the waiting list")
    assert waiting.acceptance_criteria == []
    charge = write_story(["Don't charge the customer when the walk is cancelled by us."])
    assert charge.acceptance_criteria == [
        "Given a user, when the walk is cancelled by us, then don't charge the customer."
    ]


def test_a_question_written_without_its_mark_is_no_criterion() -> None:
    """Was: "Would with have the spinning wheel inside with the LCD, or would it be on the outer."
    as a criterion (dev ES2006c; the AMI transcript has no question mark there)."""
    draft = write_story(
        [
            "{vocalsound} and be in bright vegetable colours .",
            "and the buttons are also rubber .",
            "So {vocalsound} w w would with have the spinning wheel inside with the L_C_D_ , or"
            " would it be on the outer {disfmarker}",
            "and four of the buttons are in the wheel , and the other one's the little bit inside"
            " the wheel ,",
        ]
    )
    assert draft.acceptance_criteria == [
        "The buttons are also rubber.",
        "Four of the buttons are in the wheel, and the other one's the little bit inside the"
        " wheel.",
    ]
    # ... nor one read from a clause of the main statement (dev ES2006c, leave one meeting out)
    whether = write_story(
        [
            "Um {vocalsound} and uh I dunno whether sample sender sender has to do something with"
            " voice recognition or not , but anyway .",
            "Uh besides this in electr under electronics uh also the company has started making a"
            " sample sender , which is {vocalsound} {disfmarker} did not explained what i what it"
            " was , but I'm guessing that uh {vocalsound} {disfmarker} so they have a sample"
            " sender and a sample speaker .",
        ]
    )
    assert not any(c.startswith("Whether") for c in whether.acceptance_criteria)


def test_a_time_said_first_by_its_figure_is_when_not_the_need() -> None:
    """Was "Provide a month before expiry" for "A month before expiry, alert the coordinator
    ...": a time said first by its figure, then a comma, is when the need holds."""
    draft = write_story(["Two days before the shift, text each volunteer a reminder."])
    assert draft.title == "Text each volunteer a reminder"
    assert "two days before the shift" in draft.description
    ahead = write_story(["Ten working days ahead of the start date, send the welcome pack."])
    assert ahead.title == "Send the welcome pack"


def test_rules_named_as_a_thing_are_complied_with() -> None:
    """Was "Provide public sector accessibility regulations"; a thing merely called standard is
    still provided."""
    draft = write_story(["Accessibility regulations for the public sector, WCAG 2.2 AA."])
    assert draft.title.startswith("Comply with ")
    assert draft.description.endswith("I want the product to comply with " + draft.title[12:] + ".")
    assert write_story(["The GDPR, obviously."]).title == "Comply with the GDPR"
    assert write_story(["Standard buttons."]).title == "Provide standard buttons"
    assert write_story(["A standard remote control."]).title == "Provide a standard remote control"


def test_what_the_people_doing_something_must_have_is_required_of_them() -> None:
    """Was "Provide an enhanced DBS check" ("As a user, I want an enhanced DBS check"): the people
    it is required of, described over commas, were lost."""
    draft = write_story(
        [
            "So anyone running the youth club, with the teenagers, or visits to elderly members, has"
            " to have an enhanced DBS check."
        ]
    )
    assert draft.title == "Require an enhanced DBS check"
    assert "for anyone running the youth club or visits to elderly members" in draft.description
    assert any("youth club" in c for c in draft.acceptance_criteria)
    short = write_story(["Everyone working in the kitchen must have a food hygiene certificate."])
    assert short.title == "Require a food hygiene certificate"
    assert "for everyone working in the kitchen" in short.description


def test_the_need_said_after_so_is_whose_the_persona_is() -> None:
    """Was "As a crew, I want to know the night before" for "The crews start at six in the
    morning, so people need to know the night before": the fact before "so" names who starts
    early, not whose need it is."""
    draft = write_story(["The porters start at seven, so patients need to know the night before."])
    assert draft.description.startswith("As a patient,")
    unnamed = write_story(["The drivers start at six, so people need to know the night before."])
    assert not unnamed.description.startswith("As a driver")


def test_what_a_thing_depends_on_is_said_of_it() -> None:
    """Was "Make slot length depends on the appointment type" ("As a user, I want slot length
    depends on the appointment to type": the last noun read as the verb; dev clinic-booking)."""
    draft = write_story(["Okay, so the deposit depends on the room size."])
    assert draft.title == "Make the deposit depend on the room size"
    assert draft.description == "As a user, I want the deposit to depend on the room size."
    assert write_story(["The discount applies to members only."]).title.startswith(
        "Make the discount apply to members"
    )
    # "it depends on ..." is talk, read as before
    assert not write_story(["It depends on the cost."]).title.startswith("Make it depend")


def test_a_bound_said_of_a_thing_named_first_keeps_the_thing() -> None:
    """Was "Provide minimum two people" for "Group rooms, minimum two people." (dev
    room-booking): the thing the bound is of was lost."""
    assert (
        write_story(["Okay, meeting pods, minimum three people."]).title
        == "Require at least three people for meeting pods"
    )
    assert write_story(["Lockers, two days max."]).title == "Limit lockers to two days"
    assert write_story(["And parking, at most two hours."]).title == "Limit parking to two hours"


def test_the_next_topic_announced_is_no_criterion() -> None:
    """Was "Another thing, currencies." a criterion of "Send a notification when it changes"
    (dev expense-claims, leave one meeting out): the next topic named, nothing to check."""
    draft = write_story(
        [
            "Status tracking with notifications, okay.",
            "Another thing, currencies.",
            "Oh, and one more thing, the colours.",
            "Another thing, the export has to run nightly.",
        ]
    )
    assert not any("thing" in c for c in draft.acceptance_criteria), draft.acceptance_criteria
    assert "The export runs nightly." in draft.acceptance_criteria


def test_what_a_message_may_only_say_limits_it() -> None:
    """Was "Send messages only ever say date" / "As a user, I want messages only ever say date."
    (dev clinic-booking): what the messages may hold, cut at its first comma."""
    draft = write_story(
        ["So reminders only ever show the time, the room and the tutor, nothing else."]
    )
    assert draft.title == "Limit reminders to the time, the room and the tutor"
    assert draft.description == (
        "As a user, I want reminders to only ever show the time, the room and the tutor."
    )


def test_an_action_asked_for_then_what_it_should_do_is_the_action_and_its_result() -> None:
    """Was "Come back to me automatically when I'm back" for "Yes, delegate them to another
    manager for a date range, and it should come back to me automatically when I'm back, ..."
    (dev expense-claims): the clause with the modal was taken for the need."""
    draft = write_story(
        [
            "Yes, hand the rota to another coordinator for a week, and it should come back to me"
            " automatically when I'm back, because I'll forget."
        ]
    )
    assert draft.title == "Hand the rota to another coordinator for a week"
    assert any("comes back to me automatically" in c for c in draft.acceptance_criteria)
    scan = write_story(
        ["Okay, so scan the code on the door, and it should book the room for an hour."]
    )
    assert scan.title == "Scan the code on the door"
    assert any("books the room for an hour" in c for c in scan.acceptance_criteria)


def test_the_best_option_is_what_it_names() -> None:
    """Was "Make the best option to use the basic battery" (dev TS3010c): the frame round the
    need read as a thing to make; "the best option would be a rubber case" names a thing."""
    assert (
        write_story(["Uh, I think the best option is to use uh the basic charger ."]).title
        == "Use the basic charger"
    )
    assert write_story(["The best option would be a rubber case."]).title == "Provide a rubber case"


def test_how_many_choices_there_are_is_no_criterion() -> None:
    """ "The battery, there are few options." became a criterion once the title no longer said
    "option" (dev TS3010c): the choices talked of, nothing to check."""
    draft = write_story(
        [
            "We need a charger that works in the car .",
            "The charger , there are few options .",
        ]
    )
    assert not any("options" in c for c in draft.acceptance_criteria), draft.acceptance_criteria


@pytest.mark.parametrize(
    ("said", "broken"),
    [
        ("Uh , still we need to cha {vocalsound}", True),  # was the story "Provide a cha"
        ("We need to print .", False),
        ("I want to zap .", False),
        ("We need to update it.", False),
    ],
)
def test_a_need_whose_verb_was_cut_off_breaks_off(said: str, broken: bool) -> None:
    """ "Uh , still we need to cha {vocalsound}" (dev IS1006d, leave one meeting out) was the
    story "Provide a cha": the verb after "need to" is no verb, it was cut off as it was said."""
    assert breaks_off(said) is broken


@pytest.mark.parametrize(
    ("said", "broken"),
    [
        # the last word, left open, is the start of a word and no word itself
        ("The weight is gonna be problema", True),
        ("So the battery should last a whole yea", True),
        ("I think the case should be transpar", True),
        # a whole word, even one the vocabulary lacks, or a sentence closed by its speaker
        ("The weight is gonna be a problem", False),
        ("It should feel a bit spongy", False),
        ("The speech recogniser", False),
        ("It should vibrate", False),
        ("Let it be transpar .", False),
    ],
)
def test_a_sentence_whose_last_word_was_cut_off_breaks_off(said: str, broken: bool) -> None:
    """ "The length is gonna be difficu" (dev ES2006d) was the story "Make the length gonna be
    difficu": left open on the start of a word, the sentence was broken off as it was said."""
    assert breaks_off(said) is broken


@pytest.mark.parametrize(
    ("word", "quality"),
    [
        ("recognisable", True),
        ("adjustable", True),
        ("washable", True),
        ("timetable", False),
        ("vegetable", False),
        ("table", False),
        ("cable", False),
    ],
)
def test_a_word_of_what_it_can_be_done_to_is_a_quality(word: str, quality: bool) -> None:
    """Was: "Recognisable." said alone the story "Provide a recognisable" (no thing); now how
    the product must be, as "washable" was; a timetable is still a thing."""
    assert is_quality_word(word) is quality


@pytest.mark.parametrize(
    ("said", "title"),
    [
        (
            "And another nice feature that I'd like to add is uh a sleep timer .",
            "Provide a sleep timer",
        ),
        (
            "The next feature would be automatic backups of every project.",
            "Provide automatic backups of every project",
        ),
        ("One more feature we want is offline maps.", "Provide offline maps"),
    ],
)
def test_a_feature_named_as_the_next_one_is_that_feature(said: str, title: str) -> None:
    """Was "Provide another nice feature" for "And another nice feature that I would like to
    implement is uh volume control ." (the demo's meeting, dev IS1006b): no title of its own, its
    statements were quoted under the need before it (automatic power on and off)."""
    assert write_story([said]).title == title


@pytest.mark.parametrize(
    ("statement", "title", "means"),
    [
        # what it is like to do with it: how the product must be (was "Provide quick to set up")
        ("Quick to set up.", "Make it quick to set up", "the product to be quick to set up"),
        # a quality alone may come first (was "Provide robust and easy to use")
        (
            "Robust and easy to use .",
            "Make it robust and easy to use",
            "the product to be robust and easy to use",
        ),
        (
            "Okay, cheap to run and easy to clean.",
            "Keep it cheap to run and easy to clean",
            "the product to be cheap to run and easy to clean",
        ),
        # a second item cut in half by the title's length goes whole (was "... to open and fast")
        (
            "Ha, okay, fast to open and fast to take a photo.",
            "Make it fast to open",
            "the product to be fast to open and fast to take a photo",
        ),
        # what the speaker will do about it is no part of the need (was "Put a number on that
        # later", "Write that down")
        (
            "Right, fast to load and quick to search, I'll put a number on that later.",
            "Make it fast to load and quick to search",
            "the product to be fast to load and quick to search",
        ),
        (
            "Invoices go to the finance inbox, let me write that down.",
            "Make invoices go to the finance inbox",
            "invoices to go to the finance inbox",
        ),
        # things counted, not a count doing something (was "Strike and a one week ban for now",
        # "three to strike")
        (
            "Let's say three strikes and a one week ban for now, and I'll come back to it.",
            "Provide three strikes and a one week ban for now",
            "three strikes and a one week ban for now",
        ),
        # guards: a need of its own after a comma stays; a thing with a quality is a thing
        ("We need a filter by date, and we'll add a search box.", "Provide a filter by date", ""),
        ("Nice to have a dark mode.", "", ""),
    ],
)
def test_how_it_is_to_use_and_what_the_speaker_will_do_about_it(
    statement: str, title: str, means: str
) -> None:
    draft = write_story([statement])
    if title:
        assert draft.title == title
    if means:
        assert draft.description == f"As a user, I want {means}."
    assert "number on" not in draft.title and "write" not in draft.title.lower()


def test_a_filler_cut_from_a_list_leaves_no_comma_after_its_and() -> None:
    assert body("Yes, eye tests and, um, I think the wellbeing allowance, I'll check.") == (
        "eye tests and the wellbeing allowance."
    )


@pytest.mark.parametrize(
    ("said", "body_of_it"),
    [
        ("Hannah: Finance maintains the rates, got it.", "Finance maintains the rates"),
        ("Priya: So no automatic suspension, got it.", "no automatic suspension"),
        ("Okay, the export goes out on Fridays, noted.", "the export goes out on Fridays"),
    ],
)
def test_an_acknowledgement_closing_the_sentence_is_no_part_of_it(
    said: str, body_of_it: str
) -> None:
    # was "Finance maintains the rates, got." (the "it" of "got it" cut as a dangling word)
    assert body(said) == body_of_it


@pytest.mark.parametrize(
    "statements",
    [
        # a thing named after a role is no role ("nurse stuff", "patient list"): was "As a nurse"
        ["GP appointments only for now, nurses later.", "The nurse stuff is a whole thing."],
        ["Paper forms for the first month.", "The patient list is long enough already."],
        # where people will be is no need of theirs (was "As a finance team member, I want a
        # mobile app ...", from "Finance will be on laptops, big screens, lots of columns.")
        [
            "So a mobile app for iPhone and Android, plus a web version.",
            "Finance will be on laptops, big screens, lots of columns.",
        ],
    ],
)
def test_a_thing_named_after_a_role_names_no_persona(statements: list[str]) -> None:
    assert write_story(statements).description.startswith("As a user, ")


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # the thing named first is what is asked for; how it is had is said after it (was
        # "Provide online or phone or a split")
        ("Same-day slots, online or phone or a split.", "Provide same-day slots"),
        ("Repeat prescriptions, online or by phone.", "Repeat prescriptions"),
        # guard: a first clause that is no thing keeps the clause after it
        ("Budget, we're a small practice.", "Provide we're a small practice"),
    ],
)
def test_a_thing_named_first_then_how_it_is_had(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # a language keeps its capital, and alone it is what the product comes in (was "Provide
        # english and Welsh for go-live")
        ("Right, English and Welsh for go-live.", "Provide the product in English and Welsh for"),
        ("Tuesday and Thursday evenings for the late clinic.", "Provide Tuesday and Thursday"),
        # what would help, said as what follows from the trouble told first (was "Provide a lot of
        # older members", "Lose forms all the time")
        (
            "Many of our older members, the over seventies mostly, find the website hard, so"
            " Urdu would help a great deal, perhaps Punjabi.",
            "Provide the product in Urdu",
        ),
        (
            "Drivers lose the paper forms all the time, so a photo of the delivery note would"
            " really help.",
            "Provide a photo of the delivery note",
        ),
        # a thing it can be done to is no value it is set to (was "Set the cap to editable")
        ("The cap should be editable.", "Make the cap editable"),
        ("The default priority should be medium.", "Set the default priority to medium"),
    ],
)
def test_names_languages_and_what_would_help(statement: str, title: str) -> None:
    assert write_story([statement]).title.startswith(title)


def test_a_name_keeps_its_capital_and_a_verb_spelt_the_same_does_not() -> None:
    assert _lower_first("Polish and Czech at launch") == "Polish and Czech at launch"
    assert _lower_first("Saturday mornings") == "Saturday mornings"
    assert _lower_first("Polish the checkout page") == "polish the checkout page"
    assert _lower_first("Marking it as done") == "marking it as done"


def test_a_value_it_should_be_is_a_value_to_use() -> None:
    """Was "Make it the actual sterling amount", criterion "The product is the actual sterling
    amount that was charged." (dev expense-claims): "it" is the value to use, not the product."""
    story = write_story(
        [
            "For refunds it should be the exact euro amount that was paid, because that's what left"
            " the account."
        ]
    )
    assert story.title.startswith("Use the exact euro amount"), story.title
    assert "the product is" not in " ".join(story.acceptance_criteria).lower(), story
    # what "it" is made to be stays so
    assert write_story(["It should be yellow and small."]).title.startswith("Make it yellow")


def test_software_named_first_keeps_its_capital() -> None:
    assert write_story(["Gmail sync for volunteers, a feed for the rest."]).title.startswith(
        "Provide Gmail sync"
    )


@pytest.mark.parametrize(
    ("title", "reads"),
    [
        # the states something goes through, said as a list, act on nothing (was the story "Pay
        # submitted, approved, whatever" of "Yeah, submitted, approved, paid, whatever.")
        ("Ship ordered, packed, whatever", False),
        ("Cancel booked, confirmed", False),
        # actions on a thing, and things in a state, still read
        ("Book, move and cancel appointments", True),
        ("Show submitted, approved and paid claims", True),
        ("Print the receipt, signed and dated", True),
    ],
)
def test_a_list_of_states_names_no_capability(title: str, reads: bool) -> None:
    assert reads_as_capability(title) is reads


@pytest.mark.parametrize(
    ("statement", "title", "said"),
    [
        # a thing named, then when it applies (was "Get twenty minutes if someone a few
        # problems", "As a user, I want twenty minutes if someone to be got a few problems.")
        (
            "Then triples, thirty minutes, if someone's got a lot to sort out.",
            # the figure said after the thing is the thing's (v117; was "Provide triples, thirty
            # minutes")
            "Provide triples of thirty minutes",
            "if someone has got a lot to sort out",
        ),
        (
            "Bigger rooms if the group has more than ten people.",
            "Provide bigger rooms",
            "if the group has more than ten people",
        ),
    ],
)
def test_a_thing_named_then_when_it_applies(statement: str, title: str, said: str) -> None:
    story = write_story([statement])
    assert story.title.startswith(title), story.title
    assert said in story.description, story.description


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # a thing that arrives somewhere is what the product brings in (was "Come into the app
        # automatically": the thing was lost)
        (
            "The bank feed should come into the ledger automatically, hourly ideally, not daily.",
            "Bring the bank feed into the ledger automatically",
        ),
        (
            "Refund requests have to land in the finance queue.",
            "Bring refund requests into the finance queue",
        ),
        # a thing that appears somewhere is what the product shows there (was "Show up in the
        # team calendar in shift swaps", "Show on the map in the depot vans")
        (
            "Shift swaps should show up in the team calendar.",
            "Show shift swaps in the team calendar",
        ),
        ("The depot vans must show on the map.", "Show the depot vans on the map"),
        (
            "Late deliveries should appear on the dispatch board.",
            "Show late deliveries on the dispatch board",
        ),
        # what a container shows stays what it shows
        ("The home screen should show the balance.", "Show the balance on the home screen"),
    ],
)
def test_a_thing_that_arrives_or_appears_is_what_the_product_brings_or_shows(
    statement: str, title: str
) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # "'s" before a word of what it is like, said last: "is" (was "Provide the grip's
        # rubbery"-like titles, the contraction read as a possessive)
        ("Well , the casing's spongy , so it doesn't slip .", "Make the casing spongy"),
        # before a degree or a figure
        ("The handset's really light to carry .", "Keep the handset light to carry"),
        ("Right , our budget's fifteen Euros .", "Keep within our budget of fifteen Euros"),
        # a possessive stays one: the thing after it is what the need is about
        ("The handset's red button should glow .", "Make the handset's red button glow"),
        ("I need to see the nurse's calendar .", "See the nurse's calendar"),
    ],
)
def test_a_contracted_is_is_read_as_is_not_as_a_possessive(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    "statement",
    [
        # how two options compare, said as a finding (was "Make the touch screen dearer than the
        # buttons")
        "Well , I reckon the touch screen is dearer than the buttons .",
        # what matters to people (was "Make the clock less important")
        "The clock is less important for them .",
        # what a cost will come to (was "Make the price a lot higher")
        "And if we add the speaker , then the price will be a lot higher .",
        # what a budget does not allow (was "Make the money too tight to add a display")
        "The money is too tight to add a display .",
        # what a sum worked out comes to (was "Provide it's only eleven Euros")
        "So then it's only eleven Euros .",
    ],
)
def test_a_comparison_said_as_a_finding_gives_no_title(statement: str) -> None:
    draft = write_story([statement])
    assert not reads_as_capability(draft.title), draft.title
    assert not draft.acceptance_criteria


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # with a modal, or with a figure to stay under, it is a need
        ("The casing should be cheaper than the old one .", "Make the casing cheaper"),
        ("The price will be lower than thirty Euros .", "Make the price lower than thirty Euros"),
        # how the product is made, said as a fact
        (
            "The keys used most are bigger than the rest .",
            "Make the keys used most bigger than the rest",
        ),
    ],
)
def test_a_comparison_the_product_must_meet_is_a_need(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # what a goal, a preference or a recommendation says is the need (was "Make our main goal
        # to make the handset waterproof", "Provide my own preference")
        ("Um , our main goal is to make the handset waterproof .", "Make the handset waterproof"),
        (
            "So my own preference would be , uh , to offer a rubber sleeve .",
            "Provide a rubber sleeve",
        ),
        ("What I'd recommend is that we keep the dial .", "Keep the dial"),
    ],
)
def test_a_goal_or_a_preference_frames_the_need_it_names(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # a part let go, said of it alone (was "Provide the trackball away", "Go away")
        ("And the trackball away .", "Leave out the trackball"),
        ("Mm , and the clock also goes away .", "Leave out the clock"),
        ("And the display out .", "Leave out the display"),
        # what it does, or where someone goes, is no part let go
        ("The reminder goes out a day before .", "Send the reminder a day before"),
    ],
)
def test_a_part_said_to_go_away_is_left_out(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_the_need_said_again_in_other_words_is_no_criterion() -> None:
    draft = write_story(["So no trackball .", "And the trackball goes away ."])
    assert draft.title == "Leave out trackball"
    # was "The trackball goes away.", which says what the title says
    assert draft.acceptance_criteria == []
    assert not adds_to_title("The trackball goes away.", "Leave out the trackball")
    assert adds_to_title("The trackball goes because it costs too much.", "Leave out trackball")


@pytest.mark.parametrize(
    "statement",
    [
        # what people will do anyway is a risk weighed, not a need (was "Split the booking into
        # two rooms", "Ring the office instead")
        "If we cap it , people will just split the booking into two rooms , and the data's useless .",
        "Honestly , they'll just ring the office instead .",
    ],
)
def test_what_people_will_do_anyway_gives_no_title(statement: str) -> None:
    assert not reads_as_capability(write_story([statement]).title)


def test_what_the_product_will_do_for_people_is_still_a_need() -> None:
    assert write_story(["Tenants will get a text when the repair is booked ."]).title.startswith(
        "Send"
    )


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # "controls" after "remote" names the thing (was "Control with large keys")
        ("Remote controls with large keys .", "Provide remote controls with large keys"),
        # a subject that controls something still does
        ("The manager controls the rota .", "Control the rota"),
    ],
)
def test_remote_controls_are_a_thing_not_remote_that_controls(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # what the speaker asks of someone in the meeting by name is the meeting's work (was
        # "Provide the actual policy wording")
        (
            "So it deducts the regular commute where that applies, and I'll need the actual"
            " policy wording, Marcus.",
            "Deduct the regular commute where that applies",
        ),
        (
            "So the app works out the mileage, and I'll need the current HMRC rates, Dana.",
            "Work out the mileage",
        ),
        (
            "The app reminds the approver after three days, could you check what the policy"
            " says, Priya?",
            "Remind the approver",
        ),
        # no one named: the speaker's own need stays ("Monday" is when, not whom)
        (
            "Claims over the limit go to finance for approval, and I'll need the list of limits.",
            "Provide the list of limits",
        ),
        (
            "The export runs every night, and I'll need it in the shared drive, Monday.",
            "Provide it in the shared drive",
        ),
    ],
)
def test_a_request_to_someone_named_closing_the_need_is_no_part_of_it(
    statement: str, title: str
) -> None:
    assert write_story([statement]).title == title


def test_what_the_product_does_is_a_criterion_with_its_list_whole() -> None:
    """Was lost (the planning notes' voice control): a comma of the list cut the clause into
    pieces, none of which named a check."""
    draft = write_story(
        [
            "Voice control stays, as an option on top of the buttons.",
            "The remote recognises a fixed vocabulary of power, volume up, volume down and"
            " channel numbers; every function stays available by button; voice control can be"
            " switched off.",
        ]
    )
    assert (
        "The remote recognises a fixed vocabulary of power, volume up, volume down and channel"
        " numbers." in draft.acceptance_criteria
    ), draft.acceptance_criteria
    assert "Every function stays available by button." in draft.acceptance_criteria


@pytest.mark.parametrize(
    ("statements", "criterion"),
    [
        # each verb the sentence's subject does, with its condition, is a check (was lost in the
        # planning notes' locator: "stops beeping as soon as any button is pressed")
        (
            [
                "Locator: the remote beeps when someone claps twice.",
                "It must not react to sound coming from the TV, stops beeping as soon as any"
                " button is pressed, and beeps for 30 s at most.",
            ],
            "Given a user, when any button is pressed, then the remote stops beeping.",
        ),
        (
            [
                "The alarm sounds when the door opens at night.",
                "It must not sound for the cat, stops as soon as the owner enters the code, and"
                " sounds for 60 s at most.",
            ],
            "Given an owner, when the owner enters the code, then the alarm stops.",
        ),
        # the case a limit holds in, said after it, stays with it (was "Battery life at least
        # 12 months of typical use.")
        (
            [
                "Battery life at least 12 months of typical use, with the backlight on its default"
                " setting."
            ],
            "Battery life at least 12 months of typical use, with the backlight on its default"
            " setting.",
        ),
    ],
)
def test_a_check_said_in_a_list_of_verbs_or_after_its_limit_is_kept(
    statements: list[str], criterion: str
) -> None:
    draft = write_story(statements)
    assert criterion in draft.acceptance_criteria, draft.acceptance_criteria


def test_what_it_then_does_for_the_doers_is_their_benefit() -> None:
    """Was "As a user, I want to train the speech recogniser on my own voice." (the planning
    notes): "so it works ..." was no purpose, and "for them" is the story's "I"."""
    draft = write_story(
        [
            "NEW: each user can train the speech recogniser on their own voice (max 2 voice"
            " profiles per remote), so it works better for them."
        ]
    )
    assert draft.description.endswith("on my own voice, so that it works better for me."), (
        draft.description
    )
    # "so it goes" is talk, no purpose
    said = write_story(["Each driver can save their favourite routes, so it goes."])
    assert "so that" not in said.description, said.description


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # "time" names a thing here, it opens no clause (was "Show on the LCD while the timer
        # runs", the design review sample, and "... while the timer", cut at ten words)
        (
            "The remaining time should be shown on the LCD while the timer runs.",
            "Show the remaining time on the LCD",
        ),
        ("The time should be shown on the screen.", "Show the time on the screen"),
        ("The waiting time should be shown on the board.", "Show the waiting time on the board"),
        # "every time" still opens one
        ("Every time a customer rings we should log the call.", "Log the call"),
    ],
)
def test_a_time_named_as_a_thing_is_the_subject(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


def test_what_a_held_key_does_to_every_button_is_the_title() -> None:
    """Was "Do not change the channel" (the design review sample): "every button" is what it
    locks, not a time, and "so small children cannot ..." is why."""
    draft = write_story(
        [
            "The key lock: holding OK and back for three seconds locks every button except"
            " power, so small children cannot change the channel."
        ]
    )
    assert draft.title == "Lock every button except power"
    assert draft.description.endswith(", so that small children cannot change the channel.")
    # "every night" is when, not what it does it to
    assert write_story(["The van stock updates every night."]).title == "Update the van stock"


@pytest.mark.parametrize(
    ("statement", "title", "criterion"),
    [
        # a part of the product that signals is named, when it does is the criterion (was
        # "Start blinking when less than a month of battery", the design review sample)
        (
            "The battery icon on the LCD should start blinking when less than a month of battery"
            " is left.",
            "Make the battery icon on the LCD start blinking",
            "Given a user, when less than a month of battery is left, then the battery icon on"
            " the LCD starts blinking.",
        ),
        (
            "The light should start flashing when a call comes in.",
            "Make the light start flashing",
            "Given a user, when a call comes in, then the light starts flashing.",
        ),
        # the product itself needs no naming, and a verb with an object is no signal
        (
            "The remote should beep when someone claps.",
            "Beep when someone claps",
            "Given a user, when someone claps, then the remote beeps.",
        ),
        ("The phone must ring the patient.", "Ring the patient", "The phone rings the patient."),
    ],
)
def test_a_part_that_signals_is_named_and_when_it_does_is_checked(
    statement: str, title: str, criterion: str
) -> None:
    draft = write_story([statement])
    assert draft.title == title
    assert criterion in draft.acceptance_criteria, draft.acceptance_criteria


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # a label goes on with what follows it when that is only its preposition (was "Provide
        # ISBN and subject")
        ("- Search: by title, author, ISBN and subject.", "Search by title"),
        (
            "Delivery: within three days of the order.",
            "Provide delivery within three days of the order",
        ),
        # a clause before a colon is no label (was "Provide too expensive")
        ("Gesture control is dropped: too expensive.", "Leave out gesture control"),
        # what a drop is for stays with it (was "Leave out fines", which drops every fine)
        ("Fines are dropped for children's cards.", "Leave out fines for children's cards"),
        ("Fines are dropped for now.", "Leave out fines"),
    ],
)
def test_notes_labels_and_drops_keep_what_they_apply_to(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("statements", "context", "title", "criterion"),
    [
        # a thing and how it is, said with a comma (was "Get the whole tip", described "As a
        # user, I want and the driver to get the whole tip")
        (
            ["Tips, um, I think optional, and the driver gets the whole tip."],
            [],
            "Make tips optional",
            None,
        ),
        # a figure set anew for the thing the question before named (was "Make it three
        # kilometres")
        (
            [
                "Actually, let's make it three kilometres, the drivers can't do five in twenty"
                " minutes."
            ],
            ["Delivery radius, we said five kilometres?"],
            "Make the delivery radius three kilometres",
            None,
        ),
        # what someone does is part of when; what the product then does is the need (was "Tap
        # it and the customer gets a text")
        (
            ["And when an order is ready, the cook taps it and the customer gets a text."],
            [],
            "Send the customer a text",
            "Given a customer, when an order is ready and the cook taps it, then the customer"
            " gets a text.",
        ),
        # a pronoun after a clause's own verb is its object, no dangling word (was "..., so
        # people know we normally have.")
        (
            [
                "The menu has to be editable by the restaurant manager.",
                "Greyed out, so people know we normally have it.",
            ],
            [],
            None,
            "Greyed out, so people know we normally have it.",
        ),
    ],
)
def test_spoken_labels_figures_and_triggers_name_the_need(
    statements: list[str], context: list[str], title: str | None, criterion: str | None
) -> None:
    draft = write_story(statements, context=context)
    if title:
        assert draft.title == title
    if criterion:
        assert criterion in draft.acceptance_criteria, draft.acceptance_criteria


@pytest.mark.parametrize(
    ("statement", "title"),
    [
        # "Yeah" is talk, no label of a thing said to be free (was "Make yeah free parking ...",
        # after "Tips, optional" became a label)
        (
            "Yeah, free parking for visitors at the main gate.",
            "Provide free parking for visitors at the main gate",
        ),
        # a title cut before "and" keeps the particle of its verb (was "... of the sign"); the
        # cut steps back over "up" only before "to" ("up to the end of the next month")
        (
            "We should put more time into the design of the sign up and the onboarding flow.",
            "Put more time into the design of the sign up",
        ),
        (
            "Okay, people can book rooms up to the end of the next month, desks a week ahead.",
            "Book rooms up to the end of the next month",
        ),
    ],
)
def test_talk_is_no_label_and_a_particle_stays_with_its_verb(statement: str, title: str) -> None:
    assert write_story([statement]).title == title


@pytest.mark.parametrize(
    ("said", "title"),
    [
        # the one a message goes to is named, said with a modal as without one
        ("The depot should get an alert.", "Send the depot an alert"),
        ("The depot gets an alert.", "Send the depot an alert"),
        (
            "The office should get an email when a van is late.",
            "Send the office an email when a van is late",
        ),
        ("We should get an email.", "Send an email"),  # no one named to send it to
    ],
)
def test_a_message_someone_should_get_is_sent_to_them(said: str, title: str) -> None:
    """Was "Send an alert": "the warehouse should get an alert" lost whom it goes to."""
    assert write_story([said]).title == title


def test_a_message_someone_should_get_is_wanted_for_them() -> None:
    """Was "I want an alert": the description lost whom it goes to, which the title names."""
    said = "If the stock falls under ten, the kitchen should get an alert."
    assert write_story([said]).description.endswith("I want the kitchen to get an alert.")


def test_a_thing_said_with_its_figure_after_a_comma_is_the_thing_of_that_figure() -> None:
    """From dev clinic-booking: "Then doubles, twenty minutes, if ..." was "Provide doubles,
    twenty minutes"."""
    said = write_story(["Then long sessions, ninety minutes, if the group is big."])
    assert said.title == "Provide long sessions of ninety minutes", said.title
    # a time said of it is no figure of the thing
    assert write_story(["We need the notice, two weeks before."]).title == "Provide the notice"


def test_a_result_that_says_nothing_said_is_no_criterion() -> None:
    """From the parking-permit probe: "..., they should be able to say so when they apply." gave
    "Given a user, when they apply, then ... can say." (the "so" dropped, nothing left to check)."""
    from shared.engine.offline.criteria import _checkable

    assert not _checkable("they apply", "they can say")
    assert not _checkable("they book", "the member should tell")
    # something said, or done, is a result
    assert _checkable("they apply", "they can say which space they need")
    assert _checkable("they apply", "the coordinator gets an email")
