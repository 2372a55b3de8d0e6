"""Offline segmenter: exact tiling, seed limits, topic boundaries, labels, determinism."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from shared.embeddings.minilm import MiniLMEmbedder
from shared.engine.offline import OfflineSegmenter
from shared.settings import SegmentationConfig
from shared.text.textio import normalize
from shared.text.tokens import count_tokens

REPO = Path(__file__).resolve().parents[2]
AMI = REPO / "datasets" / "ami-qmsum-val"

NOTES = """# Remote control - design review notes

Date: 2026-12-08
Present: product owner, UI design, industrial design, marketing

## Battery and power

- Two standard AA batteries; no rechargeable battery and no charging dock.
- Battery life must be at least 12 months of typical use with the backlight on.
- A low-battery warning is shown on the LED and on the LCD.
- The battery compartment needs a coin to open, so children cannot swallow the cells.

## Display and menu

- Keep the small LCD that shows the channel number.
- The backlight can change colour; the user picks one of three colours in the menu.
- The menu is driven by up, down, left, right and OK.
- Direct channel entry: scroll the digits, OK jumps, no OK within 3 s cancels.

## Voice control

- Voice control stays as an option on top of the buttons.
- The remote recognises power, volume and channel numbers only.
- Each user can train the speech recogniser on their own voice, at most 2 profiles.
- Should voice control work when the TV is loud?

## Action items

- [ ] UI design: paper prototype of the menu. Due 2026-12-15.
- [ ] Industrial design: cost of the LCD with the advanced chip. Due 2026-12-15.
"""


def ami_transcript(meeting: str) -> str:
    """IS1006b ships in samples/ (as `Speaker: text` lines); the others come from datasets/."""
    if meeting == "IS1006b":
        sample = REPO / "samples" / "transcripts" / "remote_control_functional_design.txt"
        return normalize(sample.read_text(encoding="utf-8"))
    data = json.loads((AMI / f"{meeting}.json").read_text(encoding="utf-8"))
    turns = data["meeting_transcripts"]
    return normalize("\n".join(f"{t['speaker']}: {t['content']}" for t in turns))


def texts(transcript: str, result) -> list[str]:
    return [transcript[s.start : s.end] for s in result.spans]


def assert_tiles(transcript: str, result) -> None:
    spans = result.spans
    assert spans[0].start == 0 and spans[-1].end == len(transcript)
    for a, b in zip(spans, spans[1:], strict=False):
        assert a.end == b.start and a.start < a.end
    assert "".join(texts(transcript, result)) == transcript


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def segmenter(embedder: MiniLMEmbedder) -> OfflineSegmenter:
    return OfflineSegmenter(embedder, SegmentationConfig())


@pytest.fixture(scope="module")
def is1006b(segmenter: OfflineSegmenter):
    transcript = ami_transcript("IS1006b")
    return transcript, segmenter.segment(transcript)


def test_ports_metadata(segmenter: OfflineSegmenter) -> None:
    assert segmenter.version == "seg-offline-v2"
    assert segmenter.engine == "offline"
    assert segmenter.model is None


@pytest.mark.parametrize("meeting", ["IS1006b", "ES2006b"])
def test_real_meetings_tile_and_respect_limits(segmenter: OfflineSegmenter, meeting: str) -> None:
    transcript = ami_transcript(meeting)
    result = segmenter.segment(transcript)
    assert_tiles(transcript, result)
    tokens = [count_tokens(t) for t in texts(transcript, result)]
    assert len(tokens) >= sum(tokens) // 1200 + 1  # the limit alone forces this many
    assert max(tokens) <= 1200
    assert min(tokens) >= 80
    # boundaries fall between turns: every segment starts at a line start
    assert all(s.start == 0 or transcript[s.start - 1] == "\n" for s in result.spans)
    assert result.usage.calls == 0 and result.model is None


def test_longest_meeting_is_fast_and_bounded(segmenter: OfflineSegmenter) -> None:
    transcript = ami_transcript("TS3009c")
    start = time.perf_counter()
    result = segmenter.segment(transcript)
    elapsed = time.perf_counter() - start
    assert elapsed < 30
    assert_tiles(transcript, result)
    assert max(count_tokens(t) for t in texts(transcript, result)) <= 1200


def test_labels_themes_and_intents(is1006b) -> None:
    transcript, result = is1006b
    for span in result.spans:
        assert 3 <= len(span.intent_labels) <= 6
        assert span.dominant_intent and span.theme
        assert len(set(span.intent_labels)) == len(span.intent_labels)
    themes = {s.theme for s in result.spans}
    assert 1 < len(themes) < len(result.spans)  # a few epics, shared by several segments
    labels = {label for s in result.spans for label in s.intent_labels}
    assert "feature_request" in labels
    assert any(s.dominant_intent.startswith("requirements:") for s in result.spans)
    # keywords come from the segment itself, never fillers or AMI markers
    for span in result.spans:
        words = " ".join(span.intent_labels).lower()
        assert "vocalsound" not in words and "disfmarker" not in words
        assert not {"um", "uh", "yeah", "okay"} & set(words.split())


def test_deterministic(segmenter: OfflineSegmenter, is1006b) -> None:
    transcript, first = is1006b
    again = segmenter.segment(transcript)
    assert again.model_dump() == first.model_dump()


def test_notes_markdown_headings_start_segments(segmenter: OfflineSegmenter) -> None:
    transcript = normalize(NOTES)
    result = segmenter.segment(transcript)
    assert_tiles(transcript, result)
    assert len(result.spans) >= 2
    for text in texts(transcript, result):
        lines = [ln for ln in text.splitlines() if ln.strip()]
        assert not lines[-1].startswith("#")  # a heading is never cut off from its text
    starts = [transcript[s.start : s.end].lstrip().split("\n")[0] for s in result.spans[1:]]
    assert all(line.startswith("## ") for line in starts)
    battery = next(s for s in result.spans if "Battery and power" in transcript[s.start : s.end])
    assert any("batter" in label.lower() for label in battery.intent_labels)


def test_sample_notes_file_tiles(segmenter: OfflineSegmenter) -> None:
    path = REPO / "samples" / "transcripts" / "remote_control_planning_notes.md"
    transcript = normalize(path.read_text(encoding="utf-8"))
    result = segmenter.segment(transcript)
    assert_tiles(transcript, result)
    assert all(80 <= count_tokens(t) <= 1200 for t in texts(transcript, result))


def test_short_text_is_one_segment(segmenter: OfflineSegmenter) -> None:
    transcript = "Alice: We need a power button.\n\nBob: Agreed.\n"
    result = segmenter.segment(transcript)
    assert [(s.start, s.end) for s in result.spans] == [(0, len(transcript))]
    assert len(result.spans[0].intent_labels) >= 3


def test_blank_lines_stay_with_the_previous_unit(segmenter: OfflineSegmenter) -> None:
    body = "\n\n".join(
        f"Speaker {i % 3}: Line {i} is about the battery, the charger and the LCD screen."
        for i in range(80)
    )
    transcript = normalize(body)
    result = segmenter.segment(transcript)
    assert_tiles(transcript, result)
    for span in result.spans[1:]:
        assert transcript[span.start] != "\n"  # a blank line never opens a segment


def test_one_huge_sentence_is_hard_split(segmenter: OfflineSegmenter) -> None:
    words = " ".join(f"word{i} battery charger display" for i in range(900))
    transcript = normalize(f"Speaker: {words}")
    assert count_tokens(transcript) > 2400
    result = segmenter.segment(transcript)
    assert_tiles(transcript, result)
    pieces = texts(transcript, result)
    assert max(count_tokens(t) for t in pieces) <= 1200
    assert all(p.endswith((" ", "\n")) for p in pieces)  # cut after whitespace, not mid-word


# ------------------------------------------------------------------------------------------------
# a fake embedder that makes topics exact, to test where boundaries and merges go


class TopicEmbedder:
    dimension = 4

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            if "alpha" in text:
                v = [1.0, 0.0, 0.0, 0.0]
            elif "beta" in text:
                v = [0.0, 1.0, 0.0, 0.0]
            elif "gamma" in text:
                v = [0.5, 0.0, 0.866, 0.0]  # its own topic, but closer to alpha than to beta
            else:
                v = [0.0, 0.0, 0.0, 1.0]
            rows.append(v)
        return np.array(rows, dtype=np.float32)


def block(topic: str, n: int) -> list[str]:
    return [
        f"Speaker {i % 2}: this {topic} remark number {i} covers {topic} details carefully"
        for i in range(n)
    ]


def test_boundary_lands_exactly_on_the_topic_shift() -> None:
    lines = block("alpha", 40) + block("beta", 40)
    transcript = normalize("\n".join(lines))
    result = OfflineSegmenter(TopicEmbedder(), SegmentationConfig()).segment(transcript)
    assert_tiles(transcript, result)
    first_beta = transcript.index("this beta")
    first_beta = transcript.rfind("\n", 0, first_beta) + 1
    assert first_beta in {s.start for s in result.spans}
    for text in texts(transcript, result):
        assert not ("alpha" in text and "beta" in text)


def test_segment_under_the_minimum_is_merged() -> None:
    # topic boundaries keep a quarter of the maximum (300 tokens) on each side; with a minimum of
    # 400 the ~350-token beta segment is too small and must be merged, and the merge counted
    cfg = SegmentationConfig(max_segment_tokens=1200, min_merge_threshold=400)
    lines = block("alpha", 40) + block("beta", 25)
    transcript = normalize("\n".join(lines))
    default = OfflineSegmenter(TopicEmbedder(), SegmentationConfig()).segment(transcript)
    assert len(default.spans) == 2 and default.merge_operations == 0
    result = OfflineSegmenter(TopicEmbedder(), cfg).segment(transcript)
    assert [(s.start, s.end) for s in result.spans] == [(0, len(transcript))]
    assert result.merge_operations == 1


def test_only_a_topic_shift_that_stands_out_is_cut_when_the_limit_forces_none() -> None:
    # 60 units of 40 tokens (2,400 in all, each side of a cut keeps 300): six ordinary valleys of
    # depth 0.5, one a little deeper (0.8, above the mean valley depth of 0.725) and one that stands
    # out (2.0). Only the last is more than a standard deviation deeper than the mean, so only it
    # is cut; the 0.8 valley is the drift of one conversation (seg-offline-v1 cut it too)
    from shared.engine.offline.segmentation import _Unit

    units = [_Unit(k * 10, k * 10 + 10, f"unit {k}", 40, 1.0, False) for k in range(60)]
    depth = np.zeros(60)
    depth[[5, 10, 15, 25, 30, 35]] = 0.5
    depth[20], depth[45] = 0.8, 2.0
    segmenter = OfflineSegmenter(TopicEmbedder(), SegmentationConfig())
    assert segmenter._choose_boundaries(depth, units) == [45]
    # a heading is a cut whatever the valleys around it (its +1 leaves this one below the cutoff)
    units[30].heading = True
    depth[30] = 1.0
    assert segmenter._choose_boundaries(depth, units) == [30, 45]
