"""Whether provider-kubernetes keeps the credentials it copies out of what everyone reads.

provider-kubernetes echoes each remote object in its Object's `status.atProvider.manifest`.
Unless it runs with `--sanitize-secrets`, the remote credentials Secret comes back with its
values (the token, the S3 keys), so they reach every reader of the Object and every
RunFunctionRequest of this function. The function never copies them; it reports where they
are on the `CredentialsRedacted` condition (a Warning event on the transition) with the fix,
naming fields and clusters only, never a value.
"""

from typing import Any

from modelfleet_contracts.conditions import Status, listed

from compose_model_cache.status import CREDENTIALS_REDACTED

EXPOSED = "ExposedByProvider"
REDACTED = "Redacted"
GUIDE = "docs/modelcache.md#tokens-and-provider-kubernetes"
_ANNOTATION_FIX = (
    "run it with --enable-server-side-apply too (client-side apply keeps the copied values "
    "in the kubectl.kubernetes.io/last-applied-configuration annotation, which "
    "--sanitize-secrets leaves) and remove that annotation from the Secret on each cluster"
)


def credentials_condition(
    exposed: dict[str, tuple[str, ...]],
    secret_name: str,
    previous: dict[str, Any] | None,
) -> Status | None:
    """`exposed`: cluster name -> the fields of its echoed credentials Secret that hold values
    (`ObservedObject.exposed_secret_fields`). False while any does; True once none does after
    it was reported (so the fix is a transition too); absent when it never was."""
    if not exposed:
        if previous is None:
            return None
        return Status.true(
            CREDENTIALS_REDACTED,
            REDACTED,
            "no Object echoes the values of a credentials Secret any more",
        )
    fields = sorted({f for where in exposed.values() for f in where})
    fixes = []
    if {"data", "stringData"} & set(fields):
        fixes.append("run provider-kubernetes with --sanitize-secrets")
    if any(f.startswith("metadata.annotations") for f in fields):
        fixes.append(_ANNOTATION_FIX)
    return Status.false(
        CREDENTIALS_REDACTED,
        EXPOSED,
        f"provider-kubernetes echoes the values of Secret {secret_name} in the Object's "
        f"status.atProvider.manifest ({', '.join(fields)}) for cluster(s) "
        f"{listed(sorted(exposed))}: every reader of that Object and every function call "
        f"sees them. Fix: {'; '.join(fixes)} (see {GUIDE})",
    )
