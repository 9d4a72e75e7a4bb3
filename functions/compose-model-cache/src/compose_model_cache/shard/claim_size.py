"""A claim's size only grows: a claim that exists keeps a request larger than `sizeGiB`.

Kubernetes refuses to lower a claim's `spec.resources.requests.storage` (`field can not be
less than previous value`); it may only grow, where the class allows expansion. Composing
the smaller size of a lowered `sizeGiB` would leave the claim's Object Synced=False with
that refusal, in the provider's words, on an object the user does not look at. So when
provider-kubernetes reports the claim being composed (its kind and name, in the Object's
`status.atProvider.manifest`) with a larger request, the request is composed as the claim
has it (sent back, it changes nothing), and the cluster's row and the `ClaimsSized`
condition say so and what to do. A request this function cannot read is kept the same way
(never destructive on uncertainty) and said so. An equal or larger `sizeGiB` is composed as
asked; a claim not reported yet is created at `sizeGiB`; a user's own claim
(`existingClaimName`) is never written at all.
"""

import copy
from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.conditions import Status, listed
from modelfleet_contracts.quantity import gib_ceiling, parse_quantity
from modelfleet_contracts.stamps import Stamp

from compose_model_cache.shard.existing import Existing
from compose_model_cache.shard.manifests import CacheRef
from compose_model_cache.status import CLAIMS_SIZED

SHRINK_REFUSED = "ShrinkRefused"
SIZE_UNREADABLE = "SizeUnreadable"
AS_REQUESTED = "AsRequested"
GUIDE = "docs/modelcache.md#lowering-sizegib"


@dataclass(frozen=True)
class KeptSize:
    """The claim on `cluster` keeps its own request instead of `sizeGiB`."""

    cluster: str
    claim: str
    request: Any  # as the claim has it, composed back unchanged
    gib: int | None  # the least sizeGiB that holds it; None: it cannot be read

    def note(self, size_gib: int) -> str:
        """What the cluster's row says, with what to do."""
        if self.gib is None:
            return (
                f"claim {self.claim} requests {_shown(self.request)}, a size this function cannot "
                f"read: it is kept as it is rather than set to sizeGiB {size_gib}; "
                f"check the claim on {self.cluster}"
            )
        return (
            f"claim {self.claim} requests {self.request}, more than sizeGiB {size_gib}: "
            f"Kubernetes cannot shrink a claim, so it keeps {self.request}; set sizeGiB to "
            f"{self.gib} or more, or delete this cache's Objects for {self.cluster} to "
            f"recreate the claim at {size_gib}Gi (its weights are downloaded again)"
        )


def kept_size(existing: Existing | None, cache: CacheRef, cluster: str) -> KeptSize | None:
    """The claim `cache` composes on `cluster`, if it exists (`existing`: as reported there)
    with a request larger than `sizeGiB` asks, or one that cannot be read; None otherwise."""
    if cache.existing_claim or existing is None or existing.request is None:
        return None  # the user's own claim, or no claim of ours reported with a size
    if (existing.kind, existing.name) != ("PersistentVolumeClaim", cache.claim_name):
        return None  # another object (a previous name): the claim composed now is new
    if existing.request == cache.claim_request:
        return None  # as asked (the common case, read without parsing)
    have, asked = parse_quantity(existing.request), parse_quantity(cache.claim_request)
    if have is not None and asked is not None and have <= asked:
        return None  # equal, or it grows: composed as asked
    return KeptSize(
        cluster, cache.claim_name, existing.request, None if have is None else gib_ceiling(have)
    )


def with_request(composed: Stamp | dict[str, Any], request: Any) -> dict[str, Any]:
    """The composed claim Object (a copy), requesting `request`."""
    obj = composed.to_dict() if isinstance(composed, Stamp) else copy.deepcopy(composed)
    claim = obj["spec"]["forProvider"]["manifest"]
    claim["spec"]["resources"]["requests"]["storage"] = copy.deepcopy(request)
    return obj


def claims_sized_condition(
    kept: list[KeptSize], size_gib: int | None, previous: dict[str, Any] | None
) -> Status | None:
    """False while any claim keeps its own request (`ShrinkRefused`, else `SizeUnreadable`);
    True once none does after that was reported (so the fix is a transition, an event,
    too); absent when it never was."""
    if not kept:
        if previous is None:
            return None
        return Status.true(
            CLAIMS_SIZED, AS_REQUESTED, "every claim is composed with the size sizeGiB asks"
        )
    shrunk = [k for k in kept if k.gib is not None]
    unreadable = [k for k in kept if k.gib is None]
    unread = ""
    if unreadable:
        unread = (
            f"the size of the claim on {_clusters(unreadable)} cannot be read "
            f"({', '.join(_shown(k.request) for k in unreadable[:3])}"
            f"{', ...' if len(unreadable) > 3 else ''}): it is kept as it is; check it there"
        )
    if not shrunk:
        return Status.false(CLAIMS_SIZED, SIZE_UNREADABLE, f"{unread} (see {GUIDE})")
    at_least = max(k.gib or 0 for k in shrunk)
    message = (
        f"sizeGiB {size_gib} is less than what the existing claim requests on {len(shrunk)} "
        f"cluster(s): {listed(f'{k.cluster} ({k.request})' for k in shrunk)}. Kubernetes "
        f"cannot shrink a claim, so each keeps its size. Set sizeGiB to {at_least} or more, "
        f"or delete this cache's Objects for a cluster to recreate its claim at "
        f"{size_gib}Gi (its weights are downloaded again; see {GUIDE})"
    )
    return Status.false(CLAIMS_SIZED, SHRINK_REFUSED, f"{message}; {unread}" if unread else message)


def _clusters(kept: list[KeptSize]) -> str:
    return listed(k.cluster for k in kept)


def _shown(request: Any) -> str:
    """An unreadable request as a message quotes it, cut short: it is no quantity, so it
    may be anything an echo carries."""
    text = repr(request)
    return text if len(text) <= 40 else f"{text[:37]}..."
