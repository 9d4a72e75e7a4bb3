"""`compose-model-cache`: serve the function with the SDK's standard flags."""

from modelfleet_contracts.edge.memo import ResponseMemo
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.edge.serve import function_cli

from compose_model_cache.fn import run_function

NAME = "compose-model-cache"

# Its responses are decided by the request alone (the clock enters only a TTL, and such a
# response is not kept): a settled ModelCache or shard polled again is answered from memory.
cli = function_cli(lambda: SafeRunner(run_function, NAME, ResponseMemo()), NAME)
