"""Bad and unusual input, each through a blob drop and through HTTP, on the local host running the
real function_app.py on Azurite with the offline engine: every upload ends completed or failed with
a clear reason in run.json and the status endpoint; none stays running; a rejected upload leaves
nothing half-written (no raw copy, no transcript, no segments)."""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from devhost.host import LocalHost
from shared.services import app_services
from shared.settings import get_settings
from tests.chaos.harness import (
    REPO,
    blob_run_id,
    call,
    check_run,
    docx_bytes,
    minimal_pdf,
    read_run,
    wait_terminal,
)

KEY = "bad-input-key"
PROJECT = "bad-input"
LIMIT = 1_000_000  # SYNTH_PIPELINE__LIMITS__MAX_UPLOAD_BYTES for this module

# The module's fixture runs every case, by blob and by HTTP (one is a 3,000-turn meeting), through
# the host before its first test: on a loaded 2-core machine that alone can pass pytest's default
# 300 s. A hang guard, not a speed goal: a run that never ends still fails, naming the open runs.
pytestmark = pytest.mark.timeout(900)


def three_thousand_turns() -> bytes:
    lines = (REPO / "samples/transcripts/remote_control_functional_design.txt").read_text()
    turns = [ln for ln in lines.splitlines() if ln.strip()]
    return "\n".join(turns[k % len(turns)] for k in range(3000)).encode() + b"\n"


VTT = b"""WEBVTT

NOTE recorded in the design review

1
00:00:01.000 --> 00:00:04.500
<v Product Owner>The remote must have no more than eight buttons.</v>

2
00:00:05.000 --> 00:00:09.000
<v Engineer>The battery must last at least twelve months.

3
00:00:09.500 --> 00:00:12.000
<v Designer>We should add a lost-remote beeper.
"""

LATIN1 = (
    "Chef de projet: La télécommande doit être légère, moins de cent grammes.\n"
    "Ingénieur: Le boîtier doit résister à une chute d'un mètre.\n"
).encode("latin-1")

UTF16 = codecs.BOM_UTF16_LE + (
    "Product Owner: The remote must support Spanish and Ñandú characters.\n"
    "Engineer: The battery should last twelve months.\n"
).encode("utf-16-le")

LINES = [
    "Product Owner: The remote must have a lost-remote beeper.",
    "Engineer: The battery must last at least twelve months.",
    "Designer: The case should be made of recycled plastic.",
]


@dataclass(frozen=True)
class Case:
    name: str  # the file name (its extension picks the reader)
    data: bytes
    failure: str | None  # a phrase the failure reason must contain; None: must complete
    contains: str | None = None  # text transcript.txt must hold when it completes
    http_status: int | None = None  # expected HTTP status (default: 202 / 422)


CASES = [
    Case("empty.txt", b"", "the file is empty"),
    Case("blank.txt", b"  \n\t \r\n   \n", "holds no text"),
    Case("binary.txt", bytes(range(256)) * 8, "looks binary"),
    Case("garbage.pdf", b"%PDF-1.4\n" + bytes(range(256)) * 4, "could not be read"),
    Case("slides.pptx", b"PK\x03\x04 not supported", "unsupported file type"),
    Case("too-big.txt", b"a" * (LIMIT + 1), "over the limit", http_status=413),
    Case("latin1.txt", LATIN1, None, contains="télécommande doit être légère"),
    Case("utf16.txt", UTF16, None, contains="Ñandú"),
    Case("captions.vtt", VTT, None, contains="Engineer: The battery must last"),
    Case("notes.docx", docx_bytes(LINES), None, contains="recycled plastic"),
    Case("notes.pdf", minimal_pdf(LINES), None, contains="lost-remote beeper"),
    Case("one.txt", b"The remote must have a lost-remote beeper.", None, contains="beeper"),
    Case("long.txt", three_thousand_turns(), None, contains="Project Manager:"),
]


@dataclass
class Outcome:
    case: Case
    channel: str
    run_id: str | None
    http_status: int | None = None
    http_body: Any = None
    run: dict[str, Any] | None = None
    view: dict[str, Any] | None = None


@pytest.fixture(scope="module")
def outcomes(azurite, tmp_path_factory) -> Iterator[dict[tuple[str, str], Outcome]]:
    mp = pytest.MonkeyPatch()
    mp.setenv("AzureWebJobsStorage", azurite.connection_string)
    mp.setenv("SYNTH_STORAGE_BACKEND", "azure")
    mp.setenv("SYNTH_ENGINE", "offline")
    mp.setenv("SYNTH_PIPELINE__LIMITS__MAX_UPLOAD_BYTES", str(LIMIT))
    mp.chdir(tmp_path_factory.mktemp("cwd"))
    get_settings.cache_clear()
    app_services.cache_clear()
    try:
        with LocalHost("function_app", port=0, function_key=KEY, root=REPO) as host:
            store = app_services().store
            results: dict[tuple[str, str], Outcome] = {}
            for case in CASES:
                name = f"blob-{case.name}"
                store.put(f"transcripts/{PROJECT}/{name}", case.data)
                results[(case.name, "blob")] = Outcome(
                    case, "blob", blob_run_id(PROJECT, name, case.data)
                )
                status, body = call(
                    "POST",
                    f"{host.url}/api/runs?project={PROJECT}&name=http-{case.name}",
                    body=case.data,
                    key=KEY,
                )
                run_id = body.get("run_id") if isinstance(body, dict) else None
                results[(case.name, "http")] = Outcome(case, "http", run_id, status, body)
            run_ids = [o.run_id for o in results.values() if o.run_id]
            wait_terminal(store, run_ids, timeout=780)
            host.wait_idle(timeout=120)  # the HTTP uploads' blobs fire the trigger too
            for o in results.values():
                if o.run_id:
                    o.run = read_run(store, o.run_id)
                    status, o.view = call("GET", f"{host.url}/api/runs/{o.run_id}", key=KEY)
                    assert status == 200
            results[("host", "")] = host  # type: ignore[assignment]
            yield results
    finally:
        app_services.cache_clear()
        get_settings.cache_clear()
        mp.undo()


@pytest.mark.parametrize("channel", ["blob", "http"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_input_completes_or_fails_with_a_clear_reason(outcomes, case, channel):
    o = outcomes[(case.name, channel)]
    store = app_services().store
    if channel == "http" and case.http_status == 413:
        # refused before anything is stored: no blob, no run
        assert o.http_status == 413 and o.run_id is None
        assert "over the limit" in o.http_body["error"] and o.http_body["limit_bytes"] == LIMIT
        assert store.list(f"transcripts/{PROJECT}/http-{case.name}") == []
        never = blob_run_id(PROJECT, f"http-{case.name}", case.data)
        assert store.list(f"runs/{never}/") == [] and store.list(f"uploads/{never}/") == []
        return
    assert o.run is not None, o
    if channel == "http":
        assert o.http_status == (422 if case.failure else 202), o.http_body
    prefix = f"runs/{o.run_id}/"
    if case.failure:
        assert o.run["status"] == "failed" and o.run["phase"] == "failed"
        assert case.failure in o.run["failure_reason"], o.run["failure_reason"]
        assert o.view["status"] == "failed" and o.view["failure_reason"] == o.run["failure_reason"]
        assert [e["phase"] for e in o.view["errors"]] == ["start"]
        # nothing half-written: only the status, the error and errors.jsonl
        assert store.list(f"uploads/{o.run_id}/") == []
        assert sorted(p[len(prefix) :] for p in store.list(prefix)) == [
            "errors.jsonl",
            "parts/errors/start-" + o.run_id + ".json",
            "run.json",
        ]
        return
    assert o.run["status"] == "completed", o.run
    assert o.view["status"] == "completed" and o.view["tagged_stories"] == o.run["story_count"]
    check = check_run(store, o.run_id)
    assert check.ok, check.describe()
    transcript = store.get(prefix + "transcript.txt").decode()
    assert case.contains in transcript
    assert "-->" not in transcript and "\ufeff" not in transcript and "\x00" not in transcript
    assert store.list(f"uploads/{o.run_id}/") == [
        f"uploads/{o.run_id}/raw.{case.name.rsplit('.', 1)[1]}"
    ]
    hygiene = json.loads(store.get(prefix + "hygiene.json"))
    assert hygiene["length"] == len(transcript)


def test_three_thousand_turns_make_many_segments(outcomes):
    for channel in ("blob", "http"):
        run = outcomes[("long.txt", channel)].run
        assert run["segment_count"] >= 20 and run["story_count"] >= 20, run
    blob, http = outcomes[("long.txt", "blob")].run, outcomes[("long.txt", "http")].run
    # the same bytes by either channel make the same backlog
    assert (blob["segment_count"], blob["story_count"]) == (
        http["segment_count"],
        http["story_count"],
    )


def test_the_default_limit_is_30_mib_on_both_channels(outcomes, monkeypatch):
    """At the real default: refused over HTTP (413, nothing stored) and failed by blob drop."""
    host = outcomes[("host", "")]
    monkeypatch.delenv("SYNTH_PIPELINE__LIMITS__MAX_UPLOAD_BYTES")
    get_settings.cache_clear()
    app_services.cache_clear()
    try:
        svc = app_services()
        assert svc.settings.pipeline.limits.max_upload_bytes == 30 * 1024 * 1024
        data = b"x" * (30 * 1024 * 1024 + 1)
        status, body = call(
            "POST", f"{host.url}/api/runs?project={PROJECT}&name=huge.txt", body=data, key=KEY
        )
        assert status == 413 and "over the limit" in body["error"], body
        assert svc.store.list(f"transcripts/{PROJECT}/huge.txt") == []

        svc.store.put(f"transcripts/{PROJECT}/huge-drop.txt", data)
        run_id = blob_run_id(PROJECT, "huge-drop.txt", data)
        run = wait_terminal(svc.store, [run_id], timeout=120)[run_id]
        assert run["status"] == "failed"
        assert "31,457,281 bytes, over the limit of 31,457,280" in run["failure_reason"]
        assert svc.store.list(f"uploads/{run_id}/") == []
        assert not svc.store.exists(f"runs/{run_id}/transcript.txt")
        host.wait_idle(timeout=60)
    finally:
        get_settings.cache_clear()
        app_services.cache_clear()
