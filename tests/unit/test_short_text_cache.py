"""The per-process memo of pure text analyses (``shared.text.textio.short_text_cache``): a short text
is analysed once, a long one every time (never held), and callers still get results of their own
to change."""

from __future__ import annotations

from shared.analysis.contradiction import polarity, quantities
from shared.text.language import content_words
from shared.text.textio import SHORT_TEXT_CHARS, short_text_cache


def test_a_short_text_is_analysed_once_a_long_one_every_time() -> None:
    seen: list[str] = []

    @short_text_cache(maxsize=8)
    def upper(text: str) -> str:
        seen.append(text)
        return text.upper()

    assert upper("pause") == upper("pause") == "PAUSE"
    assert seen == ["pause"]
    long = "x" * (SHORT_TEXT_CHARS + 1)
    assert upper(long) == upper(long) == long.upper()
    assert seen == ["pause", long, long]


def test_the_cache_keeps_the_most_recent_texts_only() -> None:
    seen: list[str] = []

    @short_text_cache(maxsize=2)
    def same(text: str) -> str:
        seen.append(text)
        return text

    for text in ("a", "b", "c", "a"):
        same(text)
    assert seen == ["a", "b", "c", "a"]  # "a" was the least recent when "c" came


def test_cached_analyses_hand_out_their_own_copies() -> None:
    text = "The remote must not have teletext; it has 8 buttons."
    words = content_words(text)
    words.append("changed")
    assert "changed" not in content_words(text)
    asserted, negated = polarity(text)
    negated["changed"] = "x"
    asserted.clear()
    assert polarity(text)[0] and "changed" not in polarity(text)[1]
    found = quantities(text)
    found.clear()
    assert [q.value for q in quantities(text)] == [8.0]
