"""examples/canary on a real control plane: two revisions of one model under a ModelService,
on two workload clusters whose Gateways the harness's played gateway controller programs and
whose routes it accepts (modelfleet_devtools.e2e.gateways). The clusters are registered
before the rest of the fleet is applied, as a platform team does.

The canary moves as simulation.yaml's `edits:` move it (10% -> 50% -> 100%), is rolled back to
50%, then its ModelDeployment is deleted under the ModelService. At each step the
ModelService's status means what `modelfleet simulate` reports for the same fleet and the same
edits (clusters, backends, weights, reasons, addresses, `x/y` routed), every composed HTTPRoute
is on its cluster's real API server (its pinned Gateway API CRD admitted it) and sends to the
Services of the deployments the status says at the weights it says; while a step settles,
every poll of the routes finds each healthy backend routed in both steps still routed, at the
weight of one step or the other, and during a weight change never at a Service that is gone.
Deleting everything leaves nothing."""

from __future__ import annotations

import contextlib
import copy
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from modelfleet_devtools.e2e.fleet import (
    SETTINGS_FILE,
    apply_fleet,
    condition,
    delete_fleet,
    load_fleet,
    wait_for_nothing_left,
    xr_path,
)
from modelfleet_devtools.e2e.gateways import played_gateway_controller
from modelfleet_devtools.e2e.kube import KubeClient, resource_path
from modelfleet_devtools.e2e.processes import wait_for
from modelfleet_devtools.e2e.routed import (
    RoutePoll,
    backends_of,
    meaning,
    simulated_service_status,
    with_gateways,
)
from modelfleet_devtools.e2e.stack import RealControlPlane
from modelfleet_devtools.paths import EXAMPLES_DIR

Json = dict[str, Any]
EXAMPLE = EXAMPLES_DIR / "canary"
SERVICE = ("ml-team", "qwen3")
STABLE, CANARY = "qwen3-0-6b-stable", "qwen3-0-6b-canary"  # the two revisions
ROUTES = resource_path("gateway.networking.k8s.io/v1", "httproutes")
SERVICES = resource_path("v1", "services")
ROUTE_LABEL = "modelfleet.io/modelservice"
DEPLOYMENT_LABEL = "modelfleet.io/modeldeployment"  # on a replica's Service
# Generous for a machine under load ~10: a step is a Crossplane reconcile of the ModelService
# (its function reads the deployments and the clusters) and provider-kubernetes applying the
# route; the first, the fleet staging and serving on both clusters.
FIRST_SETTLE, STEP_SETTLE = 480, 240


def the_service(plane: RealControlPlane) -> Json:
    namespace, name = SERVICE
    path = resource_path("modelfleet.io/v1alpha1", "modelservices", namespace, name)
    return plane.client.get(path) or {}


class RouteReader:
    """Reads the ModelService's route on each cluster, its Services named back to the
    deployments they serve (remembered: a route may name a Service deleted meanwhile);
    `dangling`: each time (time.monotonic) a route was read sending to a Service that no
    longer existed, and where."""

    def __init__(self, clusters: dict[str, KubeClient]) -> None:
        self.clusters = clusters
        self.served: dict[str, str] = {}
        self.dangling: list[tuple[float, str]] = []

    def backends(self, cluster: str) -> dict[str, int] | None:
        """{ModelDeployment: weight} of the route on `cluster`; None: no route there."""
        client = self.clusters[cluster]
        routes = [
            r
            for r in client.list(ROUTES)
            if (r["metadata"].get("labels") or {}).get(ROUTE_LABEL) == SERVICE[1]
        ]
        if not routes:
            return None
        [route] = routes
        live = {
            s["metadata"]["name"]: (s["metadata"].get("labels") or {}).get(DEPLOYMENT_LABEL)
            for s in client.list(SERVICES)
        }
        self.served.update({name: md for name, md in live.items() if md})
        refs = [ref for rule in route["spec"]["rules"] for ref in rule.get("backendRefs") or []]
        assert all(ref.get("kind", "Service") == "Service" for ref in refs), refs
        for ref in refs:
            if ref["name"] not in live:
                self.dangling.append((time.monotonic(), f"{cluster}: Service {ref['name']}"))
        return {self.served.get(ref["name"], ref["name"]): int(ref["weight"]) for ref in refs}

    def every(self) -> dict[str, dict[str, int] | None]:
        return {name: self.backends(name) for name in self.clusters}


def admitted(client: KubeClient) -> bool:
    """The ModelService's route on the cluster is Accepted by its Gateway."""
    for route in client.list(ROUTES):
        if (route["metadata"].get("labels") or {}).get(ROUTE_LABEL) != SERVICE[1]:
            continue
        generation = route["metadata"].get("generation")
        return any(
            c.get("type") == "Accepted"
            and c.get("status") == "True"
            and c.get("observedGeneration") == generation
            for parent in (route.get("status") or {}).get("parents") or []
            for c in parent.get("conditions") or []
        )
    return False


def settle(
    plane: RealControlPlane,
    routes: RouteReader,
    expected: Json,
    timeout: float,
    poll: RoutePoll | None = None,
) -> None:
    """Wait until the ModelService's status means `expected`, each poll of the routes checked
    by `poll`; then check every route against the status."""
    seen: list[Json] = [{}]

    def there() -> bool:
        plane.check_alive()
        if poll is not None:
            poll.check(routes.every())
        seen[0] = meaning(the_service(plane).get("status") or {})
        return seen[0] == expected

    try:
        wait_for(there, what="the ModelService to mean what simulate says", timeout=timeout)
    except TimeoutError as error:
        raise AssertionError(f"{error}\nsimulate: {expected}\nreal:     {seen[0]}") from None
    wait_for(
        lambda: all(
            admitted(client)
            for name, client in routes.clusters.items()
            if expected["clusters"][name][0]
        ),
        what="every routed cluster's route Accepted",
        timeout=STEP_SETTLE,
    )
    for name in routes.clusters:
        routed = expected["clusters"][name][0]
        assert routes.backends(name) == (backends_of(expected, name) if routed else None), name
    if poll is not None:
        assert poll.polls and not poll.violations, poll.violations


def test_a_canary_moves_rolls_back_and_loses_a_revision_without_dropping_a_route(
    real_control_plane: RealControlPlane, tmp_path: Path
) -> None:
    plane = real_control_plane
    objects, settings = load_fleet(EXAMPLE)
    settings, addresses = with_gateways(objects, settings)
    # The platform team registers the clusters (their Gateways seeded) before the model team
    # deploys: a deployment applied with them is placed on the clusters connected by then,
    # and stays there.
    registered, deployed = tmp_path / "clusters", tmp_path / "fleet"
    clusters_first = [o for o in objects if o["kind"] == "InferenceCluster"]
    the_rest = [o for o in objects if o["kind"] != "InferenceCluster"]
    for folder, held in ((registered, clusters_first), (deployed, the_rest)):
        folder.mkdir()
        (folder / "fleet.yaml").write_text(yaml.safe_dump_all(held, sort_keys=False))
    (registered / SETTINGS_FILE).write_text(yaml.safe_dump(settings, sort_keys=False))
    # The real run makes simulation.yaml's edits (10% -> 50% -> 100%), rolls the first back
    # in, then deletes the canary's ModelDeployment. Simulate is given, for each step, the
    # edits up to it; the steps before the first edit get the spec as applied, re-applied on
    # that round (simulate stops at the first round where every XR is Ready, which may be
    # before a Gateway accepted the route: a real run goes on until it has).
    edits = settings["edits"]
    first, last = edits[0]["round"], edits[-1]["round"]
    [service] = [o for o in objects if o["kind"] == "ModelService"]
    target = f"ModelService/{SERVICE[0]}/{SERVICE[1]}"
    as_applied = {"round": first, "target": target, "patch": {"spec": service["spec"]}}
    rolled_back = {**edits[0], "round": last + 2}
    without_canary = [o for o in objects if o["metadata"]["name"] != CANARY]
    runs: dict[str, tuple[list[Json], list[Json]]] = {
        "applied": (objects, [as_applied]),
        "edit 1": (objects, edits[:1]),
        "edit 2": (objects, edits[:2]),
        "rolled back": (objects, [*edits[:2], rolled_back]),
        "canary deleted": (without_canary, edits[:1]),
    }

    def simulate(step: str) -> Json:
        fleet_objects, step_edits = runs[step]
        folder = tmp_path / step.replace(" ", "-")
        return simulated_service_status(folder, fleet_objects, settings, step_edits)

    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        simulated = dict(zip(runs, pool.map(simulate, runs), strict=True))
    expected = {step: meaning(status) for step, status in simulated.items()}
    for step, status in expected.items():  # what the steps stand on: simulate routes each
        assert status["routed"] == "2/2", (step, status)
        assert all(row[1] == "Accepted" for row in status["clusters"].values()), (step, status)
    assert sorted(addresses) == sorted(expected["applied"]["clusters"])

    applied = apply_fleet(plane, registered)
    clusters = {name: plane.clusters.clusters[name].client for name in sorted(addresses)}
    routes = RouteReader(clusters)
    deleted = False
    try:
        with played_gateway_controller(clients=clusters) as controller:
            wait_for(
                lambda: all(
                    condition(plane.client.get(xr_path(ic)), "Ready").get("status") == "True"
                    for ic in applied
                ),
                what="the clusters registered, their Gateways programmed",
                timeout=STEP_SETTLE,
            )
            applied += apply_fleet(plane, deployed)
            settle(plane, routes, expected["applied"], FIRST_SETTLE)
            routes_before = {n: c.list(ROUTES) for n, c in clusters.items()}
            for step, patch in (
                ("edit 1", edits[0]["patch"]),
                ("edit 2", edits[1]["patch"]),
                ("rolled back", edits[0]["patch"]),
            ):
                before = copy.deepcopy(the_service(plane)["status"])
                plane.client.merge_patch(xr_path(applied_service(applied)), patch)
                settle(
                    plane, routes, expected[step], STEP_SETTLE,
                    poll=RoutePoll(before=meaning(before), after=expected[step]),
                )  # fmt: skip
            # Updated in place: every route is the one composed first.
            uids = {n: {r["metadata"]["uid"] for r in c.list(ROUTES)} for n, c in clusters.items()}
            assert uids == {
                n: {r["metadata"]["uid"] for r in rs} for n, rs in routes_before.items()
            }

            assert not routes.dangling, routes.dangling  # every weight sent to a Service

            # The canary's ModelDeployment deleted under the ModelService. Its replicas'
            # Services may go before the ModelService's next reconcile takes them out of the
            # routes: how often a poll saw a route naming a Service gone is printed (-s).
            canary = next(o for o in applied if o["metadata"]["name"] == CANARY)
            before = copy.deepcopy(the_service(plane)["status"])
            plane.client.delete(xr_path(canary))
            deleted_at = time.monotonic()
            settle(
                plane, routes, expected["canary deleted"], STEP_SETTLE,
                poll=RoutePoll(before=meaning(before), after=expected["canary deleted"]),
            )  # fmt: skip
            if routes.dangling:
                last = max(t for t, _ in routes.dangling) - deleted_at
                where = sorted({w for _, w in routes.dangling})
                print(f"\na route named a Service gone in {len(routes.dangling)} reads, the last "
                      f"{last:.0f}s after the deletion: {', '.join(where)}")  # fmt: skip
            said = condition(the_service(plane), "Routed")
            assert CANARY in said.get("message", ""), said
            # Nothing else lost: the stable revision serves on both clusters, as simulate says.
            stable = next(o for o in applied if o["metadata"]["name"] == STABLE)
            assert condition(plane.client.get(xr_path(stable)), "Ready").get("status") == "True"
            assert not controller.errors, controller.errors
            assert not plane.clusters.stand_ins.errors()

            deleted = True
            delete_fleet(plane, applied)
            wait_for_nothing_left(plane)
            for name, client in clusters.items():
                assert not client.list(ROUTES), f"{name} keeps an HTTPRoute"
    finally:
        if not deleted:  # a failed run must not leak into the next test
            with contextlib.suppress(Exception):
                delete_fleet(plane, applied)
        # Its own clusters only (their Gateways go with them).
        for name in addresses:
            plane.clusters.discard(name)


def applied_service(applied: list[Json]) -> Json:
    return next(o for o in applied if o["kind"] == "ModelService")
