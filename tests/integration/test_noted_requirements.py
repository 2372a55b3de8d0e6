"""The segment unit writes down the transcript's requirement sentences so that finalize, on the
run's critical path, does not compute them; the coverage figure is the same either way."""

from __future__ import annotations

import json

from shared import layout
from shared.models import GeneratedItem
from shared.pipeline.finalize import coverage, noted_requirements
from shared.storage import read_jsonl
from shared.storage.local import LocalFolderStore
from tests.support.pipeline import make_pipeline, run_file
from tests.support.transcripts import SMALL


def test_finalize_uses_the_noted_requirement_sentences_and_gets_the_same_coverage(tmp_path):
    svc, bus = make_pipeline(LocalFolderStore(tmp_path / "store"))
    run = run_file(svc, bus, "demo", "meeting.txt", SMALL.encode())
    assert run.status == "completed", run.failure_reason
    transcript = svc.store.get(layout.run_file(run.run_id, "transcript.txt")).decode()
    noted = noted_requirements(svc, run.run_id, transcript)
    assert noted  # written by the segment unit
    items = read_jsonl(
        svc.store, layout.run_file(run.run_id, "generated_backlog.jsonl"), GeneratedItem
    )
    stories = [i for i in items if i.type == "User Story"]
    summary = json.loads(svc.store.get(layout.run_file(run.run_id, "summary.json")))
    computed = coverage(transcript, stories)  # without the noted sentences
    assert summary["coverage"] == computed.model_dump(mode="json")
    assert computed.requirement_sentences == len(noted)


def test_missing_or_unfitting_noted_sentences_are_ignored(tmp_path):
    svc, _ = make_pipeline(LocalFolderStore(tmp_path / "store"))
    run_id = "run-0123456789abcdef0123"
    assert noted_requirements(svc, run_id, "some text") is None
    svc.store.put(layout.requirement_spans(run_id), json.dumps([[0, 4], [5, 99]]).encode())
    assert noted_requirements(svc, run_id, "some text") is None  # past the transcript's end
    svc.store.put(layout.requirement_spans(run_id), b"not json")
    assert noted_requirements(svc, run_id, "some text") is None
