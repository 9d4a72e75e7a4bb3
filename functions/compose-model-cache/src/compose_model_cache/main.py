"""`compose-model-cache`: serve the function with the SDK's standard flags."""

from modelfleet_contracts.edge.replay import Replays
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.edge.serve import function_cli

from compose_model_cache.fn import run_function

NAME = "compose-model-cache"


def served() -> SafeRunner:
    """The runner the server serves. Its decisions read only the request, so a request it
    answered before (a Ready XR polled again, nothing changed) is answered again without
    deciding (modelfleet_contracts.edge.replay)."""
    return SafeRunner(run_function, NAME, replays=Replays())


cli = function_cli(served, NAME)
