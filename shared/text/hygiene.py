"""The hygiene gate (seed 003 stage 0, see docs/ARCHITECTURE.md): what a transcript goes through
after it is normalized and before anything downstream (model call, embedding, trace, log, artifact)
sees it.

Owns:
- **redaction** of secrets (``shared.text.secrets``) with placeholders that keep offsets: the line
  count and every offset into the transcript are the same before and after;
- **annotation** of instruction-like spans (``shared.text.instructions``), recorded with offsets and
  a kind so prompts can mark them as untrusted; the transcript is data, never instructions;
- the record of both, ``runs/{run_id}/hygiene.json`` (kinds, offsets and rule ids; never a secret,
  nor a hash of one), read back with ``read_report()``; the LLM prompt builders mark the spans
  with ``find_annotations`` (shared/engine/llm/prompting.py);
- the same redaction for other text than the transcript (``redact_text``: backlog items,
  architecture documents) and for error messages (``scrub``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from shared import layout
from shared.text.instructions import Annotation, find_annotations
from shared.text.secrets import PLACEHOLDER_FORMAT, Redaction, find_secrets, redact

if TYPE_CHECKING:
    from shared.settings import HygieneConfig
    from shared.storage import ArtifactStore

HYGIENE_VERSION = "hygiene-1"


class HygieneReport(BaseModel):
    """``runs/{run_id}/hygiene.json``."""

    model_config = ConfigDict(extra="forbid")

    version: str = HYGIENE_VERSION
    sanitized_sha256: str
    length: int
    lines: int
    redaction_count: int
    redactions_by_kind: dict[str, int]
    redactions: list[Redaction]
    annotation_count: int
    annotations: list[Annotation]
    placeholder: str = PLACEHOLDER_FORMAT
    settings: dict[str, bool] = Field(default_factory=dict)


@dataclass(frozen=True)
class GateResult:
    text: str  # the sanitized transcript: same length and line breaks as the input
    report: HygieneReport


# ------------------------------------------------------------------------------------------------
# the gate


def apply_gate(text: str, config: HygieneConfig | None = None) -> GateResult:
    """Redact, then annotate (on the redacted text, so no annotation can quote a secret)."""
    if config is None:
        from shared.settings import HygieneConfig

        config = HygieneConfig()
    redactions = find_secrets(text, emails=config.redact_emails) if config.redact_secrets else []
    sanitized = redact(text, redactions)
    annotations = find_annotations(sanitized) if config.annotate_instructions else []
    by_kind: dict[str, int] = {}
    for r in redactions:
        by_kind[r.kind] = by_kind.get(r.kind, 0) + 1
    report = HygieneReport(
        sanitized_sha256=hashlib.sha256(sanitized.encode()).hexdigest(),
        length=len(sanitized),
        lines=sanitized.count("\n") + 1,
        redaction_count=len(redactions),
        redactions_by_kind=by_kind,
        redactions=redactions,
        annotation_count=len(annotations),
        annotations=annotations,
        settings=config.model_dump(),
    )
    return GateResult(sanitized, report)


# ------------------------------------------------------------------------------------------------
# other text than the transcript: backlog items, architecture documents, error messages


def redact_text(text: str, config: HygieneConfig | None = None) -> tuple[str, int]:
    """``text`` with its secrets redacted as the gate redacts the transcript (same placeholders,
    same length), and how many were found. What the loaders put in the index and the ingestion
    files, and what the prompt builders show the model, goes through this."""
    if config is not None and not config.redact_secrets:
        return text, 0
    emails = bool(config.redact_emails) if config is not None else False
    found = find_secrets(text, emails=emails) if text else []
    return (redact(text, found), len(found)) if found else (text, 0)


SCRUB_GRAM = 8


def scrub(text: str, known: Iterable[str] = ()) -> str:
    """An error message made safe to answer or record: every ``known`` secret value (the app's
    configured keys) replaced by ``***``, and any run of ``SCRUB_GRAM`` or more characters taken
    from one (a secret an error message clipped in two), Basic/Bearer credentials masked, then
    anything else that looks like a secret redacted."""
    secrets = sorted({k for k in known if k and len(k) >= 4}, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, "***")
    grams = {s[i : i + SCRUB_GRAM] for s in secrets for i in range(len(s) - SCRUB_GRAM + 1)}
    if grams:
        masked = [False] * len(text)
        for i in range(len(text) - SCRUB_GRAM + 1):
            if text[i : i + SCRUB_GRAM] in grams:
                masked[i : i + SCRUB_GRAM] = [True] * SCRUB_GRAM
        if any(masked):
            out, i = [], 0
            while i < len(text):
                if masked[i]:
                    while i < len(text) and masked[i]:
                        i += 1
                    out.append("***")
                else:
                    out.append(text[i])
                    i += 1
            text = "".join(out)
    text = re.sub(r"(?i)\b(basic|bearer)\s+[A-Za-z0-9+/=._-]{8,}", r"\1 ***", text)
    return redact_text(text)[0]


# ------------------------------------------------------------------------------------------------
# the report, read back


def read_report(store: ArtifactStore, run_id: str) -> HygieneReport | None:
    """The run's hygiene report, or None for a run started before the gate existed."""
    from shared.storage import NotFound

    try:
        return HygieneReport.model_validate_json(store.get(layout.hygiene_report(run_id)))
    except NotFound:
        return None
