"""The gateway controller the harness plays on workload clusters that have the Gateway API.

No Gateway API implementation runs on the e2e workload clusters, so while a test asks for it
(`played_gateway_controller`) a background thread does what one would, pass after pass, by the
rule `modelfleet simulate` plays (modelfleet_cli.simulate.gateways): every Gateway Programmed
at its address (the one it reports, else the one it asks for in `spec.addresses`), and every
HTTPRoute naming an existing Gateway as its parent Accepted by it, at the route's generation. A
route naming a Gateway that does not exist gets no status. Status is written only when it
differs from what the controller would write, so a settled cluster is not touched.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from modelfleet_cli.simulate.gateways import accept, program

from .kube import ApiError, KubeClient, resource_path

Json = dict[str, Any]
GATEWAY_API = "gateway.networking.k8s.io/v1"


def _without_times(status: Any) -> Any:
    """`status` with every condition's lastTransitionTime left out (what differs by clock)."""
    if isinstance(status, dict):
        return {k: _without_times(v) for k, v in status.items() if k != "lastTransitionTime"}
    if isinstance(status, list):
        return [_without_times(v) for v in status]
    return status


class PlayedGatewayController:
    """One pass at a time over each named cluster's Gateways and HTTPRoutes."""

    def __init__(self, clients: Mapping[str, KubeClient]) -> None:
        self.clients = dict(clients)
        self.errors: list[str] = []
        self.passes = 0

    def step(self) -> None:
        for name, client in self.clients.items():
            try:
                self._reconcile(client)
            except ApiError as error:
                if error.status not in (404, 409):  # gone or changed meanwhile: next pass
                    self.errors.append(f"{name}: {error}")
            except Exception as error:  # a harness bug: kept for the test to report
                self.errors.append(f"{name}: {error!r}")
        self.passes += 1

    def _reconcile(self, client: KubeClient) -> None:
        gateways = client.list(resource_path(GATEWAY_API, "gateways"))
        keys = {("Gateway", g["metadata"]["namespace"], g["metadata"]["name"]) for g in gateways}
        for gateway in gateways:
            wanted = copy.deepcopy(gateway)
            program(wanted)
            self._write_status(client, "gateways", gateway, wanted)
        for route in client.list(resource_path(GATEWAY_API, "httproutes")):
            wanted = copy.deepcopy(route)
            accept(wanted, route["metadata"]["namespace"], keys)
            self._write_status(client, "httproutes", route, wanted)

    @staticmethod
    def _write_status(client: KubeClient, plural: str, seen: Json, wanted: Json) -> None:
        before, after = seen.get("status") or {}, wanted.get("status") or {}
        if _without_times(before) == _without_times(after):
            return
        meta = seen["metadata"]
        path = resource_path(GATEWAY_API, plural, meta["namespace"], meta["name"])
        # A merge patch replaces lists whole: `parents: []` takes every parent's entry out.
        patch: Json | None = (
            {"status": {"parents": []}} if plural == "httproutes" and not after else None
        )
        client.merge_patch(path, patch or {"status": after}, status=True)


@contextmanager
def played_gateway_controller(
    clients: Mapping[str, KubeClient], every: float = 1.0
) -> Iterator[PlayedGatewayController]:
    """Play the gateway controller on `clients` (cluster name -> its API server) on a
    background thread until the block ends."""
    controller = PlayedGatewayController(clients)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            controller.step()
            stop.wait(every)

    thread = threading.Thread(target=loop, name="played-gateway-controller", daemon=True)
    thread.start()
    try:
        yield controller
    finally:
        stop.set()
        thread.join(timeout=30)
