"""The layering every function keeps: protobuf, gRPC and the Crossplane SDK only at the edge.

A function's gRPC adapter (fn.py, served by main.py) and `modelfleet_contracts.edge` convert
protobuf to plain data and back; everything else (each function's core, phases, manifests,
and the vocabulary of the contracts) decides on plain data and imports none of them. This
is checked on what Python actually loads, in a fresh interpreter, so an import hidden in a
dependency counts as much as one written in the module.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("crossplane", "grpc", "google.protobuf")
EDGE_MODULES = ("fn", "main")


def _modules(src: Path) -> list[str]:
    """Dotted names of the modules below a `src` folder."""
    names = []
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def core_modules() -> list[str]:
    """Every module of every function except its gRPC edge."""
    return [
        name
        for src in sorted(ROOT.glob("functions/*/src"))
        for name in _modules(src)
        if name.rpartition(".")[2] not in EDGE_MODULES
    ]


def contract_modules() -> tuple[list[str], list[str]]:
    """(pure, edge) modules of modelfleet_contracts."""
    names = _modules(ROOT / "packages/modelfleet-contracts/src")
    edge = [n for n in names if n.startswith("modelfleet_contracts.edge")]
    return [n for n in names if n not in edge], edge


def forbidden_loaded(modules: list[str]) -> list[str]:
    """What of FORBIDDEN a fresh interpreter has loaded after importing `modules`."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = json.loads(out.stdout)
    return [m for m in loaded if any(m == f or m.startswith(f"{f}.") for f in FORBIDDEN)]


def test_the_walk_finds_every_function_core_and_both_halves_of_the_contracts() -> None:
    cores = core_modules()
    assert "compose_inference_cluster.core" in cores
    assert {"compose_model_cache.shard.core", "compose_model_cache.cache.fleet"} <= set(cores)
    assert "compose_model_replica.fn" not in cores
    pure, edge = contract_modules()
    assert {"modelfleet_contracts.conditions", "modelfleet_contracts.clusters"} <= set(pure)
    assert "modelfleet_contracts.edge.runner" in edge


@pytest.mark.parametrize("layer", ["cores", "contracts"])
def test_cores_and_the_pure_contracts_import_no_protobuf_grpc_or_sdk(layer: str) -> None:
    modules = core_modules() if layer == "cores" else contract_modules()[0]
    loaded = forbidden_loaded(modules)
    if loaded:
        # Name the culprits, one interpreter each: which module pulls the edge in.
        culprits = [m for m in modules if forbidden_loaded([m])]
        pytest.fail(f"{culprits} load {sorted({m.split('.')[0] for m in loaded})}")


def test_the_check_sees_the_edge_importing_them() -> None:
    # The same probe on the edge finds what it must: otherwise it could never fail.
    loaded = forbidden_loaded(contract_modules()[1])
    assert {"crossplane", "grpc", "google.protobuf"} <= set(loaded)
