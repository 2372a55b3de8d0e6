"""Secrets in text, found and redacted with placeholders that keep offsets (the hygiene gate's
first half, ``shared.text.hygiene``).

Every secret span is replaced by a placeholder of exactly the same length, newlines inside the span
stay where they were, every other character keeps its offset, so the line count and every offset
into the text are the same before and after.

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
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

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

FILL = "*"
PLACEHOLDER_FORMAT = (
    "'[REDACTED:<kind>]' with '*' inserted before the closing ']' up to the secret's length; "
    "shorter secrets get '[REDACTED]', then '[SECRET]', then '*' x length; newlines inside a "
    "secret are kept and each line's part gets its own placeholder"
)


class Redaction(BaseModel):
    """One redacted span of the normalized transcript (its value is never recorded)."""

    model_config = ConfigDict(extra="forbid")

    kind: SecretKind
    start: int
    end: int
    line: int  # 1-based line of ``start``
    rules: list[str]


def placeholder(kind: str, length: int) -> str:
    """A placeholder of exactly ``length`` characters for a secret of ``kind`` (no newline in it)."""
    for label in (f"[REDACTED:{kind}]", "[REDACTED]", "[SECRET]"):
        if len(label) <= length:
            return label[:-1] + FILL * (length - len(label)) + "]"
    return FILL * length


def redact_span(original: str, kind: str) -> str:
    """``original`` replaced by placeholders, newlines kept in place (so lines keep their numbers)."""
    return "\n".join(placeholder(kind, len(part)) if part else "" for part in original.split("\n"))


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
