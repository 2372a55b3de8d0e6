"""``make demo``: the product end to end on this machine, no keys, no network.

Starts Azurite and the local Functions host running ``function_app.py``, loads the sample backlog and
architecture notes into the embedded index (stored in Azurite, as in Azure), drops a sample
transcript into the ``transcripts`` container, follows the run through the HTTP status endpoint,
then copies the run's artifacts to ``out/<run_id>/`` and prints the backlog as a tree.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from devhost.azurite import Azurite

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
PROJECT = "remote-control"
DEMO_KEY = "demo-function-key"


def _get(url: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"x-functions-key": DEMO_KEY})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def _get_json(url: str) -> Any:
    status, body = _get(url)
    if status != 200:
        raise RuntimeError(f"GET {url} -> {status}: {body[:300]!r}")
    return json.loads(body)


def load_index(project: str) -> None:
    """The same loaders a user runs by hand (``python -m loaders.ado_loader`` / ``arch_loader``)."""
    from loaders.ado_loader import load_backlog
    from loaders.arch_loader import load_documents
    from loaders.console import build_loader_services
    from shared.settings import Settings

    svc = build_loader_services(Settings())
    summary = load_backlog(
        svc, project, file=SAMPLES / "backlog" / "remote_control_backlog.csv", show_progress=False
    )
    print(f"  backlog: {summary.fetched} work items, {summary.embedded} embedded")
    docs = load_documents(svc, project, [SAMPLES / "architecture"], show_progress=False)
    print(f"  architecture: {docs.fetched} document(s), {docs.embedded} chunks embedded")


def follow(base: str, run_id: str, timeout: float) -> dict[str, Any]:
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
    target = out / run_id
    target.mkdir(parents=True, exist_ok=True)
    for artifact in _get_json(f"{base}/api/runs/{run_id}/artifacts")["artifacts"]:
        status, body = _get(base + artifact["url"])
        if status == 200:
            (target / artifact["name"]).write_bytes(body)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devhost.demo", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "transcript",
        nargs="?",
        default=str(SAMPLES / "transcripts" / "remote_control_functional_design.txt"),
    )
    parser.add_argument("--project", default=PROJECT)
    parser.add_argument("--out", default=str(REPO / "out"))
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--keep-running", action="store_true", help="leave the host up afterwards")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)

    from azure.storage.blob import BlobServiceClient

    from devhost.host import LocalHost
    from shared.backlog_tree import render_tree
    from shared.ids import content_sha256, make_run_id

    transcript = Path(args.transcript)
    data = transcript.read_bytes()
    started = time.monotonic()
    print("Starting Azurite ...", flush=True)
    with Azurite() as azurite:
        os.environ["AzureWebJobsStorage"] = azurite.connection_string
        os.environ.setdefault("SYNTH_STORAGE_BACKEND", "azure")
        print("Loading the sample backlog and architecture notes into the index ...", flush=True)
        load_index(args.project)
        with LocalHost("function_app", port=0, function_key=DEMO_KEY, root=REPO) as host:
            print(f"Local Functions host on {host.url} ({len(host.functions)} functions)")
            blob_path = f"transcripts/{args.project}/{transcript.name}"
            print(f"Dropping {transcript.name} into {blob_path} ...", flush=True)
            blobs = BlobServiceClient.from_connection_string(azurite.connection_string)
            container = blobs.get_container_client("transcripts")
            if not container.exists():
                container.create_container()
            container.upload_blob(f"{args.project}/{transcript.name}", data, overwrite=True)
            run_id = make_run_id(blob_path, f"{content_sha256(data)}:{len(data)}")
            print(f"Following run {run_id} at {host.url}/api/runs/{run_id}")
            run = follow(host.url, run_id, args.timeout)
            target = download(host.url, run_id, Path(args.out))
            print(f"\nArtifacts: {target}")
            if run["status"] == "failed":
                print(f"Run failed: {run['failure_reason']}", file=sys.stderr)
                return 1
            tree = _get_json(f"{host.url}/api/runs/{run_id}/backlog")
            summary = json.loads((target / "summary.json").read_text())
            print(
                f"\nBacklog ({summary['story_count']} stories, tags {summary['tag_distribution']}):\n"
            )
            print(render_tree(tree))
            print(
                f"\nDone in {time.monotonic() - started:.0f} s: {run['status']}, "
                f"coverage {summary['coverage']['share']:.0%} of requirement sentences quoted."
            )
            if args.keep_running:
                print(f"Host still running on {host.url} (Ctrl-C to stop)")
                try:
                    while True:
                        time.sleep(1)
                except KeyboardInterrupt:
                    pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
