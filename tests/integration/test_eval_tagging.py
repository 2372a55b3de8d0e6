"""``eval tagging`` end to end on a tiny handmade dataset: the configured (offline) engine with the
packaged MiniLM, a fresh index, results in the store and in --out, and the pipeline's own
fallback when the tagger fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.agents import AgentFailed, Agents, TaggingFailed
from shared.cli import main
from shared.eval.dataset import DatasetError, load_dataset
from shared.eval.tagging import evaluate_split
from shared.settings import Settings

BACKLOG = [
    {"work_item_id": 1, "work_item_type": "Epic", "title": "Planning poker"},
    {
        "work_item_id": 11,
        "work_item_type": "User Story",
        "title": "Export a game transcript as CSV",
        "description": "As a moderator, I want to export a transcript of a game as a CSV file, "
        "so that I can process the stories and estimates.",
        "parent_id": 1,
    },
    {
        "work_item_id": 12,
        "work_item_type": "User Story",
        "title": "Invite up to 15 estimators",
        "description": "As a moderator, I want to invite up to 15 estimators, so that large teams "
        "can play.",
        "parent_id": 1,
    },
    {
        "work_item_id": 13,
        "work_item_type": "User Story",
        "title": "Discussion countdown timer",
        "description": "As a participant, I want a countdown timer that all participants see, so "
        "that discussions stay short.",
        "acceptance_criteria": ["The length of the timer is TBD."],
        "parent_id": 1,
    },
    {
        "work_item_id": 14,
        "work_item_type": "User Story",
        "title": "Thumbnail photo near my cards",
        "description": "As a participant, I want a small photo of me near my cards, so that the "
        "game feels personal.",
        "parent_id": 1,
    },
]
CASES = [
    {
        "story_id": "c1",
        "story_title": "Export a game transcript as CSV",
        "story_description": BACKLOG[1]["description"],
        "story_acceptance_criteria": [],
        "gold_tag": "duplicate",
        "gold_related_ids": [11],
    },
    {
        "story_id": "c2",
        "story_title": "Thunderstorm warning",
        "story_description": "As a camp director, I want a warning when thunderstorms are "
        "forecast, so that I can move children indoors.",
        "story_acceptance_criteria": ["A warning is shown for a storm forecast."],
        "gold_tag": "new",
        "gold_related_ids": [],
    },
    {
        "story_id": "c3",
        "story_title": "Invite at most 8 estimators",
        "story_description": "As a moderator, I want to invite at most 8 estimators, so that "
        "teams stay small.",
        "story_acceptance_criteria": ["A game holds at most 8 estimators."],
        "gold_tag": "conflict",
        "gold_related_ids": [12],
    },
    {
        "story_id": "c4",
        "story_title": "Two-minute discussion timer",
        "story_description": "As a participant, I want the countdown timer to run for two "
        "minutes, so that discussions stay short.",
        "story_acceptance_criteria": ["The timer counts down from 2 minutes."],
        "gold_tag": "gap",
        "gold_related_ids": [13],
    },
]


def write_dataset(folder: Path, backlog=BACKLOG, cases=CASES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "existing_backlog.jsonl").write_text("".join(json.dumps(r) + "\n" for r in backlog))
    (folder / "tagging_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in cases))
    return folder


_PROVIDER_PREFIXES = (
    "SYNTH_",
    "AZUREWEBJOBSSTORAGE",
    "AZURE_",
    "OPENAI_",
    "PINECONE_",
    "LANGFUSE_",
)


def clean_env(monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    """Only ``values`` from the app's variables: other tests of the session may have set some."""
    import os

    for name in list(os.environ):
        if name.upper().startswith(_PROVIDER_PREFIXES):
            monkeypatch.delenv(name)
    for name, value in values.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def offline_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    clean_env(
        monkeypatch,
        SYNTH_LOCAL_STORE_DIR=str(tmp_path / "store"),
        SYNTH_ENGINE="offline",
        SYNTH_EMBEDDER="minilm",
    )
    return tmp_path


def test_eval_tagging_writes_the_f1_report_and_prints_a_table(offline_env: Path, capsys) -> None:
    data = write_dataset(offline_env / "tiny")
    assert main(["eval", "tagging", str(data), "--out", str(offline_env / "out")]) == 0
    printed = capsys.readouterr().out
    assert "macro F1" in printed and "gold \\ predicted" in printed

    (folder,) = (offline_env / "out").iterdir()
    doc = json.loads((folder / "tagging_f1.json").read_text())
    stored = offline_env / "store" / "eval" / folder.name / "tagging_f1.json"
    assert json.loads(stored.read_text())["metrics"] == doc["metrics"]
    assert (folder / "confusion_matrix.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    cases = [json.loads(x) for x in (folder / "tagging_cases.jsonl").read_text().splitlines()]
    predicted = {c["story_id"]: c["predicted_tag"] for c in cases}

    # an exact copy is a duplicate of its original, an unrelated story is new
    assert predicted["c1"] == "duplicate" and predicted["c2"] == "new"
    assert next(c for c in cases if c["story_id"] == "c1")["related_story_ids"][0] == 11
    m = doc["metrics"]
    assert sum(map(sum, m["confusion_matrix"]["matrix"])) == len(CASES)
    correct = sum(1 for c in cases if c["correct"])
    assert m["micro_f1"] == pytest.approx(correct / len(CASES), abs=1e-4)
    assert m["recall@1"] == pytest.approx(1.0)  # each gold story is the best match
    assert doc["engine"] == "offline" and doc["embedder"].startswith("all-MiniLM")
    assert doc["thresholds"]["profile"] == "minilm"
    assert doc["counts"]["gold"] == {"new": 1, "extend": 0, "gap": 1, "conflict": 1, "duplicate": 1}
    assert doc["dataset"]["cases"] == 4 and doc["dataset"]["backlog_items"] == 5

    # the same evaluation again lands in the same place
    assert main(["eval", "tagging", str(data), "--no-png"]) == 0
    assert {p.name for p in (offline_env / "store" / "eval").iterdir()} == {folder.name}


class BrokenTagger:
    version = "tag-broken"
    engine = "offline"
    model = None

    def tag(self, story, candidates):
        raise TaggingFailed("the model answered nonsense twice", attempts=2)


def test_a_failing_tagger_falls_back_to_new_as_in_the_pipeline(tmp_path: Path) -> None:
    (split,) = load_dataset(write_dataset(tmp_path / "tiny"))
    settings = Settings(
        _env_file=None, storage_backend="local", engine="offline", embedder="minilm"
    )
    broken = Agents(segmenter=None, generator=None, tagger=BrokenTagger())  # type: ignore[arg-type]
    doc, rows = evaluate_split(settings, split, agents=broken, workers=2)
    assert doc["counts"]["tagging_failed"] == len(CASES)
    assert doc["counts"]["predicted"]["new"] == len(CASES)
    assert all(r["tagging_failed"] and r["predicted_tag"] == "new" for r in rows)
    assert issubclass(TaggingFailed, AgentFailed)


def test_a_malformed_dataset_is_a_clear_error(tmp_path: Path, capsys, offline_env) -> None:
    bad = [dict(CASES[0], gold_related_ids=[999])]
    data = write_dataset(tmp_path / "bad", cases=bad)
    with pytest.raises(DatasetError, match="999"):
        load_dataset(data)
    assert main(["eval", "tagging", str(data)]) == 2
    assert "999" in capsys.readouterr().err
    assert main(["eval", "tagging", str(tmp_path / "missing")]) == 2
