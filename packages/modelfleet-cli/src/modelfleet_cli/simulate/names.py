"""How Crossplane names a composed resource the function left unnamed, and when the API server
refuses to store it under that name.

Crossplane v2 (internal/names in crossplane/crossplane, v2.3.4 as ../shared/realcp runs it)
derives the name from the XR: `metadata.generateName` (the root XR's name and a dash) followed
by 12 hex digits of sha256(the XR's UID + the composition resource name), the prefix cut so that
the name stays within 63 characters. Only a resource without a composition resource name or a
controller reference with a UID falls back to the API server's generateName algorithm (5 random
characters of a consonant-and-digit alphabet), checked free with a GET, 10 tries, then the
XR's reconcile fails with `cannot generate a name for composed resource "<name>"`. Here the
random characters are derived from the XR and resource name, so that a run repeats exactly.

A name that is already taken is never overwritten: the API server stores one object per name,
and Crossplane applies with its XR as controller, which the API server refuses when another
controller already owns the object (`ownerReferences`: one controller only).
"""

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

from modelfleet_contracts.fields import mapping_at

from modelfleet_cli.composed import ANNOTATION_RESOURCE_NAME

MAX_NAME_LENGTH = 63  # a DNS-1123 label, what Crossplane keeps composed names within
CHILD_HASH_LENGTH = 12
# k8s.io/apiserver/pkg/storage/names: SimpleNameGenerator's suffix and the alphabet of
# k8s.io/apimachinery/pkg/util/rand.String (no vowels, no confusable digits).
RANDOM_SUFFIX_LENGTH = 5
RANDOM_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
MAX_TRIES = 10


class NameGenerationError(RuntimeError):
    """Every name tried was taken (Crossplane's reconcile error for the XR)."""


def child_name(generate_name: str, owner_uid: str, resource_name: str) -> str:
    """Crossplane's name for a composed resource: `generate_name` ending in one dash, then 12
    hex digits of sha256(owner UID + composition resource name), within 63 characters."""
    suffix = hashlib.sha256((owner_uid + resource_name).encode()).hexdigest()[:CHILD_HASH_LENGTH]
    prefix = (
        generate_name if generate_name.endswith("-") or not generate_name else generate_name + "-"
    )
    room = MAX_NAME_LENGTH - CHILD_HASH_LENGTH
    if len(prefix) + CHILD_HASH_LENGTH <= MAX_NAME_LENGTH:
        return prefix + suffix
    cut = prefix[:room]
    return (cut if cut.endswith("-") else cut[: room - 1] + "-") + suffix


def random_name(generate_name: str, seed: str) -> str:
    """The API server's generateName: the prefix (cut to leave room) and 5 characters of its
    alphabet, here derived from `seed` instead of drawn at random."""
    digest = hashlib.sha256(seed.encode()).digest()
    suffix = "".join(
        RANDOM_ALPHABET[b % len(RANDOM_ALPHABET)] for b in digest[:RANDOM_SUFFIX_LENGTH]
    )
    return generate_name[: MAX_NAME_LENGTH - RANDOM_SUFFIX_LENGTH] + suffix


def controller_uid(obj: Mapping[str, Any]) -> str:
    """The UID of the object's controller reference ('' when it has none)."""
    for ref in mapping_at(obj, "metadata").get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller"):
            return str(ref.get("uid") or "")
    return ""


def composed_name(composed: Mapping[str, Any], owner: str, taken: Callable[[str], bool]) -> str:
    """The name Crossplane gives `composed` (desired without a name): the child name when it has
    a composition resource name and a controller UID, else a generated name `taken` says is
    free (NameGenerationError after MAX_TRIES). `owner` identifies the XR in the seed."""
    metadata = mapping_at(composed, "metadata")
    prefix = str(metadata.get("generateName") or "")
    resource_name = str(mapping_at(metadata, "annotations").get(ANNOTATION_RESOURCE_NAME) or "")
    uid = controller_uid(composed)
    if resource_name and uid:
        return child_name(prefix, uid, resource_name)
    for attempt in range(MAX_TRIES):
        name = random_name(prefix, f"{owner}/{resource_name}/{attempt}")
        if not taken(name):
            return name
    raise NameGenerationError(f'cannot generate a name for composed resource "{resource_name}"')


def controller_conflict(existing: Mapping[str, Any], applied: Mapping[str, Any]) -> str | None:
    """The API server's refusal when `applied` would give `existing` a second controller (None
    when the object is free or already ours)."""
    ours, theirs = controller_uid(applied), controller_uid(existing)
    if not theirs or not ours or ours == theirs:
        return None
    kind = existing.get("kind", "")
    group = str(existing.get("apiVersion", "")).rpartition("/")[0]
    name = mapping_at(existing, "metadata").get("name", "")
    return (
        f'{kind}{"." + group if group else ""} "{name}" is invalid: metadata.ownerReferences: '
        "Invalid value: {...}: Only one reference can have Controller set to true"
    )
