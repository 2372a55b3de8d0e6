"""Decoding uploads, normalization and spans: the offsets everything points into."""

from __future__ import annotations

import pytest

from shared.text.textio import (
    LinePrefix,
    UnreadableInput,
    captions_to_transcript,
    clean_restarts,
    clean_spoken,
    decode_text,
    drop_abandoned,
    extract_text,
    line_prefix,
    line_spans,
    normalize,
    prefix_at,
    sentence_spans,
    speaker_blocks,
    unwrap,
)


def test_decode_boms_and_fallbacks():
    text = "Zoë: naïve café €5\n"
    assert decode_text(text.encode("utf-8-sig")) == text
    assert decode_text(text.encode("utf-16")) == text
    assert decode_text(b"\xfe\xff" + text.encode("utf-16-be")) == text
    assert decode_text("Zoë café".encode("latin-1")) == "Zoë café"
    assert decode_text(b"price \x80 5") == "price € 5"  # Windows-1252


def test_binary_and_empty_are_unreadable():
    with pytest.raises(UnreadableInput, match="binary"):
        decode_text(b"\x00\x01\x02PK")
    with pytest.raises(UnreadableInput, match="empty"):
        extract_text(b"", "txt")
    with pytest.raises(UnreadableInput, match="no text"):
        normalize(" \n\t\n")
    with pytest.raises(UnreadableInput, match="binary"):
        normalize("".join(chr(i) for i in range(1, 32)) * 10)


def test_normalize_is_stable_and_ends_with_newline():
    raw = "A: one  \r\nB: two\r\r\n\n\n\nC: three"
    out = normalize(raw)
    assert out == "A: one\nB: two\n\nC: three\n"
    assert normalize(out) == out


def test_vtt_becomes_timed_speaker_lines():
    vtt = "WEBVTT\n\nNOTE a comment\n\n1\n00:00:01.000 --> 00:00:02.500\n<v Ana>We must ship in May.</v>\n\n01:01:02.000 --> 01:01:04.000\n<v Bo>Agreed.\n"
    assert captions_to_transcript(vtt) == (
        "[00:00:01] Ana: We must ship in May.\n[01:01:02] Bo: Agreed."
    )


def test_a_sentence_cut_over_cues_is_one_line_timed_by_its_first_cue():
    vtt = (
        "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Ana>So what we really need is a way for</v>\n\n"
        "00:00:04.000 --> 00:00:07.000\n<v Ana>residents to report a pothole online.</v>\n\n"
        "00:00:07.000 --> 00:00:09.000\n<v Ana>And a photo.</v>\n\n"
        "00:00:09.000 --> 00:00:10.000\n<v Bo>Yes, and an email when</v>\n\n"
        "00:00:10.000 --> 00:00:11.000\n<v Cy>Sorry, go on.</v>\n\n"
        "00:00:11.000 --> 00:00:12.000\n<v Bo>it's fixed.</v>\n"
    )
    assert captions_to_transcript(vtt).splitlines() == [
        "[00:00:01] Ana: So what we really need is a way for residents to report a pothole online.",
        "[00:00:07] Ana: And a photo.",  # the sentence before ended: its own cue, its own time
        "[00:00:09] Bo: Yes, and an email when",  # another speaker came between
        "[00:00:10] Cy: Sorry, go on.",
        "[00:00:11] Bo: it's fixed.",
    ]
    text = normalize(extract_text(vtt.encode(), "vtt"))
    assert (
        "a way for residents to report a pothole online."
        in [s.text(text) for s in sentence_spans(text)][0]
    )


def test_unpunctuated_captions_keep_one_line_per_cue():
    srt = "".join(
        f"{n}\n00:00:0{n},000 --> 00:00:0{n + 1},000\nAna: {words}\n\n"
        for n, words in enumerate(["so what we need is", "a way to report", "potholes online"], 1)
    )
    assert captions_to_transcript(srt).splitlines() == [
        "[00:00:01] Ana: so what we need is",
        "[00:00:02] Ana: a way to report",
        "[00:00:03] Ana: potholes online",
    ]


def test_rolling_captions_say_each_line_once():
    # as YouTube writes them: each cue shows the line before again above the new words, and a
    # short cue holds the line alone
    vtt = (
        "WEBVTT\nKind: captions\nLanguage: en\n\n"
        "00:00:00.000 --> 00:00:02.350 align:start position:0%\n \n"
        "so<00:00:00.480><c> what</c><00:00:00.640><c> we</c><00:00:00.800><c> need</c>\n\n"
        "00:00:02.350 --> 00:00:02.360 align:start position:0%\nso what we need\n \n\n"
        "00:00:02.360 --> 00:00:05.000 align:start position:0%\nso what we need\n"
        "is<00:00:02.500><c> a</c><00:00:02.700><c> way</c><00:00:02.900><c> to</c> report\n\n"
        "00:00:05.000 --> 00:00:07.000 align:start position:0%\nis a way to report\n"
        "potholes online\n"
    )
    assert captions_to_transcript(vtt).splitlines() == [
        "[00:00:00] so what we need",
        "[00:00:02] is a way to report",
        "[00:00:05] potholes online",
    ]
    said_twice = (
        "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nYes.\n\n00:00:02.000 --> 00:00:03.000\nYes.\n"
    )
    assert captions_to_transcript(said_twice).splitlines() == ["[00:00:01] Yes.", "[00:00:02] Yes."]


def test_captions_that_name_the_speaker_on_a_line_of_their_own():
    # Teams' older transcripts, saved as .txt or .docx: the name above the words of each cue
    teams = (
        "0:0:0.0 --> 0:0:3.480\nAna Lopez\nSo what we really need is a way for\n\n"
        "0:0:3.480 --> 0:0:6.0\nAna Lopez\nresidents to report a pothole online.\n\n"
        "0:0:6.0 --> 0:0:8.120\nBo Chen\nYes, agreed.\n\n"
        "0:0:8.120 --> 0:0:9.0\nAna Lopez\nWith a photo.\n"
    )
    assert extract_text(teams.encode(), "txt").splitlines() == [
        "[00:00:00] Ana Lopez: So what we really need is a way for residents to report a pothole "
        "online.",
        "[00:00:06] Bo Chen: Yes, agreed.",
        "[00:00:08] Ana Lopez: With a photo.",
    ]
    # subtitles wrapped over two lines: their first lines are no names
    wrapped = "".join(
        f"00:00:0{n}.000 --> 00:00:0{n + 1}.000\n{first}\n{second}\n\n"
        for n, (first, second) in enumerate(
            [("So what we need", "is a way to report."), ("And then the crews", "fix it.")], 1
        )
    )
    assert captions_to_transcript(wrapped).splitlines() == [
        "[00:00:01] So what we need is a way to report.",
        "[00:00:02] And then the crews fix it.",
    ]


def test_lines_a_fixed_width_cut_mid_sentence_are_joined():
    wrapped = (
        "Ana: So what we really need is a way for residents to report a\n"
        "pothole online, with a photo, and an email to them when it is\n"
        "fixed.\n"
        "Ben: Yes, and the reports should be sorted by how dangerous they\n"
        "are. Crews see them on their phones.\n"
    )
    text = normalize(extract_text(wrapped.encode(), "txt"))
    assert text.splitlines() == [
        "Ana: So what we really need is a way for residents to report a pothole online, with a "
        "photo, and an email to them when it is fixed.",
        "Ben: Yes, and the reports should be sorted by how dangerous they are. Crews see them on "
        "their phones.",
    ]
    assert unwrap(wrapped.replace("\n", "\r\n")) == "\n".join(text.splitlines()) + "\n"


def test_lines_that_end_a_sentence_or_start_their_own_stay_lines():
    kept = (
        "Ana: We need reminders the evening before each collection day\n"  # a speaker follows
        "Ben: yes, by text for the people without a smartphone please\n"
        "- reminders by text for everyone who signs up for them online\n"  # a list item
        "- and by e-mail\n"
        "## Decisions taken in the meeting about the reminders and texts\n"  # a heading
        "texts cost money, e-mails do not\n"
        "Short line without an end\n"  # too short to have been wrapped
        "and a line after it\n"
        "The reminders go out at six in the evening, the day before.\n"  # a sentence ends
        "then the crews start at six in the morning\n"
        "```\n"
        "a code block whose lines are long enough to look wrapped\n"
        "and go on in lower case but are code\n"
        "```\n"
        "resident      collection day      reminder time    channel\n"  # aligned columns
        "north         tuesday             18:00            text\n"
    )
    assert unwrap(kept) == kept
    unpunctuated = (  # speech recognised one utterance a line: the lines are all it has
        "so i think we should start with the remote control design today\n"
        "and then we can talk about the buttons and the colours of the case\n"
        "yeah that sounds good to me and to the rest of the team i think\n"
    )
    assert unwrap(unpunctuated) == unpunctuated


def test_srt_cues_join_their_lines_and_keep_each_speaker():
    srt = (
        "1\n00:00:01,000 --> 00:00:04,000\nAna: We need reminders\nthe day before.\n\n"
        "2\n00:02:05,000 --> 00:02:06,000\n[Bo] Agreed.\nFine by me.\n- Cy: No.\n"
    )
    assert captions_to_transcript(srt) == (
        "[00:00:01] Ana: We need reminders the day before.\n"
        "[00:02:05] Bo: Agreed. Fine by me.\n"
        "[00:02:05] Cy: No."
    )
    assert extract_text(srt.encode(), "srt").startswith("[00:00:01] Ana: We need")
    # captions saved as a text file are captions all the same
    assert extract_text(srt.encode(), "txt") == extract_text(srt.encode(), "srt")
    notes = "Agenda\n00:00:01,000 --> 00:00:04,000 is the format of a cue\nWe need reminders.\n"
    assert extract_text(notes.encode(), "txt") == notes  # one timing line: not captions


def test_line_prefix_reads_timecode_and_speaker():
    assert line_prefix("[00:01:02] Ana Lopez: we need x") == LinePrefix("Ana Lopez", "00:01:02", 22)
    assert line_prefix("0:01:02 Ana: hi") == LinePrefix("Ana", "00:01:02", 13)
    assert line_prefix("Marketing: we need x") == LinePrefix("Marketing", None, 11)
    assert line_prefix("12:30 is the deadline") == LinePrefix(None, None, 0)
    assert line_prefix("[00:00:09] words only") == LinePrefix(None, "00:00:09", 11)
    text = "[00:00:01] Ana: We must ship. It is late.\n"
    assert [s.text(text) for s in sentence_spans(text)] == ["We must ship.", "It is late."]


def test_transcript_exports_fold_speaker_headers():
    paragraphs = ["Ana Lopez   0:03", "We need reminders.", "Bo Chen   1:02:09", "Agreed."]
    assert speaker_blocks(paragraphs) == [
        "[00:00:03] Ana Lopez: We need reminders.",
        "[01:02:09] Bo Chen: Agreed.",
    ]
    plain = ["Meeting notes", "Ana 10:30 is fine", "We need reminders."]
    assert speaker_blocks(plain) == plain  # one header-like line is not an export
    # names alone on their line above the words, no time (hearings, some exports)
    named = ["ANA LOPEZ:", "We need reminders.", "BO CHEN:", "Agreed.", "ANA LOPEZ:", "By text."]
    assert speaker_blocks(named) == [
        "ANA LOPEZ: We need reminders.",
        "BO CHEN: Agreed.",
        "ANA LOPEZ: By text.",
    ]
    labels = ["Scope:", "TV only.", "Budget:", "12.50 EUR.", "Timeline:", "Spring."]
    assert speaker_blocks(labels) == labels  # labels of notes come once each
    decided = ["Decision:", "- TV only.", "Action:", "- Prices.", "Decision:", "- Texts."]
    assert speaker_blocks(decided) == decided  # and "Decision:" is no one's name


def test_text_uploads_in_export_formats_name_their_speakers():
    otter = "Ana Lopez  0:03\nWe need reminders.\n\nBo Chen  1:02:09\nAgreed.\n"
    rev = "Ana Lopez (00:00:03):\nWe need reminders.\n\nBo Chen (01:02:09):\nAgreed.\n"
    zoom = "[Ana Lopez] 00:00:03\nWe need reminders.\n\n[Bo Chen] 01:02:09\nAgreed.\n"
    dashed = "Ana Lopez - 00:03\nWe need reminders.\n\nBo Chen - 1:02:09\nAgreed.\n"
    for upload in (otter, rev, zoom, dashed):
        assert extract_text(upload.encode(), "txt").splitlines() == [
            "[00:00:03] Ana Lopez: We need reminders.",
            "",
            "[01:02:09] Bo Chen: Agreed.",
        ]
    for line, speaker, timecode in (
        ("**Ana Lopez:** We need reminders.", "Ana Lopez", None),
        ("**Ana**: We need reminders.", "Ana", None),
        ("Ana Lopez (00:01:02): We need reminders.", "Ana Lopez", "00:01:02"),
        ("Élodie Martin: We need reminders.", "Élodie Martin", None),
        ("Tom (librarian): We need reminders.", "Tom (librarian)", None),
        ("Priya (product owner): We need reminders.", "Priya (product owner)", None),
        ("Ana Lopez [00:01:02]: We need reminders.", "Ana Lopez", "00:01:02"),
        ("[SPEAKER_00]: We need reminders.", "SPEAKER_00", None),  # diarization output
        ("[00:01:02] [SPEAKER_01]: We need reminders.", "SPEAKER_01", "00:01:02"),
        ("(PERSON4) We need reminders.", "PERSON4", None),  # ELITR minuting corpus
    ):
        prefix = line_prefix(line)
        assert (prefix.speaker, prefix.timecode) == (speaker, timecode), line
        assert line[prefix.content_at :] == "We need reminders."
    notes = "Meeting notes\nAna 10:30 is fine\nNote (important): we need reminders.\n"
    assert extract_text(notes.encode(), "txt") == notes  # not an export: as it was
    assert line_prefix("Note (important): we need reminders.").speaker is None
    assert line_prefix("Action (Tom): we need reminders.").speaker is None
    assert line_prefix("(Optional) Export to Excel.") == LinePrefix(None, None, 0)  # no speaker


def test_a_line_without_a_speaker_goes_on_with_the_turn_above():
    text = (
        "Ana: We need reminders.\nThey go out at six.\n\nNobody said this.\n"
        "[00:01:02] Bo: Yes.\nAnd by text.\nPresent: Ana, Bo\n- Reminders by text.\n"
    )

    def at(words: str) -> tuple[str | None, str | None]:
        prefix = prefix_at(text, text.index(words))
        return prefix.speaker, prefix.timecode

    assert at("They go out") == ("Ana", None)
    assert at("Nobody") == (None, None)  # a blank line ended the turn
    assert at("And by text") == ("Bo", "00:01:02")
    assert at("Reminders by text") == (None, None)  # a list item of notes is no one's
    assert prefix_at(text, text.index("They go out")).content_at == 0


def test_line_spans_tile_the_text():
    text = "a\n\nbb\nccc"
    spans = line_spans(text)
    assert "".join(s.text(text) for s in spans) == text
    assert [s.text(text) for s in spans] == ["a\n", "\n", "bb\n", "ccc"]


def test_sentence_spans_skip_speakers_and_bullets_and_keep_offsets():
    text = "Marketing: We need fewer buttons. It must be cheap!\n- The case should be titanium\nPM: e.g. this one.\n"
    got = [s.text(text) for s in sentence_spans(text)]
    assert got == [
        "We need fewer buttons.",
        "It must be cheap!",
        "The case should be titanium",
        "e.g. this one.",
    ]
    for s in sentence_spans(text):
        assert text[s.start : s.end] == s.text(text)


def test_docx_transcript_export_keeps_speakers_and_times():
    import io

    import docx

    document = docx.Document()
    for line in ["Ana Lopez   0:03", "We need reminders.", "Bo Chen   0:09", "Make it two days."]:
        document.add_paragraph(line)
    buffer = io.BytesIO()
    document.save(buffer)
    assert extract_text(buffer.getvalue(), "docx") == (
        "[00:00:03] Ana Lopez: We need reminders.\n[00:00:09] Bo Chen: Make it two days."
    )


def test_docx_tables_are_read_in_place_not_lost():
    import io

    import docx

    document = docx.Document()
    document.add_paragraph("Meeting notes")
    said = document.add_table(rows=2, cols=3)  # a transcript kept as a table
    for r, row in enumerate(
        [("Ana Lopez", "0:03", "We need reminders."), ("Bo Chen", "", "Agreed.")]
    ):
        for c, text in enumerate(row):
            said.cell(r, c).text = text
    document.add_paragraph("Decisions")
    decided = document.add_table(rows=2, cols=2)
    for r, row in enumerate([("Decision", "Owner"), ("Reminders go out at six.", "Ana")]):
        for c, text in enumerate(row):
            decided.cell(r, c).text = text
    merged = document.add_table(rows=1, cols=2)
    merged.cell(0, 0).merge(merged.cell(0, 1)).text = "Open: the price of texts."
    buffer = io.BytesIO()
    document.save(buffer)
    assert extract_text(buffer.getvalue(), "docx").splitlines() == [
        "Meeting notes",
        "[00:00:03] Ana Lopez: We need reminders.",
        "Bo Chen: Agreed.",
        "Decisions",
        "Decision | Owner",
        "Reminders go out at six. | Ana",  # an owner named last is no speaker
        "Open: the price of texts.",  # a merged cell once
    ]


@pytest.mark.parametrize(
    ("spoken", "clean"),
    [
        (
            "it should be consistent with consistent with older remotes",
            "it should be consistent with older remotes",
        ),
        ("put more time in the in the design", "put more time in the design"),
        ("a doub double-curved case", "a double-curved case"),
        ("w we'll see", "we'll see"),
        ("yeah {vocalsound} L_ {disfmarker} L_C_D_ .", "yeah LCD."),
        ("the blue function key and F_ eight", "the blue function key and F_ eight"),
        ("version three point O_ has other colours", "version three point O_ has other colours"),
        # a longer start that is no word (AMI TS3010c, TS3010c)
        ("Everyth everything has to be ready .", "Everything has to be ready."),
        ("look further to devel d develop something", "look further to develop something"),
        # a word before a longer one that starts with it is no broken-off word
        ("we want some something new", "we want some something new"),
        ("the user users", "the user users"),
        ("it is techno technologically innovative", "it is techno technologically innovative"),
        ("a well-know knowledge base", "a well-know knowledge base"),
        # one word of a phrase said anew in its place (AMI ES2006d)
        (
            "You can have to scroll it straight r roll it straight down for mute .",
            "You can have to roll it straight down for mute.",
        ),
        # ... and a new word that is a start of the old one broken off keeps the old one
        (
            "It signals the different sig the different symbols on the screen",
            "It signals the different symbols on the screen",
        ),
        # ... but not a phrase of function words, said of several things
        (
            "use the power button and the mute and the joystick",
            "use the power button and the mute and the joystick",
        ),
        (
            "when you change channels you can have you can just go to the next one",
            "when you change channels you can have you can just go to the next one",
        ),
    ],
)
def test_restarts_leave_the_generated_text(spoken: str, clean: str) -> None:
    assert clean_restarts(clean_spoken(spoken)) == clean


@pytest.mark.parametrize(
    ("spoken", "clean"),
    [
        # a preposition or article the speaker broke off after leaves the written text
        (
            "spend lots of time in {disfmarker} and effort in that",
            "spend lots of time and effort in that",
        ),
        ("we need the {disfmarker} a big button", "we need a big button"),
        ("Of the {disfmarker} of all these", "of all these"),
        # a filler's own "of", a word not cut off, and a "to" that restarts are kept
        ("everything is kind of {disfmarker} okay", "everything is kind of okay"),
        ("a button in the corner", "a button in the corner"),
        # a word the repair says again is replaced by the repair, with the verb the repair
        # changes
        ("and you can change mode {disfmarker} zapping mode", "and you can change zapping mode"),
        ("it {disfmarker} I think it is red", "I think it is red"),
        (
            "all the buttons has to {disfmarker} have to be the same colour",
            "all the buttons have to be the same colour",
        ),
        # a noun phrase said again from its determiner
        ("these messages {disfmarker} these key buttons", "these key buttons"),
        # ... but a phrase after which the speaker goes on with another is kept
        ("the red one {disfmarker} and the blue one", "the red one and the blue one"),
    ],
)
def test_an_abandoned_word_leaves_the_generated_text(spoken: str, clean: str) -> None:
    assert clean_restarts(clean_spoken(drop_abandoned(spoken))).lower() == clean.lower()


@pytest.mark.parametrize(
    ("spoken", "clean"),
    [
        # a filler set off by commas after a word that ends no phrase takes both commas with it
        (
            "running costs have to be under, um, two hundred pounds a month.",
            "running costs have to be under two hundred pounds a month.",
        ),
        ("It should, you know, beep.", "It should beep."),
        ("we need, uh, a button", "we need a button"),
        # after a word that can end a phrase, the list's own comma stays
        ("Red, um, green and blue", "Red, green and blue"),
        ("Yes, um, okay.", "Yes, okay."),
        # a new clause after it: the speaker started again
        ("Tips are, um, I think we allow fifteen", "Tips are, I think we allow fifteen"),
    ],
)
def test_a_filler_set_off_by_commas_leaves_no_stray_comma(spoken: str, clean: str) -> None:
    """In generated text; the analyses read ``clean_spoken`` as it was measured."""
    assert clean_spoken(drop_abandoned(spoken)) == clean
