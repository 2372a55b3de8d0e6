"""``make demo``: the product end to end on this machine, no keys, no network.

Starts Azurite and the local Functions host running ``function_app.py``, loads the sample backlog and
architecture notes into the embedded index (stored in Azurite, as in Azure), drops a sample
transcript (or your own: ``make demo FILE=meeting.vtt PROJECT=name``) into the ``transcripts``
container, follows the run through the HTTP status endpoint, copies the run's artifacts to
``out/<run_id>/``, prints the backlog as a tree and ends with the review page's address, its key
and the API base. ``--keep-running`` (``make demo-serve``) leaves the host up to open them.

Azurite and the host stop on normal exit, on an error, on Ctrl-C, SIGTERM and SIGHUP
(``devhost.lifecycle``); nothing is left running.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from devhost.azurite import Azurite
from devhost.lifecycle import Terminated, exit_on_signals

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
PROJECT = "remote-control"  # the sample backlog's project
SAMPLE_TRANSCRIPT = SAMPLES / "transcripts" / "remote_control_functional_design.txt"
SAMPLE_BACKLOG = SAMPLES / "backlog" / "remote_control_backlog.csv"
SAMPLE_DOCS = SAMPLES / "architecture"
DEMO_KEY = "demo-function-key"
DEFAULT_PORT = 7071  # what `func start` uses; any free port when it is taken


def _get(url: str) -> tuple[int, bytes]:
    """Status and body of a GET with the demo's function key."""
    request = urllib.request.Request(url, headers={"x-functions-key": DEMO_KEY})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def _get_json(url: str) -> Any:
    """The JSON body of a GET that must answer 200."""
    status, body = _get(url)
    if status != 200:
        raise RuntimeError(f"GET {url} -> {status}: {body[:300]!r}")
    return json.loads(body)


def load_index(
    project: str, backlog: Path | None = SAMPLE_BACKLOG, docs: Path | None = SAMPLE_DOCS
) -> None:
    """The same loaders a user runs by hand (``python -m loaders.ado_loader`` / ``arch_loader``):
    a backlog export (ADO CSV, REST JSON or JSONL) and architecture documents (a file or folder)."""
    from loaders.console import build_loader_services
    from shared.indexing.backlog import load_backlog
    from shared.indexing.documents import load_documents
    from shared.settings import Settings

    svc = build_loader_services(Settings())
    if backlog is not None:
        summary = load_backlog(svc, project, file=backlog, show_progress=False)
        print(f"  backlog: {summary.fetched} work items, {summary.embedded} embedded")
    if docs is not None:
        loaded = load_documents(svc, project, [docs], show_progress=False)
        print(f"  architecture: {loaded.fetched} document(s), {loaded.embedded} chunks embedded")


def http_port(wanted: int) -> int:
    """``wanted`` when it is free (0: any port), else 0 so that the host takes any free port."""
    if wanted == 0:
        return 0
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", wanted))
        except OSError:
            print(f"Port {wanted} is taken: the host takes another one.")
            return 0
    return wanted


def access_lines(base: str, run_id: str, key: str = DEMO_KEY) -> list[str]:
    """Where the run can be seen: the review page (its key in the address) and the API base."""
    return [
        f"Review page: {base}/api/ui?code={key}#run={run_id}",
        f"API base:    {base}/api  (function key {key}: add ?code={key} or send the "
        "x-functions-key header)",
        f'             curl -H "x-functions-key: {key}" {base}/api/runs/{run_id}',
    ]


def follow(base: str, run_id: str, timeout: float) -> dict[str, Any]:
    """The run's status line whenever it changes, until the run ends (or ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        status, body = _get(f"{base}/api/runs/{run_id}")
        if status == 200:
            run = json.loads(body)
            line = (
                f"  {run['status']:<10} {run['phase']:<10} segments "
                f"{run['completed_segments']}/{run['segment_count'] or '?'}  stories "
                f"{run['tagged_stories']}/{run['story_count'] or '?'}  errors {run['error_count']}"
            )
            if line != last:
                print(line, flush=True)
                last = line
            if run["status"] in ("completed", "completed_with_errors", "failed"):
                return run
        elif status != 404:  # 404: the blob trigger has not picked the upload up yet
            raise RuntimeError(f"status endpoint answered {status}: {body[:300]!r}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"run {run_id} did not finish within {timeout:.0f} s")
        time.sleep(0.5)


def download(base: str, run_id: str, out: Path) -> Path:
    """Every artifact of the run, through the API, into ``out/<run_id>/``."""
    target = out / run_id
    target.mkdir(parents=True, exist_ok=True)
    for artifact in _get_json(f"{base}/api/runs/{run_id}/artifacts")["artifacts"]:
        status, body = _get(base + artifact["url"])
        if status == 200:
            (target / artifact["name"]).write_bytes(body)
    return target


def main(argv: list[str] | None = None) -> int:
    """The demo; 0 when the run completed (with or without unit errors), 1 when it failed."""
    parser = argparse.ArgumentParser(
        prog="python -m devhost.demo", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "transcript",
        nargs="?",
        default=str(SAMPLE_TRANSCRIPT),
        help="a .txt, .md, .vtt, .srt, .docx or .pdf file (default: the sample AMI meeting)",
    )
    parser.add_argument("--project", default=PROJECT, help=f"index namespace (default {PROJECT})")
    parser.add_argument(
        "--backlog",
        help="existing backlog export to index (ADO CSV, REST JSON or JSONL; default: the "
        f"sample backlog for project {PROJECT}, none for another project)",
    )
    parser.add_argument(
        "--docs",
        help="architecture documents to index, a file or folder (default: the sample notes for "
        f"project {PROJECT}, none for another project)",
    )
    parser.add_argument("--out", default=str(REPO / "out"))
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="HTTP port (0: any free port)"
    )
    parser.add_argument(
        "--keep-running",
        action="store_true",
        help="leave the host up afterwards to open the review page (Ctrl-C stops it)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    # the storage clients' pools are full when the host's workers all write at once: a
    # connection is discarded and opened again, nothing for the reader of the demo to act on
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
    exit_on_signals()  # SIGTERM, SIGHUP, Ctrl-C: every `with` below unwinds, Azurite stops
    try:
        return _demo(args)
    except Terminated as stop:
        print(f"\nStopped ({stop}); Azurite and the host are down.", file=sys.stderr)
        return stop.exit_code
    except KeyboardInterrupt:
        print("\nInterrupted; Azurite and the host are down.", file=sys.stderr)
        return 130


def _index_sources(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    """The backlog and documents to index: as given, else the samples for the sample project."""
    sample = args.project == PROJECT
    backlog = Path(args.backlog) if args.backlog else (SAMPLE_BACKLOG if sample else None)
    docs = Path(args.docs) if args.docs else (SAMPLE_DOCS if sample else None)
    return backlog, docs


def _demo(args: argparse.Namespace) -> int:
    from azure.storage.blob import BlobServiceClient

    from devhost.host import LocalHost, load_local_settings
    from shared import layout
    from shared.ids import content_sha256, make_run_id
    from shared.review.tree import render_tree

    transcript = Path(args.transcript)
    data = transcript.read_bytes()
    backlog, docs = _index_sources(args)
    started = time.monotonic()
    print("Starting Azurite ...", flush=True)
    with Azurite() as azurite:
        print(f"Azurite: blob {azurite.blob_endpoint}, queue {azurite.queue_endpoint}", flush=True)
        os.environ["AzureWebJobsStorage"] = azurite.connection_string
        os.environ.setdefault("SYNTH_STORAGE_BACKEND", "azure")
        # a model configured in local.settings.json serves the loaders as well as the host, so
        # that the index and the runs use the same embedder (the environment wins over the file)
        load_local_settings(REPO / "local.settings.json")
        if backlog is None and docs is None:
            print(
                f"Nothing to index for project {args.project}: every story will be tagged new "
                "(give --backlog, or BACKLOG=... with make)."
            )
        else:
            print(f"Loading the backlog and architecture notes of {args.project} ...", flush=True)
            load_index(args.project, backlog, docs)
        port = http_port(args.port)
        with LocalHost("function_app", port=port, function_key=DEMO_KEY, root=REPO) as host:
            print(f"Local Functions host on {host.url} ({len(host.functions)} functions)")
            health = _get_json(f"{host.url}/api/health")
            print(
                f"Engine: {health['engine']}, embeddings: {health['embedder']}"
                + (" (no model configured)" if health["engine"] == "offline" else ""),
                flush=True,
            )
            blob_path = f"transcripts/{args.project}/{transcript.name}"
            print(f"Dropping {transcript.name} into {blob_path} ...", flush=True)
            blobs = BlobServiceClient.from_connection_string(azurite.connection_string)
            container = blobs.get_container_client("transcripts")
            if not container.exists():
                container.create_container()
            container.upload_blob(f"{args.project}/{transcript.name}", data, overwrite=True)
            run_id = make_run_id(blob_path, f"{content_sha256(data)}:{len(data)}")
            print(f"Following run {run_id} at {host.url}/api/runs/{run_id}", flush=True)
            run = follow(host.url, run_id, args.timeout)
            target = download(host.url, run_id, Path(args.out))
            print(f"\nArtifacts: {target}")
            code = 0
            if run["status"] == "failed":
                print(f"Run failed: {run['failure_reason']}", file=sys.stderr)
                code = 1
            else:
                tree = _get_json(f"{host.url}/api/runs/{run_id}/backlog")
                summary = json.loads((target / layout.SUMMARY).read_text())
                print(
                    f"\nBacklog ({summary['story_count']} stories, tags "
                    f"{summary['tag_distribution']}):\n"
                )
                print(render_tree(tree))
                coverage = summary["coverage"]
                missed = len(coverage.get("unquoted", []))
                print(
                    f"\nDone in {time.monotonic() - started:.0f} s: {run['status']}, "
                    f"coverage {coverage['share']:.0%} of requirement sentences quoted"
                    + (
                        f" ({missed} not in any story: on the review page to place)."
                        if missed
                        else "."
                    )
                )
            print()
            print("\n".join(access_lines(host.url, run_id)), flush=True)
            if not args.keep_running:
                print(
                    "The host and its in-memory storage stop now; `make demo-serve` (or "
                    "--keep-running) keeps them up to open the page."
                )
                return code
            try:  # from the announcement on, a signal is a requested stop
                print(
                    "The host keeps running: open the review page above. Ctrl-C stops it.",
                    flush=True,
                )
                while True:  # until a signal: Ctrl-C, SIGTERM or SIGHUP
                    time.sleep(3600)
            except KeyboardInterrupt:  # Terminated too: a requested stop, not a failure
                print("\nStopping the host and Azurite ...", flush=True)
            return code


if __name__ == "__main__":
    sys.exit(main())
