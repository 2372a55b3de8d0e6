"""The records of the product (seed 000 §11), queue messages and run status, as pydantic models.

Every artifact line and every queue message is one of these models; they are the contract between
handlers, agents and the review page. Records are strict (``extra="forbid"``) so a model's output
that drifts from the schema is rejected instead of silently stored.
"""

from __future__ import annotations

import base64
import sys
from array import array
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Tag = Literal["new", "extend", "gap", "conflict", "duplicate"]
TAGS: tuple[Tag, ...] = ("new", "extend", "gap", "conflict", "duplicate")
ItemType = Literal["Epic", "Feature", "User Story"]
RunState = Literal["queued", "running", "completed", "completed_with_errors", "failed"]
TERMINAL_STATES: frozenset[str] = frozenset({"completed", "completed_with_errors", "failed"})
Phase = Literal["queued", "segmenting", "generating", "tagging", "finalizing", "done", "failed"]
# "offline-fallback": the offline engine did a unit of an LLM run because the model endpoint was
# unreachable after its retries (shared/pipeline/fallback.py); the record says so in its warnings
Engine = Literal["offline", "llm", "offline-fallback"]

Score = Annotated[float, Field(ge=-1.0, le=1.0)]


def utcnow() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def to_json(self) -> str:
        return self.model_dump_json()


# --------------------------------------------------------------------------------------------------
# Existing backlog and architecture (what the loaders put in the index)


class WorkItem(Record):
    """A normalized Azure DevOps work item: the one format loaders, the index and datasets share."""

    work_item_id: int
    # the backlog level as the generated backlog names it (Epic, Feature, User Story) once the
    # loader has normalized it for the project's process; other types (Bug, Task) as ADO names them
    work_item_type: str
    title: str
    description: str = ""
    acceptance_criteria: list[str] = Field(default_factory=list)
    state: str = ""
    tags: list[str] = Field(default_factory=list)
    parent_id: int | None = None
    updated_at: datetime | None = None
    url: str | None = None
    priority: int | None = None
    # the type's name in Azure DevOps when it differs (Product Backlog Item, Requirement, Issue)
    ado_work_item_type: str | None = None
    # the item's revision in Azure DevOps (REST sources only): a sync never replaces a newer one
    rev: int | None = None

    def embedding_text(self) -> str:
        """Title + description + ACs (seed §2.1 step 4 and §7.3 step 3.1 embed the same fields)."""
        return story_text(self.title, self.description, self.acceptance_criteria)


# how the offline engine describes a feature: the titles of the stories it covers (finalize
# restates it after merging stories across segments)
FEATURE_COVERS = "Covers: "


def story_text(title: str, description: str, acceptance_criteria: list[str]) -> str:
    parts = [title.strip(), description.strip()]
    if acceptance_criteria:
        parts.append("\n".join(f"- {ac.strip()}" for ac in acceptance_criteria))
    return "\n".join(p for p in parts if p)


class ArchitectureChunk(Record):
    """A chunk of an architecture-constraint document (seed §11.1)."""

    document_id: str
    chunk_id: str
    doc_type: Literal["architecture"] = "architecture"
    source_type: Literal["architecture_loader"] = "architecture_loader"
    checksum: str
    project: str
    uploaded_at: datetime
    file_name: str
    chunk_index: int
    total_chunks: int
    text: str
    priority: int | None = None


# --------------------------------------------------------------------------------------------------
# Segmentation (seed §4, §11.2)


class Segment(Record):
    run_id: str
    segment_id: str
    segment_order: int
    raw_text: str
    start_char: int = Field(ge=0, description="offset of raw_text in the normalized transcript")
    end_char: int = Field(ge=0)
    token_count: int
    intent_labels: list[str] = Field(default_factory=list)
    dominant_intent: str = ""
    theme: str = Field("", description="the epic-level theme this segment belongs to")
    segmentation_version: str
    full_text_preserved: Literal[True] = True
    engine: Engine
    timestamp: datetime

    @model_validator(mode="after")
    def _span_matches_text(self) -> Segment:
        if self.end_char - self.start_char != len(self.raw_text):
            raise ValueError("end_char - start_char must equal len(raw_text)")
        return self


# --------------------------------------------------------------------------------------------------
# Generation (seed §5, §11.4)


class SourceQuote(Record):
    """An exact substring of the normalized transcript; offsets are absolute character offsets.

    ``speaker`` and ``timecode`` come from the transcript line the quote is on (``Name: text``,
    ``[00:01:02] Name: text`` as VTT and SRT captions are normalized), when it names them."""

    text: str = Field(min_length=1)
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    speaker: str | None = None
    timecode: str | None = None

    @model_validator(mode="after")
    def _span(self) -> SourceQuote:
        if self.end - self.start != len(self.text):
            raise ValueError("end - start must equal len(text)")
        return self


class OpenQuestion(Record):
    question: str
    quote: SourceQuote | None = None


class AcDelta(Record):
    """An acceptance criterion the generated item adds to an existing work item (ac_delta=true)."""

    criterion: str
    work_item_id: int | None = None
    ac_delta: Literal[True] = True


class ContextAdoItem(Record):
    work_item_id: int
    work_item_type: str
    title: str
    similarity: float
    composite_score: float


class ContextArchitectureChunk(Record):
    chunk_id: str
    document_id: str
    file_name: str
    similarity: float
    composite_score: float


class Usage(Record):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            calls=self.calls + other.calls,
        )


class GeneratedItem(Record):
    """One generated epic, feature or user story (seed §11.4 plus quotes and open questions)."""

    run_id: str
    segment_id: str
    segment_order: int
    type: ItemType
    item_id: str = Field(description="this item's own id (equals epic_id, feature_id or story_id)")
    epic_id: str | None = None
    feature_id: str | None = None
    story_id: str | None = None
    title: str = Field(min_length=1)
    description: str = ""
    acceptance_criteria: list[str] = Field(default_factory=list)
    assigned_tag: Tag | None = None
    parent_work_item_id: int | None = Field(
        None, description="an existing ADO work item this item hangs under (parent reuse)"
    )
    extends_work_item_ids: list[int] = Field(default_factory=list)
    constraint_violation: bool = False
    constraint_notes: list[str] = Field(default_factory=list)
    ac_delta_entries: list[AcDelta] = Field(default_factory=list)
    context_ado_items: list[ContextAdoItem] = Field(default_factory=list)
    context_architecture_chunks: list[ContextArchitectureChunk] = Field(default_factory=list)
    source_doc: str
    source_doc_segment: str = Field(description="character range of the segment: '{start}-{end}'")
    source_quotes: list[SourceQuote] = Field(default_factory=list)
    # earlier statements of the meeting that a later one revised (a changed number, a negation,
    # "let's not do X after all"): the story carries the later decision
    superseded_quotes: list[SourceQuote] = Field(default_factory=list)
    open_questions: list[OpenQuestion] = Field(default_factory=list)
    # one need, one story per run: stories of other segments merged into this one, and the
    # features they hung under (of a feature: the features of the same title and epic merged
    # into it)
    merged_story_ids: list[str] = Field(default_factory=list)
    merged_feature_ids: list[str] = Field(default_factory=list)
    generation_agent_version: str
    engine: Engine
    model: str | None = None
    trace_id: str | None = None
    warnings: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ids_consistent(self) -> GeneratedItem:
        own = {"Epic": self.epic_id, "Feature": self.feature_id, "User Story": self.story_id}[
            self.type
        ]
        if own != self.item_id:
            raise ValueError(f"{self.type} item_id must equal its own id field")
        if self.type == "User Story" and not self.source_quotes:
            raise ValueError("a user story must quote its source")
        return self


# --------------------------------------------------------------------------------------------------
# Tagging (seed §6, §11.5)


class SimilarityScore(Record):
    work_item_id: int
    title: str = ""
    score: float


class PendingRef(Record):
    """A story of another run of the project, reviewed but not yet written to Azure DevOps, that
    tagging saw as a candidate (shared/indexing/pending.py). Tagging names it by a negative
    ``candidate_id`` in ``related_story_ids`` and ``similarity_scores`` (ADO ids are positive)."""

    candidate_id: int = Field(lt=0)
    run_id: str
    story_id: str
    title: str = ""


class TaggingRecord(Record):
    run_id: str
    segment_id: str
    story_id: str
    decision_tag: Tag
    similarity_scores: list[SimilarityScore] = Field(default_factory=list)
    max_similarity: float = 0.0
    related_story_ids: list[int] = Field(default_factory=list)
    # the pending stories of other runs among the candidates (their negative ids above)
    pending_refs: list[PendingRef] = Field(default_factory=list)
    reasoning_excerpt: str = ""
    # calibrated probability of decision_tag (pair model); None when nothing scored it
    confidence: float | None = None
    # true: the write plan holds the story as needs_decision until a reviewer picks an action
    needs_review: bool = False
    review_reasons: list[str] = Field(default_factory=list)
    runner_up_tag: Tag | None = None
    runner_up_score: float | None = None
    # LLM engine: the model's own tag when the scores overrode it
    model_tag: Tag | None = None
    thresholds_applied: dict[str, float] = Field(default_factory=dict)
    tagging_agent_version: str
    tagging_failed: bool = False
    engine: Engine
    model: str | None = None
    trace_id: str | None = None
    timestamp: datetime
    # what the reviewer must know about how this tag was made: a fallback (offline engine, keyword
    # retrieval), a budget skip (shared/pipeline/fallback.py, shared/pipeline/budget.py)
    warnings: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------------------------------
# Errors, parts, run status, summary


class ErrorRecord(Record):
    run_id: str
    phase: Literal["start", "segment", "generate", "tag", "finalize"]
    unit_id: str = Field(description="run_id, segment_id or story_id the error belongs to")
    error_type: str
    message: str
    attempts: int = 1
    dequeue_count: int | None = None
    outcome: str = Field(description="what the pipeline did about it: skipped, tagged_new, aborted")
    details: dict[str, str] = Field(default_factory=dict)
    timestamp: datetime


VectorKind = Literal["query", "main"]


def encode_vector(values: Iterable[float]) -> str:
    """A vector as base64 of little-endian float32 (an embedder's rows are float32: exact)."""
    packed = array("f", values)
    if sys.byteorder == "big":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


class StoryVectors(Record):
    """A generation part's stories as its embedder saw them, embedded in one batch by the
    generation unit (docs/PERFORMANCE.md, "Fan-out"), by story id, each ``encode_vector``'d:
    ``query`` of the story text (title, description, criteria: what tagging retrieval queries
    the index with) and ``main`` of ``"{title}. {first quote}"`` (what finalize compares to
    merge stories of several segments). A tag message carries its story's ``query`` vector. A
    reader uses them only from the embedder it has itself (``fits``); without them it embeds, as
    it did before."""

    model: str
    dimension: int
    query: dict[str, str] = Field(default_factory=dict)
    main: dict[str, str] = Field(default_factory=dict)

    def fits(self, embedder: Any) -> bool:
        """Whether these are ``embedder``'s vectors (its model and dimension)."""
        return (self.model, self.dimension) == (
            str(getattr(embedder, "model_name", "")),
            int(getattr(embedder, "dimension", 0)),
        )

    def vector(self, kind: VectorKind, story_id: str) -> list[float] | None:
        data = (self.query if kind == "query" else self.main).get(story_id)
        if data is None:
            return None
        raw = base64.b64decode(data)
        if len(raw) != 4 * self.dimension:
            return None
        values = array("f")
        values.frombytes(raw)
        if sys.byteorder == "big":
            values.byteswap()
        return values.tolist()

    def for_tagging(self, story_id: str) -> StoryVectors:
        """Only ``story_id``'s ``query`` vector: what its tag message carries."""
        query = {story_id: self.query[story_id]} if story_id in self.query else {}
        return self.model_copy(update={"query": query, "main": {}})


class GeneratedPart(Record):
    """parts/generated/{segment_id}.json: one generation unit's result, written once."""

    run_id: str
    segment_id: str
    status: Literal["generated", "skipped"]
    items: list[GeneratedItem] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    timestamp: datetime
    # the segment's requirement statements (the capture classifier's), for coverage
    requirement_spans: list[tuple[int, int]] | None = None
    # which engine generated the segment (None: a part written before this was recorded) and how
    # the unit degraded: keyword retrieval, offline fallback (the items carry the same warnings)
    engine: Engine | None = None
    warnings: list[str] = Field(default_factory=list)
    # the stories' vectors, embedded in one batch (None: parts written before, or the embedder
    # failed; the tag units and finalize then embed)
    story_vectors: StoryVectors | None = None

    @property
    def story_ids(self) -> list[str]:
        return [i.item_id for i in self.items if i.type == "User Story"]

    def story(self, story_id: str) -> GeneratedItem:
        for item in self.items:
            if item.type == "User Story" and item.item_id == story_id:
                return item
        raise KeyError(story_id)


class TagPart(Record):
    """parts/tags/{story_id}.json: one tagging unit's result, written once."""

    record: TaggingRecord
    usage: Usage = Field(default_factory=Usage)


class RunWarning(Record):
    """Something about a run the reviewer must know before trusting or writing it."""

    code: Literal[
        "empty_index",
        "no_architecture_docs",
        # degradation (docs/RELIABILITY.md "Degradation"): the vector index could not be queried
        # and retrieval fell back to keyword scoring over the ingestion files; the model endpoint
        # was unreachable after its retries and the offline engine did some units
        "index_unreachable",
        "model_unreachable",
        # the run's token budget (SYNTH_RUN_TOKEN_BUDGET) ran out: units were skipped
        "token_budget",
    ]
    message: str


class TokenEstimate(Record):
    """What a run is expected to cost in model tokens before its first call
    (shared/pipeline/budget.py): prompts counted with the agents' own prompt builders, completions
    from typical answer sizes; retries not included."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    segments: int = 0
    stories: int = 0
    detail: dict[str, int] = Field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class BudgetReport(Record):
    """summary.json ``budget``: model tokens and cost used against SYNTH_RUN_TOKEN_BUDGET."""

    token_budget: int
    tokens_used: int
    tokens_left: int
    estimated_tokens: int | None = None
    cost_used_usd: float
    # the budget priced at the estimate's prompt/completion mix (the prompt price without one)
    cost_budget_usd: float
    estimated_cost_usd: float | None = None
    skipped_units: int = 0
    exhausted: bool = False


class RunStatus(Record):
    """runs/{run_id}/run.json. Changed only at phase transitions, each guarded by an ETag."""

    run_id: str
    project: str
    source_path: str
    source_name: str
    content_sha256: str
    size_bytes: int
    status: RunState
    phase: Phase
    engine: Engine
    model: str | None = None
    embedding_model: str
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None = None
    segment_count: int | None = None
    story_count: int | None = None
    error_count: int = 0
    failure_reason: str | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    # the hygiene gate (details in hygiene.json): secrets redacted, instruction-like spans flagged
    redacted_secrets: int = 0
    instruction_annotations: int = 0
    # set when the run starts segmenting: an empty project index (every story would be new)
    warnings: list[RunWarning] = Field(default_factory=list)
    # attempts (shared/pipeline/runs.py "retry"): a failed or completed_with_errors run can be run
    # again from its stored upload; the new attempt names the one it retries, the old one its
    # newest attempt (set once, under an ETag condition, on the terminal run)
    attempt: int = Field(1, ge=1)
    retry_of: str | None = None
    retried_by: str | None = None
    # the ETag of the blob version the upload came from (None: not known, e.g. a run started
    # before ETags were recorded); a new version of the same bytes after a failure is a new attempt
    source_etag: str | None = None
    # SYNTH_RUN_TOKEN_BUDGET when the run started segmenting (None: unlimited) and the estimate
    # made then, before any model call (shared/pipeline/budget.py)
    token_budget: int | None = None
    token_estimate: TokenEstimate | None = None


RETRYABLE_STATES: frozenset[str] = frozenset({"failed", "completed_with_errors"})


class UnquotedStatement(Record):
    """A requirement statement (the capture classifier's) that no story quotes: for the reviewer
    to add to a story or dismiss; ``start``/``end`` are offsets in the normalized transcript."""

    text: str
    start: int
    end: int
    segment_id: str | None = None
    speaker: str | None = None
    timecode: str | None = None


class Coverage(Record):
    requirement_sentences: int
    quoted_sentences: int
    share: float
    # every requirement statement no story quotes, in transcript order
    unquoted: list[UnquotedStatement] = Field(default_factory=list)


class Summary(Record):
    run_id: str
    project: str
    status: RunState
    engine: Engine
    model: str | None
    segment_count: int
    skipped_segments: int
    epic_count: int
    feature_count: int
    story_count: int
    tag_distribution: dict[str, int]
    tagging_failed: int
    constraint_violations: int
    open_questions: int
    error_count: int
    avg_segment_tokens: float
    total_segment_tokens: int
    usage: Usage
    cost_estimate_usd: float
    coverage: Coverage
    # set by a retag (POST /api/runs/{run_id}/retag, shared/writer/retag.py): the stories were
    # tagged again against the index as it was then; parts/retag/ keeps what each retag replaced
    retagged_at: datetime | None = None
    retag_count: int = 0
    warnings: list[RunWarning] = Field(default_factory=list)  # as in run.json
    # units done another way than configured (docs/RELIABILITY.md "Degradation"):
    # offline_segmentation (0 or 1), offline_generation and keyword_generation (segments),
    # offline_tagging and keyword_tagging (stories)
    fallbacks: dict[str, int] = Field(default_factory=dict)
    budget: BudgetReport | None = None  # with SYNTH_RUN_TOKEN_BUDGET set


# --------------------------------------------------------------------------------------------------
# Queue messages: tiny; handlers read everything else from the artifact store.


class Message(Record):
    v: Literal[1] = 1
    run_id: str
    # times the unit was re-queued because the model service kept answering 429 past the rate
    # limiter's wait (shared/pipeline process); waits for the shared budget alone are not counted
    deferrals: int = Field(0, ge=0)


class SegmentMessage(Message):
    pass


class GenerateMessage(Message):
    segment_id: str
    # a copy of the segment as stored in segments.jsonl (written once), so the unit need not read
    # and parse every segment of the run; absent (older or oversized messages): the unit reads it
    segment: Segment | None = None


class TagMessage(Message):
    segment_id: str
    story_id: str
    # a copy of the story as stored in its generation part (written once), so the unit need not
    # read the part; absent (older or oversized messages): the unit reads it
    story: GeneratedItem | None = None
    # the story's vectors from the same part, so the unit need not embed the story again;
    # absent (older or oversized messages, parts without them): the unit embeds it
    vectors: StoryVectors | None = None


# an inlined copy is left out above this many bytes of JSON: a queue message holds 64 KiB after
# base64 (48 KiB of JSON)
INLINE_COPY_LIMIT = 32 * 1024


def inline_copy(message: Message, *field_names: str) -> Message:
    """``message`` as is when it fits ``INLINE_COPY_LIMIT``, else without its inlined copies."""
    if len(message.model_dump_json().encode()) <= INLINE_COPY_LIMIT:
        return message
    return message.model_copy(update=dict.fromkeys(field_names))


class FinalizeMessage(Message):
    pass
