"""Local development host for the Functions app: Azurite management and a `func start`
stand-in that drives a Python v2 ``func.FunctionApp`` (``python -m devhost``)."""

from .azurite import Azurite, AzuriteError
from .host import FunctionInfo, HostError, Invocation, LocalHost, QueueSettings

__all__ = [
    "Azurite",
    "AzuriteError",
    "FunctionInfo",
    "HostError",
    "Invocation",
    "LocalHost",
    "QueueSettings",
]
