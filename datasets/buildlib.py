"""What the dataset build scripts share (datasets/v1/build.py, datasets/v2/*/build.py).

Stdlib only. A build script puts this folder on ``sys.path`` and imports it, so every script
still runs on its own: ``python datasets/<...>/build.py [--check]``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

TAGS = ("new", "extend", "gap", "conflict", "duplicate")
# datasets/v2: what makes a case hard, per tag (the ``kind`` field)
KINDS = {
    "duplicate": {"paraphrase-close", "paraphrase-far"},
    "extend": {"extend"},
    "gap": {"gap"},
    "conflict": {"quantity", "unit", "negation", "modal", "antonym", "frequency", "exclusivity"},
    "new": {"hard-negative", "unrelated"},
}

_PREFIX = re.compile(r"^#(G\d+)#\s*")
_MEANS = re.compile(
    r"^as (?:an?|the)?\s*[^,]+?,?\s*i(?: want| need| would like| would|'m| am)?(?: to)?\s+"
    r"(?:be able to\s+|must\s+)?(?P<means>.+?)(?:[,.]?\s*so that\b.*)?$",
    re.IGNORECASE | re.DOTALL,
)


def clean(text: str) -> str:
    """Backslash escapes of the Dalpiaz files removed, whitespace collapsed."""
    text = text.replace("\\'", "'").replace('\\"', '"')
    return re.sub(r"\s+", " ", text).strip()


def title_of(story: str) -> str:
    """A Dalpiaz story's "I want ..." clause, capitalized, at most 80 characters."""
    m = _MEANS.match(story)
    means = (m.group("means") if m else story).strip().rstrip(".!,; ")
    means = means[0].upper() + means[1:] if means else story
    if len(means) > 80:
        means = means[:77].rsplit(" ", 1)[0].rstrip(",;") + "..."
    return means


def group_number(group: str) -> int:
    return int(group.lstrip("G"))


def ref_id(ref: str) -> int:
    """``"G13:28"`` → 13028: group number × 1000 + line number."""
    group, line = ref.split(":")
    return group_number(group) * 1000 + int(line)


def read_dalpiaz(path: Path, group: str) -> dict[int, str]:
    """Line number -> cleaned story text of one Dalpiaz backlog file; empty lines and exact
    repeats within the backlog left out."""
    stories: dict[int, str] = {}
    seen: set[str] = set()
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = _PREFIX.match(raw)
        if not m:
            continue
        if m.group(1) != group:
            raise ValueError(f"{path.name}:{n} belongs to {m.group(1)}, expected {group}")
        text = clean(raw[m.end() :])
        if not text or text.lower() in seen:
            continue
        seen.add(text.lower())
        stories[n] = text
    return stories


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def write_or_check(
    outputs: dict[Path, str], base: Path, description: str, argv: list[str] | None = None
) -> int:
    """The build scripts' command line: write ``outputs`` (path -> text), or with ``--check``
    only compare them and exit 1 naming the stale files (relative to ``base``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = parser.parse_args(argv)
    stale = []
    for path, text in outputs.items():
        name = str(path.relative_to(base))
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {name} ({text.count(chr(10))} lines)")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0
