"""No inert settings: every pipeline key is read by the code, the seed's keys that would change
nothing are not declared, and config_snapshot.yaml (``Settings.snapshot``) holds only the settings
that applied to the run, with the models the calls used."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from shared.settings import ObservabilityConfig, PipelineConfig, Settings

REPO = Path(__file__).resolve().parents[2]
SOURCES = [REPO / "shared", REPO / "loaders", REPO / "function_app.py"]
# a setting or environment variable that would change what these settings resolve to
ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_CHAT_DEPLOYMENT",
    "AZURE_OPENAI_EMBEDDING_DEPLOYMENT",
    "PINECONE_API_KEY",
    "LANGFUSE_PUBLIC_KEY",
    "LANGFUSE_SECRET_KEY",
    "SYNTH_ENGINE",
    "SYNTH_EMBEDDER",
)
LANGFUSE = {"langfuse_public_key": "pk-lf-x", "langfuse_secret_key": "sk-lf-x"}


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def leaves(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            out.extend(leaves(kind, f"{prefix}{name}."))
        else:
            out.append(f"{prefix}{name}")
    return out


def attributes_read() -> set[str]:
    """Every ``.name`` the code reads (attribute loads and ``getattr(x, "name", ...)``), in
    shared/, loaders/ and function_app.py."""
    names: set[str] = set()
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")) if source.is_dir() else [source]:
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                    names.add(node.attr)
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "getattr"
                    and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Constant)
                ):
                    names.add(str(node.args[1].value))
    return names


def test_every_pipeline_and_settings_key_is_read_somewhere() -> None:
    """A name-level check (a key read nowhere under its name is inert for certain)."""
    read = attributes_read()
    pipeline = [key for key in leaves(PipelineConfig) if key.rsplit(".", 1)[-1] not in read]
    settings = [n for n in Settings.model_fields if n != "pipeline" and n not in read]
    assert pipeline == [] and settings == []


def test_the_seeds_keys_that_changed_nothing_are_not_declared() -> None:
    keys = set(leaves(PipelineConfig))
    for inert in (
        "external_loaders.ado.ingestion_mode",
        "ado.mode",
        "ado.organization",
        "ado.project",
        "feature_flags.modular_mode",
        "feature_flags.streaming_generation",
    ):
        assert inert not in keys
    assert "local_function_key" not in Settings.model_fields
    assert {"observability.per_segment_spans", "observability.store_config_snapshot"} <= keys


def sections(snapshot: dict[str, Any]) -> set[str]:
    return set(snapshot) - {"runtime"}


def test_an_offline_run_records_no_model_embedder_loader_judge_or_tracing_keys() -> None:
    snapshot = Settings(storage_backend="local", engine="offline", embedder="minilm").snapshot()
    assert sections(snapshot) == {
        "segmentation",
        "generation",
        "tagging",
        "retrieval",
        "thresholds",
        "limits",
        "hygiene",
        "pricing",
    }
    assert set(snapshot["segmentation"]) == {
        "max_segment_tokens",
        "min_merge_threshold",
        "cohesion_divergence_threshold",
    }
    assert set(snapshot["generation"]) == {
        "max_stories_per_segment",
        "default_persona",
        "merge_similarity",
    }
    assert set(snapshot["tagging"]) == {"scorer", "review_below"}
    assert snapshot["runtime"] == {
        "engine": "offline",
        "embedder": "minilm",
        "vector_store": "embedded",
        "storage_backend": "local",
        "tracing": "none",
        "run_token_budget": 0,
    }


def test_an_llm_run_records_the_models_its_calls_used() -> None:
    openai = Settings(storage_backend="local", openai_api_key="sk-x").snapshot()
    assert openai["segmentation"]["model"] == "gpt-4o" and "window_tokens" in openai["segmentation"]
    assert openai["tagging"]["temperature"] == 0.1
    assert openai["embedding"] == {
        "model": "text-embedding-3-small",
        "dimensions": 1536,
        "batch_size": 256,
    }
    azure = Settings(
        storage_backend="local",
        azure_openai_endpoint="https://x.openai.azure.com/",
        azure_openai_chat_deployment="chat-dep",
        azure_openai_embedding_deployment="embed-dep",
    ).snapshot()
    assert {azure[a]["model"] for a in ("segmentation", "generation", "tagging")} == {"chat-dep"}
    assert azure["embedding"]["model"] == "embed-dep"
    assert "sk-x" not in str(openai)  # never a secret


def test_observability_is_recorded_only_when_the_run_is_traced() -> None:
    pipeline = PipelineConfig(observability=ObservabilityConfig(per_segment_spans=False))
    traced = Settings(storage_backend="local", pipeline=pipeline, **LANGFUSE).snapshot()
    assert traced["observability"] == {"enable_langfuse": True, "per_segment_spans": False}
    assert traced["runtime"]["tracing"] == "langfuse"
    off = PipelineConfig(observability=ObservabilityConfig(enable_langfuse=False))
    untraced = Settings(storage_backend="local", pipeline=off, **LANGFUSE).snapshot()
    assert "observability" not in untraced and untraced["runtime"]["tracing"] == "none"
    half = Settings(storage_backend="local", langfuse_public_key="pk-lf-x").snapshot()
    assert "observability" not in half


def test_every_recorded_key_is_a_key_the_code_reads() -> None:
    read = attributes_read()
    aliases = {
        f.alias: name
        for name, f in PipelineConfig.model_fields["thresholds"].annotation.model_fields.items()  # type: ignore[union-attr]
        if f.alias
    }
    for settings in (
        Settings(storage_backend="local", engine="offline", embedder="minilm", **LANGFUSE),
        Settings(storage_backend="local", openai_api_key="sk-x", **LANGFUSE),
    ):
        snapshot = settings.snapshot()
        recorded = [
            aliases.get(key, key)
            for section, values in snapshot.items()
            if section != "runtime"
            for key in values
        ]
        assert [key for key in recorded if key not in read] == []
