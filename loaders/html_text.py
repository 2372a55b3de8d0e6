"""ADO rich text (HTML) to plain text, and acceptance criteria to a list of criteria.

The code lives in ``shared.indexing.html_text`` (the writer and the sync keep the index current
with it, and ``shared/`` never imports ``loaders/``); this module keeps the loaders' import path.
"""

from __future__ import annotations

from shared.indexing.html_text import (
    criteria_list,
    html_to_text,
    split_criteria_section,
)

__all__ = [
    "html_to_text",
    "criteria_list",
    "split_criteria_section",
]
