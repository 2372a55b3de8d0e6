"""Decoding uploads, normalization and spans: the offsets everything points into."""

from __future__ import annotations

import pytest

from shared.textio import (
    UnreadableInput,
    decode_text,
    extract_text,
    line_spans,
    normalize,
    sentence_spans,
    vtt_to_transcript,
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


def test_vtt_becomes_speaker_lines():
    vtt = "WEBVTT\n\nNOTE a comment\n\n1\n00:00:01.000 --> 00:00:02.500\n<v Ana>We must ship in May.</v>\n\n00:01:02.000 --> 00:01:04.000\n<v Bo>Agreed.\n"
    assert vtt_to_transcript(vtt) == "Ana: We must ship in May.\nBo: Agreed."


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
