"""A local stand-in for the Azure Functions host (``func start``) for Python v2 apps.

Owns: loading ``local.settings.json`` and a ``func.FunctionApp``, and driving its functions
against Azure Storage (Azurite) the way the real host does: polling blob triggers with
ETag-keyed receipts in ``azure-webjobs-hosts`` and ``webjobs-blobtrigger-poison``, queue pumps
with host.json ``extensions.queues`` semantics and ``{queue}-poison``, an HTTP server for
``/api/{route}``, and timer triggers. Queue and blob output bindings and blob input bindings
are supported; other bindings receive ``None`` (a warning names them at load).

The parts, each in its own module: ``config`` (host.json, local.settings.json), ``discovery``
(the app's functions and bindings), ``storage`` (clients, message encoding), ``runtime``
(threads, workers, wake-ups, busy counts), ``send_hook`` (waking a pump when this process sends
to its queue), ``invoke`` (one invocation and its bindings), ``blobs``, ``queues``, ``timers``
and ``http_server`` (the triggers), composed by ``local_host.LocalHost``.
"""

from .blobs import BLOB_POISON_QUEUE, RECEIPTS_CONTAINER
from .config import REPO_ROOT, STORAGE_SETTING, HostError, QueueSettings, load_local_settings
from .discovery import SUPPORTED_BINDINGS, FunctionInfo
from .invoke import Invocation
from .local_host import LocalHost

__all__ = [
    "BLOB_POISON_QUEUE",
    "RECEIPTS_CONTAINER",
    "REPO_ROOT",
    "STORAGE_SETTING",
    "SUPPORTED_BINDINGS",
    "FunctionInfo",
    "HostError",
    "Invocation",
    "LocalHost",
    "QueueSettings",
    "load_local_settings",
]
