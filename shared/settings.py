"""The one settings module: every environment variable the app reads is declared here.

Two layers:
- ``PipelineConfig`` mirrors seed 000 §10 (the documented defaults). Each value can be overridden by an
  environment variable ``SYNTH_PIPELINE__<SECTION>__<KEY>`` (e.g.
  ``SYNTH_PIPELINE__THRESHOLDS__NEW_BELOW=0.5``); those that apply to a run are written to it as
  ``config_snapshot.yaml`` with the seed's own key names (``Settings.snapshot``). Every key changes
  what the app does: a key of the seed that would not (``ado.organization``, ``feature_flags``,
  ``ingestion_mode``) is not declared.
- ``Settings`` holds the infrastructure: storage, keys, endpoints. Standard names are used where the
  ecosystem has them (``AzureWebJobsStorage``, ``OPENAI_API_KEY``, ...).

Secrets are ``SecretStr`` so they never appear in a snapshot, a log line or a repr.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class AdoLoaderConfig(_Section):
    enabled: bool = True
    # Epic, Feature and User Story stand for the project's process's levels (a Scrum project loads
    # Product Backlog Items, a Basic one Epics and Issues: shared/ado/process.py); other names
    # (Bug, Task) are loaded as they are
    work_item_types: list[str] = Field(default_factory=lambda: ["Epic", "Feature", "User Story"])


class ArchitectureLoaderConfig(_Section):
    enabled: bool = True
    chunk_size: int = 1000
    chunk_overlap: int = 200


class ExternalLoadersConfig(_Section):
    ado: AdoLoaderConfig = Field(default_factory=AdoLoaderConfig)
    architecture: ArchitectureLoaderConfig = Field(default_factory=ArchitectureLoaderConfig)


class SegmentationConfig(_Section):
    model: str = "gpt-4o"
    max_segment_tokens: int = 1200
    min_merge_threshold: int = 80
    cohesion_divergence_threshold: float = 0.15
    temperature: float = 0.2
    # LLM engine: transcript tokens the model sees per call; longer transcripts are cut into
    # overlapping windows of whole units (shared/engine/llm/segmentation.py)
    window_tokens: int = 12000
    window_overlap_tokens: int = 1500


class GenerationConfig(_Section):
    model: str = "gpt-4o"
    temperature: float = 0.2
    # a segment's needs beyond this many are quoted as evidence of the others, not written (a
    # short meeting is often one segment, and each of its needs should be a story)
    max_stories_per_segment: int = 20
    # the role a story names when the meeting names none for its need ("As a user, ...")
    default_persona: str = "user"
    # stories of two segments whose "title. main quote" texts reach this cosine (and share a
    # topic word) are one need and merged at finalize; None: the thresholds' duplicateAtLeast
    merge_similarity: float | None = None


class TaggingConfig(_Section):
    model: str = "gpt-4o"
    temperature: float = 0.1
    # how the offline tagger decides (and how the LLM tagger's answers are checked): the learned
    # pair model (shared/engine/offline/pairs.py) or the seed's bare thresholds
    scorer: Literal["pairs", "thresholds"] = "pairs"
    # a tag whose calibrated confidence is below this needs a reviewer's decision; None: the
    # value chosen from the calibration on held-out sources (stored in the model file)
    review_below: float | None = Field(None, ge=0.0, le=1.0)


class JudgeConfig(_Section):
    """The LLM judge of ``eval judge`` (seed §9.2); not used by the pipeline."""

    model: str = "gpt-4o"
    temperature: float = 0.0


class RetrievalConfig(_Section):
    ado_top_k: int = 5
    architecture_top_k: int = 8
    tagging_top_k: int = 10
    similarity_weight: float = 0.7
    recency_weight: float = 0.2
    priority_weight: float = 0.1
    recency_half_life_days: float = 180.0
    dedupe_jaccard: float = 0.9
    segment_max_context_tokens: int = 6000


# Threshold profiles per embedder. The seed's thresholds are written for OpenAI's
# text-embedding-3-small; MiniLM puts the same pairs on another cosine scale, so with MiniLM the
# profile calibrated on datasets/v1/dev is used (python -m shared.eval.calibrate; figures in
# docs/EVALUATION.md). A profile fills only the thresholds the user did not set.
THRESHOLD_PROFILES: dict[str, dict[str, float]] = {
    "seed": {
        "new_below": 0.55,
        "conflict_at_least": 0.80,
        "extend_similarity": 0.70,
        "gap_at_least": 0.65,
        "duplicate_at_least": 0.92,
        "duplicate_max_novelty": 0.25,
    },
    # all-MiniLM-L6-v2: best macro F1 of the grid on datasets/v1/dev (0.824; seed values 0.508).
    # No gap band (gap needs an explicit open point) and duplicates by similarity alone.
    "minilm": {
        "new_below": 0.50,
        "conflict_at_least": 0.65,
        "extend_similarity": 0.50,
        "gap_at_least": 0.50,
        "duplicate_at_least": 0.86,
        "duplicate_max_novelty": 1.0,
    },
}


class ThresholdsConfig(_Section):
    new_below: float = Field(0.55, alias="newBelow")
    conflict_at_least: float = Field(0.80, alias="conflictAtLeast")
    extend_similarity: float = Field(0.70, alias="extendSimilarity")
    gap_at_least: float = Field(0.65, alias="gapAtLeast")
    duplicate_at_least: float = Field(0.92, alias="duplicateAtLeast")
    # a duplicate may add at most this share of new content words (offline tagger)
    duplicate_max_novelty: float = Field(0.25, alias="duplicateMaxNovelty")
    constraint_violation_check: bool = True
    profile: Literal["auto", "seed", "minilm"] = Field(
        "auto",
        description="threshold profile: auto = minilm with the MiniLM embedder, else seed",
    )

    def applied(self) -> dict[str, float]:
        """The thresholds as recorded in every tagging record (seed names)."""
        return {
            "newBelow": self.new_below,
            "gapAtLeast": self.gap_at_least,
            "extendSimilarity": self.extend_similarity,
            "conflictAtLeast": self.conflict_at_least,
            "duplicateAtLeast": self.duplicate_at_least,
            "duplicateMaxNovelty": self.duplicate_max_novelty,
        }

    def with_profile(self, name: str) -> ThresholdsConfig:
        """These thresholds with every value the user did not set taken from profile ``name``."""
        values = self.model_dump()
        for key, value in THRESHOLD_PROFILES[name].items():
            if key not in self.model_fields_set:
                values[key] = value
        values["profile"] = name
        resolved = ThresholdsConfig.model_validate(values)
        # keep what the user set, so resolving twice gives the same result
        resolved.__pydantic_fields_set__ = set(self.model_fields_set)
        return resolved


class EmbeddingConfig(_Section):
    model: str = "text-embedding-3-small"
    # OpenAI embedder: vector size (text-embedding-3-small makes 1536; the index must match)
    # and texts per request
    dimensions: int = 1536
    batch_size: int = 256


class ObservabilityConfig(_Section):
    # tracing to Langfuse when its keys are set (shared/services.py build_tracer)
    enable_langfuse: bool = True
    # the per-segment spans segment_{id}_retrieval and segment_{id}_generation_agent (seed §7.4);
    # off: a run's trace holds its root, segmentation and the per-story spans
    per_segment_spans: bool = True
    # runs/{run_id}/config_snapshot.yaml written when a run starts
    store_config_snapshot: bool = True


class LimitsConfig(_Section):
    max_upload_bytes: int = 30 * 1024 * 1024


class HygieneConfig(_Section):
    """The hygiene gate (shared/text/hygiene.py) before any model call, embedding or artifact."""

    redact_secrets: bool = True
    redact_emails: bool = False
    annotate_instructions: bool = True


class PricingConfig(_Section):
    """USD per 1M tokens, used only for the summary's cost estimate."""

    prompt_per_million: float = 2.50
    completion_per_million: float = 10.00


class PipelineConfig(_Section):
    external_loaders: ExternalLoadersConfig = Field(default_factory=ExternalLoadersConfig)
    segmentation: SegmentationConfig = Field(default_factory=SegmentationConfig)
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    tagging: TaggingConfig = Field(default_factory=TaggingConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    thresholds: ThresholdsConfig = Field(default_factory=ThresholdsConfig)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    observability: ObservabilityConfig = Field(default_factory=ObservabilityConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    hygiene: HygieneConfig = Field(default_factory=HygieneConfig)
    pricing: PricingConfig = Field(default_factory=PricingConfig)


# the keys only the LLM engine reads (shared/engine/llm/), per agent section
LLM_ONLY_KEYS: dict[Literal["segmentation", "generation", "tagging"], tuple[str, ...]] = {
    "segmentation": ("model", "temperature", "window_tokens", "window_overlap_tokens"),
    "generation": ("model", "temperature"),
    "tagging": ("model", "temperature"),
}


def _alias(*names: str) -> Any:
    return AliasChoices(*names)


class Settings(BaseSettings):
    """Infrastructure settings (app settings in Azure, local.settings.json or the shell locally)."""

    model_config = SettingsConfigDict(
        env_prefix="SYNTH_",
        env_nested_delimiter="__",
        case_sensitive=False,
        extra="ignore",
        populate_by_name=True,
    )

    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)

    # --- tagging (environment shortcuts for pipeline.tagging) ---------------------------------
    tagging_model: Literal["pairs", "thresholds"] | None = Field(
        None, description="SYNTH_TAGGING_MODEL: pairs (learned) or thresholds (the seed's rules)"
    )
    tag_review_below: float | None = Field(
        None, ge=0.0, le=1.0, description="SYNTH_TAG_REVIEW_BELOW: confidence needing review"
    )

    # --- storage -------------------------------------------------------------------------------
    storage_backend: Literal["auto", "azure", "local"] = Field(
        "auto", description="auto: Azure when AzureWebJobsStorage is set, else the local folder"
    )
    azure_storage_connection: SecretStr | None = Field(
        None, validation_alias=_alias("AzureWebJobsStorage", "AZUREWEBJOBSSTORAGE")
    )
    azure_blob_service_uri: str | None = Field(
        None, validation_alias=_alias("AzureWebJobsStorage__blobServiceUri")
    )
    azure_queue_service_uri: str | None = Field(
        None, validation_alias=_alias("AzureWebJobsStorage__queueServiceUri")
    )
    azure_storage_client_id: str | None = Field(
        None, validation_alias=_alias("AzureWebJobsStorage__clientId")
    )
    local_store_dir: str = Field(".data/store", description="root of the local folder store")

    # --- engines and providers ------------------------------------------------------------------
    engine: Literal["auto", "offline", "llm"] = Field(
        "auto", description="auto: llm when an OpenAI or Azure OpenAI key/endpoint is set"
    )
    embedder: Literal["auto", "minilm", "openai"] = "auto"
    vector_store: Literal["auto", "embedded", "pinecone"] = "auto"

    openai_api_key: SecretStr | None = Field(None, validation_alias=_alias("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(None, validation_alias=_alias("OPENAI_BASE_URL"))
    azure_openai_endpoint: str | None = Field(
        None, validation_alias=_alias("AZURE_OPENAI_ENDPOINT")
    )
    azure_openai_api_key: SecretStr | None = Field(
        None, validation_alias=_alias("AZURE_OPENAI_API_KEY")
    )
    openai_api_version: str = Field("2024-10-21", validation_alias=_alias("OPENAI_API_VERSION"))
    azure_openai_chat_deployment: str | None = Field(
        None, validation_alias=_alias("AZURE_OPENAI_CHAT_DEPLOYMENT")
    )
    azure_openai_embedding_deployment: str | None = Field(
        None, validation_alias=_alias("AZURE_OPENAI_EMBEDDING_DEPLOYMENT")
    )
    azure_client_id: str | None = Field(
        None,
        validation_alias=_alias("AZURE_CLIENT_ID"),
        description="user-assigned managed identity for Entra ID auth to Azure OpenAI",
    )
    openai_timeout_seconds: float = Field(
        60.0, gt=0, validation_alias=_alias("OPENAI_TIMEOUT_SECONDS")
    )
    openai_max_retries: int = Field(
        2,
        ge=0,
        le=10,
        validation_alias=_alias("OPENAI_MAX_RETRIES"),
        description="the openai SDK's own retries of 429/5xx/timeouts (honouring Retry-After)",
    )

    # --- model rate limits shared by every instance (shared/llm/limiter.py) ---------------------
    model_tpm: int = Field(
        0,
        ge=0,
        description="SYNTH_MODEL_TPM: tokens per minute of each chat deployment, shared by all "
        "instances (prompt estimate + max_tokens per call); 0 = no limit",
    )
    model_rpm: int = Field(
        0, ge=0, description="SYNTH_MODEL_RPM: requests per minute of each chat deployment; 0 = off"
    )
    embedding_tpm: int | None = Field(
        None,
        ge=0,
        description="SYNTH_EMBEDDING_TPM: the same for embeddings; unset: SYNTH_MODEL_TPM",
    )
    embedding_rpm: int | None = Field(
        None,
        ge=0,
        description="SYNTH_EMBEDDING_RPM: the same for embeddings; unset: SYNTH_MODEL_RPM",
    )
    model_limit_window_seconds: float = Field(
        60.0,
        gt=0,
        le=3600,
        description="SYNTH_MODEL_LIMIT_WINDOW_SECONDS: the 'minute' of the limits; only benchmarks "
        "that scale time down change it",
    )

    pinecone_api_key: SecretStr | None = Field(None, validation_alias=_alias("PINECONE_API_KEY"))
    pinecone_index: str = Field("brd-upload", validation_alias=_alias("PINECONE_INDEX"))
    pinecone_host: str | None = Field(None, validation_alias=_alias("PINECONE_HOST"))

    langfuse_public_key: str | None = Field(None, validation_alias=_alias("LANGFUSE_PUBLIC_KEY"))
    langfuse_secret_key: SecretStr | None = Field(
        None, validation_alias=_alias("LANGFUSE_SECRET_KEY")
    )
    langfuse_host: str | None = Field(None, validation_alias=_alias("LANGFUSE_HOST"))
    langfuse_timeout: float = Field(
        2.0,
        gt=0,
        le=60,
        validation_alias=_alias("LANGFUSE_TIMEOUT"),
        description="seconds an invocation's span export may take, retries included: an "
        "unreachable Langfuse costs at most this much per invocation",
    )

    # --- Azure DevOps (REST 7.1; shared/ado) ----------------------------------------------------
    azure_devops_org_url: str | None = Field(
        None,
        validation_alias=_alias("AZURE_DEVOPS_ORG_URL"),
        description="full organization URL, e.g. https://dev.azure.com/your-org",
    )
    azure_devops_project: str | None = Field(None, validation_alias=_alias("AZURE_DEVOPS_PROJECT"))
    azure_devops_pat: SecretStr | None = Field(None, validation_alias=_alias("AZURE_DEVOPS_PAT"))
    azure_devops_process: Literal["auto", "agile", "scrum", "cmmi", "basic"] = Field(
        "auto",
        validation_alias=_alias("AZURE_DEVOPS_PROCESS"),
        description="the project's process (its backlog type names, shared/ado/process.py); "
        "auto: detected from the project's work item types",
    )

    # --- local development ------------------------------------------------------------------
    workers: int = Field(
        4, ge=1, le=64, description="in-process worker threads (CLI run, dev host)"
    )

    # --- run budget (shared/pipeline/budget.py) ---------------------------------------------------
    run_token_budget: int = Field(
        0,
        ge=0,
        description="SYNTH_RUN_TOKEN_BUDGET: model tokens (prompt + completion) one run may use; "
        "a run estimated over it fails before its first model call, units past it are skipped; "
        "0 = unlimited",
    )

    # --- keeping the index current (shared/indexing; the sync timer in function_app.py) --------
    pending_stories: Literal["reviewed", "completed", "off"] = Field(
        "reviewed",
        description="stories of other runs, not yet written, that tagging compares with: those "
        "of runs whose review was saved, of every completed run, or none "
        "(shared/indexing/pending.py)",
    )
    sync_project: str | None = Field(
        None,
        description="the index namespace the sync timer brings up to date from "
        "AZURE_DEVOPS_PROJECT (default: AZURE_DEVOPS_PROJECT itself, when it is a valid "
        "namespace); the timer exists only with SYNTH_SYNC_SCHEDULE",
    )

    # --- retention (shared/pipeline/retention.py; the timer function in function_app.py) ----------
    retention_days: int = Field(
        0, ge=0, description="delete runs created more than this many days ago; 0 = off"
    )

    @field_validator("azure_devops_process", mode="before")
    @classmethod
    def _process_name(cls, value: Any) -> str:
        """Any case; empty is auto; anything else is a clear error naming the valid values."""
        from shared.ado.process import AUTO, by_name

        text = str(value or AUTO).strip().lower() or AUTO
        return text if text == AUTO else by_name(text).name

    @model_validator(mode="after")
    def _resolve_threshold_profile(self) -> Settings:
        """Fill the thresholds the user did not set from the profile of the embedder in use
        (``thresholds.profile`` then names it in config_snapshot.yaml)."""
        thresholds = self.pipeline.thresholds
        name = thresholds.profile if "profile" in thresholds.model_fields_set else "auto"
        if name == "auto":
            name = "minilm" if self.resolved_embedder() == "minilm" else "seed"
        self.pipeline.thresholds = thresholds.with_profile(name)
        if self.tagging_model is not None:
            self.pipeline.tagging.scorer = self.tagging_model
        if self.tag_review_below is not None:
            self.pipeline.tagging.review_below = self.tag_review_below
        return self

    # ------------------------------------------------------------------------------------------
    def resolved_storage_backend(self) -> Literal["azure", "local"]:
        if self.storage_backend != "auto":
            return self.storage_backend
        if self.azure_storage_connection or self.azure_blob_service_uri:
            return "azure"
        return "local"

    def resolved_engine(self) -> Literal["offline", "llm"]:
        if self.engine != "auto":
            return self.engine
        return "llm" if (self.openai_api_key or self.azure_openai_endpoint) else "offline"

    def resolved_embedder(self) -> Literal["minilm", "openai"]:
        if self.embedder != "auto":
            return self.embedder
        return "openai" if (self.openai_api_key or self.azure_openai_endpoint) else "minilm"

    def resolved_vector_store(self) -> Literal["embedded", "pinecone"]:
        if self.vector_store != "auto":
            return self.vector_store
        return "pinecone" if self.pinecone_api_key else "embedded"

    def tracing_on(self) -> bool:
        """Runs are traced to Langfuse: ``observability.enable_langfuse`` and both keys set (what
        shared/services.py ``build_tracer`` decides by)."""
        secret = self.langfuse_secret_key.get_secret_value() if self.langfuse_secret_key else ""
        enabled = self.pipeline.observability.enable_langfuse
        return bool(enabled and self.langfuse_public_key and secret)

    def snapshot(self) -> dict[str, Any]:
        """The settings that apply to a run, as used, plus which engines ran (never a secret).

        Left out because the run does not use them: the loaders' (``external_loaders``: a run
        reads the index they built) and the judge's (``eval judge``); the LLM engine's model,
        temperature and windows with the offline engine; the OpenAI embedder's with MiniLM;
        ``observability`` without tracing, and ``store_config_snapshot`` (the file says it). A
        model is the one the calls use: on Azure, the deployment when one is set."""
        from shared.llm.config import chat_model, embedding_model

        data = self.pipeline.model_dump(
            mode="json", by_alias=True, exclude={"external_loaders", "judge"}
        )
        llm = self.resolved_engine() == "llm"
        for agent, keys in LLM_ONLY_KEYS.items():
            if llm:
                data[agent]["model"] = chat_model(self, agent)
            else:
                for key in keys:
                    data[agent].pop(key)
        if self.resolved_embedder() == "openai":
            data["embedding"]["model"] = embedding_model(self)
        else:
            del data["embedding"]
        tracing = self.tracing_on()
        if tracing:
            del data["observability"]["store_config_snapshot"]
        else:
            del data["observability"]
        data["runtime"] = {
            "engine": self.resolved_engine(),
            "embedder": self.resolved_embedder(),
            "vector_store": self.resolved_vector_store(),
            "storage_backend": self.resolved_storage_backend(),
            "tracing": "langfuse" if tracing else "none",
            "run_token_budget": self.run_token_budget,
        }
        return data

    def secret_values(self) -> list[str]:
        """Every secret value configured (for masking error text that may echo one back), with
        the Basic auth form of the ADO PAT (``base64(":" + PAT)``) that a server may echo."""
        import base64

        values = []
        for secret in (
            self.azure_storage_connection,
            self.openai_api_key,
            self.azure_openai_api_key,
            self.pinecone_api_key,
            self.langfuse_secret_key,
            self.azure_devops_pat,
        ):
            value = secret.get_secret_value() if secret is not None else ""
            if value:
                values.append(value)
        if self.azure_storage_connection:  # the key alone, as an SDK error may quote it
            for part in self.azure_storage_connection.get_secret_value().split(";"):
                name, _, value = part.partition("=")
                if name.strip().lower() in ("accountkey", "sharedaccesssignature") and value:
                    values.append(value.strip())
        if self.azure_devops_pat and self.azure_devops_pat.get_secret_value():
            pat = self.azure_devops_pat.get_secret_value()
            values.append(base64.b64encode(f":{pat}".encode()).decode())
        return values


@functools.lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
