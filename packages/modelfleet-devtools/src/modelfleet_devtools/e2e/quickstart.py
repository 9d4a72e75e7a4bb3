"""The quickstart fleet (one cluster, one cached model, one deployment) as the e2e scenarios
on the real control plane watch it: its cache's rows, its serving workload, its Objects."""

from __future__ import annotations

from typing import Any

from modelfleet_devtools.e2e.fleet import GROUP_VERSION, ServedFleet, condition, xr_path
from modelfleet_devtools.e2e.kube import KubeClient, resource_path
from modelfleet_devtools.e2e.processes import wait_for
from modelfleet_devtools.e2e.staged import check_staged

Json = dict[str, Any]
CLUSTER = "gke-dev"
OBJECT_API = "kubernetes.m.crossplane.io/v1alpha1"
OBJECTS = resource_path(OBJECT_API, "objects")
USAGES = "protection.crossplane.io/v1beta1"
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
        """The model path the serving Deployment on the cluster reads: `vllm serve`'s
        positional model (its first argument), or a `--model=` the args give instead."""
        items = self.workload().list(resource_path("apps/v1", "deployments"))
        for args in (
            c.get("args") or [] for d in items for c in d["spec"]["template"]["spec"]["containers"]
        ):
            named = [a.split("=", 1)[1] for a in args if a.startswith("--model=")]
            if named:
                return named[0]
            if args and not args[0].startswith("-"):
                return str(args[0])
        return ""

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

    def deployment_left_on(self, cluster: str) -> list[str]:
        """The deployment's ModelReplica on `cluster` and the Usages it holds there (of the
        cache and of the cluster), as still on the control plane."""
        namespace = self.deployment["metadata"]["namespace"]
        replicas = self.plane.client.list(resource_path(GROUP_VERSION, "modelreplicas", namespace))
        usages = self.plane.client.list(resource_path(USAGES, "usages", namespace))
        return [
            f"ModelReplica {r['metadata']['name']} (deletionTimestamp "
            f"{r['metadata'].get('deletionTimestamp')}, finalizers "
            f"{r['metadata'].get('finalizers')})"
            for r in replicas
            if r["spec"].get("clusterName") == cluster
        ] + [
            f"Usage {u['metadata']['name']}: {u['spec'].get('reason')}"
            for u in usages
            if f"on cluster {cluster};" in str(u["spec"].get("reason"))
            or (
                u["spec"]["of"].get("kind") == "InferenceCluster"
                and u["spec"]["of"]["resourceRef"]["name"] == cluster
            )
        ]

    def retry_hydration(self, cluster: str) -> None:
        """Retry a failed hydration on `cluster` as docs/modelcache.md says: delete its Job's
        Object."""
        for obj in self.plane.client.list(OBJECTS):
            manifest = obj["spec"]["forProvider"]["manifest"]
            if (
                manifest.get("kind") == "Job"
                and obj["spec"]["providerConfigRef"]["name"] == cluster
            ):
                meta = obj["metadata"]
                self.plane.client.delete(
                    resource_path(OBJECT_API, "objects", meta["namespace"], meta["name"])
                )

    def placed(self) -> dict[str, int]:
        """Replicas per cluster, as the deployment's status gives them."""
        rows = (self.get(self.deployment).get("status") or {}).get("clusters") or []
        return {r["name"]: r.get("replicas", 0) for r in rows}

    def workloads_on(self, cluster: str) -> list[str]:
        """The serving Deployments and Services in the workload namespace of `cluster`."""
        return [
            i["metadata"]["name"]
            for api, plural in (("apps/v1", "deployments"), ("v1", "services"))
            for i in self.workload(cluster).list(resource_path(api, plural))
            if i["metadata"].get("namespace") == "modelfleet"
        ]

    def staged_anew_losing_nothing(
        self, lasting: set[str], claims: set[str], serving: set[str], before: Json
    ) -> None:
        """After a restart mid-staging: the new source staged and everything Ready, with no
        lasting Object dropped on the way and no claim or serving Deployment recreated."""

        def staged_anew() -> bool:
            self.plane.check_alive()
            assert lasting <= self.lasting_objects(), "a lasting Object was dropped"
            row = self.row()
            return (
                row.get("fingerprint") != before["fingerprint"]
                and row.get("phase") == "Ready"
                and self.everything_ready()
            )

        wait_for(staged_anew, what="the new source staged after the restart", timeout=300, every=3)
        assert claims <= self.uids("v1", "persistentvolumeclaims"), "a claim was recreated"
        assert serving <= self.uids("apps/v1", "deployments"), "serving was restarted"
