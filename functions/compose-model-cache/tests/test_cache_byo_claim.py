"""A brought claim (`storage.existingClaimName`), as provider-kubernetes reports it: the cache
says `ClaimNotFound` only once the provider said the claim is missing, never while it has not
looked yet, and never says it creates a claim it never creates."""

import copy

import pytest
from cache_world import US, desired_resources, keys, model_cache, reason, reconcile, rows
from modelfleet_devtools.provider_words import kubeconfig_secret_gone, provider_config_gone
from modelfleet_devtools.requests import events
from modelfleet_devtools.world import observed_object


def byo_cache() -> dict:
    xr = model_cache(storage={"existingClaimName": "shared-models"})
    del xr["spec"]["sizeGiB"]
    return xr


def not_reconciled_yet(obj: dict) -> dict:
    """The Object as Crossplane created it: the provider has not reconciled it (no status)."""
    return copy.deepcopy(obj)


def provider_error(message: str):
    """The provider could not observe the claim: Synced False with `message`, nothing echoed."""

    def observed(obj: dict) -> dict:
        seen = observed_object(obj, synced_error=message)
        seen["status"]["atProvider"] = {}
        return seen

    return observed


def echoed(phase: str):
    return lambda obj: observed_object(obj, remote_status={"phase": phase}, ready=phase == "Bound")


PC_GONE = provider_config_gone()
KUBECONFIG_GONE = kubeconfig_secret_gone()
LOOKING = "looking for claim shared-models in namespace modelfleet on cluster gke-us"
NOT_FOUND = "claim shared-models not found in namespace modelfleet on cluster gke-us"


@pytest.mark.parametrize(
    ("observe", "phase", "artifact_ready", "message"),
    [
        pytest.param(None, "Pending", "Hydrating", LOOKING, id="first reconcile: nothing observed"),
        pytest.param(
            not_reconciled_yet, "Pending", "Hydrating", LOOKING, id="Object not reconciled yet"
        ),
        pytest.param(
            provider_error("observe failed: external resource does not exist"),
            "Pending",
            "ClaimNotFound",
            NOT_FOUND,
            id="Observe-only: external resource does not exist",
        ),
        pytest.param(
            provider_error('cannot get object: persistentvolumeclaims "shared-models" not found'),
            "Pending",
            "ClaimNotFound",
            NOT_FOUND,
            id="provider: not found",
        ),
        pytest.param(
            provider_error("cannot get object: dial tcp 10.0.0.1:443: connect: connection refused"),
            "Pending",
            "Hydrating",
            f"{LOOKING}: cannot get object: dial tcp 10.0.0.1:443: connect: connection refused",
            id="cluster API unreachable: not a missing claim",
        ),
        pytest.param(
            provider_error(PC_GONE),
            "Pending",
            "Hydrating",
            f"{LOOKING}: {PC_GONE}",
            id="provider: its ClusterProviderConfig not found, not the claim",
        ),
        pytest.param(
            provider_error(KUBECONFIG_GONE),
            "Pending",
            "Hydrating",
            f"{LOOKING}: {KUBECONFIG_GONE}",
            id="provider: the kubeconfig Secret not found, not the claim",
        ),
        pytest.param(
            echoed("Pending"),
            "Pending",
            "Hydrating",
            "claim shared-models not bound (Pending)",
            id="claim exists, not bound",
        ),
        pytest.param(
            echoed("Bound"), "Hydrating", "Hydrating", "starting the hydration Job", id="bound"
        ),
    ],
)
def test_a_brought_claim_is_reported_missing_only_when_the_provider_says_so(
    observe, phase, artifact_ready, message
):
    xr = byo_cache()
    claim, _, _ = keys("gke-us")
    composed = desired_resources(reconcile(xr, [US]))
    observed = {claim: observe(composed[claim])} if observe else None
    rsp = reconcile(xr, [US], observed)
    row = rows(rsp)["gke-us"]
    assert (row["phase"], reason(rsp, "ArtifactReady")) == (phase, artifact_ready)
    assert message in row["message"]
    assert "creating" not in row["message"], "a brought claim is never created"
    warned = [text for severity, text in events(rsp) if severity == "Warning"]
    assert bool(warned) == (artifact_ready == "ClaimNotFound"), warned
