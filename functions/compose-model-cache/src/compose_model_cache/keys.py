"""The composition-resource-names (keys) of what a ModelCache composes on each cluster.

A cluster's claim and credentials Secret keep their keys whatever the source. Its hydration
Job's key carries the source fingerprint, as the Job's name does. provider-kubernetes finds an
Object's remote object by the name in the Object's own manifest, and deletes only that one: an
Object re-pointed at another name would leave the previous Job (running or failed) on the
workload cluster for good. Under a key per source, a new source is a new Object; the old one,
left out, is deleted by Crossplane, and its Job (if its TTL left it there) by
provider-kubernetes.

Jobs run under the cluster's hydrator account. Two older layouts are recognised where an
upgrade finds them: a Job with its own ServiceAccount, Role and RoleBinding (named like the
Job) under the Job's key with a suffix (`access_keys`), read only to keep a running Job's
access until it finishes (shard/hydration_job.py), then to let it go; and every source's Job
under `<cluster>-hydrate` (the legacy key), its access under `<cluster>-hydrate-account` and
so on: `current_job_keys` says what becomes of such an Object.
"""

import re
from collections.abc import Container, Iterable

from modelfleet_contracts.naming import composed_key

from compose_model_cache.fingerprint import FINGERPRINT_LEN

# As earlier releases suffixed the keys of a Job's ServiceAccount, Role and RoleBinding.
ACCESS_SUFFIXES = ("account", "role", "binding")

# `<cluster>-hydrate[-<fingerprint>][-<access suffix>]`: the key of a hydration Job (of any
# source, or the legacy one) or of its access. The cluster part is `composed_key(cluster)`;
# matched greedily it is the key's own, since no tail of this pattern holds another
# `hydrate` (a fingerprint is hex).
_HYDRATION_KEY = re.compile(
    rf"(?:(?P<cluster>.*)-)?hydrate(?:-[0-9a-f]{{{FINGERPRINT_LEN}}})?"
    rf"(?:-(?P<access>{'|'.join(ACCESS_SUFFIXES)}))?"
)


def _prefix(cluster: str) -> str:
    # composed_key(cluster, suffix), with the cluster's part sanitised once, not per key.
    return f"{composed_key(cluster)}-" if cluster else ""


def resource_keys(cluster: str, fingerprint: str) -> tuple[str, str, str]:
    """The keys of the claim, the credentials Secret, and the hydration Job of the source
    `fingerprint`, on `cluster`."""
    prefix = _prefix(cluster)
    return (f"{prefix}claim", f"{prefix}creds", f"{prefix}hydrate-{fingerprint}")


def legacy_job_key(cluster: str) -> str:
    """The key earlier releases composed every source's Job on `cluster` under."""
    return f"{_prefix(cluster)}hydrate"


def access_keys(job_key: str) -> dict[str, str]:
    """The keys earlier releases composed the Job's ServiceAccount, Role and RoleBinding
    under, by suffix."""
    return {suffix: f"{job_key}-{suffix}" for suffix in ACCESS_SUFFIXES}


def echoed_key(key: str) -> bool:
    """Whether the core reads the remote object the Object under `key` echoes (and the name
    its manifest asks for): a claim's, or a hydration Job's of any source (fn.py)."""
    if key.endswith("-claim"):
        return True
    found = _HYDRATION_KEY.fullmatch(key)
    return found is not None and not found["access"]


def is_access_key(key: str) -> bool:
    """Of a hydration key: whether it is the key of a Job's access, not of the Job."""
    found = _HYDRATION_KEY.fullmatch(key)
    return found is not None and bool(found["access"])


def hydration_keys(observed: Iterable[str]) -> dict[str, list[str]]:
    """The observed keys of hydration Jobs, any source's, and of their access, by the
    cluster's part of the key (`composed_key(cluster)`). One pass over what is observed,
    however many clusters cannot be reached."""
    by_cluster: dict[str, list[str]] = {}
    for key in sorted(observed):
        if found := _HYDRATION_KEY.fullmatch(key):
            by_cluster.setdefault(found["cluster"] or "", []).append(key)
    return by_cluster


def current_job_keys(
    cluster: str, fingerprint: str, job_name: str, observed: Container[str], asks: dict[str, str]
) -> tuple[str, ...]:
    """The keys of the current source's Job on `cluster`: the first is where it is composed,
    a second (observed) asks for the same Job and is kept beside it.

    `asks`: the remote name each observed Object's own manifest asks for, by key (what
    provider-kubernetes deletes when the Object goes). An Object under the legacy key that
    asks for `job_name` (composed by an earlier release, its Job perhaps mid-download) stays
    where it is: were it dropped, its deletion would delete the Job the new key would take
    over. An Object there that asks for another Job (an older source's) is not among these,
    and so is left out: its deletion is that Job's clean-up. One that asks for nothing
    readable is taken to ask for the current Job: it is kept."""
    legacy, own = legacy_job_key(cluster), resource_keys(cluster, fingerprint)[2]
    if legacy in observed and asks.get(legacy, job_name) == job_name:
        # Both, should the new key have been composed once the legacy Object was not
        # observed: two Objects, one Job; dropping either would delete it.
        return (legacy, own) if own in observed else (legacy,)
    return (own,)
