"""`compose-model-service`: serve the function with the SDK's standard flags."""

from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.edge.serve import function_cli

from compose_model_service.fn import run_function

NAME = "compose-model-service"

cli = function_cli(lambda: SafeRunner(run_function, NAME), NAME)
