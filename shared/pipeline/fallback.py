"""Degradation, recorded (docs/RELIABILITY.md "Degradation"): what a unit does when a dependency
is down, and how the run says so.

- **Model unreachable**: a chat call that failed for want of the endpoint after the SDK's own
  retries (a connection error or timeout, a 5xx) is not the unit's fault: the offline engine does
  that unit instead (``Services.fallback_agents``), and the records say ``engine:
  offline-fallback`` with a warning naming the error. A request the endpoint rejected (400/422,
  ``InvalidRequest``), an answer that is not usable (``InvalidOutput``, the agents' retry rule),
  an authentication error or a 429 are not "unreachable": they keep their own handling.
- **Index unreachable**: retrieval falls back to keyword scoring itself (``shared.retrieval``); the
  unit records the warning it returns.
- Either way the run gets one ``RunWarning`` per kind (``model_unreachable``,
  ``index_unreachable``) in run.json, and finalize copies it to summary.json with the counts of
  degraded units (``Summary.fallbacks``).
"""

from __future__ import annotations

import logging
import sys

from shared.models import Engine, RunStatus, RunWarning
from shared.pipeline.runs import update_run
from shared.services import Services

log = logging.getLogger(__name__)

OFFLINE_FALLBACK = "offline fallback"
FALLBACK_ENGINE: Engine = "offline-fallback"


def model_unreachable(err: BaseException) -> bool:
    """Whether ``err`` (or an exception it was raised from) says the model endpoint could not be
    reached after the SDK's retries: a connection error or timeout, or an HTTP 5xx."""
    openai = sys.modules.get("openai")
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if openai is not None:
            if isinstance(current, openai.APIConnectionError):  # timeouts are one too
                return True
            if isinstance(current, openai.APIStatusError) and current.status_code >= 500:
                return True
        current = current.__cause__ or current.__context__
    return False


def describe(err: BaseException, svc: Services | None = None, limit: int = 200) -> str:
    """``Type: message`` on one line, clipped, with every configured secret and anything
    secret-like masked (the message of an HTTP error may quote a request)."""
    from shared.hygiene import scrub

    text = " ".join(f"{type(err).__name__}: {err}".split())[:limit]
    return scrub(text, svc.settings.secret_values() if svc is not None else ())


def masked(svc: Services, text: str) -> str:
    """``text`` (a reason made where the settings are not known, e.g. in retrieval) with the
    app's configured secrets masked too."""
    from shared.hygiene import scrub

    return scrub(text, svc.settings.secret_values())


def offline_warning(what: str, reason: str) -> str:
    return (
        f"{OFFLINE_FALLBACK}: the model endpoint was unreachable after its retries ({reason}); "
        f"the offline engine {what}"
    )


def add_run_warning(svc: Services, run: RunStatus, warning: RunWarning) -> None:
    """Add ``warning`` to run.json once per code (the first unit's message stays)."""
    if any(w.code == warning.code for w in run.warnings):
        return

    def put(r: RunStatus) -> RunStatus | None:
        if any(w.code == warning.code for w in r.warnings):
            return None
        r.warnings = [*r.warnings, warning]
        return r

    update_run(svc, run.run_id, put)
    log.warning("run %s: %s", run.run_id, warning.message)


def model_warning(reason: str) -> RunWarning:
    return RunWarning(
        code="model_unreachable",
        message=(
            f"the model endpoint was unreachable after its retries ({reason}): the offline engine "
            "did the units it could not, and their records say engine offline-fallback"
        ),
    )


def index_warning(reason: str) -> RunWarning:
    return RunWarning(
        code="index_unreachable",
        message=(
            f"the vector index could not be queried ({reason}): retrieval fell back to keyword "
            "scoring over the last ingestion files for the units that say so in their warnings"
        ),
    )
