"""Where the repository's API definitions, examples and the shared upstream CRDs live."""

from pathlib import Path

# packages/modelfleet-devtools/src/modelfleet_devtools/paths.py -> repository root.
REPO_ROOT = Path(__file__).resolve().parents[4]
APIS_DIR = REPO_ROOT / "apis"
EXAMPLES_DIR = REPO_ROOT / "examples"
# Upstream CRDs are shipped beside the repository (never copied into it).
SHARED_SCHEMAS_DIR = REPO_ROOT.parent / "shared" / "schemas"


def xrd_paths() -> list[Path]:
    """Every XRD in the repository, in a stable order."""
    return sorted(APIS_DIR.glob("*/definition.yaml"))
