"""Where the repository's API definitions, examples and the shared upstream CRDs live (the
real control plane's binaries: modelfleet_devtools.realcp)."""

import os
from pathlib import Path

# packages/modelfleet-devtools/src/modelfleet_devtools/paths.py -> repository root.
REPO_ROOT = Path(__file__).resolve().parents[4]
APIS_DIR = REPO_ROOT / "apis"
EXAMPLES_DIR = REPO_ROOT / "examples"
# Upstream CRDs are shipped beside the repository (never copied into it); a checkout
# elsewhere points the suite at them with this variable.
SHARED_SCHEMAS_ENV = "MODELFLEET_SHARED_SCHEMAS"
SHARED_SCHEMAS_DIR = Path(
    os.environ.get(SHARED_SCHEMAS_ENV) or REPO_ROOT.parent / "shared" / "schemas"
).resolve()


def xrd_paths() -> list[Path]:
    """Every XRD in the repository, in a stable order."""
    return sorted(APIS_DIR.glob("*/definition.yaml"))
