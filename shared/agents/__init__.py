"""The three agents of seed §4–§6 as ports, and the drafts they return.

Both engines implement these: the offline engine (``shared.engine.offline``) and the LLM engine
(issue 3). An agent returns *drafts*; the pipeline turns drafts into records (ids, offsets, context
references, versions), so the shape of a record never depends on which engine ran.

The drafts double as the LLM's response schema, which is why they are small and flat: quotes are
plain strings that must occur verbatim in the segment, and the pipeline locates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import Field

from shared.errors import RejectedAnswer, SynthesizerError
from shared.models import Engine, GeneratedItem, Record, Segment, SourceQuote, Tag, Usage

# ------------------------------------------------------------------------------------------------
# segmentation


class SegmentSpan(Record):
    start: int
    end: int
    intent_labels: list[str] = Field(default_factory=list)
    dominant_intent: str = ""
    theme: str = ""


class SegmentationResult(Record):
    spans: list[SegmentSpan]
    merge_operations: int = 0
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    attempts: int = 1


class AgentFailed(SynthesizerError, RuntimeError):
    """An agent gave up after its retry; carries what the errors.jsonl record needs."""

    def __init__(
        self, message: str, *, attempts: int = 1, raw_output: str = "", usage: Usage | None = None
    ):
        super().__init__(message)
        self.attempts = attempts
        self.raw_output = raw_output
        self.usage = usage or Usage()


class SegmentationFailed(AgentFailed):
    pass


class GenerationFailed(AgentFailed):
    pass


class TaggingFailed(AgentFailed):
    pass


class Segmenter(Protocol):
    version: str
    engine: Engine
    model: str | None

    def segment(self, transcript: str) -> SegmentationResult: ...


class PromptedSegmenter(Segmenter, Protocol):
    """A segmenter that calls a model and can show its prompts without calling it (the LLM
    engine's): what a run's token estimate (shared.pipeline.budget) counts."""

    def prompts(self, transcript: str) -> list[list[dict[str, str]]]: ...


# ------------------------------------------------------------------------------------------------
# generation


@dataclass
class RetrievedAdoItem:
    work_item_id: int
    work_item_type: str
    title: str
    description: str
    acceptance_criteria: list[str]
    state: str
    parent_id: int | None
    similarity: float
    composite: float


@dataclass
class RetrievedChunk:
    chunk_id: str
    document_id: str
    file_name: str
    text: str
    similarity: float
    composite: float


@dataclass
class GenerationContext:
    query_text: str = ""
    ado_items: list[RetrievedAdoItem] = field(default_factory=list)
    architecture_chunks: list[RetrievedChunk] = field(default_factory=list)
    dropped_chunks: int = 0
    # how retrieval degraded (shared.retrieval.search: keyword retrieval with the index down)
    warnings: list[str] = field(default_factory=list)


class EpicDraft(Record):
    key: str
    title: str
    description: str = ""
    existing_work_item_id: int | None = None


class FeatureDraft(Record):
    key: str
    title: str
    description: str = ""
    epic_key: str | None = None
    existing_work_item_id: int | None = None


class StoryDraft(Record):
    title: str
    description: str
    acceptance_criteria: list[str] = Field(default_factory=list)
    feature_key: str | None = None
    source_quotes: list[str] = Field(min_length=1)
    # earlier statements a later one revised (the story states the later decision)
    superseded_quotes: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    constraint_violation: bool = False
    constraint_notes: list[str] = Field(default_factory=list)
    ac_delta: list[str] = Field(default_factory=list)
    extends_work_item_ids: list[int] = Field(default_factory=list)


class GenerationDraft(Record):
    epics: list[EpicDraft] = Field(default_factory=list)
    features: list[FeatureDraft] = Field(default_factory=list)
    stories: list[StoryDraft] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)


class GenerationResult(Record):
    draft: GenerationDraft
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    attempts: int = 1
    # the segment's requirement statements (absolute offsets) as the capture classifier found
    # them, for coverage; None: the pipeline classifies the segment itself
    requirement_spans: list[tuple[int, int]] | None = None


class Generator(Protocol):
    version: str
    engine: Engine
    model: str | None

    def generate(self, segment: Segment, context: GenerationContext) -> GenerationResult: ...


class PromptedGenerator(Generator, Protocol):
    """A generator that calls a model and can show its prompt without calling it."""

    def messages(self, segment: Segment, context: GenerationContext) -> list[dict[str, str]]: ...


class QuoteNotFound(RejectedAnswer):
    """A quote is not verbatim in its segment: the answer that holds it is rejected."""


def locate_quote(segment: Segment, quote: str) -> SourceQuote:
    """The quote as an exact substring of the segment, with offsets into the whole transcript.

    Surrounding whitespace and quotation marks a model may add are tolerated; anything else must
    match character for character.
    """
    text = quote.strip().strip("\"'\u201c\u201d\u2018\u2019").strip()
    if not text:
        raise QuoteNotFound("empty quote")
    at = segment.raw_text.find(text)
    if at < 0:
        raise QuoteNotFound(f"quote not found in segment {segment.segment_id}: {text[:80]!r}")
    start = segment.start_char + at
    return SourceQuote(text=text, start=start, end=start + len(text))


def locate_quotes(segment: Segment, quotes: Sequence[str]) -> list[SourceQuote]:
    """The quotes of one story, each located as ``locate_quote`` does, except that a text said
    more than once in the segment ("Cheap .", "Yes , exactly .") is placed at its occurrence
    nearest to the story's quotes said only once, and never on a span another of these quotes
    already holds (two quotes of one text are two statements)."""
    located = [locate_quote(segment, q) for q in quotes]
    said: list[list[int]] = []
    for quote in located:
        at, starts = quote.start - segment.start_char, []
        while at >= 0:
            starts.append(segment.start_char + at)
            at = segment.raw_text.find(quote.text, at + 1)
        said.append(starts)
    once = sorted(starts[0] for starts in said if len(starts) == 1)
    centre = once[len(once) // 2] if once else None
    taken: set[int] = set()
    for n, (quote, starts) in enumerate(zip(located, said, strict=True)):
        free = [s for s in starts if s not in taken] or starts
        start = free[0] if centre is None else min(free, key=lambda s: abs(s - centre))
        taken.add(start)
        located[n] = SourceQuote(text=quote.text, start=start, end=start + len(quote.text))
    return located


# ------------------------------------------------------------------------------------------------
# tagging


@dataclass
class Candidate:
    """An existing user story retrieved for tagging, with its similarity to the generated story;
    or a pending story of another run (``pending_run_id`` / ``pending_story_id``, reviewed but not
    yet written), whose ``work_item_id`` is then its negative candidate id."""

    work_item_id: int
    title: str
    description: str
    acceptance_criteria: list[str]
    similarity: float
    state: str = ""
    pending_run_id: str | None = None
    pending_story_id: str | None = None


class TagDecision(Record):
    decision_tag: Tag
    related_story_ids: list[int] = Field(default_factory=list)
    reasoning_excerpt: str = ""
    # the pair model's calibrated probability of decision_tag (None: no model scored it)
    confidence: float | None = None
    needs_review: bool = False
    review_reasons: list[str] = Field(default_factory=list)
    runner_up_tag: Tag | None = None
    runner_up_score: float | None = None
    # the LLM tagger: the model's own answer when the scores overrode it
    model_tag: Tag | None = None


class TaggingResult(Record):
    decision: TagDecision
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    attempts: int = 1


class Tagger(Protocol):
    version: str
    engine: Engine
    model: str | None

    def tag(self, story: GeneratedItem, candidates: list[Candidate]) -> TaggingResult: ...


class PromptedTagger(Tagger, Protocol):
    """A tagger that calls a model and can show its prompt without calling it."""

    def messages(
        self, story: GeneratedItem, candidates: list[Candidate]
    ) -> list[dict[str, str]]: ...


@dataclass
class Agents:
    segmenter: Segmenter
    generator: Generator
    tagger: Tagger
