"""Requirement capture: the classifier the offline engine uses, the capture dataset format and the
figures ``eval capture`` reports."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from shared.analysis.capture import CaptureModel, classify, sentences_of
from shared.embeddings.minilm import MiniLMEmbedder
from shared.eval.capture import (
    DatasetError,
    Statement,
    as_captions,
    as_wrapped,
    read_meeting,
    score_meeting,
    spans_by_words,
    spoken,
)
from shared.eval.train_capture import DEFAULT_DEV, dataset_hash
from shared.eval.train_capture import main as train_main
from shared.models import GeneratedItem, SourceQuote
from shared.text.textio import extract_text, normalize

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_the_shipped_model_was_trained_on_the_current_dev_split_only() -> None:
    model = CaptureModel.load()
    trained = model.doc["trained_on"]
    assert trained["sha256"] == dataset_hash(
        [read_meeting(p) for p in sorted(DEFAULT_DEV.glob("*.tsv"))]
    ), "dev changed: retrain with python -m shared.eval.train_capture"
    test_meetings = {p.stem for p in (REPO / "datasets/capture-v1/test").glob("*.tsv")}
    assert test_meetings and not set(trained["meetings"]) & test_meetings
    assert train_main(["--check"]) == 0
    assert 0.0 < model.threshold < 1.0 and model.embedder.startswith("all-MiniLM-L6-v2")


def test_training_refuses_the_test_split() -> None:
    assert train_main([str(REPO / "datasets/capture-v1/test")]) == 2


def test_needs_are_requirements_and_talk_is_not(embedder: MiniLMEmbedder) -> None:
    text = (
        "Ana: Hi everyone , how was your weekend ?\n"
        "Ben: Yeah , fine , thanks .\n"
        "Ana: Patients must be able to cancel their appointment online without phoning .\n"
        "Ben: I'll send the minutes around after the meeting .\n"
        "Ana: The production cost per unit must not exceed 12.50 EUR .\n"
        "Ben: Okay , that should be fine .\n"
        "Ana: Should the volume follow the distance to the TV ?\n"
    )
    sentences = sentences_of(text)
    verdicts, vectors = classify(sentences, embedder)
    labels = {s.text: v.label for s, v in zip(sentences, verdicts, strict=True)}
    assert (
        labels["Patients must be able to cancel their appointment online without phoning ."] == "F"
    )
    assert labels["The production cost per unit must not exceed 12.50 EUR ."] == "A"
    for talk in (
        "Hi everyone , how was your weekend ?",
        "I'll send the minutes around after the meeting .",
        "Should the volume follow the distance to the TV ?",  # a question, never a requirement
    ):
        assert labels[talk] == "NULL", talk
    assert vectors.shape == (len(sentences), 384)
    # sentences know their speaker and line kind
    assert sentences[0].speaker == "Ana" and sentences[0].line_kind == "spoken"
    notes = sentences_of("## Scope\n- TV only for v1.\n- [ ] Ana: send the survey.\n")
    assert [s.line_kind for s in notes] == ["heading", "bullet", "checkbox"]


def test_a_need_is_a_need_whether_or_not_its_speaker_is_named(embedder: MiniLMEmbedder) -> None:
    said = [
        "Okay , let's start with the booking page .",
        "Patients need to book an appointment online without ringing the practice .",
        "Good .",
        "And as the manager I want to see how many no-shows we get every month .",
    ]
    named = sentences_of("".join(f"{n}: {t}\n" for n, t in zip("ABAB", said, strict=True)))
    plain = sentences_of("".join(f"{t}\n" for t in said))  # notes, or an export not recognised
    assert [s.line_kind for s in plain] == ["plain"] * 4
    p_named = [v.p_requirement for v in classify(named, embedder)[0]]
    p_plain = [v.p_requirement for v in classify(plain, embedder)[0]]
    assert p_plain == pytest.approx(p_named)
    threshold = CaptureModel.load().threshold
    assert p_plain[1] >= threshold and p_plain[3] >= threshold and p_plain[2] < threshold


def write(tmp_path: Path, rows: list[tuple[str, str]]) -> Path:
    path = tmp_path / "meeting.tsv"
    path.write_text("".join(f"{k}\t{t}\t{lab}\n" for k, (t, lab) in enumerate(rows, 1)))
    return path


def story(meeting, item_id: str, *texts: str, criteria: tuple[str, ...] = ()) -> GeneratedItem:
    quotes = []
    title = "Provide a power button" if criteria else "t"
    for text in texts:
        at = meeting.transcript.index(text)
        quotes.append(SourceQuote(text=text, start=at, end=at + len(text)))
    return GeneratedItem(
        run_id="run-1",
        segment_id="seg-0001",
        segment_order=1,
        type="User Story",
        item_id=item_id,
        story_id=item_id,
        title=title,
        source_doc="m",
        source_doc_segment="0-1",
        source_quotes=quotes,
        acceptance_criteria=list(criteria),
        generation_agent_version="v",
        engine="offline",
    )


def test_scores_count_statements_quotes_and_main_quotes(tmp_path: Path) -> None:
    meeting = read_meeting(
        write(
            tmp_path,
            [
                ("Ana: Hello .", "NULL"),
                ("Ana: We need a power button .", "F"),
                ("Ben: It should be red .", "F"),
                ("Ben: It must cost under 12 EUR .", "A"),
                ("Ana: Yeah , a blue one .", "NULL"),
            ],
        )
    )
    assert meeting.transcript.startswith("Ana: Hello .\nAna: We need")
    assert meeting.statements[1].span.start == meeting.transcript.index("We need")
    stories = [
        story(
            meeting,
            "s1",
            "We need a power button",
            "It should be red .",
            "Yeah , a blue one .",
            # one criterion from a requirement statement, one from talk
            criteria=("The power button is red.", "The power button is blue."),
        ),
        story(meeting, "s2", "Yeah , a blue one ."),  # a story whose main quote is talk
    ]
    figures, rows = score_meeting(meeting, stories)
    assert figures["requirement_statements"] == 3
    assert figures["statement_recall"] == round(2 / 3, 4)
    assert figures["quoted_statements"] == 3 and figures["quote_precision"] == round(2 / 3, 4)
    assert figures["story_precision"] == 0.5
    assert figures["missed"] == ["4: Ben: It must cost under 12 EUR ."]
    assert rows[0]["quoted_statements"] == [["2:F"], ["3:F"], ["5:NULL"]]
    # traced by what each adds to the title: "red" (statement 3), "blue" (statement 5, talk)
    assert rows[0]["criteria_sources"] == ["3:F", "5:NULL"]
    assert figures["criteria"] == 2 and figures["criterion_precision"] == 0.5


def test_a_statement_the_meeting_revised_is_captured_by_the_story_that_supersedes_it(
    tmp_path: Path,
) -> None:
    # "three items" revised to "five items": the story quotes the later decision and keeps the
    # earlier one under superseded_quotes, its evidence of the revision
    meeting = read_meeting(
        write(
            tmp_path,
            [
                ("Ana: Thirty pounds for up to three items .", "F"),
                ("Ben: So let's make it up to five items .", "F"),
                ("Ana: Fine .", "NULL"),
            ],
        )
    )
    later = story(meeting, "s1", "So let's make it up to five items .")
    old = "Thirty pounds for up to three items ."
    at = meeting.transcript.index(old)
    revised = later.model_copy(
        update={"superseded_quotes": [SourceQuote(text=old, start=at, end=at + len(old))]}
    )
    figures, _ = score_meeting(meeting, [later])
    assert figures["statement_recall"] == 0.5
    figures, rows = score_meeting(meeting, [revised])
    assert figures["statement_recall"] == 1.0 and figures["quote_precision"] == 1.0
    assert figures["missed"] == []
    assert rows[0]["superseded"] == [old]


def test_a_meeting_as_captions_is_scored_on_the_same_statements(tmp_path: Path) -> None:
    meeting = read_meeting(
        write(
            tmp_path,
            [
                ("Ana: Hello .", "NULL"),
                ("Ana: We need a power button at the top .", "F"),
                ("Ben: It should be red .", "F"),
            ],
        )
    )
    vtt = as_captions(meeting, 3)
    # cues of three words, Ana's two statements one turn: "Hello . We" is one cue
    assert "<v Ana>Hello . We\n" in vtt and "<v Ben>It should be\n" in vtt
    transcript = normalize(extract_text(vtt.encode(), "vtt"))
    spans = spans_by_words(transcript, meeting.statements)
    said = [transcript[s.start : s.end] for s in spans]
    assert said[0] == "Hello ."
    assert " ".join(said[1].split()) == "We need a power button at the top ."
    assert said[2].startswith("It should") and said[2].endswith("red .")
    assert spoken(meeting)
    text = as_wrapped(meeting, 45)
    assert text.splitlines()[:2] == ["Ana: Hello . We need a power button at the", "top ."]
    transcript = normalize(extract_text(text.encode(), "txt"))
    said = [transcript[s.start : s.end] for s in spans_by_words(transcript, meeting.statements)]
    assert said[1] == "We need a power button at the top ."  # the lines cut it, unwrap joined
    changed = [Statement(1, "Ana: Hello there .", "NULL")]
    with pytest.raises(RuntimeError, match="statement 1 is not in the upload's transcript"):
        spans_by_words(transcript, changed)


def test_bad_files_say_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text("1\tWe need a button .\tMAYBE\n")
    with pytest.raises(DatasetError, match="bad.tsv:1: label 'MAYBE'"):
        read_meeting(path)
    path.write_text("1\tonly two columns\n")
    with pytest.raises(DatasetError, match="3 tab-separated columns"):
        read_meeting(path)


def test_a_held_out_model_is_used_only_inside_its_block() -> None:
    from shared.analysis.capture import held_out

    shipped = CaptureModel.load()
    other = CaptureModel({**shipped.doc, "version": "held-out-test", "threshold": 0.99})
    with held_out(other):
        assert CaptureModel.load() is other
    assert CaptureModel.load() is shipped


def test_the_operating_point_is_the_best_quote_precision_that_keeps_recall() -> None:
    from shared.eval.train_capture import MIN_STATEMENT_RECALL, choose_operating_point

    def point(t: float, recall: float, precision: float) -> dict[str, float]:
        return {"threshold": t, "statement_recall": recall, "quote_precision": precision}

    sweep = [
        point(0.30, MIN_STATEMENT_RECALL + 0.06, 0.55),
        point(0.40, MIN_STATEMENT_RECALL + 0.01, 0.60),
        point(0.42, MIN_STATEMENT_RECALL + 0.005, 0.60),
        point(0.50, MIN_STATEMENT_RECALL - 0.01, 0.65),  # better precision, too little recall
    ]
    assert choose_operating_point(sweep)["threshold"] == 0.40  # a tie goes to the lower one
    low = [point(0.30, 0.60, 0.5), point(0.40, 0.55, 0.6)]
    assert choose_operating_point(low)["threshold"] == 0.30  # none keeps recall: the best recall


def test_the_sweep_runs_the_whole_generator_at_each_threshold(embedder: MiniLMEmbedder) -> None:
    """A higher threshold quotes fewer statements of a meeting, never more; the model each meeting
    is run with is the one given for it."""
    from shared.eval.train_capture import generator_sweep

    meeting = read_meeting(DEFAULT_DEV / "planning-notes.tsv")
    shipped = CaptureModel.load().doc
    low, high = generator_sweep([meeting], {meeting.meeting_id: shipped}, embedder, (0.2, 0.95))
    assert (low["threshold"], high["threshold"]) == (0.2, 0.95)
    assert low["stories"] > 0 and low["statement_recall"] > 0.5
    assert high["statement_recall"] < low["statement_recall"]
    assert high["stories"] < low["stories"]


def test_sweep_only_says_what_the_rule_picks_now_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``train_capture --sweep``: each dev meeting with a model that never saw it (the shipped
    C), the generator at each threshold, the rule's pick beside the shipped threshold; the model
    file stays as it was."""
    import shared.eval.train_capture as tc

    model = tmp_path / "capture_model.json"
    shipped = {**CaptureModel.load().doc, "threshold": 0.46}
    model.write_text(json.dumps(shipped))
    before = model.read_text()
    seen: dict[str, object] = {}

    def held_out(meetings: list, embedder: object, c: float, t: float, enc: object) -> dict:
        seen["held_out"] = (sorted(m.meeting_id for m in meetings), c, t)
        return {m.meeting_id: shipped for m in meetings}

    def sweep(meetings: list, docs: dict, embedder: object) -> list[dict[str, float]]:
        seen["swept"] = sorted(docs)
        return [
            {"threshold": 0.46, "statement_recall": 0.78, "quote_precision": 0.64},
            {"threshold": 0.54, "statement_recall": 0.752, "quote_precision": 0.665},
            {"threshold": 0.56, "statement_recall": 0.736, "quote_precision": 0.67},
        ]

    monkeypatch.setattr(tc, "held_out_models", held_out)
    monkeypatch.setattr(tc, "generator_sweep", sweep)
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("planning-notes.tsv", "room-booking.tsv"):
        (dev / name).write_text((DEFAULT_DEV / name).read_text())
    assert train_main([str(dev), "--out", str(model), "--sweep"]) == 0
    out = capsys.readouterr().out
    assert "shipped threshold 0.46; the operating point rule picks 0.54" in out
    assert seen["held_out"] == (["planning-notes", "room-booking"], shipped["C"], 0.46)
    assert seen["swept"] == ["planning-notes", "room-booking"]
    assert model.read_text() == before


def _read_as(ps: list[float], text: str = "Staff book rooms online.") -> tuple[list, list]:
    from shared.analysis.capture import Verdict

    sentences = sentences_of("".join(f"{text}\n" for _ in ps))
    threshold = CaptureModel.load().threshold
    verdicts = [Verdict("F" if p >= threshold else "NULL", p, 0.2) for p in ps]
    return sentences, verdicts


def test_a_sentence_is_read_against_how_much_of_its_stretch_states_needs() -> None:
    from shared.analysis.capture import DENSITY_CAP, relative_to_density

    threshold = CaptureModel.load().threshold
    near = threshold - 0.02  # just short of a requirement
    # a workshop: most of what is said asks for something, so the sentence just short of the
    # threshold is a need; in small talk the same p stays talk, and one just over it is talk too
    dense = [0.9] * 8 + [near]
    sentences, verdicts = _read_as(dense)
    lifted = relative_to_density(sentences, verdicts)[-1]
    assert lifted.p_requirement > near and lifted.label == "F"
    # dense talk quotes more, it does not start more needs nor give more criteria: how sure the
    # sentence is to start one or give one is what the classifier said
    assert lifted.p_as_said == near and lifted.p_to_write == near
    assert lifted.p_quality == verdicts[-1].p_quality
    sparse = [0.02] * 8 + [threshold + 0.02]
    sentences, verdicts = _read_as(sparse)
    lowered = relative_to_density(sentences, verdicts)[-1]
    assert lowered.p_requirement < threshold + 0.02 and lowered.label == "NULL"
    assert lowered.p_to_write == lowered.p_requirement  # less sure to start one too
    # never more than DENSITY_CAP in log-odds, and what the classifier did not read stays 0
    sentences, verdicts = _read_as([0.999] * 60 + [0.5, 0.0])
    moved = relative_to_density(sentences, verdicts)
    p = moved[-2].p_requirement
    assert math.log(p / (1 - p)) == pytest.approx(DENSITY_CAP)
    assert moved[-1].p_requirement == 0.0 and moved[-1].label == "NULL"
    # a few lines say little of their kind: the same density moves a sentence less
    sentences, verdicts = _read_as([0.9] * 3 + [0.5])
    few = relative_to_density(sentences, verdicts)[-1].p_requirement
    sentences, verdicts = _read_as([0.9] * 30 + [0.5])
    many = relative_to_density(sentences, verdicts)[-1].p_requirement
    assert 0.5 < few < many


def test_a_question_stays_no_requirement_however_dense_the_talk() -> None:
    from shared.analysis.capture import relative_to_density

    sentences, verdicts = _read_as([0.95] * 9, "Can staff book rooms online?")
    assert all(v.label == "NULL" for v in relative_to_density(sentences, verdicts))
