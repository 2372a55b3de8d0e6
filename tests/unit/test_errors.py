"""The exception tree (shared/errors.py): every error the app raises on purpose is a
``SynthesizerError``; every missing setting is one ``ConfigurationError``; the agents' retry loop
retries a ``RejectedAnswer`` and nothing else; every error record is built by one helper."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from shared.agents import GenerationFailed, SegmentationFailed
from shared.engine.llm.base import ask
from shared.errors import ConfigurationError, RejectedAnswer, SynthesizerError, error_record
from shared.llm import InvalidOutput, StructuredAnswer, validated
from shared.models import Usage
from shared.settings import Settings

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 1, 1, tzinfo=UTC)
# settings that would configure what the tests below leave unconfigured
CONFIG_ENV = (
    "AzureWebJobsStorage",
    "AZUREWEBJOBSSTORAGE",
    "AzureWebJobsStorage__blobServiceUri",
    "AzureWebJobsStorage__queueServiceUri",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "PINECONE_API_KEY",
    "AZURE_DEVOPS_ORG_URL",
    "AZURE_DEVOPS_PROJECT",
    "AZURE_DEVOPS_PAT",
)


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CONFIG_ENV:
        monkeypatch.delenv(name, raising=False)


# ------------------------------------------------------------------------------------------------
# the tree


def public_exception_classes() -> list[type[BaseException]]:
    """Every public exception class defined in shared/ and loaders/ (found by AST, imported)."""
    found = []
    for path in sorted([*(REPO / "shared").rglob("*.py"), *(REPO / "loaders").rglob("*.py")]):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                cls = getattr(importlib.import_module(module), node.name)
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    found.append(cls)
    return found


def test_every_error_the_app_defines_is_a_synthesizer_error() -> None:
    classes = public_exception_classes()
    assert len(classes) >= 30  # the scan sees them (it would pass vacuously otherwise)
    # health.Skip is no error: a deep-health probe that was not run
    outside = [
        f"{c.__module__}.{c.__name__}"
        for c in classes
        if not issubclass(c, SynthesizerError) and c.__name__ != "Skip"
    ]
    assert outside == []


def test_old_bases_are_kept_for_existing_excepts() -> None:
    from shared.ids import InvalidIdentifier
    from shared.pipeline.runs import UnknownRun
    from shared.storage import NotFound

    assert issubclass(UnknownRun, LookupError) and issubclass(InvalidIdentifier, ValueError)
    assert str(NotFound("runs/x/run.json")) == "'runs/x/run.json'"  # KeyError's own text


def test_rejections_are_one_type_and_no_value_error() -> None:
    from shared.agents import QuoteNotFound
    from shared.engine.llm.tagging import UnclearDecision

    for cls in (InvalidOutput, QuoteNotFound, UnclearDecision):
        assert issubclass(cls, RejectedAnswer) and not issubclass(cls, ValueError)
    assert not issubclass(ConfigurationError, RejectedAnswer | ValueError | RuntimeError)


def test_the_old_not_configured_types_are_gone() -> None:
    import shared.ado.errors
    import shared.llm.client
    import shared.services

    assert not hasattr(shared.ado.errors, "AdoNotConfigured")
    assert not hasattr(shared.llm.client, "LLMNotConfigured")
    assert not hasattr(shared.services, "NotConfigured")


# ------------------------------------------------------------------------------------------------
# one ConfigurationError for every missing setting


class Dim:
    dimension = 384
    model_name = "stand-in"


@pytest.mark.usefixtures("bare")
def test_storage_and_the_queue_bus_without_their_settings() -> None:
    from shared.services import build_bus, build_store

    with pytest.raises(ConfigurationError, match="AzureWebJobsStorage"):
        build_store(Settings(storage_backend="azure"))
    with pytest.raises(ConfigurationError, match="AzureWebJobsStorage"):
        build_bus(Settings())


@pytest.mark.usefixtures("bare")
def test_models_and_the_vector_index_without_their_settings(tmp_path: Path) -> None:
    from shared.llm.client import build_openai_client
    from shared.services import build_agents, build_embedder, build_index
    from shared.storage.local import LocalFolderStore

    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        build_openai_client(Settings(engine="llm"))
    with pytest.raises(ConfigurationError, match="SYNTH_EMBEDDER=openai"):
        build_embedder(Settings(embedder="openai"))
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        build_agents(Settings(engine="llm", embedder="minilm"), Dim())  # type: ignore[arg-type]
    store = LocalFolderStore(tmp_path)
    with pytest.raises(ConfigurationError, match="PINECONE_API_KEY"):
        build_index(Settings(vector_store="pinecone"), store, Dim())  # type: ignore[arg-type]


@pytest.mark.usefixtures("bare")
def test_azure_devops_without_its_settings() -> None:
    from shared.ado.client import AdoClient

    with pytest.raises(ConfigurationError, match="AZURE_DEVOPS_ORG_URL, AZURE_DEVOPS_PROJECT"):
        AdoClient.from_settings(Settings())
    with pytest.raises(ConfigurationError, match="full URL"):
        AdoClient("dev.azure.com/org", "p", "pat-value")
    with pytest.raises(ConfigurationError, match="AZURE_DEVOPS_PROJECT is empty"):
        AdoClient("https://dev.azure.com/org", " ", "pat-value")
    with pytest.raises(ConfigurationError, match="AZURE_DEVOPS_PAT is empty"):
        AdoClient("https://dev.azure.com/org", "p", "")


@pytest.mark.usefixtures("bare")
def test_the_deep_health_index_probe_without_a_pinecone_key(tmp_path: Path) -> None:
    from shared.health import _index

    svc = SimpleNamespace(settings=Settings(vector_store="pinecone"))
    with pytest.raises(ConfigurationError, match="PINECONE_API_KEY"):
        _index(svc)  # type: ignore[arg-type]


def test_a_disabled_loader_is_a_configuration_error(tmp_path: Path) -> None:
    from loaders.ado_loader import load_backlog
    from loaders.arch_loader import load_documents
    from shared.settings import PipelineConfig

    pipeline = PipelineConfig()
    pipeline.external_loaders.ado.enabled = False
    pipeline.external_loaders.architecture.enabled = False
    svc = SimpleNamespace(settings=Settings(pipeline=pipeline))
    with pytest.raises(ConfigurationError, match="ADO__ENABLED=false"):
        load_backlog(svc, "demo", file=tmp_path / "none.csv")
    with pytest.raises(ConfigurationError, match="ARCHITECTURE__ENABLED=false"):
        load_documents(svc, "demo", [tmp_path])


# ------------------------------------------------------------------------------------------------
# the retry loop retries a rejected answer and nothing else


class Answer(BaseModel):
    value: int


class ScriptedChat:
    """Answers ``Answer(value=n)`` for each n given (or raises it, when it is an exception)."""

    model = "scripted"

    def __init__(self, *answers: int | Exception) -> None:
        self.answers = list(answers)
        self.calls = 0

    def structured(
        self,
        messages: Sequence[dict[str, Any]],
        schema: type[BaseModel],
        *,
        temperature: float,
        max_tokens: int | None = None,
    ) -> StructuredAnswer[Any]:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return StructuredAnswer(
            value=schema.model_validate({"value": answer}),
            raw=f'{{"value": {answer}}}',
            usage=Usage(prompt_tokens=10, completion_tokens=2, calls=1),
            model="scripted",
        )


def ask_with(chat: ScriptedChat, check: Any) -> Any:
    return ask(
        chat,  # type: ignore[arg-type]
        [{"role": "user", "content": "a number"}],
        Answer,
        check,
        temperature=0.2,
        max_tokens=10,
        failure=GenerationFailed,
        what="the test",
    )


def positive(answer: Answer) -> int:
    if answer.value <= 0:
        raise RejectedAnswer(f"{answer.value} is not positive")
    return answer.value


def test_a_rejected_answer_is_retried_once_with_the_reason() -> None:
    chat = ScriptedChat(-1, 5)
    outcome = ask_with(chat, positive)
    assert (outcome.value, outcome.attempts, chat.calls) == (5, 2, 2)
    assert outcome.usage.calls == 2


def test_two_rejected_answers_fail_the_agent() -> None:
    chat = ScriptedChat(InvalidOutput("not JSON", raw="{", usage=Usage(calls=1)), -2)
    with pytest.raises(GenerationFailed, match="-2 is not positive") as failed:
        ask_with(chat, positive)
    assert failed.value.attempts == 2 and failed.value.usage.calls == 2
    assert failed.value.raw_output == '{"value": -2}'


def test_a_value_error_from_a_bug_propagates_without_a_retry() -> None:
    def buggy(answer: Answer) -> int:
        return int("not a number")  # a bug in a check: a ValueError, no rejection

    chat = ScriptedChat(1, 1)
    with pytest.raises(ValueError, match="invalid literal"):
        ask_with(chat, buggy)
    assert chat.calls == 1


def test_a_validation_error_in_a_check_propagates_unless_it_is_made_a_rejection() -> None:
    def unconverted(answer: Answer) -> Answer:
        return Answer.model_validate({"value": "many"})  # raises pydantic's ValidationError

    chat = ScriptedChat(1, 1)
    with pytest.raises(ValueError):
        ask_with(chat, unconverted)
    assert chat.calls == 1

    seen: list[int] = []

    def converted(answer: Answer) -> Answer:
        seen.append(answer.value)
        return validated(Answer, {"value": "many" if len(seen) == 1 else 3})

    chat = ScriptedChat(1, 1)
    outcome = ask_with(chat, converted)
    assert outcome.value.value == 3 and chat.calls == 2


# ------------------------------------------------------------------------------------------------
# error records


def test_error_records_from_an_agent_failure_and_from_a_named_failure() -> None:
    failed = SegmentationFailed("gave up", attempts=2, raw_output="x" * 3000)
    record = error_record("run-1", "segment", "run-1", failed, outcome="aborted", timestamp=NOW)
    assert (record.error_type, record.message, record.attempts) == (
        "SegmentationFailed",
        "gave up",
        2,
    )
    assert record.details == {"raw_output": "x" * 2000} and record.dequeue_count is None
    poisoned = error_record(
        "run-1",
        "tag",
        "seg-0001-st01",
        "Poisoned",
        message="moved to synth-tag-poison",
        attempts=5,
        dequeue_count=5,
        outcome="tagged_new",
        timestamp=NOW,
        details={"note": "n"},
    )
    assert (poisoned.error_type, poisoned.attempts, poisoned.dequeue_count) == ("Poisoned", 5, 5)
    assert poisoned.details == {"note": "n"}
    plain = error_record(
        "run-1", "start", "run-1", ValueError("bad"), outcome="aborted", timestamp=NOW
    )
    assert (plain.error_type, plain.message, plain.attempts, plain.details) == (
        "ValueError",
        "bad",
        1,
        {},
    )
    # the same fields whatever failed
    assert record.model_dump().keys() == poisoned.model_dump().keys() == plain.model_dump().keys()


def test_every_error_record_is_built_by_the_helper() -> None:
    """No ``ErrorRecord(...)`` call outside shared/errors.py."""
    calls = []
    for path in sorted([*(REPO / "shared").rglob("*.py"), *(REPO / "loaders").rglob("*.py")]):
        if path == REPO / "shared" / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "ErrorRecord"
            ):
                calls.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert calls == []
