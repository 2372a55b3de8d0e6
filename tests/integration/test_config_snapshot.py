"""config_snapshot.yaml as a run starts: written with the settings that applied, or not at all
with ``observability.store_config_snapshot: false`` (the run starts the same)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from shared import layout
from shared.pipeline.runs import start_run
from shared.settings import ObservabilityConfig, PipelineConfig, Settings
from shared.storage.local import LocalFolderStore
from tests.support.pipeline import make_pipeline
from tests.support.transcripts import SMALL

pytestmark = pytest.mark.integration


def started(tmp_path: Path, store_snapshot: bool) -> tuple[LocalFolderStore, str]:
    pipeline = PipelineConfig(
        observability=ObservabilityConfig(store_config_snapshot=store_snapshot)
    )
    settings = Settings(
        storage_backend="local",
        engine="offline",
        embedder="minilm",
        langfuse_public_key=None,  # untraced, whatever the environment holds
        pipeline=pipeline,
    )
    store = LocalFolderStore(tmp_path)
    svc, _ = make_pipeline(store, settings=settings)
    path = "transcripts/demo/m.txt"
    store.put(path, SMALL.encode())
    run = start_run(svc, path, SMALL.encode())  # the bus is not drained: the start alone
    assert run.status == "queued" and store.exists(layout.run_json(run.run_id))
    return store, run.run_id


def test_a_run_records_the_settings_that_applied(tmp_path: Path) -> None:
    store, run_id = started(tmp_path, store_snapshot=True)
    snapshot = yaml.safe_load(store.get(layout.run_file(run_id, "config_snapshot.yaml")))
    assert snapshot["run"]["run_id"] == run_id
    assert snapshot["runtime"]["engine"] == "offline" and snapshot["runtime"]["tracing"] == "none"
    for absent in ("external_loaders", "judge", "ado", "feature_flags", "embedding"):
        assert absent not in snapshot
    assert "model" not in snapshot["segmentation"]  # the offline engine calls no model


def test_store_config_snapshot_false_writes_none(tmp_path: Path) -> None:
    store, run_id = started(tmp_path, store_snapshot=False)
    assert not store.exists(layout.run_file(run_id, "config_snapshot.yaml"))
    assert store.exists(layout.run_file(run_id, "transcript.txt"))
