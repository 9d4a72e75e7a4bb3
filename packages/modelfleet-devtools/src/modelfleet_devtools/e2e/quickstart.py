"""The quickstart fleet (one cluster, one cached model, one deployment) as the e2e scenarios
on the real control plane watch it: its cache's rows, its serving workload, its Objects."""

from __future__ import annotations

from typing import Any

from modelfleet_devtools.e2e.fleet import ServedFleet, condition, xr_path
from modelfleet_devtools.e2e.kube import KubeClient, resource_path
from modelfleet_devtools.e2e.staged import check_staged

Json = dict[str, Any]
CLUSTER = "gke-dev"
OBJECTS = resource_path("kubernetes.m.crossplane.io/v1alpha1", "objects")
# What goes by design with a source: its hydration Job's Object (a finished Job's stays, slim,
# until its source or cache goes). The hydrator's ServiceAccount, Role and RoleBinding are the
# InferenceCluster's, composed once per workload namespace: they last.
HYDRATION_KINDS = frozenset({"Job"})


class QuickstartFleet(ServedFleet):
    def row(self, cluster: str = CLUSTER) -> Json:
        rows = (self.get(self.cache).get("status") or {}).get("clusters") or []
        return next((r for r in rows if r.get("name") == cluster), {})

    def ready(self, xr: Json) -> bool:
        return condition(self.get(xr), "Ready").get("status") == "True"

    def workload(self, cluster: str = CLUSTER) -> KubeClient:
        return self.plane.clusters.clusters[cluster].client

    def served_path(self) -> str:
        """The --model path the serving Deployment on the cluster reads."""
        items = self.workload().list(resource_path("apps/v1", "deployments"))
        args = [
            a
            for d in items
            for c in d["spec"]["template"]["spec"]["containers"]
            for a in c.get("args") or []
        ]
        return next((a.split("=", 1)[1] for a in args if a.startswith("--model=")), "")

    def object_names(self) -> set[str]:
        return {o["metadata"]["name"] for o in self.plane.client.list(OBJECTS)}

    def lasting_objects(self) -> set[str]:
        """Objects that stay composed while the fleet is unchanged: claims, namespaces,
        classes, the hydrator's access, workloads and their Services (not Jobs' Objects)."""
        return {
            o["metadata"]["name"]
            for o in self.plane.client.list(OBJECTS)
            if o["spec"]["forProvider"]["manifest"].get("kind") not in HYDRATION_KINDS
        }

    def uids(self, api: str, plural: str) -> set[str]:
        return {o["metadata"]["uid"] for o in self.workload().list(resource_path(api, plural))}

    def everything_ready(self) -> bool:
        self.plane.check_alive()
        return all(self.ready(o) for o in self.objects if o["kind"] != "Secret")

    def staged(self) -> tuple[int, list[str]]:
        """check_staged on the cache as it is now."""
        clusters = self.plane.clusters
        assert clusters.pods is not None and clusters.sources is not None
        return check_staged(clusters.pods, clusters.sources, [self.get(self.cache)])

    def change_revision(self, revision: str) -> None:
        self.plane.client.merge_patch(
            xr_path(self.cache), {"spec": {"huggingFace": {"revision": revision}}}
        )
