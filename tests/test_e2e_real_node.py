"""The real workload node's pieces that need no node: what an InferenceCluster's pools ask of
it, the hostPath provisioner's decisions, and the settings its parts are given.

The node itself runs in tests/e2e/test_real_node_real.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_devtools.e2e import node_config
from modelfleet_devtools.e2e.kube import resource_path
from modelfleet_devtools.e2e.node import NodeFailed, NodeSettings, RealNode
from modelfleet_devtools.e2e.node_egress import egress_policy
from modelfleet_devtools.e2e.processes import Processes
from modelfleet_devtools.e2e.provisioner import PROVISIONED_BY, HostPathProvisioner, volume_for
from modelfleet_devtools.e2e.workload import RWX_PROVISIONER, node_settings
from modelfleet_devtools.paths import EXAMPLES_DIR

Json = dict[str, Any]
SERVED = "rwx.test/served"


def claim(name: str, storage_class: str, *, size: str = "5Gi", phase: str = "Pending") -> Json:
    return {
        "metadata": {"name": name, "namespace": "modelfleet", "uid": f"uid-{name}"},
        "spec": {
            "storageClassName": storage_class,
            "accessModes": ["ReadWriteMany"],
            "resources": {"requests": {"storage": size}},
        },
        "status": {"phase": phase},
    }


def storage_class(name: str, provisioner: str, reclaim: str | None = None) -> Json:
    sc: Json = {"metadata": {"name": name}, "provisioner": provisioner}
    if reclaim:
        sc["reclaimPolicy"] = reclaim
    return sc


class FakeApi:
    """The three collections the provisioner reads, and what it creates and deletes."""

    def __init__(self, classes: list[Json], claims: list[Json], volumes: list[Json]) -> None:
        self.collections = {
            resource_path("storage.k8s.io/v1", "storageclasses"): classes,
            resource_path("v1", "persistentvolumeclaims"): claims,
            resource_path("v1", "persistentvolumes"): volumes,
        }
        self.created: list[Json] = []
        self.deleted: list[str] = []

    def list(self, path: str) -> list[Json]:
        return self.collections[path]

    def create(self, path: str, obj: Json) -> Json:
        self.created.append(obj)
        return obj

    def delete(self, path: str) -> None:
        self.deleted.append(path.rpartition("/")[2])


def test_a_real_node_holds_the_quickstart_pools_labels_and_gpus() -> None:
    cluster = yaml.safe_load((EXAMPLES_DIR / "quickstart" / "inferencecluster.yaml").read_text())
    settings = node_settings(cluster, "127.0.0.1:5000", None)
    assert settings.name == "gke-dev"
    assert settings.labels == {"cloud.google.com/gke-nodepool": "l4"}
    assert settings.extended == {"nvidia.com/gpu": "2"}  # 2 nodes x 1 L4, on one node
    assert settings.provisioner == RWX_PROVISIONER


def test_a_real_node_provisions_a_managed_class_in_its_csi_drivers_place() -> None:
    cluster = yaml.safe_load((EXAMPLES_DIR / "gated-model" / "inferencecluster.yaml").read_text())
    assert node_settings(cluster, "127.0.0.1:5000", None).provisioner == "efs.csi.aws.com"


@pytest.mark.parametrize(
    ("case", "reclaim", "expected_policy"),
    [
        ("a class without a policy deletes, as Kubernetes defaults it", None, "Delete"),
        ("a Retain class keeps its volumes", "Retain", "Retain"),
    ],
)
def test_a_volume_is_made_for_a_claim_at_its_size_with_its_classes_policy(
    case: str, reclaim: str | None, expected_policy: str, tmp_path: Path
) -> None:
    volume = volume_for(
        claim("models", "filestore-rwx", size="7Gi"),
        storage_class("filestore-rwx", SERVED, reclaim),
        tmp_path,
        SERVED,
    )
    spec = volume["spec"]
    assert spec["capacity"] == {"storage": "7Gi"}, case
    assert spec["accessModes"] == ["ReadWriteMany"]
    assert spec["persistentVolumeReclaimPolicy"] == expected_policy
    assert spec["claimRef"]["uid"] == "uid-models"
    assert Path(spec["hostPath"]["path"]).parent == tmp_path
    assert volume["metadata"]["annotations"][PROVISIONED_BY] == SERVED


def test_the_provisioner_serves_only_pending_claims_of_its_own_classes(tmp_path: Path) -> None:
    api = FakeApi(
        classes=[storage_class("ours", SERVED), storage_class("theirs", "csi.example.com")],
        claims=[
            claim("pending-ours", "ours"),
            claim("pending-theirs", "theirs"),
            claim("bound-ours", "ours", phase="Bound"),
        ],
        volumes=[],
    )
    HostPathProvisioner(api, tmp_path, SERVED).pass_once()  # type: ignore[arg-type]
    assert [v["spec"]["claimRef"]["name"] for v in api.created] == ["pending-ours"]
    made = Path(api.created[0]["spec"]["hostPath"]["path"])
    assert made.is_dir() and made.stat().st_mode & 0o777 == 0o777  # a non-root pod writes


@pytest.mark.parametrize(
    ("case", "policy", "phase", "deleted"),
    [
        ("a released volume of a Delete class goes with its files", "Delete", "Released", True),
        ("a released volume of a Retain class stays", "Retain", "Released", False),
        ("a bound volume stays", "Delete", "Bound", False),
    ],
)
def test_the_provisioner_honours_the_reclaim_policy(
    case: str, policy: str, phase: str, deleted: bool, tmp_path: Path
) -> None:
    volume = volume_for(claim("gone", "ours"), storage_class("ours", SERVED, policy), tmp_path,
                        SERVED)  # fmt: skip
    volume["status"] = {"phase": phase}
    directory = Path(volume["spec"]["hostPath"]["path"])
    directory.mkdir()
    (directory / "model.safetensors").write_bytes(b"weights")
    api = FakeApi([storage_class("ours", SERVED, policy)], [], [volume])
    HostPathProvisioner(api, tmp_path, SERVED).pass_once()  # type: ignore[arg-type]
    assert (api.deleted == [volume["metadata"]["name"]]) is deleted, case
    assert directory.exists() is not deleted, case


def test_pods_are_given_the_mirrors_they_lack_and_keep_their_own() -> None:
    policy, binding = egress_policy(
        {"HF_ENDPOINT": "http://198.51.100.1:4000"}, "admissionregistration.k8s.io/v1"
    )
    assert binding["spec"]["policyName"] == policy["metadata"]["name"]
    (mutation,) = policy["spec"]["mutations"]
    expression = mutation["applyConfiguration"]["expression"]
    assert '"HF_ENDPOINT"' in expression and '"http://198.51.100.1:4000"' in expression
    assert '!c.env.exists(e, e.name == "HF_ENDPOINT")' in expression  # a pod's own value wins


def test_the_node_pulls_through_its_mirror_and_runs_with_this_machines_settings(
    tmp_path: Path,
) -> None:
    layout = node_config.NodeLayout(tmp_path)
    mirror = node_config.hosts_toml("docker.io", "198.51.100.1:5000")
    assert 'server = "https://registry-1.docker.io"' in mirror
    assert '[host."http://198.51.100.1:5000"]' in mirror
    kubelet = json.loads(
        node_config.kubelet_config(
            layout, cgroup_root="/n", cluster_dns="198.51.100.2", ca=tmp_path / "ca.crt"
        )
    )
    assert (kubelet["cgroupDriver"], kubelet["failCgroupV1"], kubelet["failSwapOn"]) == (
        "cgroupfs", False, False,
    )  # fmt: skip
    assert kubelet["clusterDNS"] == ["198.51.100.2"]
    containerd = node_config.containerd_config(layout)
    assert "restrict_oom_score_adj = true" in containerd and "SystemdCgroup = false" in containerd
    assert str(layout.containerd_root) in containerd


def test_a_stopped_node_part_is_not_alive_until_started_again_with_the_same_flags(
    tmp_path: Path,
) -> None:
    """What a lost cluster's scenario does to a real node: its kube-apiserver stopped, the
    other parts running on, then the same command line started again, which the node's own
    liveness check then follows (not the process that was stopped)."""
    processes = Processes(tmp_path / "logs")
    (tmp_path / "logs").mkdir()
    node = RealNode(NodeSettings("gke-dev", "127.0.0.1:5000"), tmp_path / "node", processes)
    for part in ("kube-apiserver", "kubelet"):
        node.started.append(processes.start(f"gke-dev-{part}", ["sleep", "60"]))
    try:
        node.stop_part("kube-apiserver")
        assert [p.name for p in processes.dead()] == ["gke-dev-kube-apiserver"]
        with pytest.raises(NodeFailed, match="gke-dev-kube-apiserver exited"):
            node.check_alive()
        node.start_part("kube-apiserver")
        node.check_alive()
        assert not processes.dead()
        assert sorted(p.name for p in node.started) == ["gke-dev-kube-apiserver", "gke-dev-kubelet"]
        assert all(p.argv == ["sleep", "60"] for p in node.started)
    finally:
        processes.stop_all()
