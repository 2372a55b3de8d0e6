"""The repository explains itself: code and documentation point at files inside it (docs/*.md and
the like), never at design notes or data beside the repository that a clone does not have."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".git", ".venv", ".venv-tools", "node_modules", ".data", "out", ".pytest_cache"}
TEXT_SUFFIXES = {".py", ".md", ".txt", ".toml", ".yaml", ".yml", ".json", ".js", ".css", ".html"}
# spelled in pieces so that this file does not match itself
OUTSIDE = [
    re.compile(re.escape("DESIGN" + ".md")),
    re.compile(re.escape("../" + "shared/")),
    re.compile(r"(?<![\w/])shared/(?:docs|data|seeds)/"),
    re.compile(r"(?<![\w/])seeds/\d{3}_"),
]
DOC_LINK = re.compile(r"(?<![\w/.-])(docs/[A-Z][A-Z_]+\.md)")


def text_files() -> list[Path]:
    """Every source and documentation file of the repository, without installed or built ones."""
    return sorted(
        path
        for path in REPO.rglob("*")
        if path.suffix in TEXT_SUFFIXES
        and path.is_file()
        and not SKIP_DIRS.intersection(path.relative_to(REPO).parts)
        and path.stat().st_size < 2_000_000
    )


def test_nothing_points_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()[:120]}"
        for path in text_files()
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
        if any(p.search(line) for p in OUTSIDE)
    ]
    assert found == []


def test_every_docs_file_that_is_named_exists() -> None:
    named = {
        (path.relative_to(REPO), link)
        for path in text_files()
        for link in DOC_LINK.findall(path.read_text(errors="replace"))
    }
    assert any(link == "docs/ARCHITECTURE.md" for _, link in named)
    missing = sorted(f"{path}: {link}" for path, link in named if not (REPO / link).is_file())
    assert missing == []
