"""Running the real Crossplane CLIs' render, to compare `modelfleet render` with them.

Two generations (docs/cli.md): `crossplane-v2.2 render` (v2.2, classic: the CLI runs the
pipeline itself) and `crossplane composition render` (v2.5, which runs one reconcile of
Crossplane's own XR reconciler, here the `crossplane-core` binary through
`--crossplane-binary`). The binaries come from `realcp.realcp_binary` (`$MODELFLEET_REALCP_BIN`,
else unpacked once from ../shared/realcp); a test that needs one skips, saying how to get it,
when it is absent.
"""

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from modelfleet_devtools.realcp import RealcpUnavailable, realcp_binary

CLASSIC = "v2.2"
ENGINE = "v2.5"
GENERATIONS = (CLASSIC, ENGINE)
# Each generation's binaries.
BINARIES = {CLASSIC: ("crossplane-v2.2",), ENGINE: ("crossplane", "crossplane-core")}


@dataclass(frozen=True)
class Rendered:
    exit_code: int
    stdout: str
    stderr: str


def require_cli(generation: str) -> list[str]:
    """The command that renders with `generation` (skips the test when its binaries are
    absent)."""
    try:
        paths = [realcp_binary(name) for name in BINARIES[generation]]
    except RealcpUnavailable as exc:
        pytest.skip(f"real Crossplane CLI {generation} unavailable: {exc}")
    if generation == CLASSIC:
        return [str(paths[0]), "render"]
    return [str(paths[0]), "composition", "render", f"--crossplane-binary={paths[1]}"]


def real_render(generation: str, args: list[str], cwd: Path) -> Rendered:
    """`args` (XR COMPOSITION FUNCTIONS and flags, paths absolute) rendered by the real CLI.
    `cwd` should hold no crossplane-project.yaml: v2.5 would read it as a project."""
    command = [*require_cli(generation), *args]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)
    return Rendered(done.returncode, done.stdout, done.stderr)
