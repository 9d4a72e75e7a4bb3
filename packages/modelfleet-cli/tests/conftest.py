"""The four functions, started once for the session, and a FUNCTIONS file dialling them as
Development targets (the path `crossplane render` takes with examples/functions.yaml)."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from modelfleet_cli.functions import FunctionServers

# The render-input generator sits beside the tests (pytest runs in importlib mode).
sys.path.insert(0, str(Path(__file__).parent))
from render_inputs import FUNCTIONS, development_function


@pytest.fixture(scope="session")
def servers() -> Iterator[FunctionServers]:
    servers = FunctionServers()
    try:
        servers.start(FUNCTIONS)
        yield servers
    finally:
        servers.close()


@pytest.fixture(scope="session")
def functions_file(servers: FunctionServers, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A FUNCTIONS file pointing at the session's running functions."""
    docs = [development_function(name, servers.target(name)) for name in FUNCTIONS]
    path = tmp_path_factory.mktemp("render") / "functions.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path
