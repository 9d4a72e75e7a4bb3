"""`LeaderWorkerSetReady`, one row per reason, with the event it gives: the chart installing
is progress (a Normal event), an install the provider reports failed is wrong (a Warning,
with provider-helm's words). Nothing composed is dropped for it."""

from typing import Any

import pytest
from compose_inference_cluster.core import LWS, NAMESPACE, PROVIDER_CONFIG
from modelfleet_devtools.provider_words import provider_config_gone
from modelfleet_devtools.requests import conditions, desired_resources
from modelfleet_devtools.world import observed_object
from test_cluster_reasons import FOUND, NAMED, namespace, said
from test_cluster_scenarios import cluster, cond, run

HELM_PC_GONE = provider_config_gone(provider="helm")
INSTALL_FAILED = (
    "create failed: failed to install release: failed to pull chart: "
    "oci://registry.k8s.io/lws/charts/lws:0.10.0: not found"
)


@pytest.mark.parametrize(
    ("connection", "error", "expected", "severity", "says"),
    [
        pytest.param(
            None,
            None,
            "Installing",
            "Normal",
            "installing the LeaderWorkerSet chart 0.10.0",
            id="release not installed yet",
        ),
        pytest.param(
            None,
            HELM_PC_GONE,
            "Installing",
            "Normal",
            "installing the LeaderWorkerSet chart 0.10.0",
            id="provider-helm tried before the provider config composed from the kubeconfig",
        ),
        pytest.param(
            None,
            INSTALL_FAILED,
            "Unavailable",
            "Warning",
            f"cannot install the LeaderWorkerSet chart 0.10.0: {INSTALL_FAILED}",
            id="the install fails: the provider's words",
        ),
        pytest.param(
            NAMED,
            HELM_PC_GONE,
            "Unavailable",
            "Warning",
            f"cannot install the LeaderWorkerSet chart 0.10.0: {HELM_PC_GONE}",
            id="the user-named provider config has no provider-helm twin",
        ),
    ],
)
def test_leaderworkerset_ready_says_progress_or_the_install_failure(
    connection, error, expected, severity, says
):
    extra: dict[str, Any] = {"leaderWorkerSet": {"install": True}}
    if connection is not None:
        extra["connection"] = connection
    xr = cluster(None, **extra)
    required = FOUND if connection is not None else None
    composed = desired_resources(run(xr, required=required))
    observed = {
        LWS: observed_object(composed[LWS], ready=False, synced_error=error),
        NAMESPACE: namespace(active=True)(composed[NAMESPACE]),
    }
    if connection is None:
        observed[PROVIDER_CONFIG] = composed[PROVIDER_CONFIG]
    rsp = run(xr, observed, required)
    assert cond(rsp, "LeaderWorkerSetReady") == (False, expected)
    message = conditions(rsp)["LeaderWorkerSetReady"].message
    assert says == message
    assert said(rsp, "LeaderWorkerSetReady") == [
        (severity, f"LeaderWorkerSetReady {expected}: {message}")
    ]
    assert set(observed) <= set(desired_resources(rsp)), "nothing composed is dropped"
