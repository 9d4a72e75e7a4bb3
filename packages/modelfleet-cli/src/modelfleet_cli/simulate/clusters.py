"""The simulated workload clusters of a fleet: one per InferenceCluster."""

from typing import Any

from modelfleet_contracts.api import GATEWAY_API_GROUP, INFERENCE_CLUSTER
from modelfleet_contracts.clusters import DEFAULT_WORKLOAD_NAMESPACE
from modelfleet_contracts.fields import list_at, mapping_at

from modelfleet_cli.simulate.fleet import Fleet
from modelfleet_cli.simulate.gateways import gateway_address, programmed_gateway
from modelfleet_cli.simulate.scheduling import Pool
from modelfleet_cli.simulate.workload import WorkloadCluster


def workload_clusters(fleet: Fleet, settings: dict[str, Any]) -> dict[str, WorkloadCluster]:
    """One simulated cluster per InferenceCluster of the fleet, shaped by its spec (pools,
    its named StorageClass) and by `simulation.yaml` (`clusters.<name>`: extra
    `storageClasses`, `missingStorageClasses`, pre-existing `objects`, and `crds`: the API
    groups whose CRDs the cluster already has, such as a LeaderWorkerSet the platform team
    installed itself).

    A cluster whose InferenceCluster declares a Gateway (`spec.gatewayRef`) has the Gateway
    API and that Gateway, Programmed at an address of its own (`gateway_address`), unless
    `clusters.<name>.missingGateway` says the platform team has not created it."""
    per_cluster = mapping_at(settings, "clusters")
    hydration_rounds = int(settings.get("hydrationRounds", 2))
    clusters = {}
    for index, ic in enumerate(fleet.xrs):
        if ic["kind"] != INFERENCE_CLUSTER:
            continue
        name = ic["metadata"]["name"]
        spec = mapping_at(ic, "spec")
        extra = mapping_at(per_cluster, name)
        classes = {str(c) for c in list_at(extra, "storageClasses")}
        named = mapping_at(spec, "storage").get("storageClassName")
        if named:
            classes.add(str(named))
        classes -= {str(c) for c in list_at(extra, "missingStorageClasses")}
        pools = [
            Pool(
                name=str(p.get("name")),
                node_count=int(p.get("nodeCount") or 0),
                gpus_per_node=int(mapping_at(p, "gpu").get("count") or 0),
                node_selector={str(k): str(v) for k, v in mapping_at(p, "nodeSelector").items()},
            )
            for p in list_at(spec, "nodePools")
            if isinstance(p, dict)
        ]
        cluster = WorkloadCluster(name, pools, classes, hydration_rounds=hydration_rounds)
        for group in list_at(extra, "crds"):
            cluster.install_crd(str(group))
        gateway_ref = mapping_at(spec, "gatewayRef")
        if gateway_ref.get("name"):
            cluster.install_crd(GATEWAY_API_GROUP)
            if not extra.get("missingGateway"):
                namespace = gateway_ref.get("namespace") or spec.get("workloadNamespace")
                cluster.add_existing(
                    programmed_gateway(
                        str(gateway_ref["name"]),
                        str(namespace or DEFAULT_WORKLOAD_NAMESPACE),
                        gateway_address(index),
                    )
                )
        for obj in list_at(extra, "objects"):
            if isinstance(obj, dict):
                cluster.add_existing(obj)
        clusters[name] = cluster
    return clusters
