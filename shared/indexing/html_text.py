"""ADO rich text (HTML) to plain text, and acceptance criteria to a list of criteria.

ADO stores Description and Acceptance Criteria as HTML. Block elements become line breaks, list
items become lines of their own, entities are decoded; nothing from the markup survives.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

_BLOCK = {
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "tr",
    "table",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def html_to_text(value: str | None) -> str:
    if not value:
        return ""
    if "<" not in value:
        return html.unescape(value).strip()
    parser = _Text()
    parser.feed(value)
    parser.close()
    text = "".join(parser.parts).replace("\xa0", " ")
    lines = [re.sub(r"[ \t]+", " ", ln).strip() for ln in text.splitlines()]
    return "\n".join(ln for ln in lines if ln)


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def criteria_list(value: str | None) -> list[str]:
    """Acceptance criteria (HTML list, lines or bullets) as one string per criterion."""
    text = html_to_text(value)
    return [_BULLET.sub("", ln).strip() for ln in text.splitlines() if _BULLET.sub("", ln).strip()]


# "Acceptance criteria" (a heading, a bold line or a line of its own, an optional colon), then a
# list: where a process without an acceptance-criteria field (Basic) keeps them in the description
_CRITERIA_SECTION = re.compile(
    r">\s*acceptance\s+criteria\s*:?\s*(?:</?[a-z][a-z0-9]*\b[^>]*>\s*)*?(<(ul|ol)\b.*?</\2\s*>)",
    re.IGNORECASE | re.DOTALL,
)


def split_criteria_section(value: str | None) -> tuple[str, list[str]]:
    """A description (HTML) holding acceptance criteria under "Acceptance criteria" headings, each
    followed by a list: (the description as text without those headings and lists, the criteria
    of every such list in order). Without one: (the description as text, [])."""
    html_value = str(value or "")
    criteria: list[str] = []
    kept: list[str] = []
    last = 0
    for match in _CRITERIA_SECTION.finditer(html_value):
        kept.append(html_value[last : match.start() + 1])
        criteria.extend(criteria_list(match.group(1)))
        last = match.end()
    kept.append(html_value[last:])
    return html_to_text("".join(kept)), criteria
