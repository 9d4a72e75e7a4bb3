"""The configuration files of a real workload node, as text: containerd, its registry
mirrors, CNI, the kubelet, kube-proxy and CoreDNS. Pure functions of the node's folders and
addresses (node.py writes them and starts the parts).

The settings this machine needs (../shared/realcp/README.md, tested there): cgroupfs and
cgroup v1 (`failCgroupV1: false`), no swap check, containerd's CRI with
`restrict_oom_score_adj` (root here lacks CAP_SYS_RESOURCE) and runc without systemd.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

CNI_BIN_DIR = Path("/usr/lib/cni")  # Debian's containernetworking-plugins
POD_SUBNET = "10.244.0.0/24"  # one node: host-local hands out its addresses
CLUSTER_CIDR = "10.244.0.0/16"
SERVICE_RANGE = "10.96.0.0/24"
KUBERNETES_SERVICE_IP = "10.96.0.1"  # the first of SERVICE_RANGE: the `kubernetes` Service
CLUSTER_DOMAIN = "cluster.local"
SANDBOX_IMAGE = "registry.k8s.io/pause:3.10"
# The registries a node mirrors to the suite's loopback registry, as a platform team mirrors
# the registries its images come from: the release's own images, the pod sandbox's, and
# Docker Hub (the engines' images).
MIRRORED_REGISTRIES = ("ghcr.io", "registry.k8s.io", "docker.io")
UPSTREAM = {"docker.io": "https://registry-1.docker.io"}


@dataclass(frozen=True)
class NodeLayout:
    """Where one node keeps its state; every folder under its own work folder."""

    work: Path

    @property
    def containerd_root(self) -> Path:
        return self.work / "containerd" / "root"

    @property
    def containerd_state(self) -> Path:
        return self.work / "containerd" / "state"

    @property
    def containerd_socket(self) -> Path:
        return self.work / "containerd" / "containerd.sock"

    @property
    def certs_d(self) -> Path:
        return self.work / "containerd" / "certs.d"

    @property
    def cni_conf_dir(self) -> Path:
        return self.work / "cni" / "net.d"

    @property
    def cni_state(self) -> Path:
        return self.work / "cni" / "networks"

    @property
    def kubelet_root(self) -> Path:
        return self.work / "kubelet"

    @property
    def pod_logs(self) -> Path:
        return self.work / "pod-logs"

    @property
    def volumes(self) -> Path:
        return self.work / "volumes"


def containerd_config(layout: NodeLayout) -> str:
    """containerd 1.6's config (version 2): its own root, state, socket and runc state."""
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    return f"""version = 2
root = "{layout.containerd_root}"
state = "{layout.containerd_state}"

[grpc]
  address = "{layout.containerd_socket}"

[ttrpc]
  address = "{layout.containerd_socket}.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "{layout.containerd_root}/opt"

[{cri}]
  sandbox_image = "{SANDBOX_IMAGE}"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[{cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[{cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[{cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  Root = "{layout.containerd_state}/runc"

[{cri}.cni]
  bin_dir = "{CNI_BIN_DIR}"
  conf_dir = "{layout.cni_conf_dir}"

[{cri}.registry]
  config_path = "{layout.certs_d}"
"""


def hosts_toml(registry: str, mirror: str) -> str:
    """certs.d/<registry>/hosts.toml: pull and resolve through `mirror` (plain HTTP), the
    registry itself as the fallback a real node would have."""
    upstream = UPSTREAM.get(registry, f"https://{registry}")
    return f"""server = "{upstream}"

[host."http://{mirror}"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
"""


def cni_conflist(layout: NodeLayout) -> str:
    """A bridge network for the pods, masqueraded out of the node, with host ports."""
    config = {
        "cniVersion": "1.0.0",
        "name": "modelfleet-node",
        "plugins": [
            {
                "type": "bridge",
                "bridge": "cni0",
                "isGateway": True,
                "ipMasq": True,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "dataDir": str(layout.cni_state),
                    "ranges": [[{"subnet": POD_SUBNET}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }
    return json.dumps(config, indent=2)


def kubelet_config(layout: NodeLayout, *, cgroup_root: str, cluster_dns: str, ca: Path) -> str:
    """The kubelet's KubeletConfiguration: cgroupfs under a cgroup root of its own, cluster
    DNS at `cluster_dns`, and eviction thresholds low enough for a shared disk."""
    config = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": cgroup_root,
        "failCgroupV1": False,
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{layout.containerd_socket}",
        "podLogsDir": str(layout.pod_logs),
        "clusterDNS": [cluster_dns],
        "clusterDomain": CLUSTER_DOMAIN,
        "resolvConf": str(layout.work / "resolv.conf"),
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": False},
            "x509": {"clientCAFile": str(ca)},
        },
        "authorization": {"mode": "AlwaysAllow"},
        "serializeImagePulls": False,
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "evictionHard": {
            "nodefs.available": "1%",
            "imagefs.available": "1%",
            "memory.available": "100Mi",
        },
        "registerNode": True,
        "healthzPort": 0,
        "readOnlyPort": 0,
    }
    return json.dumps(config, indent=2)


def pod_resolv(cluster_dns: str, namespace: str = "default") -> str:
    """The resolv.conf a pod with `dnsPolicy: ClusterFirst` in `namespace` is given."""
    search = f"{namespace}.svc.{CLUSTER_DOMAIN} svc.{CLUSTER_DOMAIN} {CLUSTER_DOMAIN}"
    return f"search {search}\nnameserver {cluster_dns}\noptions ndots:5\n"


def kube_proxy_config(kubeconfig: Path, hostname: str) -> str:
    """kube-proxy in iptables mode; conntrack left as the host has it (a network namespace
    cannot set the host's conntrack table size)."""
    config = {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "hostnameOverride": hostname,
        "mode": "iptables",
        "clusterCIDR": CLUSTER_CIDR,
        "conntrack": {"maxPerCore": 0},
        "metricsBindAddress": "127.0.0.1:10249",  # the node's own loopback
        "healthzBindAddress": "",
    }
    return json.dumps(config, indent=2)


def corefile(bind: str, kubeconfig: Path) -> str:
    """CoreDNS serving cluster.local (Services and pods) at the node's clusterDNS address;
    nothing outside the cluster resolves (the node has no upstream)."""
    return f""".:53 {{
    bind {bind}
    errors
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        kubeconfig {kubeconfig}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }}
    cache 5
}}
"""
