"""The LLM engine's output is cleaned like the offline engine's: a model that answers in the
transcript's own words (AMI markers, fillers) through the real ``openai`` SDK and the OpenAI stand-in
leaves no marker or filler in any generated field of the run's artifacts, while every quote stays
the transcript's text at its offsets, markers included. (The offline engine on the AMI sample:
tests/integration/test_samples_offline.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devhost.standins.openai_standin import OpenAIStandIn, Recorded, Reply, hermetic_env
from shared import layout
from shared.engine.llm import build_llm_agents
from shared.models import WorkItem
from shared.settings import Settings
from shared.storage.local import LocalFolderStore
from tests.support.fakes import HashEmbedder
from tests.support.generated_text import MARKER, quotes, unclean
from tests.support.pipeline import SAMPLES, load_backlog, make_pipeline, run_file

BACKLOG = [
    WorkItem(
        work_item_id=101,
        work_item_type="User Story",
        title="Power button",
        description="People want a power button to switch the TV on and off.",
    ),
    WorkItem(work_item_id=102, work_item_type="User Story", title="Few buttons, easy to find"),
]
# six turns of the AMI sample (IS1006b), markers and fillers as the corpus has them
AMI_LINES = (96, 131, 188, 221, 277, 402)


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic_env(monkeypatch)


@pytest.fixture
def llm() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn(units_per_segment=2) as standin:
        yield standin


def meeting() -> str:
    lines = (SAMPLES / "transcripts" / "remote_control_functional_design.txt").read_text()
    turns = lines.splitlines()
    return "\n".join(turns[n - 1] for n in AMI_LINES) + "\n"


def in_transcript_words(answer: dict[str, Any], request: Recorded) -> dict[str, Any]:
    """The automatic answer (its stories already copy the transcript's sentences into titles,
    descriptions and criteria) with markers and fillers in every other field too."""
    for epic in answer["epics"]:
        epic.update(title=f"{{vocalsound}} Um {epic['title']}", description="uh the {gap} basics")
    for feature in answer["features"]:
        feature["description"] = "Um it it {disfmarker} works"
    for story in answer["stories"]:
        story["open_questions"] = ["{vocalsound} Um should it glow {disfmarker} ?", "uh ?"]
        story["constraint_notes"] = ["ARC-01: um the {gap} cost"]
        story["ac_delta"] = list(story["acceptance_criteria"])
    answer["open_questions"] = ["{vocalsound} what colour {disfmarker} ?"]
    return answer


def reasoning_in_transcript_words(answer: dict[str, Any], request: Recorded) -> dict[str, Any]:
    answer["reasoning_excerpt"] = 'They said "we need {disfmarker} a power button".'
    return answer


def test_llm_output_is_cleaned_in_every_generated_field_and_quotes_stay_verbatim(
    llm: OpenAIStandIn, tmp_path: Path
) -> None:
    cfg = Settings(
        storage_backend="local", engine="llm", openai_api_key="x", openai_base_url=llm.base_url
    )
    cfg.pipeline.segmentation.min_merge_threshold = 10
    embedder = HashEmbedder()
    svc, bus = make_pipeline(
        LocalFolderStore(tmp_path),
        agents=build_llm_agents(cfg, embedder),
        embedder=embedder,
        settings=cfg,
    )
    load_backlog(svc, "ami", BACKLOG)  # something to tag against: the model is asked
    llm.script(
        *[Reply.auto(mutate=in_transcript_words) for _ in range(20)], match="GenerationAnswer"
    )
    llm.script(
        *[Reply.auto(mutate=reasoning_in_transcript_words) for _ in range(40)],
        match="TaggingAnswer",
    )

    done = run_file(svc, bus, "ami", "ami.txt", meeting().encode())
    assert done.status == "completed", done.failure_reason
    assert done.engine == "llm"
    read = svc.store.get
    transcript = read(layout.run_file(done.run_id, "transcript.txt")).decode()
    items = [
        json.loads(line)
        for line in read(layout.run_file(done.run_id, "generated_backlog.jsonl")).splitlines()
    ]
    stories = [i for i in items if i["type"] == "User Story"]
    assert stories and any(s["constraint_notes"] and s["ac_delta_entries"] for s in stories)
    assert any(i["open_questions"] for i in items)
    assert unclean(items) == []
    questions = [q["question"] for i in items for q in i["open_questions"]]
    assert "should it glow?" in questions and "uh ?" not in questions

    every_quote = [q for i in items for q in quotes(i)]
    assert all(transcript[q["start"] : q["end"]] == q["text"] for q in every_quote)
    assert any(MARKER.search(q["text"]) for q in every_quote)  # the transcript's markers stay

    records = [
        json.loads(line)
        for line in read(layout.run_file(done.run_id, "tagging_analysis.jsonl")).splitlines()
    ]
    assert records and not any(MARKER.search(r["reasoning_excerpt"]) for r in records)
