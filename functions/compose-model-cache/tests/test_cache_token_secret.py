"""`TokenSecretMissing` only when provider-kubernetes says the user's Secret it copies from
does not exist: a provider that cannot reach the cluster, or finds no provider config or
kubeconfig Secret ("... not found" too), says nothing of the token Secret. Either way the
claim and the Secret's Object stay composed."""

import pytest
from cache_world import US, bound, keys, model_cache, reason, reconcile, rows
from modelfleet_devtools.provider_words import (
    connection_refused,
    kubeconfig_secret_gone,
    provider_config_gone,
    referenced_secret_gone,
)
from modelfleet_devtools.requests import desired_resources, events
from modelfleet_devtools.world import observed_object

GATED = {"repo": "meta-llama/Llama-3.1-8B-Instruct", "tokenSecretRef": {"name": "hf-token"}}
SECRET_GONE = referenced_secret_gone("hf-token")
PC_GONE = provider_config_gone()
KUBECONFIG_GONE = kubeconfig_secret_gone()
REFUSED = connection_refused("/api/v1/namespaces/modelfleet/secrets/x")


@pytest.mark.parametrize(
    ("error", "artifact_ready"),
    [
        pytest.param(SECRET_GONE, "TokenSecretMissing", id="the user's Secret does not exist"),
        pytest.param(PC_GONE, "Hydrating", id="the ClusterProviderConfig not found"),
        pytest.param(KUBECONFIG_GONE, "Hydrating", id="the kubeconfig Secret not found"),
        pytest.param(REFUSED, "Hydrating", id="the cluster unreachable"),
    ],
)
def test_token_secret_missing_only_on_the_providers_word_about_it(error, artifact_ready):
    xr = model_cache(huggingFace=GATED)
    claim, creds, _ = keys("gke-us", xr)
    composed = desired_resources(reconcile(xr, [US]))
    failing = observed_object(composed[creds], synced_error=error)
    rsp = reconcile(xr, [US], {claim: bound(composed[claim]), creds: failing})
    assert reason(rsp, "ArtifactReady") == artifact_ready
    missing = artifact_ready == "TokenSecretMissing"
    assert ("ml-team/hf-token not found" in rows(rsp)["gke-us"]["message"]) is missing
    warned = [text for severity, text in events(rsp) if severity == "Warning"]
    assert bool(warned) is missing, warned
    assert {claim, creds} <= set(desired_resources(rsp)), "nothing composed is dropped"
