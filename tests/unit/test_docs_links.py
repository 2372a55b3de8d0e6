"""The README and docs/*.md hold together: every relative link and image points at a file of the
repository, every ``#anchor`` at a heading of its target, and every section named in quotes after a
document (``README "Review page"``, ``docs/DEPLOY.md ("Optional settings")``) is a heading there,
so that moving a section cannot leave a reference behind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
BOLD_LEAD_IN = re.compile(r"^(?:- )?\*\*([^*]+?)\.?\*\*", re.MULTILINE)
# a document, optionally "'s" and a comma or an opening parenthesis, then a quoted section name
NAMED_SECTION = re.compile(
    r"(?<![\w/.-])(README(?:\.md)?|(?:docs/)?[A-Z][A-Z_]+\.md)`?(?:'s)?,?\s+\(?\"([^\"]+)\""
)


def markdown_files() -> list[Path]:
    """The README and every document under docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file, repeated headings numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text())):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def section_names(path: Path) -> set[str]:
    """What a quoted reference may name in a markdown file: its headings as written (code spans
    unquoted) and the bold lead-ins that open a paragraph or a list item (``**Pending stories.**``)."""
    text = FENCE.sub("", path.read_text())
    headings = {h.replace("`", "") for h in HEADING.findall(text)}
    return headings | set(BOLD_LEAD_IN.findall(text))


def names_a_section(name: str, path: Path) -> bool:
    """``name`` is a section of ``path``: the whole of one, or its start before a parenthesis
    (``"Artifacts of a run"`` for ``Artifacts of a run (`runs/{run_id}/`)``)."""
    return any(s == name or s.startswith(f"{name} (") for s in section_names(path))


def test_slug_follows_github() -> None:
    assert slug("7. Scaling, cost and what to watch") == "7-scaling-cost-and-what-to-watch"
    assert slug("Artifacts of a run (`runs/{run_id}/`)") == "artifacts-of-a-run-runsrun_id"
    assert slug("Review and write (Azure DevOps)") == "review-and-write-azure-devops"


def test_anchors_number_repeated_headings(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Results\n\n```sh\n# not a heading\n```\n\n## Results\n")
    assert anchors(page) == {"title", "results", "results-1"}


def test_quoted_names_match_headings_and_lead_ins(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "## Artifacts of a run (`runs/`)\n\n**Pending stories.** text\n\n- **Sync** x\n"
    )
    assert names_a_section("Artifacts of a run", page)
    assert names_a_section("Pending stories", page)
    assert names_a_section("Sync", page)
    assert not names_a_section("Artifacts", page)
    assert not names_a_section("Review page", page)


def test_links_found_outside_code_only() -> None:
    text = 'See [a](a.md) and ![b](img/b.png "title").\n\n```sh\n[c](c.md)\n```\n`[d](d.md)`'
    assert LINK.findall(prose(text)) == ["a.md", "img/b.png"]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_and_anchors_resolve(path: Path) -> None:
    broken = []
    for target in LINK.findall(prose(path.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor in {resolved.name}")
    assert broken == []


def test_the_readme_indexes_every_document() -> None:
    readme = prose((REPO / "README.md").read_text())
    linked = {target.partition("#")[0] for target in LINK.findall(readme)}
    documents = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")}
    assert documents - linked == set()


def test_sections_named_in_quotes_exist() -> None:
    dangling = []
    for path in markdown_files():
        text = " ".join(FENCE.sub("", path.read_text()).split())  # a reference may span lines
        for document, name in NAMED_SECTION.findall(text):
            if document.startswith("README"):
                target = REPO / "README.md"
            elif document.startswith("docs/"):
                target = REPO / document
            else:
                target = REPO / "docs" / document
            if not target.is_file() or not names_a_section(name, target):
                dangling.append(f'{path.relative_to(REPO)}: {document} "{name}"')
    assert dangling == []
