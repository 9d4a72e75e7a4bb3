"""The simulated workload clusters of a fleet: one per InferenceCluster."""

from typing import Any

from modelfleet_contracts.api import INFERENCE_CLUSTER
from modelfleet_contracts.fields import list_at, mapping_at

from modelfleet_cli.simulate.fleet import Fleet
from modelfleet_cli.simulate.scheduling import Pool
from modelfleet_cli.simulate.workload import WorkloadCluster


def workload_clusters(fleet: Fleet, settings: dict[str, Any]) -> dict[str, WorkloadCluster]:
    """One simulated cluster per InferenceCluster of the fleet, shaped by its spec (pools,
    its named StorageClass) and by `simulation.yaml` (`clusters.<name>`: extra
    `storageClasses`, `missingStorageClasses`, pre-existing `objects`, and `crds`: the API
    groups whose CRDs the cluster already has, such as a LeaderWorkerSet the platform team
    installed itself)."""
    per_cluster = mapping_at(settings, "clusters")
    hydration_rounds = int(settings.get("hydrationRounds", 2))
    clusters = {}
    for ic in fleet.xrs:
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
        for obj in list_at(extra, "objects"):
            if isinstance(obj, dict):
                cluster.add_existing(obj)
        clusters[name] = cluster
    return clusters
