"""Every example, applied with kubectl to a real control plane, reaches what
`modelfleet simulate` says it reaches, and deleting it leaves nothing behind.

The control plane is real (Crossplane core with Modelfleet installed from its Configuration
package, provider-kubernetes, kube-apiserver). Examples that cannot see each other (no
selector of one matches a cluster of another, no shared names: modelfleet_devtools.e2e.batches)
are applied together, each checked against its own simulate run; the quickstart runs alone, as
docs/getting-started.md shows its `kubectl get`.

On real nodes (ON_REAL_NODES, batched among themselves): every InferenceCluster is a real
single-node Kubernetes whose pods run (modelfleet_devtools.e2e.node). The example is changed
only where this machine cannot hold it (node_fleet.run_on_this_machine: the CPU engine image,
one replica, a 1 GiB KV cache, `--enforce-eager`), and simulate is given the same changed
fleet; the loopback Hub serves the tiny model (modelfleet_devtools.engine.tiny_model) under the
example's repo. Besides simulate's outcomes and a clean deletion, the copies are read back from
the claims' hostPath volumes on the nodes, and every ModelReplica lists its served name at `GET
<status.address>/models` and answers a chat request through its engine, from inside the cluster
network (issue 45).

The other batches' workload clusters are still real API servers whose nodes and controllers a
stand-in plays (modelfleet_devtools.e2e.kubelet), because this 2-core machine, shared, and
CI's budget cannot hold them on real nodes yet (docs/development.md, "A real workload node"):

- quickstart: it is served on a real node by test_real_node_real.py; here it checks the
  `kubectl get` docs/getting-started.md shows, whose two replicas a real node cannot hold
  (one CPU engine per node, run_on_this_machine);
- storage: six InferenceClusters and no pod. Six real nodes (each its own etcd, API server,
  controllers, kubelet and containerd) would take minutes of bring-up and several GB to run
  nothing a stand-in does not;
- multinode: a 2-node gang of CPU engines. test_real_gang_real.py serves it, opt-in: 11 to
  14 minutes here, more than CI holds;
- oci and s3: their loopback sources hold a small stand-in model, not one an engine loads
  (serving the tiny model from the OCI registry and S3 is still to do);
- watched-hydration: two InferenceClusters and no engine; it shares the stand-in batch of oci
  and s3, where two more real nodes would add their bring-up to CI's minutes.

The real-node batch (byo-claim, gated-model, single-replica: three nodes, three CPU engines)
passed here in 320 s (2026-12-04 22:49 UTC, load 1.6 to 2.7).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

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
from modelfleet_devtools.e2e.node_fleet import (
    examples_on_real_nodes,
    replicas_answer,
    staged_on_real_nodes,
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
# Batched among themselves, on real nodes (the module's docstring says why not the others).
ON_REAL_NODES = ["byo-claim", "gated-model", "single-replica"]
FLEETS = {example: load_fleet(EXAMPLES_DIR / example)[0] for example in EXAMPLES}
BATCHES = [
    *batches({e: f for e, f in FLEETS.items() if e not in ON_REAL_NODES}, alone=["quickstart"]),
    *batches({e: f for e, f in FLEETS.items() if e in ON_REAL_NODES}),
]
Json = dict[str, Any]


def reach(
    plane: RealControlPlane, objects: list[dict], expected: dict, timeout: float
) -> tuple[dict, str]:
    """Wait until the real fleet's outcomes are the expected ones; the last seen, and why not."""
    namespaces = {o["metadata"]["namespace"] for o in objects if o["metadata"].get("namespace")}
    seen: dict = {}

    def matches() -> bool:
        plane.check_alive()
        for cluster in plane.clusters.clusters.values():
            if cluster.node is not None:
                cluster.node.check_alive()
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


def fleet_folder(
    example: str, into: Path, registry: str, edit: Callable[[Json], None] | None = None
) -> Path:
    """The example as the real run applies it (see without_helm_installs; its OCI caches
    pull from `registry`, the harness's mirror of the team registry: mirror_images; each
    object passed to `edit`, on real nodes what fits it to this machine), for both runs."""
    objects, settings = load_fleet(EXAMPLES_DIR / example)
    if edit is not None:
        for obj in objects:
            edit(obj)
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


def staged_for_real(plane: RealControlPlane, objects: list[dict], *, on_nodes: bool) -> int:
    """Check that every Ready copy of the fleet's caches was staged by a hydrator container
    (a real node's pod `on_nodes`), from the harness's loopback sources
    (modelfleet_devtools.e2e.sources), as its source holds it (modelfleet_devtools.e2e.staged);
    how many were checked."""
    clusters = plane.clusters
    assert clusters.pods is not None and clusters.sources is not None
    caches = [plane.client.get(xr_path(o)) or {} for o in objects if o["kind"] == "ModelCache"]
    if on_nodes:
        checked, problems = staged_on_real_nodes(plane, caches)
    else:
        checked, problems = check_staged(clusters.pods, clusters.sources, caches)
    assert not problems, problems
    names = {o["metadata"]["name"] for o in objects if o["kind"] == "InferenceCluster"}
    simulated = {
        name: c.stand_in.simulated
        for name, c in clusters.clusters.items()
        if name in names and c.node is None
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


def engines_answer(plane: RealControlPlane, objects: list[dict]) -> int:
    """Every ModelReplica of the fleet (hand-written or composed) lists its served name at its
    `status.address` and answers a chat request for it through its engine, from inside its
    cluster's network; a name it does not serve is refused. How many answered."""
    namespaces = {o["metadata"]["namespace"] for o in objects if o["metadata"].get("namespace")}
    answered = replicas_answer(plane, namespaces)
    serving = [o for o in objects if o["kind"] in ("ModelDeployment", "ModelReplica")]
    assert len(answered) >= len(serving), f"{len(serving)} serving XRs, replicas {answered}"
    for replica, (served, answers) in answered.items():
        assert served and served in answers.listed, f"{replica}: {served!r}, {answers.listed}"
        assert answers.chat_status == 200, f"{replica}: {answers.chat}"
        assert isinstance(answers.chat, dict), answers.chat
        assert answers.chat["model"] == served, answers.chat
        assert answers.chat["choices"][0]["message"]["role"] == "assistant", answers.chat
        assert answers.chat["usage"]["completion_tokens"] >= 1, answers.chat
        assert answers.other_model_status == 404, f"{replica}: {answers.other_model_status}"
    return len(answered)


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
    on_nodes = set(examples) <= set(ON_REAL_NODES)
    timings: dict[str, float] = {}
    with contextlib.ExitStack() as stack:
        edit = (
            stack.enter_context(examples_on_real_nodes(plane, examples, timings))
            if on_nodes
            else None
        )
        stack.callback(lambda: print(f"\n{'+'.join(examples)} timings (s): {json.dumps(timings)}"))
        folders = [
            fleet_folder(example, tmp_path / example, plane.registry.host, edit)
            for example in examples
        ]
        with ThreadPoolExecutor(max_workers=len(folders)) as pool:
            simulated = dict(zip(examples, pool.map(simulated_outcomes, folders), strict=True))
        expected = {key: o for _, outcomes in simulated.values() for key, o in outcomes.items()}
        started = time.monotonic()
        objects = [
            obj for folder in folders for obj in apply_fleet(plane, folder, real_nodes=on_nodes)
        ]
        timings["applied (node bring-up included)"] = time.monotonic() - started
        check_then_delete(plane, examples, simulated, expected, objects, on_nodes, timings)


def check_then_delete(
    plane: RealControlPlane,
    examples: list[str],
    simulated: dict,
    expected: dict,
    objects: list[dict],
    on_nodes: bool,
    timings: dict[str, float],
) -> None:
    deleted = False
    try:
        started = time.monotonic()
        # On real nodes the engine image is pulled and the engine started before it is Ready.
        seen, timed_out = reach(plane, objects, expected, timeout=900 if on_nodes else 480)
        timings["reached what simulate says"] = time.monotonic() - started
        assert seen == expected, (
            f"{timed_out}\nsimulate ended "
            + ", ".join(f"{e}: {result}" for e, (result, _) in simulated.items())
            + "; the real run differs:\n"
            + differences(expected, seen)
        )
        assert not plane.clusters.stand_ins.errors()
        staged_for_real(plane, objects, on_nodes=on_nodes)
        if on_nodes:
            started = time.monotonic()
            assert engines_answer(plane, objects) >= 1
            timings["every replica answered"] = time.monotonic() - started
        if examples == ["quickstart"]:
            check_documented_view(plane)
        assert not leaked_secrets(plane, objects)
        deleted = True
        started = time.monotonic()
        delete_fleet(plane, objects)
        wait_for_nothing_left(plane)
        timings["deleted, nothing left"] = time.monotonic() - started
    finally:
        if not deleted:  # a failed example must not leak into the next one
            with contextlib.suppress(Exception):
                delete_fleet(plane, objects)
        # Its own clusters only: a fleet deleted alongside (the upgrade's) discards its own.
        for obj in objects:
            if obj["kind"] == "InferenceCluster":
                plane.clusters.discard(obj["metadata"]["name"])
