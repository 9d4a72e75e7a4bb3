"""What provider-kubernetes' error on an Object says is missing, read from its words.

An Object the provider cannot reconcile is Synced=False (ReconcileError) with a message that
crossplane-runtime's managed reconciler builds by prefixing the provider's error with the
step that failed (crossplane-runtime `pkg/reconciler/managed`, provider-kubernetes
`internal/controller/namespaced/object`):

- `connect failed: <why>`: no client for the cluster: its ClusterProviderConfig or the
  kubeconfig Secret that one reads is missing (`... "<name>" not found`), or the credentials
  are unusable. Nothing is known of the remote object.
- `observe failed: external resource does not exist`: an Observe-only Object whose remote
  object is not on the cluster (the provider's Get answered NotFound).
- `observe failed: cannot resolve resource references: cannot get referenced resource:
  secrets "<name>" not found`: a control-plane object the Object copies from
  (`spec.references[].patchesFrom`, such as the user's token Secret) does not exist.
- `observe failed: cannot get object: <why>`: the Get on the cluster failed otherwise
  (unreachable, Unauthorized, Forbidden, a timeout; a NotFound is no error there).

So "not found" in a message says nothing by itself of the object the Object manages: a
missing provider config or kubeconfig Secret reads "... not found" too. Each reader below
asks whether the message says that one named thing is missing.
"""

import re

CONNECT_FAILED = "connect failed"
REMOTE_ABSENT = "external resource does not exist"
# How provider-kubernetes wraps a failure to read a referenced control-plane object.
REFERENCE_FAILED = ("cannot resolve resource references", "cannot get referenced resource")


def _names_not_found(message: str, name: str) -> bool:
    """The message carries Kubernetes' NotFound of `name` (`<resource> "<name>" not found`)."""
    return bool(name) and f'"{name}" not found' in message


def remote_absent(message: str, name: str) -> bool:
    """The provider says the remote object `name` is not on the cluster: an Observe-only
    Object's Get found nothing, or the error is the NotFound of that very name. Never when it
    could not connect (then nothing is known of the object) or could not read a reference."""
    if CONNECT_FAILED in message or any(w in message for w in REFERENCE_FAILED):
        return False
    return REMOTE_ABSENT in message or _names_not_found(message, name)


def reference_absent(message: str, name: str) -> bool:
    """The provider says the control-plane object `name` the Object copies from (a
    `patchesFrom` Secret) does not exist; not when it could not connect to the cluster."""
    if CONNECT_FAILED in message or not any(w in message for w in REFERENCE_FAILED):
        return False
    return _names_not_found(message, name)


def provider_config_absent(message: str, name: str) -> bool:
    """The provider says the (Cluster)ProviderConfig `name` does not exist (`cannot get
    provider config: clusterproviderconfigs.kubernetes.m.crossplane.io "<name>" not found`),
    and not, say, a kubeconfig Secret of the same name."""
    pattern = rf'providerconfigs?(\.[a-z0-9.-]+)? "{re.escape(name)}" not found'
    return bool(name) and re.search(pattern, message, re.IGNORECASE) is not None
