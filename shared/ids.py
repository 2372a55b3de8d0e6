"""Identifiers: deterministic run ids and the formats every id and artifact name must match.

Anything that becomes part of a storage path is validated against a strict pattern here, so nothing
that could walk the storage paths (``..``, slashes, odd characters) gets through the HTTP layer.
"""

from __future__ import annotations

import hashlib
import re

from shared.errors import SynthesizerError

RUN_ID_RE = re.compile(r"^run-[0-9a-f]{20}$")
PROJECT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
SEGMENT_ID_RE = re.compile(r"^seg-[0-9]{4}$")
STORY_ID_RE = re.compile(r"^seg-[0-9]{4}-st[0-9]{2,3}$")
# Final artifacts of a run live flat under runs/{run_id}/ and are named like "segments.jsonl".
ARTIFACT_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,60}\.(json|jsonl|yaml|txt|png)$")
UPLOAD_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,120}$")


class InvalidIdentifier(SynthesizerError, ValueError):
    """An identifier or name from outside does not match its required format."""


def content_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_run_id(blob_path: str, content_hash: str) -> str:
    """The same upload (same path, same bytes) always gets the same run id, so it never starts twice."""
    digest = hashlib.sha256(f"{blob_path}\n{content_hash}".encode()).hexdigest()
    return f"run-{digest[:20]}"


def make_attempt_id(previous_run_id: str, attempt: int) -> str:
    """The id of attempt ``attempt`` that runs again ``previous_run_id`` (the attempt before it).

    Derived, not random: two retries of the same run at the same moment (a double click, a
    duplicated request, a re-upload racing a retry) compute the same id, and the run is created
    once (create-once ``run.json``)."""
    digest = hashlib.sha256(f"{previous_run_id}\nattempt {attempt}".encode()).hexdigest()
    return f"run-{digest[:20]}"


def normalize_etag(etag: str | None) -> str | None:
    """An ETag as recorded: without quotes or a weak prefix (the Azure SDK quotes it, the
    Functions hosts hand it to a blob trigger either way); empty means not known."""
    if etag is None:
        return None
    value = etag.strip()
    if value.startswith("W/"):
        value = value[2:]
    value = value.strip('"').strip()
    return value or None


def segment_id(order: int) -> str:
    return f"seg-{order:04d}"


def story_id(seg_id: str, n: int) -> str:
    return f"{seg_id}-st{n:02d}"


def segment_of_story(story: str) -> str:
    """'seg-0004-st02' -> 'seg-0004'."""
    return story.rsplit("-st", 1)[0]


def feature_id(seg_id: str, n: int) -> str:
    return f"{seg_id}-ft{n:02d}"


def epic_id(run_id: str, theme: str) -> str:
    """Epics can be shared by several segments: the id comes from the theme, not the segment."""
    return "ep-" + hashlib.sha256(f"{run_id}\n{theme.strip().lower()}".encode()).hexdigest()[:10]


def _check(value: str, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise InvalidIdentifier(f"invalid {what}: {value!r} does not match {pattern.pattern}")
    return value


def check_run_id(value: str) -> str:
    return _check(value, RUN_ID_RE, "run_id")


def check_project(value: str) -> str:
    return _check(value, PROJECT_RE, "project")


def check_artifact_name(value: str) -> str:
    return _check(value, ARTIFACT_NAME_RE, "artifact name")


def check_upload_name(value: str) -> str:
    _check(value, UPLOAD_NAME_RE, "file name")
    if ".." in value:
        raise InvalidIdentifier(f"invalid file name: {value!r} contains '..'")
    return value
