"""The reviewed backlog as a file: CSV for Azure DevOps' CSV import, or Markdown to read.

``GET /api/runs/{run_id}/export?format=csv|md`` (``format`` is required; another value is a 400;
a run that has not completed is a 409 ``{"code": "not_completed"}``) and
``python -m shared.cli export RUN_ID --format csv|md [--out DIR] [-o FILE]``. Both export the
run with its saved review applied (shared/review_state.py) and its saved decisions.

**CSV** (``text/csv; charset=utf-8``, ``Content-Disposition: attachment; filename="{run_id}.csv"``)
follows ADO's "Import work items from a CSV file" (Boards > Queries > Import work items):

    ID,Work Item Type,Title 1,Title 2,Title 3,Description,Acceptance Criteria,Tags
    ,Epic,Voice control,,,<div>…</div>,,backlog-synth; synth-sig-…; synth-run-…
    ,Feature,,Voice commands,,<div>…</div>,,…
    ,User Story,,,Say a channel number,<div>…</div>,<ul><li>…</li></ul>,…; synth-new

- it holds what a write would **create** under the saved decisions: new stories (and ``both``),
  with the epics and features they need. ADO's import creates every row without an ID and
  *updates* every row with one (overwriting the fields the file gives), so stories that extend,
  duplicate or conflict with an existing work item are left out: a CSV cannot append criteria to
  an existing item. Write those with ``POST .../write``; the Markdown lists them all.
- ``ID`` is empty (new items); the hierarchy is the indentation of the title (epic in Title 1,
  feature in Title 2, story in Title 3; an item whose parent is an existing work item starts at
  Title 1 and says so in its description: link it by hand after the import).
- ``Description`` and ``Acceptance Criteria`` are HTML, as ADO's rich-text fields want, escaped
  exactly as the writer escapes them (shared/writer/render.py); titles likewise.
- ``Tags`` are the writer's, the signature tag included: a later write finds the imported items
  and does not create them again.
- a cell starting with ``= + - @`` (or a tab or carriage return) gets a leading ``'`` so that a
  spreadsheet opening the file does not run it as a formula.

It does not look at ADO: import it instead of writing the run, not after (items the write
created already would be imported again).

**Markdown** (``text/markdown; charset=utf-8``, ``{run_id}.md``): ``# epic`` / ``## feature`` /
``### story`` with the description, ``- [ ] criterion`` lines, the tag, what the write would do
and the existing work item it was compared with, quotes as ``> text — speaker, timecode``, and an
"Open questions" section (the stories made open questions, and each item's open questions).
Every piece of run text is one escaped line: ``\\ ` * _ [ ] < > # ! | ~`` are backslash-escaped
and a leading ``- + =`` or ``1.`` is too, so model or transcript text cannot open a heading,
list, quote, link, image or HTML tag. (A bare ``https://…`` stays text; GitHub shows it as a link
to the address it names.)
"""

from __future__ import annotations

import csv
import io
import logging
import re
from collections.abc import Iterable
from typing import Any

from shared.ado import ops
from shared.ado import process as processes
from shared.ado.process import AGILE, Process
from shared.models import GeneratedItem, SourceQuote
from shared.review import existing_items, referenced_ids
from shared.services import Services
from shared.writer import render
from shared.writer.plan import Plan, PlannedItem, build_plan
from shared.writer.runs import ReviewedRun, reviewed_run

log = logging.getLogger(__name__)

CSV_COLUMNS = (
    "ID",
    "Work Item Type",
    "Title 1",
    "Title 2",
    "Title 3",
    "Description",
    "Acceptance Criteria",
    "Tags",
)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_MD_INLINE = re.compile(r"([\\`*_\[\]<>#!|~])")
_MD_BLOCK_START = re.compile(r"^([-+=])|^(\d+)([.)])")


# ------------------------------------------------------------------------------------------------
# CSV


def csv_cell(value: str) -> str:
    """A cell a spreadsheet will not evaluate (OWASP's CSV injection rule)."""
    return "'" + value if value.startswith(FORMULA_START) else value


def _csv_rows(plan: Plan) -> Iterable[tuple[int, PlannedItem]]:
    """(depth, entry) of what the plan creates, each parent followed by its children."""
    created = [e for e in plan.items if e.action == "create"]
    ids = {e.item_id for e in created}
    children: dict[str | None, list[PlannedItem]] = {}
    for entry in created:
        parent = entry.parent_item_id if entry.parent_item_id in ids else None
        children.setdefault(parent, []).append(entry)

    def walk(parent: str | None, depth: int) -> Iterable[tuple[int, PlannedItem]]:
        for entry in children.get(parent, []):
            yield depth, entry
            yield from walk(entry.item_id, depth + 1)

    yield from walk(None, 0)


def to_csv(plan: Plan) -> str:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for depth, entry in _csv_rows(plan):
        item = entry.item
        titles = ["", "", ""]
        titles[min(depth, 2)] = render.title_text(item.title)
        ac_field = plan.process.ac_field
        description = render.description_html(
            item,
            criteria=() if ac_field else item.acceptance_criteria,
            feature=entry.feature_title,
        )
        if entry.parent_item_id is None and entry.parent_work_item_id is not None:
            description += (
                f"<div><i>Parent: existing work item #{entry.parent_work_item_id}"
                " (link it after the import)</i></div>"
            )
        if entry.decision == "both" and entry.existing_id is not None:
            description += (
                f"<div><i>Related: existing work item #{entry.existing_id} (kept both)</i></div>"
            )
        labels = [render.PRODUCT_TAG, entry.signature_tag, f"synth-run-{plan.run_id}"]
        if entry.tag:
            labels.append(f"synth-{entry.tag}")
        row = [
            "",
            entry.ado_type or item.type,
            *titles,
            description,
            render.criteria_html(item.acceptance_criteria) if ac_field else "",
            ops.tags_value(render.tags(labels)),
        ]
        writer.writerow([csv_cell(cell) for cell in row])
    return out.getvalue()


# ------------------------------------------------------------------------------------------------
# Markdown


def md(text: str | None) -> str:
    """One line of run text, safe in Markdown: whitespace collapsed, syntax escaped."""
    line = _MD_INLINE.sub(r"\\\1", render.clean(text or ""))
    return _MD_BLOCK_START.sub(
        lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), line
    )


def _paragraphs(text: str) -> list[str]:
    return [md(line) for line in (text or "").splitlines() if line.strip()]


def _quote(quote: SourceQuote) -> str:
    who = ", ".join(md(p) for p in (quote.speaker, quote.timecode) if p)
    return f"> {md(quote.text)}" + (f" — {who}" if who else "")


def _story_lines(
    entry: PlannedItem | None, item: GeneratedItem, existing: dict[int, dict[str, Any]]
) -> list[str]:
    lines = [f"### {md(item.title)}", ""]
    facts = [f"`{entry.tag or 'untagged'}`" if entry else "`untagged`"]
    if entry is not None:
        facts.append(f"write: {entry.action} ({md(entry.reason)})")
        if entry.existing_id is not None:
            known = existing.get(entry.existing_id) or {}
            title = f" “{md(known['title'])}”" if known.get("title") else ""
            facts.append(f"compared with \\#{entry.existing_id}{title}")
    lines += [" · ".join(facts), ""]
    if item.description.strip():
        lines += _paragraphs(item.description) + [""]
    if item.acceptance_criteria:
        lines += [f"- [ ] {md(c)}" for c in item.acceptance_criteria] + [""]
    for quote in item.source_quotes:
        lines += [_quote(quote), ""]
    return lines


def to_markdown(reviewed: ReviewedRun, plan: Plan, existing: dict[int, dict[str, Any]]) -> str:
    run = reviewed.run
    entries = {e.item_id: e for e in plan.items}
    items = reviewed.items
    epics = [i for i in items if i.type == "Epic"]
    features = [i for i in items if i.type == "Feature"]
    stories = [i for i in items if i.type == "User Story"]
    feature_ids = {f.item_id for f in features}
    epic_ids = {e.item_id for e in epics}

    state = reviewed.state
    lines = [f"Backlog of run `{run.run_id}` ({md(run.source_name)}, project {md(run.project)})"]
    if state.version:
        saved = f"{state.saved_at:%Y-%m-%d %H:%M} UTC" if state.saved_at else "?"
        lines[0] += f", review version {state.version} saved by {md(state.saved_by)} at {saved}"
    lines.append("")

    def feature_block(feature: GeneratedItem) -> list[str]:
        out = [f"## {md(feature.title)}", ""]
        if feature.parent_work_item_id is not None and feature.epic_id not in epic_ids:
            out += [f"Under the existing work item \\#{feature.parent_work_item_id}", ""]
        for story in stories:
            if story.feature_id == feature.item_id:
                out += _story_lines(entries.get(story.item_id), story, existing)
        return out

    for epic in epics:
        lines += [f"# {md(epic.title)}", ""] + _paragraphs(epic.description) + [""]
        for feature in features:
            if feature.epic_id == epic.item_id:
                lines += feature_block(feature)
    loose_features = [f for f in features if f.epic_id not in epic_ids]
    loose_stories = [s for s in stories if s.feature_id not in feature_ids]
    if loose_features or loose_stories:
        lines += ["# Without a generated epic", ""]
        for feature in loose_features:
            lines += feature_block(feature)
        if loose_stories:
            lines += ["## Without a generated feature", ""]
            for story in loose_stories:
                lines += _story_lines(entries.get(story.item_id), story, existing)

    questions: list[str] = []
    titles = {i.item_id: i.title for i in items}
    for asked in reviewed.applied.open_questions:
        where = f" (feature “{md(titles[asked.feature_id])}”)" if asked.feature_id in titles else ""
        questions.append(f"- {md(asked.title)}{where}: made an open question by the review")
        questions += [f"  {_quote(q)}" for q in asked.item.source_quotes]
    for item in items:
        for question in item.open_questions:
            questions.append(f"- {md(question.question)} ({md(item.title)})")
            if question.quote is not None:
                questions.append(f"  {_quote(question.quote)}")
    if questions:
        lines += ["# Open questions", "", *questions, ""]
    return "\n".join(lines).rstrip() + "\n"


# ------------------------------------------------------------------------------------------------
# entry point


def export_process(settings: Any) -> Process:
    """The process the CSV is written for: AZURE_DEVOPS_PROCESS; else the project's, when Azure
    DevOps is configured and answers; else Agile (the work item types of a CSV are then those of
    an Agile project: set AZURE_DEVOPS_PROCESS for another)."""
    chosen = processes.configured(settings)
    if chosen is not None:
        return chosen
    from shared.ado.client import AdoClient

    try:
        with AdoClient.from_settings(settings) as client:
            return processes.detect(client)
    except Exception as err:  # noqa: BLE001 - not configured, unreachable, or types unclear
        log.info("export: the process is taken to be agile (%s)", err)
        return AGILE


def export_run(svc: Services, run_id: str, fmt: str) -> bytes:
    """The completed run ``run_id`` with its saved review, as ``fmt`` ("csv" or "md") bytes.
    Raises UnknownRun, RunNotWritable (not completed), InvalidDecisions (a saved review that no
    longer fits the run), ValueError (another format)."""
    reviewed = reviewed_run(svc, run_id)
    process = export_process(svc.settings)
    plan = build_plan(run_id, reviewed.items, reviewed.records, reviewed.state.decisions, process)
    if fmt == "csv":
        return to_csv(plan).encode("utf-8")
    if fmt == "md":
        tags = {r.story_id: r for r in reviewed.records}
        wanted = [
            i for item in reviewed.items for i in referenced_ids(item, tags.get(item.item_id))
        ]
        existing = existing_items(svc, reviewed.run.project, wanted)
        return to_markdown(reviewed, plan, existing).encode("utf-8")
    raise ValueError(f"unknown export format {fmt!r}: csv or md")
