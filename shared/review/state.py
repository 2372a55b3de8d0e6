"""The saved review of a run: the reviewer's edits and decisions, versioned, and applying them.

A reviewer edits the generated backlog before it is written or exported: titles of epics and
features; a story's title, description and acceptance criteria (the full new list); moves a story
under another generated feature; marks it an open question (not written, listed with its
feature); merges it into another story (its quotes and criteria join that one, deduplicated); or
splits a new story off it (some of its quotes move to the new one). The decisions are the same as
``POST .../write`` takes. All of it is one document, ``runs/{run_id}/review.json``:

    {"run_id": "run-…", "version": 3, "saved_at": "2026-01-01T12:00:00Z", "saved_by": "ana@x.org",
     "decisions": {"seg-0002-st01": "both"},
     "epics": {"ep-1a2b3c4d5e": {"title": "…"}}, "features": {"seg-0001-ft01": {"title": "…"}},
     "stories": {
       "seg-0001-st01": {"title": "…", "description": "…", "acceptance_criteria": ["…", "…"],
                         "feature_id": "seg-0003-ft01"},
       "seg-0001-st02": {"open_question": true},
       "seg-0004-st01": {"merged_into": "seg-0001-st01"},
       "seg-0001-st01-x1": {"split_from": "seg-0001-st01", "quotes": [1], "title": "…",
                            "acceptance_criteria": ["…"]},
       "seg-0002-st01": {"added_quotes": [{"start": 1200, "end": 1262}]},
       "seg-0003-ft01-n1": {"feature_id": "seg-0003-ft01", "title": "…",
                            "added_quotes": [{"start": 2410, "end": 2475}]}}}

Rules (``check`` lists every problem; ``shared.review.edits.apply`` assumes a checked state and is
pure):

- ``version`` 0 means nothing was saved; every save gets the previous version + 1, ``saved_at``
  (the server's clock) and ``saved_by`` (who the request says it is: see
  shared.api.review.requester).
- titles are 1..255 characters (whitespace collapsed), descriptions at most 32,000 characters,
  at most 50 acceptance criteria of at most 2,000 characters each, none empty, none repeated (by
  the ``ac_key`` rule: case, spacing and trailing punctuation ignored).
- ``feature_id`` names a generated Feature of the run: the story moves under it (and its epic).
- ``merged_into`` names a story that is itself neither merged nor an open question: the merged
  story is not written, its quotes (by text), superseded quotes, open questions and criteria (by
  ``ac_key``) join the target, unless the target's own edit gives ``acceptance_criteria``: that
  list is final. Its tagging record goes; the target keeps its own.
- a split story's id is ``{split_from}-x{n}`` (n = 1, 2, …); it needs a ``title`` and the
  indexes of the source's ``quotes`` it takes (0-based, in ``source_quotes`` order; they leave the
  source, which keeps at least one). It is a copy of the source with its own edit applied: the
  criteria are those its edit gives (none otherwise), its open questions and superseded quotes
  stay with the source. Its tagging record is the source's, marked ``needs_review`` with the
  reason "split from {source}: choose its action", so the write holds it until a decision names
  it. The reviewer removes the criteria that moved from the source by editing the source's list.
- ``added_quotes``: requirement sentences no story of the run quoted (the run's coverage,
  ``summary.json`` ``coverage.unquoted``, named by their ``start`` and ``end`` offsets) that the
  reviewer gives a story: they join its source quotes (with their speaker and timecode). Each
  such sentence goes to one story at most; a sentence a story already quotes is not one.
- a new story the reviewer writes from such sentences: its id is ``{feature_id}-n{n}`` (n = 1, 2,
  …, named after the generated feature it was made under; it may move), it names the generated
  feature it goes under in ``feature_id``, and it has a ``title`` and at least one of
  ``added_quotes``; its description and criteria are those its edit gives (none otherwise).
  It was not compared with the backlog, so its tagging record says ``new`` with
  ``needs_review`` and the reason "added in the review: …", and the write holds it until a
  decision names it (accept, or skip).
- ``open_question``: the story is not written; the review bundle and the export list it (id,
  title, feature) under its feature's open questions.
- an extend / gap story whose criteria changed appends what is new: its AC deltas become its
  criteria that were not among the criteria the generation found already in the existing story
  (the original criteria that were not deltas); a write then drops any already in the live field.
- signatures (shared/review/render.signature) hash the type, the edited title, the parent and
  the edited criteria, so an edited story is a different item to ADO; a description edit alone
  keeps the signature (a story already written is found, not created twice).

HTTP (function auth level; the run id is validated, an unknown run is a 404):

``GET /api/runs/{run_id}/review-state`` → 200 the state above plus ``"etag"`` (null when nothing
was saved), and the ``ETag`` response header when one exists.

``PUT /api/runs/{run_id}/review-state`` with ``If-Match: <etag>`` (or ``"etag"`` in the body for a
client that cannot set headers; the header wins), the body the state (``version``, ``saved_at``,
``saved_by`` and ``etag`` are ignored; a ``run_id`` other than this run's is a 400; other unknown
keys are a 400). The first save sends no If-Match. Answers:

- 200 the saved state with its new ``etag`` (and the ``ETag`` header);
- 409 ``{"error": "someone else saved this review since you loaded it …", "code":
  "stale_review", "current": <the saved state>, "etag": <its etag>}`` when the If-Match is not
  the current ETag (or a review exists and none was sent, or none exists and one was sent);
- 400 ``{"error", "problems": ["…"]}``: not JSON, a field out of its limits, or a problem against
  the run (an unknown id, a feature that is not one, a merge into a merged story, a quote index
  out of range, a decision the story cannot take, …); 413 over 2 MiB;
- 409 ``{"error", "code": "not_completed", "status"}`` while the run has not completed.

Every save first keeps the state it replaces at ``runs/{run_id}/parts/review/{version:04d}.json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from shared import layout
from shared.errors import SynthesizerError
from shared.models import Coverage, GeneratedItem, UnquotedStatement
from shared.review.plan import Decision
from shared.services import Services
from shared.storage import NotFound, PreconditionFailed

TITLE_LIMIT = 255
DESCRIPTION_LIMIT = 32_000
CRITERIA_LIMIT = 50
CRITERION_LIMIT = 2_000
ENTRIES_LIMIT = 5_000  # ids per map (decisions, epics, features, stories)
QUOTES_LIMIT = 500
SPLIT_REASON = "split from {source}: choose its action"
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")
SPLIT_RE = re.compile(r"^(?P<source>.+)-x(?P<n>[1-9][0-9]{0,2})$")
ADDED_RE = re.compile(r"^.+-n[1-9][0-9]{0,2}$")  # {feature}-n1, -n2, …
ADDED_REASON = (
    "added in the review from sentences no story quoted; it was not compared with the existing "
    "backlog: accept or skip it"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
SERVER_FIELDS = ("version", "saved_at", "saved_by", "etag")
_AC_NOISE = re.compile(r"[\s.;:!]+$")


def ac_key(text: str) -> str:
    """Criteria compare case-, whitespace- and trailing-punctuation-insensitively."""
    return _AC_NOISE.sub("", " ".join(text.split()).lower())


def _line(value: str, what: str, limit: int) -> str:
    """One line of text: whitespace collapsed, 1..limit characters, no control characters."""
    if _CONTROL.search(value):
        raise ValueError(f"{what} contains control characters")
    text = " ".join(value.split())
    if not text:
        raise ValueError(f"{what} is empty")
    if len(text) > limit:
        raise ValueError(f"{what} is {len(text)} characters, over {limit}")
    return text


class TitleEdit(BaseModel):
    """A new title for a generated epic or feature."""

    model_config = ConfigDict(extra="forbid")

    title: str

    @field_validator("title")
    @classmethod
    def _title(cls, value: str) -> str:
        return _line(value, "the title", TITLE_LIMIT)


class QuoteSpan(BaseModel):
    """A sentence of the run's transcript by its offsets (one the run's coverage lists as quoted
    by no story)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int = Field(ge=0)
    end: int = Field(gt=0)

    @model_validator(mode="after")
    def _order(self) -> QuoteSpan:
        if self.end <= self.start:
            raise ValueError("end must be after start")
        return self


class StoryEdit(BaseModel):
    """What the reviewer changed in one story (every field optional), or a new story: split off
    another, or written from sentences no story quoted."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = None
    description: str | None = None
    acceptance_criteria: list[str] | None = None
    feature_id: str | None = None
    open_question: bool = False
    merged_into: str | None = None
    split_from: str | None = None
    quotes: list[int] | None = None
    added_quotes: list[QuoteSpan] | None = None

    @field_validator("title")
    @classmethod
    def _title(cls, value: str | None) -> str | None:
        return None if value is None else _line(value, "the title", TITLE_LIMIT)

    @field_validator("description")
    @classmethod
    def _description(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = value.replace("\r\n", "\n").replace("\r", "\n").strip()
        if _CONTROL.search(text):
            raise ValueError("the description contains control characters")
        if len(text) > DESCRIPTION_LIMIT:
            raise ValueError(f"the description is {len(text)} characters, over {DESCRIPTION_LIMIT}")
        return text

    @field_validator("acceptance_criteria")
    @classmethod
    def _criteria(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if len(value) > CRITERIA_LIMIT:
            raise ValueError(f"{len(value)} acceptance criteria, over {CRITERIA_LIMIT}")
        out: list[str] = []
        seen: set[str] = set()
        for n, raw in enumerate(value, start=1):
            text = _line(raw, f"acceptance criterion {n}", CRITERION_LIMIT)
            key = ac_key(text)
            if key in seen:
                raise ValueError(f"acceptance criterion {n} repeats an earlier one: {text!r}")
            seen.add(key)
            out.append(text)
        return out

    @field_validator("feature_id", "merged_into", "split_from")
    @classmethod
    def _id(cls, value: str | None) -> str | None:
        if value is not None and not ID_RE.fullmatch(value):
            raise ValueError(f"{value!r} is not an item id")
        return value

    @model_validator(mode="after")
    def _combination(self) -> StoryEdit:
        if self.merged_into is not None and self.open_question:
            raise ValueError("a story is either merged into another or an open question")
        if self.split_from is not None:
            if self.merged_into is not None:
                raise ValueError("a split story cannot be merged; remove the split instead")
            if self.title is None:
                raise ValueError("a split story needs a title")
            if not self.quotes:
                raise ValueError("a split story needs the indexes of the quotes it takes")
            if self.added_quotes:
                raise ValueError(
                    "a split story takes its source's quotes; add sentences to it once it exists"
                )
        elif self.quotes is not None:
            raise ValueError("quotes are given only with split_from")
        if self.added_quotes is not None:
            if len(self.added_quotes) > QUOTES_LIMIT:
                raise ValueError(f"{len(self.added_quotes)} added quotes, over {QUOTES_LIMIT}")
            if len(set(self.added_quotes)) != len(self.added_quotes):
                raise ValueError("an added quote is repeated")
        if self.quotes is not None:
            if len(self.quotes) > QUOTES_LIMIT or any(q < 0 for q in self.quotes):
                raise ValueError("quotes are indexes 0, 1, … of the source's quotes")
            if len(set(self.quotes)) != len(self.quotes):
                raise ValueError("a quote index is repeated")
        return self


class ReviewState(BaseModel):
    """``runs/{run_id}/review.json`` (the module docstring has the rules)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    version: int = Field(0, ge=0)  # 0: nothing saved yet
    saved_at: datetime | None = None
    saved_by: str | None = None
    decisions: dict[str, Decision] = Field(default_factory=dict)
    epics: dict[str, TitleEdit] = Field(default_factory=dict)
    features: dict[str, TitleEdit] = Field(default_factory=dict)
    stories: dict[str, StoryEdit] = Field(default_factory=dict)

    @field_validator("decisions", "epics", "features", "stories")
    @classmethod
    def _ids(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(value) > ENTRIES_LIMIT:
            raise ValueError(f"{len(value)} entries, over {ENTRIES_LIMIT}")
        bad = [k for k in value if not ID_RE.fullmatch(k)]
        if bad:
            raise ValueError(f"not item ids: {', '.join(repr(k) for k in bad[:5])}")
        return value

    def view(self, etag: str | None) -> dict[str, Any]:
        """The state as GET /review-state answers (and the 409 of a stale save shows)."""
        body = self.model_dump(mode="json", exclude_none=False)
        body["stories"] = {
            k: v.model_dump(mode="json", exclude_defaults=True) for k, v in self.stories.items()
        }
        body["etag"] = etag
        return body


# ------------------------------------------------------------------------------------------------
# checking a state against the run


def check(
    state: ReviewState,
    items: list[GeneratedItem],
    unquoted: Sequence[UnquotedStatement] = (),
) -> list[str]:
    """Every problem of ``state`` against the run's generated ``items`` and the requirement
    sentences no story of the run quotes (``unquoted``, ``unquoted_statements``): empty, it
    applies."""
    problems: list[str] = []
    by_id = {i.item_id: i for i in items}
    stories = {i.item_id: i for i in items if i.type == "User Story"}

    def kind(item_id: str) -> str:
        item = by_id.get(item_id)
        if item is None:
            return "not an item of this run"
        return ("an " if item.type == "Epic" else "a ") + item.type.lower()

    for epic_id in state.epics:
        if by_id.get(epic_id) is None or by_id[epic_id].type != "Epic":
            problems.append(f"epics: {epic_id} is {kind(epic_id)}, not a generated epic")
    for feature_id in state.features:
        if by_id.get(feature_id) is None or by_id[feature_id].type != "Feature":
            problems.append(
                f"features: {feature_id} is {kind(feature_id)}, not a generated feature"
            )

    splits: dict[str, str] = {}  # new story -> source
    added: set[str] = set()  # new stories written from unquoted sentences
    for story_id, edit in state.stories.items():
        if edit.split_from is None:
            if story_id in stories:
                continue
            problem = _added_story_problem(story_id, edit, by_id)
            if problem is None:
                added.add(story_id)
            else:
                problems.append(f"stories: {problem}")
            continue
        if story_id in by_id:
            problems.append(f"stories: {story_id} exists already; a split story needs a new id")
            continue
        match = SPLIT_RE.fullmatch(story_id)
        if match is None or match["source"] != edit.split_from:
            problems.append(
                f"stories: {story_id} must be named {edit.split_from}-x1, -x2, … "
                f"(split from {edit.split_from})"
            )
            continue
        if edit.split_from not in stories:
            problems.append(
                f"stories: {story_id} is split from {edit.split_from}, which is "
                f"{kind(edit.split_from)}, not a user story of this run"
            )
            continue
        splits[story_id] = edit.split_from

    known = set(stories) | set(splits) | added
    problems.extend(_added_quote_problems(state, unquoted))
    for story_id, edit in state.stories.items():
        if edit.feature_id is not None and (
            by_id.get(edit.feature_id) is None or by_id[edit.feature_id].type != "Feature"
        ):
            problems.append(
                f"stories: {story_id} moves under {edit.feature_id}, which is "
                f"{kind(edit.feature_id)}, not a generated feature"
            )
        target = edit.merged_into
        if target is None:
            continue
        if target == story_id:
            problems.append(f"stories: {story_id} cannot be merged into itself")
        elif target not in known:
            problems.append(
                f"stories: {story_id} is merged into {target}, which is {kind(target)}, "
                "not a user story of this run"
            )
        else:
            other = state.stories.get(target)
            if other is not None and other.merged_into is not None:
                if _cycle(state, story_id):
                    problems.append(f"stories: merging {story_id} into {target} makes a cycle")
                else:
                    problems.append(
                        f"stories: {story_id} is merged into {target}, which is itself merged "
                        f"into {other.merged_into}; merge it into {other.merged_into}"
                    )
            elif other is not None and other.open_question:
                problems.append(
                    f"stories: {story_id} is merged into {target}, which is an open question"
                )
        if story_id in splits.values():
            problems.append(f"stories: {story_id} has split stories and cannot be merged")

    taken: dict[str, dict[int, str]] = {}
    for story_id, source in sorted(splits.items()):
        edit = state.stories[story_id]
        quotes = stories[source].source_quotes
        for index in edit.quotes or []:
            if index >= len(quotes):
                problems.append(
                    f"stories: {story_id} takes quote {index}, but {source} has "
                    f"{len(quotes)} (0 to {len(quotes) - 1})"
                )
                continue
            holder = taken.setdefault(source, {}).get(index)
            if holder is not None:
                problems.append(f"stories: quote {index} of {source} is taken by {holder} too")
                continue
            taken[source][index] = story_id
    for source, moved in taken.items():
        if len(moved) >= len(stories[source].source_quotes):
            problems.append(f"stories: {source} must keep at least one of its quotes")

    gone = _not_written(state)
    for story_id in state.decisions:
        if story_id not in known:
            problems.append(f"decisions: {story_id} is {kind(story_id)}, not a user story")
        elif story_id in gone:
            problems.append(f"decisions: {story_id} is {gone[story_id]}; it is not written")
    return problems


def _added_story_problem(
    story_id: str, edit: StoryEdit, by_id: Mapping[str, GeneratedItem]
) -> str | None:
    """None when ``story_id`` is a well-formed new story written from unquoted sentences, else
    what is wrong with it (an id that is no story of the run and no new story)."""
    item = by_id.get(story_id)
    if item is not None:
        kind = ("an " if item.type == "Epic" else "a ") + item.type.lower()
        return f"{story_id} is {kind}, not a user story of this run"
    if ADDED_RE.fullmatch(story_id) is None or edit.added_quotes is None:
        return (
            f"{story_id} is not a user story of this run (a new story is split from one, "
            "with split_from, or written from sentences no story quotes, with added_quotes)"
        )
    feature = edit.feature_id
    if feature is None:
        return f"{story_id} is a new story and needs the generated feature it goes under"
    if by_id.get(feature) is None or by_id[feature].type != "Feature":
        return f"{story_id} is a new story under {feature}, which is not a generated feature"
    if edit.title is None:
        return f"{story_id} is a new story and needs a title"
    if not edit.added_quotes:
        return f"{story_id} is a new story and needs at least one sentence (added_quotes)"
    return None


def _added_quote_problems(state: ReviewState, unquoted: Sequence[UnquotedStatement]) -> list[str]:
    """Each added quote is a sentence no story of the run quotes, given to one story only."""
    free = {(u.start, u.end) for u in unquoted}
    holder: dict[tuple[int, int], str] = {}
    problems: list[str] = []
    for story_id, edit in sorted(state.stories.items()):
        for span in edit.added_quotes or []:
            key = (span.start, span.end)
            if key not in free:
                problems.append(
                    f"stories: {story_id} adds the sentence at {span.start}-{span.end}, which "
                    "is not one of the run's sentences that no story quotes"
                )
            elif key in holder:
                problems.append(
                    f"stories: the sentence at {span.start}-{span.end} is added to "
                    f"{holder[key]} and to {story_id}; give it to one story"
                )
            else:
                holder[key] = story_id
    return problems


def unquoted_statements(svc: Services, run_id: str) -> list[UnquotedStatement]:
    """The requirement sentences no story of the run quotes (``summary.json`` coverage); none
    when the run has no summary."""
    try:
        summary = json.loads(svc.store.get(layout.run_summary(run_id)))
    except NotFound:
        return []
    coverage = summary.get("coverage")
    return Coverage.model_validate(coverage).unquoted if coverage else []


def _cycle(state: ReviewState, start: str) -> bool:
    seen = {start}
    current = state.stories[start].merged_into
    while current is not None and current in state.stories:
        if current in seen:
            return True
        seen.add(current)
        current = state.stories[current].merged_into
    return False


def _not_written(state: ReviewState) -> dict[str, str]:
    out = {}
    for story_id, edit in state.stories.items():
        if edit.merged_into is not None:
            out[story_id] = f"merged into {edit.merged_into}"
        elif edit.open_question:
            out[story_id] = "an open question"
    return out


# ------------------------------------------------------------------------------------------------
# storage


class StaleReview(SynthesizerError, RuntimeError):
    """The save's If-Match is not the saved review's ETag (someone else saved since)."""

    def __init__(self, current: ReviewState, etag: str | None, *, sent: bool) -> None:
        self.current = current
        self.etag = etag
        self.sent = sent  # whether the save named an ETag at all
        super().__init__(f"review of {current.run_id} is at version {current.version}")


def normalize_etag(value: str | None) -> str | None:
    """An If-Match value as the store compares it: quoted, without a weak prefix."""
    if value is None:
        return None
    text = value.strip()
    if text.startswith("W/"):
        text = text[2:]
    if not text:
        return None
    return text if text.startswith('"') else f'"{text}"'


def _dump(state: ReviewState) -> bytes:
    return state.model_dump_json(indent=2).encode()


def load_state(svc: Services, run_id: str) -> tuple[ReviewState, str | None]:
    """The run's saved review and its ETag; an empty state (version 0) and None if none."""
    try:
        data, etag = svc.store.get_with_etag(layout.review_state(run_id))
    except NotFound:
        return ReviewState(run_id=run_id), None
    return ReviewState.model_validate_json(data), etag


def save_state(
    svc: Services, run_id: str, state: ReviewState, if_match: str | None, by: str
) -> tuple[ReviewState, str]:
    """Save ``state`` as the next version if ``if_match`` is the current ETag (None for the first
    save); keeps the replaced version. Raises StaleReview with the current state otherwise."""
    path = layout.review_state(run_id)
    wanted = normalize_etag(if_match)
    current, etag = load_state(svc, run_id)
    if etag is None:
        if wanted is not None:
            raise StaleReview(current, None, sent=True)
        saved = state.model_copy(
            update={"run_id": run_id, "version": 1, "saved_at": svc.clock(), "saved_by": by}
        )
        data = _dump(saved)
        if not svc.store.create(path, data, "application/json"):
            raise StaleReview(*load_state(svc, run_id), sent=False)
        stored, new_etag = svc.store.get_with_etag(path)
        if stored != data:  # someone saved again in between: ours is not the current one
            raise StaleReview(ReviewState.model_validate_json(stored), new_etag, sent=False)
        return saved, new_etag
    if wanted is None or wanted != normalize_etag(etag):
        raise StaleReview(current, etag, sent=wanted is not None)
    # keep what this save replaces (write-once: a retried save finds it there)
    svc.store.create(
        layout.review_version(run_id, current.version), _dump(current), "application/json"
    )
    saved = state.model_copy(
        update={
            "run_id": run_id,
            "version": current.version + 1,
            "saved_at": svc.clock(),
            "saved_by": by,
        }
    )
    try:
        new_etag = svc.store.replace_if_match(path, _dump(saved), etag, "application/json")
    except (PreconditionFailed, NotFound):
        raise StaleReview(*load_state(svc, run_id), sent=True) from None
    return saved, new_etag


def version_paths(svc: Services, run_id: str) -> list[str]:
    """The kept versions of a run's review, oldest first."""
    return svc.store.list(layout.review_versions_prefix(run_id))
