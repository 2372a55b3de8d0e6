"""Tagging against every ADO process: the loader fills the index from a fake project of each
process (REST through the real client, MiniLM), and a generated story finds that project's
stories (User Stories, Product Backlog Items, Requirements, Issues) as its candidates and is
tagged duplicate or extend against them, as it is in an Agile project."""

from __future__ import annotations

import pytest

from devhost.standins.fake_ado import FakeAdo, sample_items
from shared.ado import process as processes
from shared.bus.memory import InProcessBus
from shared.embeddings.minilm import MiniLMEmbedder
from shared.engine.offline import build_offline_agents
from shared.indexing.backlog import load_backlog
from shared.models import Segment
from shared.retrieval.search import generation_context, tagging_candidates
from shared.settings import Settings
from shared.storage.local import LocalFolderStore
from tests.support.backlog_items import NOW, lone_story
from tests.support.pipeline import fake_services

PROJECT = "rc"

# sample story #1101, word for word
COPY_OF_1101 = lone_story(
    "Zap through channels with next and previous buttons",
    "As a viewer, I want dedicated next-channel and previous-channel buttons, so that I can zap "
    "through all my channels quickly.",
    [
        "Pressing next or previous changes the TV to the adjacent channel.",
        "Holding next or previous for longer than 1 s keeps stepping at about 3 channels per "
        "second.",
        "The channel list wraps around from the last channel to the first.",
    ],
)
# sample story #1126 and two more commands
MORE_THAN_1126 = lone_story(
    "Voice commands for the program guide",
    "As a young viewer, I want to say simple commands such as power, volume up, volume down or "
    "a channel number to my remote, and also open the program guide by voice.",
    [
        "The remote recognises a fixed vocabulary: power, volume up, volume down and channel "
        "numbers.",
        "Saying 'guide' opens the program guide.",
        "Saying 'mute' mutes the TV.",
    ],
    item_id="st-2",
)


@pytest.fixture(scope="module")
def engine():
    settings = Settings(storage_backend="local", engine="offline", embedder="minilm")
    embedder = MiniLMEmbedder()
    return settings, embedder, build_offline_agents(embedder, settings.pipeline)


@pytest.fixture(params=["agile", "scrum", "cmmi", "basic"])
def project(request, tmp_path, engine):
    """(process name, services) with the index loaded from a fake project of that process."""
    settings, embedder, agents = engine
    svc = fake_services(
        LocalFolderStore(tmp_path),
        InProcessBus(),
        agents=agents,
        embedder=embedder,
        settings=settings,
    )
    with FakeAdo(process=request.param) as fake:
        fake.seed_sample()
        with fake.client(sleep=lambda s: None) as client:
            summary = load_backlog(svc, PROJECT, client=client, show_progress=False)
    assert summary.errors == [] and summary.upserted == len(sample_items(request.param))
    return request.param, svc


def tag(svc, story):
    cfg = svc.settings.pipeline.retrieval
    candidates = tagging_candidates(svc.embedder, svc.index, cfg, PROJECT, story)
    return candidates, svc.agents.tagger.tag(story, candidates).decision


def test_a_generated_story_finds_the_projects_stories_and_is_tagged_against_them(project):
    name, svc = project
    story_type = processes.by_name(name).story_type
    candidates, duplicate = tag(svc, COPY_OF_1101)
    assert candidates[0].work_item_id == 1101 and candidates[0].similarity > 0.99
    # the candidates are the project's stories, with their criteria (Basic: from the description)
    assert len(candidates[0].acceptance_criteria) == 3
    stored = svc.index.fetch(PROJECT, [f"ado-{c.work_item_id}" for c in candidates])
    for record in stored.values():
        assert record.metadata["work_item_type"] == "User Story"
        assert record.metadata.get("ado_work_item_type", "User Story") == story_type
    assert (duplicate.decision_tag, duplicate.related_story_ids) == ("duplicate", [1101])

    candidates, extend = tag(svc, MORE_THAN_1126)
    assert candidates[0].work_item_id == 1126
    assert extend.decision_tag == "extend" and extend.related_story_ids[:1] == [1126]


def test_generation_sees_the_projects_epics_and_features(project):
    """The generation's context names the levels as the generated backlog does, so an existing
    epic (and, where the process has them, a feature) can be reused as a parent."""
    name, svc = project
    text = "We need the infrared range to reach the sofa, and every TV brand to be supported."
    segment = Segment(
        run_id="run-1",
        segment_id="seg-0001",
        segment_order=1,
        raw_text=text,
        start_char=0,
        end_char=len(text),
        token_count=20,
        intent_labels=["infrared link", "TV brands"],
        dominant_intent="infrared range and TV compatibility",
        segmentation_version="test",
        engine="offline",
        timestamp=NOW,
    )
    cfg = svc.settings.pipeline.retrieval
    context = generation_context(svc.embedder, svc.index, cfg, PROJECT, segment)
    kinds = {i.work_item_type for i in context.ado_items}
    assert "User Story" in kinds and kinds <= {"Epic", "Feature", "User Story"}
    assert ("Feature" in kinds) == (name != "basic")
