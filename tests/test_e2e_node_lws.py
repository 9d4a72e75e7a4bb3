"""LeaderWorkerSet on a real node, the parts that need no node: when a node runs the
controller, its out-of-cluster configuration, and the upstream webhook configurations
pointed at its loopback server. The controller itself runs in tests/e2e/test_real_gang_real.py.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_devtools.e2e import node_lws
from modelfleet_devtools.e2e.workload import node_settings
from modelfleet_devtools.paths import EXAMPLES_DIR

Json = dict[str, Any]
MANIFESTS = node_lws.LWS_FILES / node_lws.WEBHOOK_MANIFESTS


def cluster_of(example_file: str, name: str) -> Json:
    documents = yaml.safe_load_all((EXAMPLES_DIR / example_file).read_text())
    return next(d for d in documents if d and d["metadata"]["name"] == name)


@pytest.mark.parametrize(
    ("case", "example_file", "cluster", "runs_lws"),
    [
        ("asks for LeaderWorkerSet to be installed", "multinode/inferenceclusters.yaml",
         "gke-us-central", True),
        ("multinode's cluster without the install", "multinode/inferenceclusters.yaml",
         "gke-us-east", False),
        ("the quickstart's cluster", "quickstart/inferencecluster.yaml", "gke-dev", False),
    ],
)  # fmt: skip
def test_a_node_runs_the_lws_controller_when_its_cluster_asks_for_lws(
    case: str, example_file: str, cluster: str, runs_lws: bool
) -> None:
    settings = node_settings(cluster_of(example_file, cluster), "127.0.0.1:5000", None)
    assert settings.leader_worker_set is runs_lws, case


def test_the_controller_runs_out_of_cluster_serving_its_webhooks_on_loopback(
    tmp_path: Path,
) -> None:
    config = yaml.safe_load(node_lws.controller_config(tmp_path / "certs"))
    assert config["kind"] == "Configuration"
    assert config["leaderElection"] == {"leaderElect": False}
    assert config["internalCertManagement"] == {"enable": False}
    assert config["webhook"] == {
        "host": "127.0.0.1",
        "port": node_lws.WEBHOOK_PORT,
        "certDir": str(tmp_path / "certs"),
    }
    assert config["health"]["healthProbeBindAddress"].endswith(f":{node_lws.HEALTH_PORT}")


@pytest.mark.skipif(not MANIFESTS.exists(), reason=f"{MANIFESTS} is not here")
def test_every_upstream_webhook_is_pointed_at_the_loopback_server_with_the_ca() -> None:
    upstream = [d for d in yaml.safe_load_all(MANIFESTS.read_text()) if d]
    paths = [w["clientConfig"]["service"]["path"] for c in upstream for w in c["webhooks"]]
    rewritten = node_lws.webhook_configurations(MANIFESTS.read_text(), b"PEM OF THE CA")
    clients = [w["clientConfig"] for c in rewritten for w in c["webhooks"]]
    assert [c["url"] for c in clients] == [
        f"https://127.0.0.1:{node_lws.WEBHOOK_PORT}{path}" for path in paths
    ]
    assert {base64.b64decode(c["caBundle"]) for c in clients} == {b"PEM OF THE CA"}
    assert all("service" not in c for c in clients)
    # The names and rules are upstream's: only where the API server calls changes.
    assert [w["name"] for c in rewritten for w in c["webhooks"]] == [
        w["name"] for c in upstream for w in c["webhooks"]
    ]
    assert "mpod.kb.io" in [w["name"] for c in rewritten for w in c["webhooks"]]
