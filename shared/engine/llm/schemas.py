"""Response schemas of the LLM agents (sent as strict JSON schemas, parsed into these models).

They hold no constraints the OpenAI strict subset may not support (no minItems, no ranges): the
agents validate after parsing, and every field is required (nullable where "nothing" is an
answer), as strict structured outputs demand. The class names are the schema names the model
endpoint sees (the tests' stand-in answers by them).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from shared.models import Tag


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# segmentation ------------------------------------------------------------------------------------


class SegmentProposal(_Strict):
    start_unit: int
    intent_labels: list[str]
    dominant_intent: str
    theme: str


class SegmentationAnswer(_Strict):
    segments: list[SegmentProposal]


# generation -------------------------------------------------------------------------------------


class EpicAnswer(_Strict):
    key: str
    title: str
    description: str
    existing_work_item_id: int | None


class FeatureAnswer(_Strict):
    key: str
    title: str
    description: str
    epic_key: str | None
    existing_work_item_id: int | None


class StoryAnswer(_Strict):
    title: str
    description: str
    acceptance_criteria: list[str]
    feature_key: str | None
    source_quotes: list[str]
    superseded_quotes: list[str]
    open_questions: list[str]
    constraint_violation: bool
    constraint_notes: list[str]
    ac_delta: list[str]
    extends_work_item_ids: list[int]


class GenerationAnswer(_Strict):
    epics: list[EpicAnswer]
    features: list[FeatureAnswer]
    stories: list[StoryAnswer]
    open_questions: list[str]


# tagging ----------------------------------------------------------------------------------------


class TaggingAnswer(_Strict):
    decision_tag: Tag
    confidence: float
    runner_up_tag: Tag | None
    runner_up_confidence: float | None
    related_story_ids: list[int]
    reasoning_excerpt: str
