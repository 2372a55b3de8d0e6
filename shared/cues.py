"""Deterministic cues for requirement-bearing sentences (coverage metric, offline engine).

A sentence bears a requirement when it states a need, an obligation, a wish, a decision or a
measurable constraint. The coverage metric uses this one definition whatever engine generated the
stories, so coverage figures stay comparable between engines.
"""

from __future__ import annotations

import re

_NEED = re.compile(
    r"\b(must|should|shall|need(s|ed)? to|needs?|ha(ve|s) to|got to|gotta|want(s|ed)?( to)?|"
    r"would like|'d like|require[sd]?|requirement|important (that|to)|it'?d be (good|nice)|"
    r"as an? [\w ]{1,40}, i want|we decided|decided (to|that|on)|let'?s (go with|use|have|make)|"
    r"we'?ll (use|go with|have)|agreed|has got to|ought to)\b",
    re.IGNORECASE,
)
_CONSTRAINT = re.compile(
    r"(\b(at least|at most|no more than|maximum|minimum|max\.?|min\.?|under|below|within|"
    r"only|limit(ed)?|not allowed|forbidden|cannot|can't)\b.*\d)|"
    r"(\d+(\.\d+)?\s?(%|percent|euros?|eur|€|\$|dollars?|ms|seconds?|s\b|minutes?|hours?|days?|"
    r"weeks?|months?|years?|buttons?|cm|mm|g\b|grams?|kg|mb|gb))",
    re.IGNORECASE,
)
_META = re.compile(
    r"\b(wrap (this|it) up|next meeting|i need to (go|leave)|minutes of the meeting|"
    r"coffee|lunch|break)\b",
    re.IGNORECASE,
)


def is_requirement_bearing(sentence: str) -> bool:
    text = sentence.strip()
    if len(text.split()) < 5 or text.endswith("?"):
        return False
    if _META.search(text):
        return False
    return bool(_NEED.search(text) or _CONSTRAINT.search(text))
