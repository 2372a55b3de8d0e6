"""The capture encoder (MiniLM fine-tuned on the dev meetings): the shipped file, how it reads a
sentence with its neighbours, how its probabilities join the classifier's, and the held-out
probabilities the development estimates run with."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from shared.analysis.capture import CaptureModel, classify, embed_text, sentences_of
from shared.analysis.capture_encoder import (
    ENCODER_PATH,
    CaptureEncoder,
    HeldOutEncoder,
    with_context,
)
from shared.embeddings.minilm import MiniLMEmbedder, ModelFileMismatch
from shared.eval.capture import read_meeting
from shared.eval.train_capture import DEFAULT_DEV, dataset_hash

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def encoder() -> CaptureEncoder:
    model = CaptureModel.load()
    assert isinstance(model.encoder, CaptureEncoder)
    return model.encoder


def test_the_shipped_encoder_is_the_recorded_file_trained_on_dev_only() -> None:
    record = CaptureModel.load().doc["encoder"]
    assert (ENCODER_PATH.parent / record["file"]) == ENCODER_PATH
    dev = [read_meeting(p) for p in sorted(DEFAULT_DEV.glob("*.tsv"))]
    assert record["trained_on"]["sha256"] == dataset_hash(dev), (
        "dev changed: retrain with python -m shared.eval.train_encoder (and --lomo)"
    )
    test_meetings = {p.stem for p in (REPO / "datasets/capture-v1/test").glob("*.tsv")}
    assert test_meetings and not set(record["trained_on"]["meetings"]) & test_meetings
    assert 0.0 < record["weight"] < 1.0
    # the held-out probabilities the dev estimates run with were made from these dev files
    from shared.eval.train_encoder import read_held_out

    held = read_held_out(dev)
    assert sorted(held) == sorted(m.meeting_id for m in dev)
    # the version of the capture model names the encoder it mixes in
    assert CaptureModel.load().version.endswith(f"-e{record['sha256'][:6]}")


def test_a_swapped_encoder_file_is_refused(tmp_path: Path) -> None:
    record = CaptureModel.load().doc["encoder"]
    swapped = tmp_path / "capture_encoder.onnx"
    data = bytearray(ENCODER_PATH.read_bytes())
    data[-1] ^= 0xFF
    swapped.write_bytes(bytes(data))
    with pytest.raises(ModelFileMismatch, match="sha256"):
        CaptureEncoder(record["sha256"], swapped).probabilities(["We need a power button."])


def test_each_sentence_is_read_with_the_one_before_and_after() -> None:
    assert with_context(["a need", "its detail", "talk"]) == [
        ("a need", "its detail"),
        ("its detail", "a need | talk"),
        ("talk", "its detail"),
    ]
    assert with_context(["alone"]) == [("alone", ".")]
    assert with_context([]) == []


def test_a_need_reads_as_one_and_talk_between_needs_does_not(encoder: CaptureEncoder) -> None:
    """Read with its neighbours, a sentence is still read for what it says: talk said between
    two needs is no need (trained always with its context, the encoder gave "We have five
    minutes left." 0.92 here)."""
    texts = [
        "The booking page must let patients choose a doctor.",
        "We have five minutes left.",
        "Reminder texts go out forty-eight hours before the appointment.",
        "I'll send the minutes around after the meeting.",
    ]
    p = encoder.probabilities(texts)
    assert p.shape == (4, 3)
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-5)
    need = p[:, 0] + p[:, 1]
    assert need[0] > 0.5 > need[1] and need[2] > 0.5 > need[3], need.round(2)


def test_a_sentences_probabilities_do_not_depend_on_the_batch(encoder: CaptureEncoder) -> None:
    """Texts of different lengths share batches padded to the longest: the padding is masked."""
    texts = [
        "We need a power button.",
        "So the remote should have a big red power button on the top, easy to find in the dark, "
        "and it must work with every TV we sell, old and new.",
        "Okay.",
        "The battery must last at least a year.",
    ]
    together = encoder.probabilities(texts)
    for k in range(len(texts)):
        # the same text with the same neighbours, run in a batch of its own
        window = texts[max(0, k - 1) : k + 2]
        alone = encoder.probabilities(window)[min(k, 1)]
        assert np.allclose(together[k], alone, atol=1e-5)


def test_the_classifier_and_the_encoder_are_averaged() -> None:
    """With an encoder of weight 1 the probabilities are the encoder's; with weight 0, the
    classifier's; the shipped weight lies between."""
    embedder = MiniLMEmbedder()
    sentences = sentences_of("Ana: We need a power button .\nBen: Okay .\n")
    shipped = CaptureModel.load().doc
    fixed = {embed_text(sentences[0]): [0.1, 0.2, 0.7]}
    held = {"meeting": "m", "probabilities": fixed}

    def model(weight: float) -> CaptureModel:
        return CaptureModel({**shipped, "encoder": {"weight": weight, "held_out": held}})

    verdicts, vectors = classify(sentences, embedder, model(1.0))
    assert verdicts[0].p_requirement == pytest.approx(0.3)
    assert verdicts[0].label == "NULL"  # 0.3 is below the threshold
    lone = CaptureModel({k: v for k, v in shipped.items() if k != "encoder"})
    alone, _ = classify(sentences, embedder, lone)
    mixed, _ = classify(sentences, embedder, model(0.5))
    assert mixed[0].p_requirement == pytest.approx((alone[0].p_requirement + 0.3) / 2)
    zero, _ = classify(sentences, embedder, model(0.0))
    assert zero[0].p_requirement == pytest.approx(alone[0].p_requirement)


def test_held_out_probabilities_say_what_to_run_when_missing(tmp_path: Path) -> None:
    from shared.eval.train_encoder import HeldOutMissing, held_out_header, read_held_out

    read = HeldOutEncoder("ES2006a", {"Known .": [0.2, 0.1, 0.7]})
    assert read.probabilities(["Known ."]).tolist() == [[0.2, 0.1, 0.7]]
    with pytest.raises(KeyError, match="train_encoder --lomo"):
        read.probabilities(["Never seen ."])
    notes = read_meeting(DEFAULT_DEV / "planning-notes.tsv")
    other = read_meeting(DEFAULT_DEV / "room-booking.tsv")
    with pytest.raises(FileNotFoundError, match="train_encoder --lomo"):
        read_held_out([notes], tmp_path / "none.jsonl")
    path = tmp_path / "held_out.jsonl"
    row = {"meeting": notes.meeting_id, "text": "A need .", "p": [0.6, 0.1, 0.3]}
    header = held_out_header([notes], [[notes.meeting_id]])
    path.write_text(json.dumps(header) + "\n" + json.dumps(row) + "\n")
    assert read_held_out([notes], path) == {notes.meeting_id: {"A need .": [0.6, 0.1, 0.3]}}
    with pytest.raises(HeldOutMissing, match="room-booking"):  # a meeting it does not hold
        read_held_out([notes, other], path)
    header["meetings"][notes.meeting_id] = "0" * 64  # the meeting's file changed since
    path.write_text(json.dumps(header) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(ValueError, match="another version of planning-notes"):
        read_held_out([notes], path)
