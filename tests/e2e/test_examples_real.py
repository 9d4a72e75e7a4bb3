"""Every example, applied with kubectl to a real control plane, reaches what
`modelfleet simulate` says it reaches, and deleting it leaves nothing behind.

The control plane is real (Crossplane core with Modelfleet installed from its Configuration
package, provider-kubernetes, kube-apiserver); the workload clusters are real API servers
whose nodes and controllers a stand-in plays (modelfleet_devtools.e2e.kubelet). Examples that
cannot see each other (no selector of one matches a cluster of another, no shared names:
modelfleet_devtools.e2e.batches) are applied together, each checked against its own simulate
run; the quickstart runs alone, as docs/getting-started.md shows its `kubectl get`.
"""

from __future__ import annotations

import base64
import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from modelfleet_cli.simulate.workload import LWS_GROUP
from modelfleet_devtools.e2e.batches import batches
from modelfleet_devtools.e2e.capture import (
    comparable,
    documented_view,
    fleet_view,
    write_documented_view,
)
from modelfleet_devtools.e2e.fleet import (
    SETTINGS_FILE,
    apply_fleet,
    delete_fleet,
    load_fleet,
    wait_for_nothing_left,
    xr_path,
)
from modelfleet_devtools.e2e.outcome import (
    composed_xrs,
    real_outcomes,
    simulated_outcomes,
)
from modelfleet_devtools.e2e.played import ALL_EXAMPLES, NOT_YET_PLAYED, PLAYED_EXAMPLES
from modelfleet_devtools.e2e.processes import wait_for
from modelfleet_devtools.e2e.sources import mirror_images
from modelfleet_devtools.e2e.stack import RealControlPlane
from modelfleet_devtools.e2e.staged import check_staged
from modelfleet_devtools.paths import EXAMPLES_DIR

EXAMPLES = PLAYED_EXAMPLES
BATCHES = batches(
    {example: load_fleet(EXAMPLES_DIR / example)[0] for example in EXAMPLES}, alone=["quickstart"]
)


def reach(
    plane: RealControlPlane, objects: list[dict], expected: dict, timeout: float
) -> tuple[dict, str]:
    """Wait until the real fleet's outcomes are the expected ones; the last seen, and why not."""
    namespaces = {o["metadata"]["namespace"] for o in objects if o["metadata"].get("namespace")}
    seen: dict = {}

    def matches() -> bool:
        plane.check_alive()
        xrs = [*objects, *composed_xrs(plane.client, namespaces)]
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


def leaked_secrets(plane: RealControlPlane, objects: list[dict]) -> list[str]:
    """Where a value of the fleet's Secrets shows up: in an XR, an Object (its status
    included), an event, or a function's log. Tokens reach the clusters only through
    provider-kubernetes' patchesFrom, so none of these may hold one."""
    values = {
        v
        for o in objects
        if o["kind"] == "Secret"
        for v in [
            *(o.get("stringData") or {}).values(),
            *(base64.b64decode(x).decode() for x in (o.get("data") or {}).values()),
        ]
        if len(v) >= 8
    }
    if not values:
        return []
    kinds = "inferenceclusters,modelcaches,modeldeployments,modelreplicas,objects,events"
    places = {"kubectl get " + kinds: plane.client.kubectl("get", kinds, "-A", "-o", "json")}
    for function in plane.endpoints:
        places[f"{function} log"] = plane.processes.named(function).log.read_text()
    return [f"{v[:4]}... in {where}" for where, text in places.items() for v in values if v in text]


def check_documented_view(plane: RealControlPlane) -> None:
    """docs/getting-started.md shows this run's `kubectl get` (written when asked to)."""
    view = fleet_view(plane)
    if os.environ.get("MODELFLEET_E2E_WRITE_DOCS") == "1":
        write_documented_view(view)
    assert comparable(documented_view()) == comparable(view), (
        f"docs/getting-started.md shows another kubectl get than this run printed:\n{view}\n"
        "(MODELFLEET_E2E_WRITE_DOCS=1 uv run pytest tests/e2e -k quickstart writes it)"
    )


def without_helm_installs(objects: list[dict]) -> list[str]:
    """provider-helm is not among the real binaries: an InferenceCluster that asks it to install
    LeaderWorkerSet gets the LWS CRD from the harness instead (every workload cluster has it),
    and the install is left out of the spec, here and in what simulate is given. Returns the
    clusters changed so."""
    changed = []
    for obj in objects:
        if obj["kind"] == "InferenceCluster" and obj.get("spec", {}).pop("leaderWorkerSet", None):
            changed.append(obj["metadata"]["name"])
    return changed


def fleet_folder(example: str, into: Path, registry: str) -> Path:
    """The example as the real run applies it (see without_helm_installs; its OCI caches
    pull from `registry`, the harness's mirror of the team registry: mirror_images), for
    both runs."""
    objects, settings = load_fleet(EXAMPLES_DIR / example)
    without_helm_installs(objects)
    mirror_images(objects, registry)
    # Every workload cluster of the harness has the LWS CRD: simulate's clusters are told so.
    clusters = settings.setdefault("clusters", {})
    for obj in objects:
        if obj["kind"] == "InferenceCluster":
            held = clusters.setdefault(obj["metadata"]["name"], {})
            held["crds"] = [*held.get("crds", []), LWS_GROUP]
    into.mkdir(parents=True, exist_ok=True)
    (into / "fleet.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
    if settings:
        (into / SETTINGS_FILE).write_text(yaml.safe_dump(settings, sort_keys=False))
    return into


def staged_for_real(plane: RealControlPlane, objects: list[dict]) -> int:
    """Check that every Ready copy of the fleet's caches was staged by a hydrator container,
    from the harness's loopback sources (modelfleet_devtools.e2e.sources), as its source holds
    it (modelfleet_devtools.e2e.staged); how many were checked."""
    clusters = plane.clusters
    assert clusters.pods is not None and clusters.sources is not None
    caches = [plane.client.get(xr_path(o)) or {} for o in objects if o["kind"] == "ModelCache"]
    checked, problems = check_staged(clusters.pods, clusters.sources, caches)
    assert not problems, problems
    names = {o["metadata"]["name"] for o in objects if o["kind"] == "InferenceCluster"}
    simulated = {
        name: c.stand_in.simulated for name, c in clusters.clusters.items() if name in names
    }
    assert not any(simulated.values()), f"hydration Jobs no container ran: {simulated}"
    ready = [
        row["name"]
        for cache in caches
        for row in (cache.get("status") or {}).get("clusters") or []
        if row.get("phase") == "Ready"
    ]
    assert checked == len(ready), f"{len(ready)} Ready copies ({ready}), {checked} checked"
    return checked


def test_every_example_is_in_a_batch() -> None:
    assert sorted(e for batch in BATCHES for e in batch) == EXAMPLES
    assert set(NOT_YET_PLAYED) <= set(ALL_EXAMPLES), "an example left out must exist"
    development = (EXAMPLES_DIR.parent / "docs" / "development.md").read_text()
    for example in NOT_YET_PLAYED:
        assert f"`examples/{example}` is not yet run" in development, example


@pytest.mark.parametrize("examples", BATCHES, ids=["+".join(b) for b in BATCHES])
def test_examples_reach_what_simulate_says_then_delete_cleanly(
    real_control_plane: RealControlPlane, examples: list[str], tmp_path: Path
) -> None:
    plane = real_control_plane
    folders = [
        fleet_folder(example, tmp_path / example, plane.registry.host) for example in examples
    ]
    with ThreadPoolExecutor(max_workers=len(folders)) as pool:
        simulated = dict(zip(examples, pool.map(simulated_outcomes, folders), strict=True))
    expected = {key: o for _, outcomes in simulated.values() for key, o in outcomes.items()}
    objects = [obj for folder in folders for obj in apply_fleet(plane, folder)]
    deleted = False
    try:
        seen, timed_out = reach(plane, objects, expected, timeout=480)
        assert seen == expected, (
            f"{timed_out}\nsimulate ended "
            + ", ".join(f"{e}: {result}" for e, (result, _) in simulated.items())
            + "; the real run differs:\n"
            + differences(expected, seen)
        )
        assert not plane.clusters.stand_ins.errors()
        staged_for_real(plane, objects)
        if examples == ["quickstart"]:
            check_documented_view(plane)
        assert not leaked_secrets(plane, objects)
        deleted = True
        delete_fleet(plane, objects)
        wait_for_nothing_left(plane)
    finally:
        if not deleted:  # a failed example must not leak into the next one
            with contextlib.suppress(Exception):
                delete_fleet(plane, objects)
        # Its own clusters only: a fleet deleted alongside (the upgrade's) discards its own.
        for obj in objects:
            if obj["kind"] == "InferenceCluster":
                plane.clusters.discard(obj["metadata"]["name"])
