"""What a node's pods are given to reach the world through the platform team's mirrors
(HF_ENDPOINT to a Hub mirror, AWS_ENDPOINT_URL to an S3 endpoint), as a cluster admin sets
it: a MutatingAdmissionPolicy, Kubernetes' own in-process admission, adding each variable to
every container of every new pod that does not set it itself.
"""

from __future__ import annotations

import json
from typing import Any

Json = dict[str, Any]
POLICY = "modelfleet-egress-mirrors"


def _mutation(name: str, value: str) -> Json:
    """One server-side-apply mutation adding `name` to the containers lacking it."""
    env = f"Object.spec.containers.env{{name: {json.dumps(name)}, value: {json.dumps(value)}}}"
    lacking = (
        f"object.spec.containers.filter(c, !has(c.env) || "
        f"!c.env.exists(e, e.name == {json.dumps(name)}))"
    )
    expression = (
        "Object{spec: Object.spec{containers: "
        f"{lacking}.map(c, Object.spec.containers{{name: c.name, env: [{env}]}})}}}}"
    )
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}


def egress_policy(env: dict[str, str], api_version: str) -> list[Json]:
    """The policy and its binding (every namespace) adding `env` to new pods."""
    policy = {
        "apiVersion": api_version,
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": POLICY},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["pods"],
                    }
                ]
            },
            "failurePolicy": "Fail",
            "reinvocationPolicy": "Never",
            "mutations": [_mutation(k, v) for k, v in sorted(env.items())],
        },
    }
    binding = {
        "apiVersion": api_version,
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": POLICY},
        "spec": {"policyName": POLICY},
    }
    return [policy, binding]
