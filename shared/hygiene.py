"""The hygiene gate (seed 003 stage 0, see docs/ARCHITECTURE.md): what a transcript goes through
after it is normalized and before anything downstream (model call, embedding, trace, log, artifact)
sees it.

Owns:
- **redaction** of secrets with placeholders that keep offsets: every secret span is replaced by a
  placeholder of exactly the same length, newlines inside the span stay where they were, every
  other character keeps its offset, so the line count and every offset into the transcript are the
  same before and after;
- **annotation** of instruction-like spans (prompt injection: "ignore previous instructions", role
  markers, tool-call syntax, "write everything to Azure DevOps"), recorded with offsets and a kind so
  prompts can mark them as untrusted; the transcript is data, never instructions;
- the record of both, ``runs/{run_id}/hygiene.json`` (kinds, offsets and rule ids; never a secret,
  nor a hash of one), read back with ``read_report()``; the LLM prompt builders mark the spans
  with ``find_annotations`` (shared/engine/llm/prompting.py).

Secret patterns: Microsoft's ``microsoft-security-utilities-secret-masker`` (MIT, no dependencies,
offline; the rule set azure-cli masks its output with: Azure identifiable keys, legacy storage and
Service Bus keys, ADO PATs, SAS signatures, JWTs, URL credentials, unclassified 32/64-byte keys),
plus a small set of our own for what it leaves out in prose (OpenAI keys, private key blocks,
``password: ...`` assignments, connection string fields, bearer tokens, keyword-labelled tokens, a
few vendor token formats). A detection we cannot place precisely is widened, never narrowed: the
gate fails closed.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from shared import layout

if TYPE_CHECKING:
    from shared.settings import HygieneConfig
    from shared.storage import ArtifactStore

HYGIENE_VERSION = "hygiene-1"
HYGIENE_ARTIFACT = "hygiene.json"

SecretKind = Literal[
    "api_key",
    "azure_key",
    "connection_string",
    "sas_token",
    "bearer_token",
    "jwt",
    "pat",
    "url_password",
    "password",
    "private_key",
    "token",
    "email",
]
AnnotationKind = Literal[
    "instruction_override",
    "role_override",
    "prompt_exfiltration",
    "tool_directive",
    "role_marker",
    "tool_call_syntax",
]

FILL = "*"
PLACEHOLDER_FORMAT = (
    "'[REDACTED:<kind>]' with '*' inserted before the closing ']' up to the secret's length; "
    "shorter secrets get '[REDACTED]', then '[SECRET]', then '*' x length; newlines inside a "
    "secret are kept and each line's part gets its own placeholder"
)


# ------------------------------------------------------------------------------------------------
# records


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Redaction(_Model):
    """One redacted span of the normalized transcript (its value is never recorded)."""

    kind: SecretKind
    start: int
    end: int
    line: int  # 1-based line of ``start``
    rules: list[str]


class Annotation(_Model):
    """One instruction-like span: part of the transcript (data), to be shown to models as untrusted."""

    kind: AnnotationKind
    start: int
    end: int
    line: int
    rule: str
    text: str  # the span as it stands in the (redacted) transcript


class HygieneReport(_Model):
    """``runs/{run_id}/hygiene.json``."""

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
# placeholders


def placeholder(kind: str, length: int) -> str:
    """A placeholder of exactly ``length`` characters for a secret of ``kind`` (no newline in it)."""
    for label in (f"[REDACTED:{kind}]", "[REDACTED]", "[SECRET]"):
        if len(label) <= length:
            return label[:-1] + FILL * (length - len(label)) + "]"
    return FILL * length


def redact_span(original: str, kind: str) -> str:
    """``original`` replaced by placeholders, newlines kept in place (so lines keep their numbers)."""
    return "\n".join(placeholder(kind, len(part)) if part else "" for part in original.split("\n"))


# ------------------------------------------------------------------------------------------------
# secret detection


@dataclass(frozen=True)
class _Rule:
    rule_id: str
    kind: SecretKind
    pattern: re.Pattern[str]
    group: str = "secret"  # the named group holding the secret, else the whole match
    check: str | None = None  # an extra plausibility check on the value


_TOKEN_CHARS = r"A-Za-z0-9+/=_\-.~"
# a keyword may end a snake/kebab-case name: DB_PASSWORD=, azure-client-secret:, x-api-key:
_NAME_PREFIX = r"(?<![A-Za-z0-9_-])(?:[A-Za-z0-9]+[_-])*"
_KEYWORDS = (
    r"api[-_ ]?key|apikey|access[-_ ]?key|secret[-_ ]?key|client[-_ ]?secret|"
    r"subscription[-_ ]?key|ocp-apim-subscription-key|x-api-key|auth[-_ ]?token|"
    r"access[-_ ]?token|refresh[-_ ]?token|api[-_ ]?token|token|secret|pat|"
    r"personal access token|private[-_ ]?key|signing[-_ ]?key|account[-_ ]?key"
)


@functools.cache
def _builtin_rules() -> tuple[_Rule, ...]:
    i, m, s = re.IGNORECASE, re.MULTILINE, re.DOTALL
    return (
        _Rule(
            "synth/private-key-block",
            "private_key",
            re.compile(
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
                r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*?(?=\n\s*\n)|.*\Z)",
                s,
            ),
            group="",
        ),
        _Rule(
            "synth/openai-key",
            "api_key",
            re.compile(
                r"(?<![A-Za-z0-9_-])(?P<secret>sk-(?:proj-|svcacct-|admin-|ant-)?"
                r"[A-Za-z0-9_-]{20,})"
            ),
        ),
        _Rule(
            "synth/vendor-token",
            "api_key",
            re.compile(
                r"(?<![A-Za-z0-9_])(?P<secret>"
                r"(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
                r"|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}"  # GitHub
                r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
                r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
                r"|AIza[0-9A-Za-z_-]{35}"  # Google API key
                r"|(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}"  # Stripe
                r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid
                r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
                r"|pypi-[A-Za-z0-9_-]{50,}"  # PyPI
                r")(?![A-Za-z0-9_])"
            ),
        ),
        _Rule(
            "synth/connection-string-field",
            "connection_string",
            re.compile(
                r"(?<![A-Za-z])(?:AccountKey|SharedAccessKey|SharedAccessSignature|SharedSecretValue"
                r"|ClientSecret|Password|Pwd|sig)\s*=(?P<secret>[^;\s\"'<>&]+)",
                i,
            ),
            check="not_placeholder",
        ),
        _Rule(
            "synth/url-credentials",
            "url_password",
            re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]+:(?P<secret>[^\s@/]+)@", i),
        ),
        _Rule(
            "synth/bearer",
            "bearer_token",
            re.compile(rf"\b(?:bearer|basic)\s+(?P<secret>[{_TOKEN_CHARS}]{{12,}})", i),
            check="tokenish",
        ),
        _Rule(
            "synth/password-assignment",
            "password",
            re.compile(
                rf"{_NAME_PREFIX}(?:password|passwd|passphrase|pwd)\b[\"']?\s*(?:[:=]|=>)\s*"
                r"(?P<q>[\"'])?(?P<secret>(?(q)[^\"'\n]+|[^\s,;]+))",
                i,
            ),
            check="not_prose_word",
        ),
        _Rule(
            "synth/password-is",
            "password",
            re.compile(
                r"\b(?:password|passwd|passphrase|pwd)\s+(?:is|was|will be)\s+"
                r"(?P<q>[\"'`])?(?P<secret>(?(q)[^\"'`\n]+|[^\s,;]+))",
                i,
            ),
            check="secretish_or_quoted",
        ),
        _Rule(
            "synth/keyword-token",
            "token",
            re.compile(
                rf"{_NAME_PREFIX}(?:{_KEYWORDS})\b[\"']?\s*(?:[:=]|=>|\bis\b|\bwas\b)\s*[\"'`]?"
                rf"(?P<secret>[{_TOKEN_CHARS}]{{16,}})",
                i | m,
            ),
            check="tokenish",
        ),
    )


_EMAIL_RULE = _Rule(
    "synth/email",
    "email",
    re.compile(r"(?<![\w.+-])(?P<secret>[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)"),
)


_PROSE_WORDS = frozenset(
    "is was will be the a an of to for and or in on it this that required optional empty blank "
    "none null missing unset here there below above same changed reset set yes no".split()
)


def _plausible(check: str | None, value: str, match: re.Match[str]) -> bool:
    if check is None:
        return True
    if check == "not_placeholder":
        return not value.startswith(("[REDACTED", "[SECRET", "<", "{", "$")) and value not in (
            "...",
            "*",
        )
    if check == "not_prose_word":  # "password: required" describes a field, it holds no secret
        return bool(match.group("q")) or value.lower().rstrip(".!?:)]") not in _PROSE_WORDS
    if check == "tokenish":  # a long token mixes letters and digits (not an ordinary word)
        stripped = value.rstrip(".")
        return (
            len(stripped) >= 12
            and any(c.isdigit() for c in stripped)
            and any(c.isalpha() for c in stripped)
        )
    if check == "secretish_or_quoted":  # "the password is required" is prose, not a password
        return bool(match.group("q")) or any(not c.isalpha() for c in value.rstrip(".!?:)]"))
    raise ValueError(check)


_MS_KINDS: dict[str, SecretKind] = {
    "CommonAnnotatedSecurityKey": "azure_key",
    "AdoLegacyPat": "pat",
    "AzureStorageAccountLegacyCredentials": "connection_string",
    "AzureMessageLegacyCredentials": "connection_string",
    "AzureCosmosDBLegacyCredentials": "connection_string",
    "LooseSasSecret": "sas_token",
    "GenericJwt": "jwt",
    "UrlCredentials": "url_password",
    "OAuth2BearerToken": "bearer_token",
    "Pkcs12CertificatePrivateKeyBundle": "private_key",
}
# Microsoft rules whose match includes a boundary character on either side (no "refine" group):
# the secret itself is this core, searched for inside the match.
_MS_CORES = {
    "SEC000/000": re.compile(r"[A-Za-z0-9+/]{43}="),
    "SEC000/001": re.compile(r"[A-Za-z0-9+/]{86}=="),
    "SEC000/002": re.compile(r"[0-9a-f]{32}"),
    "SEC101/528": re.compile(r"e[0-9A-Za-z_=-]{23,}\.e[0-9A-Za-z_=-]{23,}\.[0-9A-Za-z_=-]{24,}"),
}


class _Detection(Protocol):
    """What microsoft_security_utilities_secret_masker (untyped) reports for one match."""

    id: str
    name: str
    start: int
    end: int


class _SecretPattern(Protocol):
    """One of that library's regex patterns."""

    id: str

    def get_detections(
        self, input: str, generate_sha256_hashes: bool = False
    ) -> list[_Detection]: ...


@functools.cache
def _microsoft_patterns() -> tuple[_SecretPattern, ...]:
    from microsoft_security_utilities_secret_masker import load_regex_patterns_from_json_file

    patterns = load_regex_patterns_from_json_file(
        "PreciselyClassifiedSecurityKeys.json"
    ) | load_regex_patterns_from_json_file("UnclassifiedPotentialSecurityKeys.json")
    # the whole-input-anchored AAD legacy rule never applies to a transcript
    return tuple(sorted((p for p in patterns if p.id != "SEC101/101"), key=lambda p: p.id))


def _ms_kind(name: str) -> SecretKind:
    if name in _MS_KINDS:
        return _MS_KINDS[name]
    return "azure_key" if name.startswith(("Azure", "Aad")) else "api_key"


@dataclass
class _Hit:
    start: int
    end: int
    kind: SecretKind
    rule: str


_CANDIDATE = re.compile(r"\S{16,}")


def _candidate_windows(text: str) -> list[tuple[int, int]]:
    """Where a Microsoft rule can match: every one of them needs a run of 16+ non-space characters
    (a key, a token, a URL with credentials), and none spans more than two lines. So the rules run
    on the lines holding such a run, each with the lines around it, instead of the whole text
    (meeting text has few such lines; it makes the gate about 10x faster)."""
    windows: list[tuple[int, int]] = []
    for m in _CANDIDATE.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        start = text.rfind("\n", 0, line_start - 1) + 1 if line_start else 0  # the line before
        line_end = text.find("\n", m.end())
        end = -1 if line_end < 0 else text.find("\n", line_end + 1)  # the end of the line after
        end = len(text) if end < 0 else end
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    return windows


def _microsoft_hits(text: str) -> Iterable[_Hit]:
    seen: set[tuple[int, int, str]] = set()
    for w_start, w_end in _candidate_windows(text):
        window = text[w_start:w_end]
        for pattern in _microsoft_patterns():
            for det in pattern.get_detections(window, False):
                start, end = det.start + w_start, det.end + w_start
                core = _MS_CORES.get(det.id)
                if core is not None:
                    found = core.search(text, start, end)
                    if found is not None:  # otherwise keep the wider span: fail closed
                        start, end = found.span()
                if end > start and (start, end, det.id) not in seen:
                    seen.add((start, end, det.id))
                    yield _Hit(start, end, _ms_kind(det.name), f"{det.id} {det.name}")


def _builtin_hits(text: str, rules: Iterable[_Rule]) -> Iterable[_Hit]:
    for rule in rules:
        for match in rule.pattern.finditer(text):
            if rule.group:
                value = match.group(rule.group)
                if value is None:
                    continue
                start, end = match.span(rule.group)
            else:
                value, (start, end) = match.group(0), match.span()
            if end > start and _plausible(rule.check, value, match):
                yield _Hit(start, end, rule.kind, rule.rule_id)


_KIND_RANK = {
    kind: rank
    for rank, kind in enumerate(
        (
            "private_key",
            "connection_string",
            "sas_token",
            "pat",
            "url_password",
            "password",
            "bearer_token",
            "jwt",
            "azure_key",
            "api_key",
            "token",
            "email",
        )
    )
}


def find_secrets(text: str, *, emails: bool = False) -> list[Redaction]:
    """Secret spans of ``text``, overlapping detections merged, in order."""
    rules: list[_Rule] = list(_builtin_rules())
    if emails:
        rules.append(_EMAIL_RULE)
    hits = sorted(
        [*_microsoft_hits(text), *_builtin_hits(text, rules)], key=lambda h: (h.start, -h.end)
    )
    merged: list[tuple[int, int, SecretKind, list[str]]] = []
    for hit in hits:
        if merged and hit.start < merged[-1][1]:
            start, end, kind, ids = merged[-1]
            if _KIND_RANK[hit.kind] < _KIND_RANK[kind]:
                kind = hit.kind  # the most specific name for what was found
            merged[-1] = (start, max(end, hit.end), kind, sorted({*ids, hit.rule}))
        else:
            merged.append((hit.start, hit.end, hit.kind, [hit.rule]))
    return [
        Redaction(kind=kind, start=start, end=end, line=text.count("\n", 0, start) + 1, rules=ids)
        for start, end, kind, ids in merged
    ]


def redact(text: str, redactions: list[Redaction]) -> str:
    """``text`` with each span replaced by its placeholder: same length, same line breaks."""
    out: list[str] = []
    pos = 0
    for r in redactions:
        out.append(text[pos : r.start])
        out.append(redact_span(text[r.start : r.end], r.kind))
        pos = r.end
    out.append(text[pos:])
    result = "".join(out)
    assert len(result) == len(text)  # the invariant every offset downstream relies on
    return result


# ------------------------------------------------------------------------------------------------
# instruction-like spans


@dataclass(frozen=True)
class _Cue:
    rule_id: str
    kind: AnnotationKind
    pattern: re.Pattern[str]
    whole_line: bool = False


@functools.cache
def _cues() -> tuple[_Cue, ...]:
    i, m = re.IGNORECASE, re.MULTILINE
    prior = r"(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system)"
    orders = r"(?:instructions?|prompts?|rules|directions|directives|guidelines|messages|context)"
    return (
        _Cue(
            "ignore-previous",
            "instruction_override",
            re.compile(
                rf"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+|every\s+)?"
                rf"(?:of\s+)?(?:the\s+|my\s+|your\s+|these\s+|those\s+)?(?:{prior}\s+)?{orders}\b",
                i,
            ),
        ),
        _Cue(
            "disregard-above",
            "instruction_override",
            re.compile(
                r"\b(?:ignore|disregard|forget)\s+(?:all\s+of\s+|everything\s+)?"
                r"(?:the\s+)?(?:above|everything\s+(?:above|before)|what\s+(?:you\s+were|i)\s+(?:told|said))",
                i,
            ),
        ),
        _Cue(
            "new-instructions",
            "instruction_override",
            re.compile(
                r"\b(?:new|updated|real|actual)\s+instructions?\s*:|\bdo\s+not\s+follow\s+"
                r"(?:the|your|any)\s+(?:previous\s+|original\s+)?(?:instructions|rules)",
                i,
            ),
        ),
        _Cue(
            "you-are-now",
            "role_override",
            re.compile(
                r"\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\b|\bpretend\s+(?:to\s+be|you\s+are)\b"
                r"|\b(?:act|behave|respond)\s+as\s+(?:if\s+you\s+were\s+)?(?:an?\s+|the\s+)?"
                r"(?:ai|assistant|language\s+model|llm|system|admin(?:istrator)?|developer|root|dan)\b"
                r"|\broleplay\s+as\b|\bdeveloper\s+mode\b|\bjailbreak|\bDAN\s+mode\b",
                i,
            ),
        ),
        _Cue(
            "system-prompt",
            "prompt_exfiltration",
            re.compile(
                r"\b(?:reveal|print|show|repeat|output|leak|dump|tell\s+me|give\s+me)\s+(?:me\s+)?"
                r"(?:your|the)\s+(?:system\s+prompt|hidden\s+prompt|instructions|prompt|"
                r"api[-\s]?keys?|secrets?|credentials|environment\s+variables)"
                r"|\bsystem\s+prompt\b",
                i,
            ),
        ),
        _Cue(
            "write-to-ado",
            "tool_directive",
            re.compile(
                r"\b(?:write|push|send|post|sync|create|file|put|upload|commit|save|delete|remove|close)"
                r"\s+(?:(?:everything|all(?:\s+of\s+(?:it|this|them))?|it|this|them|these|every\s+\w+"
                r"|the\s+(?:whole\s+)?\w+|all\s+(?:the\s+)?\w+)\s+)?(?:directly\s+|straight\s+)?"
                r"(?:to|into|in|from)\s+(?:azure\s+devops|ado|the\s+backlog|jira|production)\b"
                r"|\b(?:delete|remove|close)\s+(?:all|every)\s+(?:the\s+)?"
                r"(?:work\s+items|stories|user\s+stories|epics|features|tickets)\b",
                i,
            ),
        ),
        _Cue(
            "role-marker",
            "role_marker",
            re.compile(
                r"^[ \t]*(?:[A-Z][\w .'-]{0,40}:[ \t]*)?(?:#{1,4}[ \t]*)?(?:system|assistant)(?:[ \t]+(?:prompt|message))?[ \t]*:"
                r"|<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|\[/?INST\]|<<\/?SYS>>"
                r"|^[ \t]*#{2,}[ \t]*(?:instructions?|system)\b",
                i | m,
            ),
            whole_line=True,
        ),
        _Cue(
            "tool-call",
            "tool_call_syntax",
            re.compile(
                r"\"(?:tool_calls?|function_call|tool_use)\"\s*:|</?(?:tool_call|function_calls?|"
                r"invoke|tool_use)\b|<function[=\s]|\bfunctions\.[a-z_]\w*\s*\("
                r"|\"name\"\s*:\s*\"[\w.-]+\"\s*,\s*\"(?:arguments|parameters|input)\"\s*:",
                i,
            ),
            whole_line=True,
        ),
    )


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return line_start, len(text) if line_end < 0 else line_end


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence(s) of the line that contain [start, end)."""
    from shared.textio import sentence_spans

    line_start, line_end = _line_bounds(text, start, max(start, end - 1))
    spans = [
        s for s in sentence_spans(text, line_start, line_end) if s.start < end and start < s.end
    ]
    if not spans:
        return start, end
    return min(start, spans[0].start), max(end, spans[-1].end)


def find_annotations(text: str) -> list[Annotation]:
    """Instruction-like spans, widened to their sentence (or line), merged per kind, in order."""
    found: list[tuple[int, int, AnnotationKind, str]] = []
    for cue in _cues():
        for match in cue.pattern.finditer(text):
            if cue.whole_line:
                start, end = _line_bounds(text, match.start(), match.end())
            else:
                start, end = _sentence_bounds(text, match.start(), match.end())
            found.append((start, end, cue.kind, cue.rule_id))
    found.sort()
    merged: list[tuple[int, int, AnnotationKind, str]] = []
    for start, end, kind, rule in found:
        same = [k for k, m in enumerate(merged) if m[2] == kind and start <= m[1] and m[0] <= end]
        if same:
            s, e, _, r = merged[same[-1]]
            merged[same[-1]] = (min(s, start), max(e, end), kind, r)
        else:
            merged.append((start, end, kind, rule))
    return [
        Annotation(
            kind=kind,
            start=start,
            end=end,
            line=text.count("\n", 0, start) + 1,
            rule=rule,
            text=text[start:end],
        )
        for start, end, kind, rule in sorted(merged)
    ]


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
# for the prompt builders


def hygiene_path(run_id: str) -> str:
    return layout.run_file(run_id, HYGIENE_ARTIFACT)


def read_report(store: ArtifactStore, run_id: str) -> HygieneReport | None:
    """The run's hygiene report, or None for a run started before the gate existed."""
    from shared.storage import NotFound

    try:
        return HygieneReport.model_validate_json(store.get(hygiene_path(run_id)))
    except NotFound:
        return None
