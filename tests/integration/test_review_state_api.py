"""The saved review through the HTTP API functions, function_app.py's routes (the local host's
router, in-process) and the CLI: GET and PUT with ETags, stale saves, kept versions, the review
bundle, the dry run and a write against the fake ADO server carrying the edits, who decided, and
the CSV / Markdown export. Each test stores its own small completed run (tests/support/
review_run.py) in its own folder."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest

import function_app
from devhost.host import LocalHost
from devhost.standins.fake_ado import FakeAdo
from shared import api, layout
from shared.ado import ops
from shared.cli import main as cli
from shared.review import render
from shared.review.plan import build_plan
from shared.storage import read_jsonl
from shared.storage.local import LocalFolderStore
from shared.writer.execute import WriteResult
from tests.chaos.harness import REPO
from tests.support.pipeline import fake_services
from tests.support.review_run import UNQUOTED_TEXT, review_backlog, store_run

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
KEY = "review-state-key"


class Clock:
    """One minute later at every call."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


@pytest.fixture
def svc(tmp_path):
    services = fake_services(LocalFolderStore(tmp_path / "store"), bus=None)
    services.clock = Clock()
    return services


@pytest.fixture
def run(svc):
    backlog, ids = review_backlog()
    return store_run(svc, backlog), ids, backlog


@pytest.fixture
def fake():
    with FakeAdo() as server:
        server.seed_sample()
        yield server


@pytest.fixture
def client(fake):
    with fake.client(sleep=lambda s: None) as c:
        yield c


def put(svc, run_id, body, if_match=None, by="ana@example.org"):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return api.put_review_state(svc, run_id, raw, if_match, by)


def tree_stories(bundle):
    tree = bundle["tree"]
    out = [s for e in tree["epics"] for f in e["features"] for s in f["stories"]]
    out += [s for p in tree["existing_parents"] for f in p["features"] for s in f["stories"]]
    out += [s for p in tree["existing_parents"] for s in p["stories"]]
    return {s["item"]["item_id"]: s for s in out}


# ------------------------------------------------------------------------------------------------
# GET and PUT


def test_a_run_never_reviewed_is_version_0(svc, run):
    run_id, _, _ = run
    response = api.get_review_state(svc, run_id)
    assert response.status == 200 and "ETag" not in response.headers
    assert response.json() == {
        "run_id": run_id,
        "version": 0,
        "saved_at": None,
        "saved_by": None,
        "decisions": {},
        "epics": {},
        "features": {},
        "stories": {},
        "etag": None,
    }


def test_save_reload_versions_and_a_stale_save(svc, run):
    run_id, ids, _ = run
    show, louder = ids["show"], ids["louder"]
    sent = {
        "decisions": {ids["mute"]: "skip"},
        "epics": {ids["epic"]: {"title": "Remote control display"}},
        "stories": {
            show: {
                "title": "  Show the channel   number on the LCD ",
                "acceptance_criteria": ["A"],
            },
            ids["light"]: {"open_question": True},
        },
        # server fields are ignored
        "version": 41,
        "saved_by": "mallory",
        "saved_at": "2020-01-01T00:00:00Z",
    }
    first = put(svc, run_id, sent)
    assert first.status == 200, first.json()
    etag1 = first.headers["ETag"]
    body = first.json()
    assert body["etag"] == etag1 and body["version"] == 1
    assert body["saved_by"] == "ana@example.org" and body["saved_at"] == "2026-03-01T09:01:00Z"
    assert body["stories"] == {
        show: {"title": "Show the channel number on the LCD", "acceptance_criteria": ["A"]},
        ids["light"]: {"open_question": True},
    }
    assert body["decisions"] == sent["decisions"] and body["epics"] == sent["epics"]

    reloaded = api.get_review_state(svc, run_id)  # a reload shows exactly what was saved
    assert reloaded.json() == body and reloaded.headers["ETag"] == etag1

    # Bo loaded version 1 too and saves first
    second = put(svc, run_id, {**body, "decisions": {louder: "replace"}}, etag1, by="bo")
    assert second.status == 200 and second.json()["version"] == 2
    etag2 = second.headers["ETag"]
    assert etag2 != etag1 and second.json()["saved_by"] == "bo"

    # Ana saves with the ETag she loaded: refused, with what is saved now
    stale = put(svc, run_id, {"decisions": {louder: "keep_existing"}}, etag1)
    assert stale.status == 409
    answer = stale.json()
    assert answer["code"] == "stale_review"
    assert answer["error"].startswith("someone else saved this review since you loaded it")
    assert "version 2, saved by bo" in answer["error"]
    assert answer["current"] == second.json() and answer["etag"] == etag2
    assert stale.headers["ETag"] == etag2
    # no ETag while one exists is stale too
    blind = put(svc, run_id, {"decisions": {}})
    assert blind.status == 409 and blind.json()["code"] == "stale_review"
    assert api.get_review_state(svc, run_id).json() == second.json()  # nothing overwritten

    # a client that cannot set headers sends the ETag in the body; the header wins over it
    header_wins = put(svc, run_id, {"etag": etag2, "decisions": {}}, if_match=etag1)
    assert header_wins.status == 409
    third = put(svc, run_id, {"etag": etag2, "decisions": {louder: "both"}})
    assert third.status == 200 and third.json()["version"] == 3

    kept = svc.store.list(layout.review_versions_prefix(run_id))
    assert kept == [layout.review_version(run_id, 1), layout.review_version(run_id, 2)]
    assert json.loads(svc.store.get(kept[0]))["decisions"] == {ids["mute"]: "skip"}
    assert json.loads(svc.store.get(kept[1]))["decisions"] == {louder: "replace"}

    # the first save of another run with a made-up ETag: nothing to match
    other, _ = review_backlog("run-" + "b" * 20)
    other_id = store_run(svc, other)
    made_up = put(svc, other_id, {}, '"0x8DC0000000000"')
    assert made_up.status == 409 and made_up.json()["current"]["version"] == 0
    assert made_up.json()["etag"] is None


def test_bad_saves_are_refused_with_their_problems(svc, run):
    run_id, ids, _ = run
    cases = [
        (b"{not json", "not JSON"),
        (b"[]", "not an object"),
        ({"owner": "me"}, "owner: Extra inputs are not permitted"),
        ({"stories": {ids["show"]: {"title": ""}}}, f"stories.{ids['show']}.title"),
        ({"stories": {"seg-0009-st01": {"title": "x"}}}, "not a user story of this run"),
        ({"decisions": {ids["show"]: "both"}}, "needs an existing work item"),
        ({"run_id": "run-" + "c" * 20}, "is not " + run_id),
        ({"etag": 5}, "etag: not a string"),
    ]
    for body, problem in cases:
        response = put(svc, run_id, body)
        assert response.status == 400, (body, response.json())
        assert any(problem in p for p in response.json()["problems"]), response.json()
    too_big = put(svc, run_id, b"{" + b" " * (api.REVIEW_BODY_LIMIT + 1) + b"}")
    assert too_big.status == 413
    assert put(svc, "run-" + "0" * 20, {}).status == 404
    assert put(svc, "../../etc", {}).status == 400
    assert api.get_review_state(svc, "run-" + "0" * 20).status == 404
    assert api.get_review_state(svc, "run-..").status == 400
    running, _ = review_backlog("run-" + "d" * 20)
    running_id = store_run(svc, running, status="running")
    refused = put(svc, running_id, {})
    assert refused.status == 409 and refused.json()["code"] == "not_completed"
    assert api.get_review_state(svc, run_id).json()["version"] == 0  # nothing was saved


# ------------------------------------------------------------------------------------------------
# the review bundle


def test_the_bundle_shows_the_edited_backlog(svc, run):
    run_id, ids, _ = run
    show, beep, light, mute = ids["show"], ids["beep"], ids["light"], ids["mute"]
    child = f"{show}-x1"
    saved = put(
        svc,
        run_id,
        {
            "decisions": {child: "accept"},
            "epics": {ids["epic"]: {"title": "Remote control display"}},
            "stories": {
                show: {
                    "title": "Show the channel number on the LCD",
                    "acceptance_criteria": ["The LCD shows the channel number."],
                },
                child: {
                    "split_from": show,
                    "quotes": [1],
                    "title": "Show the input source",
                    "acceptance_criteria": ["The input source is shown."],
                },
                light: {"merged_into": beep},
                mute: {"open_question": True},
            },
        },
    )
    assert saved.status == 200, saved.json()
    bundle = api.get_review(svc, run_id).json()
    assert bundle["review_state"] == {
        "version": 1,
        "etag": saved.headers["ETag"],
        "saved_at": saved.json()["saved_at"],
        "saved_by": "ana@example.org",
        "decisions": {child: "accept"},
    }
    assert set(bundle["edited"]) == {ids["epic"], show, child, beep}
    assert bundle["tree"]["epics"][0]["item"]["title"] == "Remote control display"
    nodes = tree_stories(bundle)
    assert light not in nodes and mute not in nodes and child in nodes
    assert nodes[show]["item"]["title"] == "Show the channel number on the LCD"
    assert nodes[child]["tag"]["needs_review"] is True

    stories = bundle["stories"]
    assert stories[show]["original"] == {
        "title": "Show the channel number",
        "description": "As a user, I want show the channel number.",
        "acceptance_criteria": [
            "The display shows the channel number.",
            "The input source is shown.",
        ],
    }
    assert [a["text"] for a in stories[show]["generated_acs"]] == [
        "The LCD shows the channel number."
    ]
    assert stories[child]["split_from"] == show and stories[child]["original"] is None
    assert [q["text"] for q in stories[child]["quotes"]] == [
        "It should also show the input source when it changes."
    ]
    assert len(stories[show]["quotes"]) == 2
    assert stories[beep]["merged_from"] == [light]
    assert "Maybe a backlight for the keypad, we are not sure yet." in [
        q["text"] for q in stories[beep]["quotes"]
    ]
    segment = bundle["segments"][0]
    for info in stories.values():  # offsets of united and moved quotes still point at the text
        for q in info["quotes"]:
            assert segment["text"][q["segment_start"] : q["segment_end"]] == q["text"]
    assert stories[ids["battery"]]["original"] is None
    [question] = bundle["open_question_stories"]
    assert question["story_id"] == mute and question["feature_id"] == ids["f2"]
    assert question["title"] == "Mute by voice"
    assert question["quotes"][0]["speaker"] == "Ana"
    assert bundle["originals"][mute]["title"] == "Mute by voice"


def test_a_sentence_no_story_quoted_becomes_a_story_that_is_written(svc, run, fake, client):
    run_id, ids, _ = run
    bundle = api.get_review(svc, run_id).json()
    [said] = bundle["coverage"]["unquoted"]
    assert said["text"] == UNQUOTED_TEXT and said["taken_by"] is None
    assert said["draft"] == {  # the offline drafter's story of the sentence, for the page
        "title": "Do not go above level forty",
        "description": "As a user, I want the product never to go above level forty.",
        "acceptance_criteria": ["The volume never goes above level forty."],
    }
    # said right after the keypad backlight, the story the page offers first
    assert said["nearest_story"] == ids["light"]
    span = {"start": said["start"], "end": said["end"]}
    new = f"{ids['f2']}-n1"
    story = {"feature_id": ids["f2"], "title": "Cap the volume", "added_quotes": [span]}

    refused = put(
        svc, run_id, {"stories": {new: {**story, "added_quotes": [{"start": 0, "end": 4}]}}}
    )
    assert refused.status == 400
    assert "not one of the run's sentences that no story quotes" in " ".join(
        refused.json()["problems"]
    )

    saved = put(svc, run_id, {"stories": {new: story}, "decisions": {new: "accept"}})
    assert saved.status == 200, saved.json()
    bundle = api.get_review(svc, run_id).json()
    assert bundle["coverage"]["unquoted"][0]["taken_by"] == new
    info = bundle["stories"][new]
    assert info["added_in_review"] is True and info["decision_tag"] == "new"
    assert [(q["text"], q["speaker"]) for q in info["quotes"]] == [(UNQUOTED_TEXT, "Cy")]
    segment = bundle["segments"][0]
    q = info["quotes"][0]
    assert segment["text"][q["segment_start"] : q["segment_end"]] == UNQUOTED_TEXT
    assert tree_stories(bundle)[new]["tag"]["needs_review"] is True

    written = api.write_run(
        svc, run_id, json.dumps({"dry_run": False}).encode(), ado_client=client, requester="bo"
    )
    assert written.status == 200, written.json()
    results = {r["item_id"]: r for r in written.json()["results"]}
    assert results[new]["status"] == "created"
    assert fake.item(results[new]["ado_id"])["fields"][ops.TITLE] == "Cap the volume"


# ------------------------------------------------------------------------------------------------
# dry run and write


def test_dry_run_and_write_carry_the_edits_and_who_decided(svc, run, fake, client):
    run_id, ids, backlog = run
    show, louder, mute, beep = ids["show"], ids["louder"], ids["mute"], ids["beep"]
    saved = put(
        svc,
        run_id,
        {
            "decisions": {mute: "skip", louder: "accept"},
            "stories": {
                show: {
                    "title": "Show the channel number on the LCD",
                    "acceptance_criteria": [
                        "The LCD shows the channel number.",
                        "The number stays for 3 s.",
                    ],
                },
                louder: {
                    "acceptance_criteria": [
                        "Voice control can be switched off.",
                        "Saying quieter lowers the volume by one step.",
                    ]
                },
            },
        },
    ).json()
    request = {"decisions": {beep: "skip", louder: "accept"}}
    dry = api.write_run(
        svc, run_id, json.dumps(request).encode(), ado_client=client, requester="bo"
    )
    assert dry.status == 200, dry.json()
    plan = {p["item_id"]: p for p in dry.json()["plan"]}
    assert plan[show]["title"] == "Show the channel number on the LCD"
    assert plan[louder]["action"] == "patch" and plan[louder]["existing_id"] == 1126
    assert plan[louder]["criteria"] == ["Saying quieter lowers the volume by one step."]
    assert plan[beep]["reason"] == "skipped by the reviewer"  # the request's decision
    assert plan[mute]["reason"] == "skipped by the reviewer"  # the saved review's
    assert (plan[mute]["decided_by"], plan[mute]["decided_at"]) == (
        "ana@example.org",
        saved["saved_at"],
    )
    assert plan[beep]["decided_by"] == plan[louder]["decided_by"] == "bo"  # the request wins
    assert plan[show]["decided_by"] == "bo" and plan[show]["decided_at"] != saved["saved_at"]
    unedited = {
        p.item_id: p.signature for p in build_plan(run_id, backlog.items, backlog.records).items
    }
    assert plan[show]["signature"] != unedited[show]
    assert plan[ids["battery"]]["signature"] == unedited[ids["battery"]]
    assert fake.count("create") == fake.count("update") == 0

    written = api.write_run(
        svc,
        run_id,
        json.dumps({**request, "dry_run": False}).encode(),
        ado_client=client,
        requester="bo",
    )
    assert written.status == 200, written.json()
    results = {r["item_id"]: r for r in written.json()["results"]}
    assert written.json()["counts"]["failed"] == 0
    created = fake.item(results[show]["ado_id"])["fields"]
    assert created[ops.TITLE] == "Show the channel number on the LCD"
    assert created[ops.ACCEPTANCE_CRITERIA] == render.criteria_html(
        ["The LCD shows the channel number.", "The number stays for 3 s."]
    )
    assert render.signature_tag(plan[show]["signature"]) in ops.tags_of(
        fake.item(results[show]["ado_id"])
    )
    patched = fake.item(1126)["fields"][ops.ACCEPTANCE_CRITERIA]
    assert patched.count("Voice control can be switched off.") == 1
    assert patched.endswith("<li>Saying quieter lowers the volume by one step.</li></ul>")
    assert results[louder]["status"] == "modified"
    assert results[mute]["decided_by"] == "ana@example.org"
    assert results[mute]["decided_at"] == saved["saved_at"]
    assert results[beep]["decided_by"] == results[show]["decided_by"] == "bo"
    assert results[ids["epic"]]["decided_by"] == "bo"
    assert results[show]["decided_at"] == results[beep]["decided_at"] != saved["saved_at"]

    stored = read_jsonl(svc.store, layout.ado_write_results(run_id), WriteResult)
    assert {r.item_id: r.decided_by for r in stored}[mute] == "ana@example.org"
    old_line = {k: v for k, v in results[show].items() if k not in ("decided_by", "decided_at")}
    old = WriteResult.model_validate(old_line)  # results written before these fields still load
    assert old.decided_by is None and old.decided_at is None


# ------------------------------------------------------------------------------------------------
# export

HOSTILE = "# [click](https://evil.example) <img src=x onerror=alert(1)>"


def save_for_export(svc, run_id, ids) -> None:
    response = put(
        svc,
        run_id,
        {
            "epics": {ids["epic"]: {"title": "Remote control display"}},
            "stories": {
                ids["show"]: {
                    "title": "Show the channel number on the LCD",
                    "acceptance_criteria": ["The LCD shows the channel number.", "Line\nbreak"],
                },
                ids["light"]: {"title": HOSTILE},
                ids["battery"]: {"title": '=HYPERLINK("https://evil.example")'},
                ids["beep"]: {"open_question": True},
            },
        },
    )
    assert response.status == 200, response.json()


def test_export_csv_is_the_created_backlog_in_ados_import_layout(svc, run):
    run_id, ids, _ = run
    save_for_export(svc, run_id, ids)
    response = api.get_export(svc, run_id, "csv")
    assert response.status == 200 and response.content_type == "text/csv; charset=utf-8"
    assert response.headers["Content-Disposition"] == f'attachment; filename="{run_id}.csv"'
    reader = csv.DictReader(io.StringIO(response.body.decode("utf-8"), newline=""))
    assert reader.fieldnames == [
        "ID",
        "Work Item Type",
        "Title 1",
        "Title 2",
        "Title 3",
        "Description",
        "Acceptance Criteria",
        "Tags",
    ]
    rows = list(reader)

    def level(row):
        return next(n for n in (1, 2, 3) if row[f"Title {n}"])

    outline = [(r["Work Item Type"], level(r), r[f"Title {level(r)}"]) for r in rows]
    assert outline == [
        ("Epic", 1, "Remote control display"),
        ("Feature", 2, "Channel display"),
        ("User Story", 3, "Show the channel number on the LCD"),
        ("Feature", 2, "Feedback"),
        ("User Story", 3, "# [click](https://evil.example) &lt;img src=x onerror=alert(1)&gt;"),
        ("Feature", 1, "Power"),
        ("User Story", 2, '\'=HYPERLINK("https://evil.example")'),
    ]  # extend (patch), duplicate (skip) and the open question are not created: not in it
    assert all(r["ID"] == "" for r in rows)
    show = rows[2]
    assert show["Acceptance Criteria"] == (
        "<ul><li>The LCD shows the channel number.</li><li>Line break</li></ul>"
    )
    assert all(sum(1 for n in (1, 2, 3) if r[f"Title {n}"]) == 1 for r in rows)
    # the write's own tags, its signature among them: a later write finds the imported items
    plan = {p["item_id"]: p for p in api.write_run(svc, run_id, b"{}").json()["plan"]}
    assert show["Tags"].split("; ") == [
        "backlog-synth",
        render.signature_tag(plan[ids["show"]]["signature"]),
        f"synth-run-{run_id}",
        "synth-new",
    ]
    assert "Parent: existing work item #1002" in rows[5]["Description"]


def test_export_markdown_is_escaped_and_lists_open_questions(svc, run):
    run_id, ids, _ = run
    save_for_export(svc, run_id, ids)
    response = api.get_export(svc, run_id, "md")
    assert response.status == 200 and response.content_type == "text/markdown; charset=utf-8"
    assert response.headers["Content-Disposition"] == f'attachment; filename="{run_id}.md"'
    text = response.body.decode("utf-8")
    lines = text.splitlines()
    assert "# Remote control display" in lines and "## Channel display" in lines
    assert "### Show the channel number on the LCD" in lines
    assert "- [ ] The LCD shows the channel number." in lines and "- [ ] Line break" in lines
    assert "> The remote must show the channel number on the display. — Ana" in lines
    assert "### \\# \\[click\\](https://evil.example) \\<img src=x onerror=alert(1)\\>" in lines
    assert '### \\=HYPERLINK("https://evil.example")' in lines
    assert "<img" not in text.replace("\\<img", "")  # no raw tag anywhere
    assert not any(line.startswith("# [") for line in lines)
    louder = lines.index("### Louder by voice")
    assert lines[louder + 2].startswith("`extend` · write: patch")
    assert "compared with \\#1126" in lines[louder + 2]
    questions = lines.index("# Open questions")
    assert any("Beep on low battery" in line for line in lines[questions:])
    assert "### Beep on low battery" not in lines  # not in the backlog any more


def test_export_refusals(svc, run):
    run_id, _, _ = run
    for fmt in (None, "", "xml", "CSV"):
        response = api.get_export(svc, run_id, fmt)
        assert (
            response.status == 400 and "format must be one of csv, md" in response.json()["error"]
        )
    assert api.get_export(svc, "run-" + "0" * 20, "csv").status == 404
    assert api.get_export(svc, "..", "csv").status == 400
    running, _ = review_backlog("run-" + "e" * 20)
    running_id = store_run(svc, running, status="running")
    refused = api.get_export(svc, running_id, "md")
    assert refused.status == 409 and refused.json()["code"] == "not_completed"


# ------------------------------------------------------------------------------------------------
# function_app.py's routes, through the local host's router (no storage emulator needed)


def test_function_app_routes(svc, run, monkeypatch):
    run_id, ids, _ = run
    monkeypatch.setattr(function_app, "app_services", lambda: svc)
    host = LocalHost("function_app", port=None, function_key=KEY, root=REPO, settings_file=None)
    base = f"/api/runs/{run_id}"

    def http(method, path, body=b"", **headers):
        status, out, payload = host.handle_http(method, path, headers, body)
        return status, {k.lower(): v for k, v in out.items()}, payload

    assert http("GET", f"{base}/review-state")[0] == 401
    assert http("PUT", f"{base}/review-state", b"{}")[0] == 401
    assert http("GET", f"{base}/export?format=csv")[0] == 401

    status, headers, payload = http("GET", f"{base}/review-state", **{"x-functions-key": KEY})
    assert status == 200 and json.loads(payload)["version"] == 0 and "etag" not in headers

    body = json.dumps({"stories": {ids["show"]: {"title": "Edited over HTTP"}}}).encode()
    status, headers, payload = http(
        "PUT",
        f"{base}/review-state",
        body,
        **{"x-functions-key": KEY, "x-ms-client-principal-name": "ana@example.org"},
    )
    assert status == 200, payload
    etag = headers["etag"]
    assert json.loads(payload)["saved_by"] == "ana@example.org"
    assert json.loads(payload)["etag"] == etag

    status, _, payload = http(
        "PUT",
        f"{base}/review-state",
        b'{"decisions": {}}',
        **{"x-functions-key": KEY, "If-Match": '"stale"'},
    )
    assert status == 409 and json.loads(payload)["code"] == "stale_review"
    # a PUT replaces the whole review: the page sends all of it
    status, headers, payload = http(
        "PUT", f"{base}/review-state?code={KEY}", body, **{"If-Match": etag}
    )
    assert status == 200 and json.loads(payload)["saved_by"] == "function key"
    assert json.loads(payload)["version"] == 2 and headers["etag"] != etag

    status, headers, payload = http("GET", f"{base}/export?format=csv&code={KEY}")
    assert status == 200 and headers["content-type"].startswith("text/csv")
    assert headers["content-disposition"] == f'attachment; filename="{run_id}.csv"'
    assert b"Edited over HTTP" in payload
    assert http("GET", f"{base}/export?code={KEY}")[0] == 400

    # the write's requester is the principal too (ADO is not configured: a dry run from files)
    status, _, payload = http(
        "POST",
        f"{base}/write",
        json.dumps({"decisions": {ids["beep"]: "skip"}}).encode(),
        **{"x-functions-key": KEY, "x-ms-client-principal-name": "cy@example.org"},
    )
    assert status == 200, payload
    plan = {p["item_id"]: p for p in json.loads(payload)["plan"]}
    assert plan[ids["beep"]]["decided_by"] == "cy@example.org"
    assert plan[ids["show"]]["title"] == "Edited over HTTP"

    status, _, payload = http("GET", f"{base}/review?code={KEY}")
    assert status == 200 and json.loads(payload)["review_state"]["version"] == 2


# ------------------------------------------------------------------------------------------------
# CLI


def test_cli_export_and_write_by(svc, run, monkeypatch, capsys, tmp_path):
    run_id, ids, _ = run
    save_for_export(svc, run_id, ids)
    monkeypatch.delenv("AzureWebJobsStorage", raising=False)
    monkeypatch.setenv("SYNTH_STORAGE_BACKEND", "local")
    monkeypatch.setenv("SYNTH_LOCAL_STORE_DIR", str(svc.store.root))
    for key in ("AZURE_DEVOPS_ORG_URL", "AZURE_DEVOPS_PROJECT", "AZURE_DEVOPS_PAT"):
        monkeypatch.delenv(key, raising=False)

    target = tmp_path / "out" / "backlog.csv"
    assert cli(["export", run_id, "--format", "csv", "-o", str(target)]) == 0
    assert target.read_bytes() == api.get_export(svc, run_id, "csv").body
    assert cli(["export", run_id, "--format", "md", "--out", str(tmp_path / "dir")]) == 0
    written = tmp_path / "dir" / f"{run_id}.md"
    assert "### Show the channel number on the LCD" in written.read_text()
    capsys.readouterr()
    assert cli(["export", run_id, "--format", "md"]) == 0
    assert capsys.readouterr().out == written.read_text()
    assert cli(["export", "run-" + "0" * 20, "--format", "md"]) == 1

    assert cli(["write", run_id, "--dry-run", "--json", "--by", "dee"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert {p["decided_by"] for p in plan["plan"]} == {"dee"}
    assert next(p for p in plan["plan"] if p["item_id"] == ids["show"])["title"] == (
        "Show the channel number on the LCD"
    )


def test_export_csv_follows_the_projects_process(svc, run):
    """Scrum: the stories are Product Backlog Items; Basic: no Feature rows (Basic has none), the
    stories one level up under their epic, their criteria in the description."""
    run_id, ids, _ = run
    save_for_export(svc, run_id, ids)

    def outline(process):
        svc.settings = svc.settings.model_copy(update={"azure_devops_process": process})
        body = api.get_export(svc, run_id, "csv").body.decode("utf-8")
        rows = list(csv.DictReader(io.StringIO(body, newline="")))
        return rows, [
            (r["Work Item Type"], next(n for n in (1, 2, 3) if r[f"Title {n}"])) for r in rows
        ]

    _, scrum = outline("scrum")
    assert scrum == [
        ("Epic", 1),
        ("Feature", 2),
        ("Product Backlog Item", 3),
        ("Feature", 2),
        ("Product Backlog Item", 3),
        ("Feature", 1),
        ("Product Backlog Item", 2),
    ]
    rows, basic = outline("basic")
    assert basic == [("Epic", 1), ("Issue", 2), ("Issue", 2), ("Issue", 1)]
    show = next(r for r in rows if r["Title 2"] == "Show the channel number on the LCD")
    assert show["Acceptance Criteria"] == ""
    assert (
        "<h3>Acceptance criteria</h3><ul><li>The LCD shows the channel number.</li>"
        in (show["Description"])
    )
    assert "<i>Feature:</i> Channel display" in show["Description"]


def test_the_backlog_endpoint_shows_the_reviewed_backlog(svc, run):
    run_id, ids, _ = run
    before = api.get_backlog(svc, run_id).json()
    assert before["review_version"] == 0
    assert ids["beep"] in tree_stories({"tree": before})
    save_for_export(svc, run_id, ids)
    after = api.get_backlog(svc, run_id).json()
    assert after["review_version"] == 1
    stories = tree_stories({"tree": after})
    assert stories[ids["show"]]["item"]["title"] == "Show the channel number on the LCD"
    assert ids["beep"] not in stories  # made an open question: not in the backlog
    assert after["epics"][0]["item"]["title"] == "Remote control display"
