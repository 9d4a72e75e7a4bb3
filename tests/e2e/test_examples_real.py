"""Every example, applied with kubectl to a real control plane, reaches what
`modelfleet simulate` says it reaches, and deleting it leaves nothing behind.

The control plane is real (Crossplane core with Modelfleet installed from its Configuration
package, provider-kubernetes, kube-apiserver); the workload clusters are real API servers
whose nodes and controllers a stand-in plays (modelfleet_devtools.e2e.kubelet).
"""

from __future__ import annotations

import pytest
from modelfleet_devtools.e2e.fleet import apply_fleet, delete_fleet, leftovers
from modelfleet_devtools.e2e.outcome import (
    composed_replicas,
    real_outcomes,
    simulated_outcomes,
)
from modelfleet_devtools.e2e.processes import wait_for
from modelfleet_devtools.e2e.stack import RealControlPlane
from modelfleet_devtools.paths import EXAMPLES_DIR

EXAMPLES = sorted(p.name for p in EXAMPLES_DIR.iterdir() if p.is_dir() and any(p.glob("*.yaml")))


def reach(
    plane: RealControlPlane, objects: list[dict], expected: dict, timeout: float
) -> tuple[dict, str]:
    """Wait until the real fleet's outcomes are the expected ones; the last seen, and why not."""
    namespaces = {o["metadata"]["namespace"] for o in objects if o["metadata"].get("namespace")}
    seen: dict = {}

    def matches() -> bool:
        plane.check_alive()
        xrs = [*objects, *composed_replicas(plane.client, namespaces)]
        seen.clear()
        seen.update(real_outcomes(plane.client, [x for x in xrs if x["kind"] != "Secret"]))
        return seen == expected

    try:
        wait_for(matches, what="the fleet to reach what simulate says", timeout=timeout, every=3)
    except TimeoutError as error:
        return seen, str(error)
    return seen, ""


def differences(expected: dict, seen: dict) -> str:
    lines = []
    for key in sorted(set(expected) | set(seen)):
        want, got = expected.get(key), seen.get(key)
        if want != got:
            lines.append(
                f"{key}\n  simulate: {want and want.describe()}"
                f"\n  real:     {got and got.describe()}"
            )
    return "\n".join(lines)


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_reaches_what_simulate_says_then_deletes_cleanly(
    real_control_plane: RealControlPlane, example: str
) -> None:
    plane = real_control_plane
    result, expected = simulated_outcomes(EXAMPLES_DIR / example)
    objects = apply_fleet(plane, EXAMPLES_DIR / example)
    try:
        seen, timed_out = reach(plane, objects, expected, timeout=300)
        assert seen == expected, (
            f"{timed_out}\nsimulate ended {result}; the real run differs:\n"
            + differences(expected, seen)
        )
        assert not plane.clusters.stand_ins.errors()
        delete_fleet(plane, objects)
        left: list[str] = []
        wait_for(
            lambda: not left.clear() and not left.extend(leftovers(plane)),
            what="nothing left behind",
            timeout=180,
            every=3,
        )
    finally:
        for name in list(plane.clusters.clusters):
            plane.clusters.discard(name)
