"""compose-model-cache in a world that flaps: clusters, observed objects and the cache's own
status mutated, missing or unresolved for a call, around a fixed, valid spec.

Property: no crash, always a status or a message, and for every cluster that still exists
(no selector, so existing means matching) its claim, its credentials and its unfinished
hydration Job are never dropped. A Job may go only once its cluster's weights are Ready.
"""

import functools

from cache_world import desired_resources, keys, model_cache, reconcile, rows, with_status
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_devtools.fuzz import (
    dropped,
    flapped,
    holds_up,
    resolved,
    settled,
    waits_for_crossplane,
)
from modelfleet_devtools.secrets import TEST_TOKENS, secret
from modelfleet_devtools.world import inference_cluster, observed_object

CLUSTERS = [inference_cluster("gke-us"), inference_cluster("gke-eu"), inference_cluster("aks-jp")]
CACHES = {
    "Hugging Face with a token": model_cache(
        huggingFace={"repo": "Qwen/Qwen3-0.6B", "tokenSecretRef": {"name": "hf"}}
    ),
    "S3 with credentials": model_cache(
        source="S3", s3={"uri": "s3://models/qwen/", "credentialsSecretRef": {"name": "s3"}}
    ),
    "bring your own claim": model_cache(
        sizeGiB=None, storage={"existingClaimName": "shared-models"}
    ),
}
for cache in CACHES.values():
    cache["spec"] = {k: v for k, v in cache["spec"].items() if v is not None}

USER_SECRETS = {
    "HuggingFace": secret("hf", "ml-team", {"HF_TOKEN": TEST_TOKENS["HF_TOKEN"]}),
    "S3": secret(
        "s3",
        "ml-team",
        {k: TEST_TOKENS[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")},
    ),
}
JOB_STATES = {
    "running": {"active": 1},
    "complete": {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]},
    "failed": {"failed": 4, "conditions": [{"type": "Failed", "status": "True"}]},
}


@functools.cache
def staged_world(name, job_state):
    """What a first reconcile composed, observed with claims bound and Jobs in `job_state`;
    the XR with the status the second reconcile wrote."""
    xr = CACHES[name]
    remote = {"Job": JOB_STATES[job_state], "PersistentVolumeClaim": {"phase": "Bound"}}

    def done(obj):
        kind = obj["spec"]["forProvider"]["manifest"]["kind"]
        observed = observed_object(obj, remote_status=remote.get(kind, {}), ready=True)
        if kind == "Secret":
            # provider-kubernetes echoes the remote Secret it filled from the user's one:
            # the token is in the request; it must never reach the response (audited).
            echoed = observed["status"]["atProvider"]["manifest"]
            echoed["data"] = USER_SECRETS[xr["spec"]["source"]]["data"]
        return observed

    return settled(
        xr, lambda xr, observed: reconcile(xr, CLUSTERS, observed), done, written=with_status
    )


def fuzz_reconcile(xr, clusters, observed):
    # Validity is audited suite-wide for inputs an API server could hold (conftest.py);
    # these worlds are deliberately ones it could not, so skip the per-call assertion.
    return reconcile(xr, clusters, observed, validate=False)


@given(st.sampled_from(sorted(CACHES)), st.sampled_from(sorted(JOB_STATES)), st.data())
def test_a_flapping_world_never_costs_a_still_matching_cluster_its_weights(name, job, data):
    xr, observed = flapped(data, *staged_world(name, job), "cache")
    clusters, present = resolved(data, CLUSTERS)

    rsp = fuzz_reconcile(xr, clusters, observed)

    assert holds_up(rsp)
    desired = desired_resources(rsp)
    if clusters is None:
        assert dropped(observed, desired, observed) == [], "unresolved clusters keep everything"
        assert waits_for_crossplane(rsp, "ArtifactReady")
        return
    phases = {r.get("name"): r.get("phase") for r in rows(rsp).values()}
    for cluster in present:
        claim, creds, job_key = keys(cluster["metadata"]["name"], xr)
        assert dropped(observed, desired, [claim, creds]) == []
        if phases.get(cluster["metadata"]["name"]) != "Ready":
            assert dropped(observed, desired, [job_key]) == [], "Job dropped before Ready"
