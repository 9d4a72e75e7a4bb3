"""Running the real Crossplane CLIs' render, to compare `modelfleet render` with them.

Two generations (docs/cli.md): `crossplane-v2.2 render` (v2.2, classic: the CLI runs the
pipeline itself) and `crossplane composition render` (v2.5, which runs one reconcile of
Crossplane's own XR reconciler, here the `crossplane-core` binary through
`--crossplane-binary`). The binaries come from `$MODELFLEET_REALCP_BIN` (default
`../realcp-bin` beside the repository); a test that needs one skips, naming the path and the
variable, when it is absent.
"""

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from modelfleet_devtools.paths import REALCP_BIN_DIR, REALCP_BIN_ENV

CLASSIC = "v2.2"
ENGINE = "v2.5"
GENERATIONS = (CLASSIC, ENGINE)
# Each generation's binaries under REALCP_BIN_DIR.
BINARIES = {CLASSIC: ("crossplane-v2.2",), ENGINE: ("crossplane", "crossplane-core")}


@dataclass(frozen=True)
class Rendered:
    exit_code: int
    stdout: str
    stderr: str


def require_cli(generation: str) -> list[str]:
    """The command that renders with `generation` (skips the test when its binaries are
    absent)."""
    paths = [REALCP_BIN_DIR / name for name in BINARIES[generation]]
    missing = [str(p) for p in paths if not os.access(p, os.X_OK)]
    if missing:
        pytest.skip(
            f"real Crossplane CLI {generation} not found at {', '.join(missing)} "
            f"(set {REALCP_BIN_ENV} to the directory holding the decompressed binaries of "
            "../shared/realcp/bin)"
        )
    if generation == CLASSIC:
        return [str(paths[0]), "render"]
    return [str(paths[0]), "composition", "render", f"--crossplane-binary={paths[1]}"]


def real_render(generation: str, args: list[str], cwd: Path) -> Rendered:
    """`args` (XR COMPOSITION FUNCTIONS and flags, paths absolute) rendered by the real CLI.
    `cwd` should hold no crossplane-project.yaml: v2.5 would read it as a project."""
    command = [*require_cli(generation), *args]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)
    return Rendered(done.returncode, done.stdout, done.stderr)
