"""The backlog loader end to end: the REST API (through the real client and the fake ADO server)
and export files into the index, incrementally: unchanged items are never embedded twice, a change
re-embeds exactly that item, a removal deletes exactly that item, and ado_vectors.jsonl follows."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest

from devhost.standins.fake_ado import FakeAdo, sample_items
from loaders import ado_loader
from shared import layout
from shared.ado import process as processes
from shared.bus.memory import InProcessBus
from shared.indexing.backlog import load_backlog
from shared.indexing.indexer import LoaderError
from shared.indexing.workitems import from_rest, read_backlog_file, work_item_hash
from shared.settings import Settings
from shared.storage.local import LocalFolderStore
from tests.support.fakes import HashEmbedder
from tests.support.pipeline import SAMPLES, fake_services

PROJECT = "rc"
BACKLOG = SAMPLES / "backlog"
PROCESSES = ("agile", "scrum", "cmmi", "basic")


class CountingEmbedder(HashEmbedder):
    """Records every text it embeds, so "embedded exactly one" is checked on the embedder itself."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return super().embed(texts)


@pytest.fixture
def fake(request):
    """The sample project, Agile unless parametrized (indirectly) with another process."""
    with FakeAdo(wiql_cap=20, process=getattr(request, "param", "agile")) as server:
        server.seed_sample()
        yield server


@pytest.fixture
def embedder():
    return CountingEmbedder()


@pytest.fixture
def svc(tmp_path, fake, embedder):
    settings = Settings(
        storage_backend="local",
        local_store_dir=str(tmp_path / "store"),
        engine="offline",
        embedder="minilm",
        azure_devops_org_url=fake.org_url,
        azure_devops_project=fake.project,
        azure_devops_pat=fake.pat,
    )
    return fake_services(
        LocalFolderStore(tmp_path / "store"), InProcessBus(), embedder=embedder, settings=settings
    )


def _lines(svc) -> list[dict]:
    text = svc.store.get(layout.ado_vectors(PROJECT)).decode()
    return [json.loads(line) for line in text.splitlines()]


def _rest_load(svc, fake, **kwargs):
    with fake.client(sleep=lambda s: None, wiql_page_size=20) as client:
        return load_backlog(svc, PROJECT, client=client, **kwargs)


def test_rest_load_normalizes_and_indexes_the_sample(svc, fake, embedder):
    summary = _rest_load(svc, fake)
    assert summary.as_dict() == {
        "fetched": 51,
        "embedded": 51,
        "skipped": 0,
        "upserted": 51,
        "deleted": 0,
        "errors": [],
    }
    assert len(embedder.texts) == 51
    # paged: the fake's cap is 20 results, so WIQL ran several times and never returned more
    wiql_ok = fake.requests("wiql", status=200)
    assert len(fake.requests("wiql")) > 3
    assert all(len(r.body["query"]) for r in wiql_ok)
    assert all(len(r.body["ids"]) <= 200 for r in fake.requests("workitemsbatch"))

    records = svc.index.fetch(PROJECT, ["ado-1111", "ado-1101", "ado-1001"])
    story = records["ado-1111"].metadata
    raw = next(i for i in sample_items() if i["id"] == 1111)
    assert "<" in raw["fields"]["System.Description"]  # HTML in ADO ...
    assert "<div>" not in story["description"] and "&lt;" not in story["description"]
    assert "< 0.5 s" in " ".join([story["description"], *story["acceptance_criteria"]])
    assert len(story["acceptance_criteria"]) >= 2  # <ul><li> -> one criterion per item
    assert story["parent_id"] == 1012  # from the Hierarchy-Reverse relation
    assert records["ado-1101"].metadata["parent_id"] == 1010
    assert "parent_id" not in records["ado-1001"].metadata  # an epic: children only
    for key in ("work_item_id", "source_type", "project", "work_item_type", "state", "tags"):
        assert key in story
    assert story["source_type"] == "ado_backlog" and story["project"] == PROJECT
    assert story["url"].startswith(fake.org_url)

    lines = _lines(svc)
    assert [line["work_item_id"] for line in lines] == sorted(i["id"] for i in sample_items())
    by_id = {line["work_item_id"]: line for line in lines}
    expected = work_item_hash(from_rest(fake.item(1111)))
    assert by_id[1111]["work_item_hash"] == expected == by_id[1111]["metadata"]["work_item_hash"]
    assert by_id[1111]["vector_id"] == "ado-1111"


@pytest.mark.parametrize("fake", PROCESSES, indirect=True)
def test_each_process_is_indexed_under_the_generated_backlogs_names(svc, fake):
    process = processes.by_name(fake.process)
    summary = _rest_load(svc, fake)
    sample = sample_items(fake.process)
    assert (summary.fetched, summary.embedded, summary.errors) == (len(sample), len(sample), [])
    assert fake.count("workitemtypes") == 1  # detected once
    for request in fake.requests("wiql"):
        query = request.body["query"]
        assert f"'{process.story_type}'" in query and ("'Feature'" in query) == (
            process.feature_type is not None
        )
        assert "'User Story'" not in query or process.name == "agile"

    lines = {line["work_item_id"]: line["metadata"] for line in _lines(svc)}
    kinds = Counter(meta["work_item_type"] for meta in lines.values())
    assert kinds == (
        {"Epic": 5, "User Story": 35}
        if fake.process == "basic"
        else {"Epic": 5, "Feature": 11, "User Story": 35}
    )
    story = lines[1111]
    assert story.get("ado_work_item_type") == (
        None if fake.process == "agile" else process.story_type
    )
    # the criteria, in the field or (Basic) in the description, are the item's criteria
    assert len(story["acceptance_criteria"]) == 3
    assert "Acceptance criteria" not in story["description"]
    assert story["parent_id"] == (1001 if fake.process == "basic" else 1012)
    states = {meta["state"] for meta in lines.values()}
    assert states <= set(fake.spec.states)


def test_a_process_that_is_set_is_not_detected(svc, fake, tmp_path):
    """AZURE_DEVOPS_PROCESS wins over the project's types: here it names Scrum for an Agile
    project, so the loader asks for Product Backlog Items, which the project does not have."""
    svc.settings.azure_devops_process = "scrum"
    summary = _rest_load(svc, fake, allow_empty=True)
    assert fake.count("workitemtypes") == 0
    assert all("'Product Backlog Item'" in r.body["query"] for r in fake.requests("wiql"))
    assert summary.fetched == 16  # the epics and features only

    # an export: the process whose story type it holds, unless the setting names one
    export = tmp_path / "scrum.json"
    export.write_text(json.dumps({"value": sample_items("scrum")}))
    svc.settings.azure_devops_process = "auto"
    from_file = load_backlog(svc, PROJECT, file=export)
    assert from_file.fetched == 51
    meta = svc.index.fetch(PROJECT, ["ado-1111"])["ado-1111"].metadata
    assert (meta["work_item_type"], meta["ado_work_item_type"]) == (
        "User Story",
        "Product Backlog Item",
    )
    svc.settings.azure_devops_process = "basic"  # its stories are Issues: no PBI is loaded
    as_basic = load_backlog(svc, PROJECT, file=export)
    assert (as_basic.fetched, as_basic.deleted) == (16, 35)


def test_reload_skips_all_then_one_change_then_one_removal(svc, fake, embedder):
    _rest_load(svc, fake)
    embedder.texts.clear()

    again = _rest_load(svc, fake)
    assert (again.embedded, again.skipped, again.upserted, again.deleted) == (0, 51, 0, 0)
    assert embedder.texts == []

    fake.edit_item(1105, {"System.Title": "Switch the TV on and off with one red power button"})
    changed = _rest_load(svc, fake)
    assert (changed.embedded, changed.skipped, changed.deleted) == (1, 50, 0)
    assert len(embedder.texts) == 1 and embedder.texts[0].startswith("Switch the TV on and off")
    meta = svc.index.fetch(PROJECT, ["ado-1105"])["ado-1105"].metadata
    assert meta["title"].endswith("red power button")
    embedder.texts.clear()

    fake.remove_item(1135)
    removed = _rest_load(svc, fake)
    assert (removed.fetched, removed.embedded, removed.skipped, removed.deleted) == (50, 0, 50, 1)
    assert embedder.texts == []
    assert "ado-1135" not in svc.index.list_ids(PROJECT, "ado-")
    assert len(svc.index.list_ids(PROJECT, "ado-")) == 50
    assert 1135 not in [line["work_item_id"] for line in _lines(svc)] and len(_lines(svc)) == 50


def test_rest_load_rides_out_throttling_and_server_errors(svc, fake):
    slept: list[float] = []
    fake.throttle_next(retry_after=2, route="workitemsbatch")
    fake.fail_next(502, route="wiql")
    with fake.client(sleep=slept.append, wiql_page_size=20) as client:
        summary = load_backlog(svc, PROJECT, client=client)
    assert summary.embedded == 51 and not summary.errors
    assert slept == [1, 2]  # backoff for the 502, Retry-After for the 429
    assert [r.status for r in fake.requests("workitemsbatch")] == [429, 200]


def test_rest_source_is_built_from_settings(svc, fake):
    summary = load_backlog(svc, PROJECT)
    assert summary.embedded == 51
    assert fake.requests()[0].authorized


def test_export_files_agree_and_reload_incrementally(svc, embedder, tmp_path):
    csv_summary = load_backlog(svc, PROJECT, file=BACKLOG / "remote_control_backlog.csv")
    assert (csv_summary.fetched, csv_summary.embedded) == (51, 51)
    embedder.texts.clear()
    # the same items as REST JSON: nothing to embed; only the url (outside the hash) is refreshed
    rest = load_backlog(svc, PROJECT, file=BACKLOG / "remote_control_backlog.rest.json")
    assert (rest.embedded, rest.skipped, rest.upserted, rest.deleted) == (0, 51, 51, 0)
    jsonl = load_backlog(svc, PROJECT, file=BACKLOG / "remote_control_backlog.jsonl")
    assert (jsonl.embedded, jsonl.skipped, jsonl.upserted) == (0, 51, 0)
    assert embedder.texts == []

    rows = (BACKLOG / "remote_control_backlog.csv").read_text().splitlines()
    edited = tmp_path / "edited.csv"
    changed = [r.replace("Cycle through favourite channels", "Cycle favourite lists") for r in rows]
    edited.write_text("\n".join(changed) + "\n")
    one = load_backlog(svc, PROJECT, file=edited)
    assert (one.embedded, one.skipped, one.deleted) == (1, 50, 0)
    assert embedder.texts[0].startswith("Cycle favourite lists")

    shorter = tmp_path / "shorter.csv"
    shorter.write_text("\n".join(r for r in changed if not r.startswith('"1134"')) + "\n")
    gone = load_backlog(svc, PROJECT, file=shorter)
    assert (gone.fetched, gone.embedded, gone.deleted) == (50, 0, 1)
    assert "ado-1134" not in svc.index.list_ids(PROJECT, "ado-")


def test_an_unreadable_record_is_an_error_and_keeps_its_last_vector(svc, tmp_path):
    load_backlog(svc, PROJECT, file=BACKLOG / "remote_control_backlog.rest.json")
    data = json.loads((BACKLOG / "remote_control_backlog.rest.json").read_text())
    broken = next(i for i in data["value"] if i["id"] == 1120)
    broken["fields"]["System.ChangedDate"] = "the day after tomorrow"
    data["value"] = [i for i in data["value"] if i["id"] != 1133]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    summary = load_backlog(svc, PROJECT, file=path)
    assert summary.fetched == 50 and summary.skipped == 49 and summary.deleted == 1
    assert len(summary.errors) == 1
    assert summary.errors[0]["work_item_id"] == 1120
    assert "unreadable date" in summary.errors[0]["error"]
    assert "ado-1120" in svc.index.list_ids(PROJECT, "ado-")  # not pruned: still in the source
    assert "ado-1133" not in svc.index.list_ids(PROJECT, "ado-")  # gone from the source


def test_an_empty_source_does_not_clear_the_namespace_unless_asked(svc, tmp_path):
    load_backlog(svc, PROJECT, file=BACKLOG / "remote_control_backlog.jsonl")
    empty = tmp_path / "empty.json"
    empty.write_text('{"count": 0, "value": []}')
    with pytest.raises(LoaderError, match="--allow-empty"):
        load_backlog(svc, PROJECT, file=empty)
    assert len(svc.index.list_ids(PROJECT, "ado-")) == 51
    cleared = load_backlog(svc, PROJECT, file=empty, allow_empty=True)
    assert cleared.deleted == 51 and svc.index.list_ids(PROJECT, "ado-") == []
    assert svc.store.get(layout.ado_vectors(PROJECT)) == b""


def test_bugs_only_when_asked(svc, tmp_path):
    items = [
        i.model_dump(mode="json")
        for i in read_backlog_file(BACKLOG / "remote_control_backlog.jsonl")
    ]
    items.append(dict(items[-1], work_item_id=2001, work_item_type="Bug", title="Remote freezes"))
    path = tmp_path / "with_bug.jsonl"
    path.write_text("\n".join(json.dumps(i) for i in items) + "\n")
    assert load_backlog(svc, PROJECT, file=path).fetched == 51
    with_bugs = load_backlog(svc, PROJECT, file=path, include_bugs=True)
    assert (with_bugs.fetched, with_bugs.embedded) == (52, 1)


# -- the command ------------------------------------------------------------------------------


@pytest.fixture
def cli_env(monkeypatch, tmp_path, fake):
    monkeypatch.delenv("AzureWebJobsStorage", raising=False)
    monkeypatch.setenv("SYNTH_STORAGE_BACKEND", "local")
    monkeypatch.setenv("SYNTH_LOCAL_STORE_DIR", str(tmp_path / "cli-store"))
    monkeypatch.setenv("SYNTH_EMBEDDER", "minilm")
    monkeypatch.setenv("SYNTH_VECTOR_STORE", "embedded")
    for key, value in fake.env().items():
        monkeypatch.setenv(key, value)
    return tmp_path / "cli-store"


def _main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = ado_loader.main(argv, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_command_prints_one_json_line_and_shares_the_cli_code_path(cli_env, fake, capsys):
    """Through the settings' own embedder (MiniLM) and store (local folder), no Azurite."""
    code, out, err = _main(["--project", PROJECT, "--json"])
    assert code == 0, err
    assert out.count("\n") == 1
    summary = json.loads(out)
    assert set(summary) == {"fetched", "embedded", "skipped", "upserted", "deleted", "errors"}
    assert (summary["fetched"], summary["embedded"], summary["errors"]) == (51, 51, [])
    assert (Path(cli_env) / layout.ado_vectors(PROJECT)).is_file()
    assert "\r" not in err  # no progress bar off a terminal

    from shared import cli

    assert cli.main(["load-backlog", "--project", PROJECT]) == 0  # REST again, same path
    again = json.loads(capsys.readouterr().out)
    assert (again["embedded"], again["skipped"]) == (0, 51)
    code, out, _ = _main(
        ["--file", str(BACKLOG / "remote_control_backlog.rest.json"), "--project", PROJECT]
    )
    assert code == 0 and "embedded 0, skipped 51" in out


def test_command_failures_are_clear_and_never_show_the_pat(cli_env, fake, monkeypatch):
    monkeypatch.setenv("AZURE_DEVOPS_PAT", "revoked-pat-0123456789")
    code, out, err = _main(["--project", PROJECT, "--json"])
    assert code == 2 and out == ""
    assert "personal access token was refused" in err and "revoked-pat-0123456789" not in err

    monkeypatch.delenv("AZURE_DEVOPS_ORG_URL")
    code, _, err = _main(["--project", PROJECT])
    assert code == 2 and "AZURE_DEVOPS_ORG_URL" in err

    code, _, err = _main(["--file", "no/such/file.csv", "--project", PROJECT])
    assert code == 2 and "no/such/file.csv" in err
    code, _, err = _main(
        ["--file", str(BACKLOG / "remote_control_backlog.csv"), "--project", "a/b"]
    )
    assert code == 2 and "invalid project" in err


def test_command_names_the_valid_processes(cli_env, monkeypatch):
    monkeypatch.setenv("AZURE_DEVOPS_PROCESS", "kanban")
    code, out, err = _main(["--project", PROJECT, "--json"])
    assert code == 2 and out == ""
    assert "AZURE_DEVOPS_PROCESS must be one of agile, scrum, cmmi, basic or auto" in err


def test_command_exit_code_1_on_record_errors(cli_env, tmp_path):
    rows = (BACKLOG / "remote_control_backlog.csv").read_text().splitlines()
    rows[3] = rows[3].replace('"1003"', '"not-a-number"', 1)
    path = tmp_path / "bad_row.csv"
    path.write_text("\n".join(rows) + "\n")
    code, out, _ = _main(["--file", str(path), "--project", PROJECT, "--json"])
    summary = json.loads(out)
    assert code == 1
    assert summary["fetched"] == 51 and summary["embedded"] == 50
    assert summary["errors"][0]["line"] == 4
    assert any("not pruned" in e["error"] for e in summary["errors"])
