"""When a composed resource counts as ready: what a function tells Crossplane for each one.

Crossplane (v2.3 core) takes a composed resource's readiness from the functions alone: one
left `READY_UNSPECIFIED` counts as not ready, so every reconcile emits a Normal event
`Composed resource "<name>" is not yet ready` for it and requeues the XR at once. The XR's
own Ready condition does not depend on it (the functions set the XR's readiness explicitly,
which supersedes), so this is about telling the truth, quietly.

A composed resource is ready once it was observed and:
- its own `Ready` condition is True. That covers provider-kubernetes Objects (Ready derived
  from the remote object by `spec.readiness`: a claim Bound, a Job Complete, a Deployment or
  LeaderWorkerSet Available; created or found for the others, Observe-only ones included, so
  an Observe-only lookup of something absent is not ready), provider-helm Releases (the
  chart deployed), Crossplane Usages (in force), and ModelReplicas (Ready as their function
  set it);
- or it is a provider config, which has no readiness of its own (no Ready condition ever
  appears on one): existing is all there is to it.
A resource not observed yet (about to be created, or one Crossplane could not observe this
time) is not ready. A resource a function stops composing (an older source's hydration Job)
is not desired any more, so nothing is said about it; a finished Job's Object, which only
watches it, keeps the Ready its provider last reported.
"""

from dataclasses import dataclass

# Kinds with no Ready condition of their own (provider-kubernetes' and provider-helm's).
WITHOUT_READINESS = frozenset({"ClusterProviderConfig", "ProviderConfig"})


@dataclass(frozen=True)
class Seen:
    """What readiness is decided on of an observed composed resource."""

    kind: str
    ready: bool  # its own first `Ready` condition is "True"


def composed_ready(seen: Seen | None) -> bool:
    """Whether a desired composed resource is ready; `seen` is None when it is not observed."""
    if seen is None:
        return False
    return seen.ready or seen.kind in WITHOUT_READINESS
