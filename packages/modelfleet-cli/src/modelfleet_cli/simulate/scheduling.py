"""Placing a workload cluster's pods on its GPU node pools, and the status that follows.

Deployments and LeaderWorkerSets are placed first created first served; a LeaderWorkerSet
group is placed whole or not at all (like a gang). What fitted becomes each workload's
status, as the Deployment / LeaderWorkerSet controllers would write it.
"""

from dataclasses import dataclass, field
from typing import Any

from modelfleet_contracts.api import LWS_KIND
from modelfleet_contracts.conditions import Status
from modelfleet_contracts.fields import int_at, list_at, mapping_at, mapping_path

GPU = "nvidia.com/gpu"


@dataclass(frozen=True)
class Pool:
    """A GPU node pool as the InferenceCluster declares it."""

    name: str
    node_count: int
    gpus_per_node: int
    node_selector: dict[str, str] = field(default_factory=dict)


def pod_gpus(template: dict[str, Any]) -> int:
    total = 0
    for c in list_at(mapping_at(template, "spec"), "containers"):
        resources = mapping_at(c, "resources")
        value = mapping_at(resources, "limits").get(GPU) or mapping_at(resources, "requests").get(
            GPU
        )
        try:
            total += int(value or 0)
        except (TypeError, ValueError):
            continue
    return total


def pod_templates(kind: str, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod templates of one group: a Deployment's one pod, a LeaderWorkerSet's leader and
    its workers."""
    if kind != LWS_KIND:
        return [mapping_at(spec, "template")]
    lwt = mapping_at(spec, "leaderWorkerTemplate")
    size = max(1, int_at(lwt, "size", 1))
    return [mapping_at(lwt, "leaderTemplate")] + [
        mapping_at(lwt, "workerTemplate") or mapping_at(lwt, "leaderTemplate")
    ] * (size - 1)


def place_group(
    pools: list[Pool], templates: list[dict[str, Any]], free: dict[str, list[int]]
) -> tuple[bool, str]:
    """Place every pod of one group (all or nothing, like a gang)."""
    trial = {name: list(nodes) for name, nodes in free.items()}
    for template in templates:
        gpus = pod_gpus(template)
        selector = {
            str(k): str(v) for k, v in mapping_path(template, "spec", "nodeSelector").items()
        }
        matching = [
            p for p in pools if all(p.node_selector.get(k) == v for k, v in selector.items())
        ]
        if not matching:
            return False, f"0 nodes match node selector {selector}"
        for pool in matching:
            nodes = trial[pool.name]
            slot = next(
                (i for i, left in enumerate(nodes) if left >= gpus),
                None,
            )
            if slot is not None:
                nodes[slot] -= gpus
                break
        else:
            names = ", ".join(p.name for p in matching)
            return False, (
                f"Insufficient {GPU}: a pod needs {gpus} GPU(s) on one node; "
                f"pool {names} has no node with room for the whole group"
            )
    free.update(trial)
    return True, ""


def workload_status(kind: str, groups: int, ready: int, why: str) -> dict[str, Any]:
    """The status a Deployment / LeaderWorkerSet controller writes for `ready` of `groups`."""
    available = ready >= groups
    what = "groups" if kind == LWS_KIND else "pods"
    return {
        "replicas": groups,
        "updatedReplicas": groups,
        "readyReplicas": ready,
        "availableReplicas": ready,
        "conditions": [
            Status(
                "Available",
                status=available,
                reason="MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                message=f"{ready}/{groups} {what} ready"
                + (f": {why}" if why and not available else ""),
            ).as_condition(),
            Status.true(
                "Progressing",
                "NewReplicaSetAvailable" if available else "ReplicaSetUpdated",
                why if why and not available else "",
            ).as_condition(),
        ],
    }
